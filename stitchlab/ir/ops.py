"""The op table: every operation the IR knows, in one place.

Each entry gives the op's kind, its arity, the NumPy ufunc whose type resolution decides its
dtypes (NumPy 2 rules, NEP 50), its NumPy reference implementation (used by the numpy backend and
by the tests) and its CUDA C expression. Adding an elementwise op is one ``_op(...)`` line here
(plus tests); nothing else changes.

CUDA expressions are templates over the operands ``{0}``, ``{1}``, ``{2}``. They are evaluated in
the op's *compute type*: the dtype itself, except float16/bfloat16 which compute in float32. A
template may be a dict keyed by dtype kind (``"f"`` float, ``"i"`` signed, ``"u"`` unsigned,
``"b"`` bool) with ``"*"`` as the fallback. Names prefixed ``sl_`` are device functions of the
code generator's preamble (overloaded for every compute type).

An op whose float16 result NumPy's float32-then-round gives exactly as one half-precision
instruction (add, subtract, multiply: float32 has enough bits that the double rounding is
innocuous) or that only moves or selects bits (negative, absolute, where, maximum, minimum) also
has a ``cuda_half`` template,
over float16 operands held as their 16 bits (``sl_half``); the code generator then skips the
conversions to float and back.

An op whose float16 result is a float computation rounded once to float16 may also have a
``cuda_f16`` template: a faster float formula (hardware approximations) whose rounded result stays
faithful (within one float16 ulp of the exact value) and is NumPy's float16 result in all but a
fraction of a percent of elements: ``exp`` and ``sigmoid`` because the error is far below float16's
step, ``tanh`` (the MUFU's tanh) as measured over every float16 input; the GPU test
``test_float16_exp_sigmoid_and_tanh_are_faithful_for_every_float16`` checks all three on every input.
bfloat16 results take ``cuda_half`` (the same C functions, overloaded for ``sl_bf16``) and
``cuda_bf16`` templates alike (``tests/gpu/test_bfloat16_gpu.py`` checks every bfloat16 input).

An op may also have a ``cuda_fast`` template: CUDA's hardware approximation of a float function
(``__expf``, ``__logf``, ``__sinf``, ``__fdividef``...: the functions ``nvcc --use_fast_math``
substitutes), used for a node built under :func:`stitchlab.fast_math` (its ``fast_math`` attribute,
set only for float32, float16 and bfloat16 results). The error bounds are CUDA's, larger than
NumPy's; docs/user-guide.md lists them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from .dtypes import is_bfloat16


class Kind(str, Enum):
    ELEMENTWISE = "elementwise"
    REDUCE = "reduce"
    BROADCAST = "broadcast"
    LAYOUT = "layout"
    SOURCE = "source"
    CONTRACT = "contract"


CudaExpr = str | dict[str, str] | None


@dataclass(frozen=True)
class OpDef:
    """One row of the op table.

    Attributes:
        name: the op's name in the IR (NumPy's name where NumPy has the op).
        kind: elementwise, reduce, broadcast, layout, source or contract (a matrix product, a
            join, a gather, a scan or a sort: never fused, run by the array library as a plan
            step of its own).
        nin: number of inputs (-1: any number).
        numpy: reference implementation over NumPy (or CuPy) arrays.
        ufunc: NumPy ufunc whose ``resolve_dtypes`` gives the loop dtypes, or None.
        cuda: CUDA C expression template (see module docstring).
        commutative: inputs may be reordered (canonical form sorts them): only where the result
            is the same bit for bit either way round (NaN payloads aside).
        cost: rough relative cost per element (1 = an add), for the planner's cost model.
        identity: for reductions, the identity as a Python value (None: no identity).
        cuda_half: CUDA C template over float16 operands held as ``sl_half`` giving NumPy's
            float16 result bit for bit (None: the op computes in float).
        cuda_f16: CUDA C float template used in place of ``cuda`` when the result is float16
            (rounded once to half): relative error at most ~2**-18, against float16's 2**-11 step.
        cuda_bf16: the same for bfloat16 results (no flush of subnormals: bfloat16 has float32's
            exponent range), within one bfloat16 step (2**-8) of the exact value.
        cuda_fast: CUDA C float template for a node built under :func:`stitchlab.fast_math`:
            CUDA's intrinsic approximation (the op's membership in :data:`FAST_MATH_OPS`).
    """

    name: str
    kind: Kind
    nin: int
    numpy: Callable[..., Any] | None
    ufunc: np.ufunc | None = None
    cuda: CudaExpr = None
    commutative: bool = False
    cost: float = 1.0
    identity: Any = None
    cuda_half: str | None = None
    cuda_f16: str | None = None
    cuda_bf16: str | None = None
    cuda_fast: str | None = None

    def cuda_expr(self, kind: str) -> str:
        """The CUDA template for compute-dtype kind ``kind`` ("f", "i", "u" or "b")."""
        if isinstance(self.cuda, dict):
            expr = self.cuda.get(kind, self.cuda.get("*"))
        else:
            expr = self.cuda
        if expr is None:
            raise NotImplementedError(f"op {self.name!r} has no CUDA expression for kind {kind!r}")
        return expr


OPS: dict[str, OpDef] = {}


def _op(name: str, kind: Kind, nin: int, numpy: Callable[..., Any] | None, **kw: Any) -> OpDef:
    op = OpDef(name, kind, nin, numpy, **kw)
    OPS[name] = op
    return op


def _in_float32(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` over bfloat16 computed in float32 and rounded once, as the kernels compute it
    (other dtypes as they are)."""
    def wrapped(x: Any) -> Any:
        if is_bfloat16(x.dtype):
            return fn(x.astype(np.float32)).astype(x.dtype)
        return fn(x)
    return wrapped


def _special(name: str) -> Any:
    """SciPy's ``scipy.special.<name>`` as the numpy backend's op (values in ``x``'s dtype), or
    Python's ``math.<name>`` per element where SciPy is not installed."""

    def fn(x: np.ndarray) -> np.ndarray:
        try:
            import scipy.special
        except ImportError:
            return np.frompyfunc(getattr(math, name), 1, 1)(x).astype(x.dtype)
        return getattr(scipy.special, name)(x).astype(x.dtype, copy=False)

    fn.__name__ = f"_{name}"
    return _in_float32(fn)


_erf, _erfc = _special("erf"), _special("erfc")


@_in_float32
def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


@_in_float32
def _rsqrt(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return (1 / np.sqrt(x)).astype(x.dtype, copy=False)


def _splitmix64(z: Any) -> Any:
    """SplitMix64's output function over uint64 values (NumPy or CuPy arrays, NumPy scalars),
    wrapping."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


#: sl.random's stream step (SplitMix64's gamma) and its Marsaglia-Tsang rounds (random.py)
STREAM_STEP = 0x9E3779B97F4A7C15
GAMMA_ROUNDS = 12


def _output(z0: Any, k: int) -> Any:
    """Output ``k`` of each element's counter ``z0``: ``splitmix64(z0 + k * STREAM_STEP)``, wrapping."""
    return _splitmix64(z0 + np.uint64((k * STREAM_STEP) & 0xFFFFFFFFFFFFFFFF))


def _uniform53(z0: Any, k: int) -> Any:
    """The top 53 bits of output ``k`` as a float64 in [0, 1)."""
    return (_output(z0, k) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _open_uniform52(z0: Any, k: int) -> Any:
    """``(t + 1/2) / 2**52`` of output ``k``'s top 52 bits ``t``: a float64 in (0, 1)."""
    return ((_output(z0, k) >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52


def _through_host(reference: Any) -> Any:
    """A loop op's NumPy reference that also takes CuPy arrays (the interpreter's unfused path):
    they are copied to the host, computed there and copied back."""
    def wrapped(*args: Any) -> Any:
        if any(hasattr(v, "__cuda_array_interface__") for v in args):
            import cupy

            return cupy.asarray(reference(*(cupy.asnumpy(v) for v in args)))
        return reference(*args)

    wrapped.__name__, wrapped.__doc__ = reference.__name__, reference.__doc__
    return wrapped


def _gamma_rounds(d: Any, z0: Any) -> Any:
    """Marsaglia and Tsang's rounds of a gamma draw (``sl.random``'s ``_gamma``), as
    ``sl_gamma_rounds`` computes them: for ``d = a - 1/3`` and ``c = 1 / sqrt(9 d)``, round ``k``
    proposes ``v = (1 + c x)**3`` of a normal ``x`` (Box-Muller's cosine or sine, ``k`` even or odd,
    of the outputs ``k & ~1`` and ``k | 1`` of the element's counter ``z0``) and accepts it where
    ``1 + c x > 0`` and ``log u < x**2 / 2 + d - d v + d log v`` of the open uniform ``u`` of output
    ``GAMMA_ROUNDS + k``; the value is the first accepted ``v``, else the last round's (1 where it is
    not positive). Every round is computed here; the kernel stops at the first accepted one."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d = d.astype(np.float64, copy=False) if hasattr(d, "astype") else np.float64(d)
        c = 1.0 / np.sqrt(9.0 * d)
        outputs = [_output(z0, k) for k in range(2 * GAMMA_ROUNDS)]
        chosen = None
        for k in reversed(range(GAMMA_ROUNDS)):
            u1 = (outputs[k & ~1] >> np.uint64(11)).astype(np.float64) * 2.0**-53
            u2 = (outputs[k | 1] >> np.uint64(11)).astype(np.float64) * 2.0**-53
            radius, angle = np.sqrt(-2.0 * np.log(1.0 - u1)), (2 * math.pi) * u2
            x = radius * (np.sin(angle) if k & 1 else np.cos(angle))
            t = 1.0 + c * x
            v = t * t * t
            if chosen is None:
                chosen = np.where(t > 0, v, 1.0)
            u = ((outputs[GAMMA_ROUNDS + k] >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52
            ok = (t > 0) & (np.log(u) < 0.5 * x * x + d - d * v + d * np.log(v))
            chosen = np.where(ok, v, chosen)
        return chosen


#: Hörmann's PTRS rounds a Poisson draw of rate 10 or more may take (random.py): a round rejects
#: with probability 0.25 at most (at rate 10; 0.11 for large rates), all of them below 2e-16
POISSON_ROUNDS = 26
#: Stirling's series of log(k!) (Bernoulli numbers: 1/12, -1/360, 1/1260, -1/1680, 1/1188)
_STIRLING = (0.08333333333333333, -0.002777777777777778, 0.0007936507936507937, -0.0005952380952380953,
             0.0008417508417508417)
_SMALL_FACTORIALS = np.array([math.factorial(i) for i in range(10)], dtype=np.float64)


def _stirling_series(y: Any) -> Any:
    """Stirling's series of ``log Gamma(y) - ((y - 1/2) log y - y + log(2 pi) / 2)`` for ``y >= 11``,
    five terms (the preamble's ``sl_stirling_series``)."""
    r = 1.0 / y
    r2 = r * r
    c = _STIRLING
    return r * (c[0] + r2 * (c[1] + r2 * (c[2] + r2 * (c[3] + r2 * c[4]))))


def _small_log_factorial(x: Any) -> Any:
    """``log(x!)`` of the exact factorial where ``x < 10`` (0 elsewhere: a placeholder)."""
    return np.log(_SMALL_FACTORIALS[np.clip(np.where(x < 10, x, 0), 0, 9).astype(np.intp)])


def _stirling_tail(x: Any) -> Any:
    """``log(x!) - ((x + 1/2) log(x + 1) - (x + 1) + log(2 pi) / 2)`` of integer-valued float64
    ``x >= 0`` (the preamble's ``sl_stirling_tail``): from the exact factorial below 10, the series
    from there."""
    xs = np.where(x < 10, x, 0.0)
    small = _small_log_factorial(xs) - (xs + 0.5) * np.log(xs + 1.0) + (xs + 1.0) - 0.9189385332046727
    return np.where(x < 10, small, _stirling_series(np.maximum(x, 10.0) + 1.0))


def _poisson_log_pmf(k: Any, lam: Any, loglam: Any) -> Any:
    """``log P(k)`` of a Poisson distribution of rate ``lam`` (``loglam = log(lam)``) at
    integer-valued float64 ``k >= 0``, as the preamble's ``sl_poisson_log_pmf`` computes it:
    ``-lam + k loglam - log(k!)`` with the exact factorial below 10; from there, with Stirling's
    series ``S`` for ``log(k!)`` and ``d = k + 1 - lam``, ``d - k log1p(d / lam) - log(k + 1) / 2 -
    log(2 pi) / 2 - S``, which keeps its precision at rates where ``k log(lam)`` and ``log(k!)``
    are 1e17 (the plain form loses some units there)."""
    x = np.maximum(k, 10.0) + 1.0
    d = x - lam
    large = d - k * np.log1p(d / lam) - 0.5 * np.log(x) - 0.9189385332046727 - _stirling_series(x)
    small = -lam + k * loglam - _small_log_factorial(k)
    return np.where(k < 10, small, large)


@_through_host
def _poisson_rounds(lam: Any, z0: Any) -> Any:
    """A Poisson count of rate ``lam`` (float64) from the outputs of an element's counter ``z0``, as
    ``sl_poisson_rounds`` computes it (the same operations in the same order). Below rate 10, the
    inverse distribution function of the uniform ``u`` of output 0 searched from 0 (the terms
    ``p = exp(-lam) lam**k / k!`` summed until the sum passes ``u``, or stops growing); from 10
    on, Hörmann's PTRS (1993): round ``r`` proposes ``k = floor((2 a / us + b) U + lam + 0.43)`` of
    the open uniforms ``U + 1/2`` and ``V`` of outputs ``2 r`` and ``2 r + 1`` and accepts it by
    his two tests; the first accepted of :data:`POISSON_ROUNDS`, else the last proposal (at least
    0). -1 where ``lam`` is negative, NaN or above 9.2e18 (NumPy raises there). Each step is
    computed for the elements still going (the kernel's loop, element by element)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        lam = lam.astype(np.float64, copy=False) if hasattr(lam, "astype") else np.float64(lam)
        shape = np.broadcast_shapes(np.shape(lam), np.shape(z0))
        lam, z0 = (np.ascontiguousarray(v).reshape(-1) for v in np.broadcast_arrays(lam, z0))
        out = np.full(lam.shape, -1.0)
        at = np.flatnonzero((lam >= 0.0) & (lam < 10.0))
        rate, z = lam[at], z0[at]
        u = _uniform53(z, 0)
        p = np.exp(-rate)
        cdf, k = p, np.zeros(at.size)
        while at.size:
            going = u >= cdf
            out[at[~going]] = k[~going]
            at, rate, u, p, cdf, k = at[going], rate[going], u[going], p[going], cdf[going], k[going] + 1.0
            p = p * rate / k
            following = cdf + p
            stop = following == cdf
            out[at[stop]] = k[stop]
            keep = ~stop
            at, rate, u, p, cdf, k = at[keep], rate[keep], u[keep], p[keep], following[keep], k[keep]
        at = np.flatnonzero((lam >= 10.0) & (lam <= 9.2e18))
        rate, z = lam[at], z0[at]
        loglam = np.log(rate)
        b = 0.931 + 2.53 * np.sqrt(rate)
        a = -0.059 + 0.02483 * b
        lia, vr = np.log(1.1239 + 1.1328 / (b - 3.4)), 0.9277 - 3.6224 / (b - 2.0)
        for r in range(POISSON_ROUNDS):
            big_u, v = _open_uniform52(z, 2 * r) - 0.5, _open_uniform52(z, 2 * r + 1)
            us = 0.5 - np.abs(big_u)
            k = np.floor((2.0 * a / us + b) * big_u + rate + 0.43)
            ok = (us >= 0.07) & (v <= vr)
            ok |= (k >= 0.0) & ((us >= 0.013) | (v <= us)) & (
                np.log(v) + lia - np.log(a / (us * us) + b) <= _poisson_log_pmf(k, rate, loglam))
            out[at] = k if r < POISSON_ROUNDS - 1 else np.where(ok | (k > 0.0), k, 0.0)
            keep = ~ok
            at, rate, z, loglam, b, a, lia, vr = (w[keep] for w in (at, rate, z, loglam, b, a, lia, vr))
        return out.reshape(shape)


#: Hörmann's BTRS rounds a binomial draw with ``n min(p, 1 - p) >= 10`` may take (random.py): a
#: round rejects with probability 0.3 at most (at 10; 0.12 for large ones), all of them below 2e-16
BINOMIAL_ROUNDS = 30


@_through_host
def _binomial_rounds(n: Any, p: Any, z0: Any) -> Any:
    """A binomial count of ``n`` trials (integer-valued float64) of success probability ``p`` from
    the outputs of an element's counter ``z0``, as ``sl_binomial_rounds`` computes it (the same
    operations in the same order), for ``q = min(p, 1 - p)`` (the count of the rarer outcome; ``n``
    minus it where ``p > 1/2``): where ``n q < 10`` the inverse distribution function of the
    uniform of output 0 searched from 0 (to ``n`` at most); from 10 on, Hörmann's BTRS (1993):
    round ``r`` proposes ``k = floor((2 a / us + b) U + n q + 1/2)`` of the open uniforms of outputs
    ``2 r`` and ``2 r + 1`` and accepts it (``0 <= k <= n``) by his two tests, the second against
    ``log(P(k) / P(m))`` at the mode ``m`` written in ratios near 1 and Stirling remainders; the
    first accepted of :data:`BINOMIAL_ROUNDS`, else the last proposal (clipped to ``[0, n]``). -1
    where ``n`` is negative, NaN or above 9.2e18 or ``p`` outside [0, 1]. Each step is computed
    for the elements still going."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        shape = np.broadcast_shapes(np.shape(n), np.shape(p), np.shape(z0))
        n, p = (np.asarray(v, dtype=np.float64) for v in (n, p))
        n, p, z0 = (np.ascontiguousarray(v).reshape(-1) for v in np.broadcast_arrays(n, p, z0))
        flip = p > 0.5
        q = np.where(flip, 1.0 - p, p)
        valid = (n >= 0.0) & (n <= 9.2e18) & (p >= 0.0) & (p <= 1.0)
        out = np.zeros(n.shape)
        at = np.flatnonzero(valid & (n * q < 10.0))
        size, qs, z = n[at], q[at], z0[at]
        u = _uniform53(z, 0)
        r = qs / (1.0 - qs)
        pk = np.exp(size * np.log1p(-qs))
        cdf, k = pk, np.zeros(at.size)
        while at.size:
            going = (u >= cdf) & (k < size)
            out[at[~going]] = k[~going]
            at, size, r, u, pk, cdf, k = (w[going] for w in (at, size, r, u, pk, cdf, k))
            k = k + 1.0
            pk = pk * (r * (size - k + 1.0) / k)
            following = cdf + pk
            stop = following == cdf
            out[at[stop]] = k[stop]
            keep = ~stop
            at, size, r, u, pk, cdf, k = (w[keep] for w in (at, size, r, u, pk, following, k))
        at = np.flatnonzero(valid & (n * q >= 10.0))
        size, qs, z = n[at], q[at], z0[at]
        spq = np.sqrt(size * qs * (1.0 - qs))
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * qs
        c, vr, alpha, r = size * qs + 0.5, 0.92 - 4.2 / b, (2.83 + 5.1 / b) * spq, qs / (1.0 - qs)
        m = np.floor((size + 1.0) * qs)
        h = (m + 0.5) * np.log((m + 1.0) / (r * (size - m + 1.0))) + _stirling_tail(m) + _stirling_tail(size - m)
        for rnd in range(BINOMIAL_ROUNDS):
            big_u, v = _open_uniform52(z, 2 * rnd) - 0.5, _open_uniform52(z, 2 * rnd + 1)
            us = 0.5 - np.abs(big_u)
            k = np.floor((2.0 * a / us + b) * big_u + c)
            ok = (k >= 0.0) & (k <= size) & (((us >= 0.07) & (v <= vr)) | (
                np.log(v * alpha / (a / (us * us) + b))
                <= h + (size + 1.0) * np.log1p((k - m) / (size - k + 1.0)) + (k + 0.5) * np.log(r * (size - k + 1.0) / (k + 1.0))
                - _stirling_tail(k) - _stirling_tail(size - k)))
            out[at] = k if rnd < BINOMIAL_ROUNDS - 1 else np.where(ok, k, np.clip(k, 0.0, size))
            keep = ~ok
            at, size, z, a, b, c, vr, alpha, r, m, h = (w[keep] for w in (at, size, z, a, b, c, vr, alpha, r, m, h))
        out = np.where(flip, n - out, out)
        return np.where(valid, out, -1.0).reshape(shape)


#: Best and Fisher's rounds a von Mises draw may take (random.py): a round rejects with probability
#: 0.343 at most (large kappa), all of them below 2e-16
VONMISES_ROUNDS = 34


@_through_host
def _vonmises_rounds(kappa: Any, z0: Any) -> Any:
    """A von Mises angle of concentration ``kappa`` (float64) about 0, in [-pi, pi], from the outputs
    of an element's counter ``z0``, as ``sl_vonmises_rounds`` computes it (NumPy's method): for
    ``kappa`` below 1e-8 ``pi (2 u - 1)`` of the uniform of output 0; above 1e6 a normal of variance
    ``1 / kappa`` (Box-Muller of outputs 0 and 1); otherwise Best and Fisher's (1979) rounds: round
    ``r`` takes ``z = cos(pi U)`` and ``W = (1 + s z) / (s + z)`` of the uniform of output ``2 r``
    and accepts by the two tests against the open uniform of output ``2 r + 1``; the first
    accepted of :data:`VONMISES_ROUNDS`, else the last; the angle ``acos(W)``, negative where the
    uniform of output ``2 VONMISES_ROUNDS`` is below 1/2. NaN for a negative or NaN ``kappa``.
    Each round is computed for the elements still going."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        shape = np.broadcast_shapes(np.shape(kappa), np.shape(z0))
        kappa, z0 = (np.ascontiguousarray(v).reshape(-1) for v in np.broadcast_arrays(np.asarray(kappa, np.float64), z0))
        out = np.full(kappa.shape, np.nan)
        at = np.flatnonzero(kappa > 1e6)
        u1, u2 = _uniform53(z0[at], 0), _uniform53(z0[at], 1)
        out[at] = np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos((2 * math.pi) * u2) / np.sqrt(kappa[at])
        at = np.flatnonzero((kappa >= 0.0) & (kappa < 1e-8))
        out[at] = math.pi * (2.0 * _uniform53(z0[at], 0) - 1.0)
        at = np.flatnonzero((kappa >= 1e-8) & (kappa <= 1e6))
        k, z = kappa[at], z0[at]
        r = 1.0 + np.sqrt(1.0 + 4.0 * k * k)
        rho = (r - np.sqrt(2.0 * r)) / (2.0 * k)
        s = np.where(k < 1e-5, 1.0 / k + k, (1.0 + rho * rho) / (2.0 * rho))
        w = np.zeros(at.size)
        done = np.zeros(at.size, dtype=bool)
        for rnd in range(VONMISES_ROUNDS):
            go = np.flatnonzero(~done)
            if not go.size:
                break
            u = _uniform53(z[go], 2 * rnd)
            v = _open_uniform52(z[go], 2 * rnd + 1)
            c = np.cos(math.pi * u)
            w[go] = (1.0 + s[go] * c) / (s[go] + c)
            y = k[go] * (s[go] - w[go])
            done[go] = (y * (2.0 - y) - v >= 0.0) | (np.log(y / v) + 1.0 - y >= 0.0)
        angle = np.arccos(w)
        out[at] = np.where(_uniform53(z, 2 * VONMISES_ROUNDS) < 0.5, -angle, angle)
        return out.reshape(shape)


#: Stadlober's HRUA rounds a hypergeometric draw of 10 or more (the smaller of the sample and
#: its complement) may take (random.py): a round rejected with probability 0.59 at most in the
#: cases measured (from (10, 10, 10) to (1e8, 1e6, 1e6)), all 70 of them below 1e-16
HYPERGEOMETRIC_ROUNDS = 70


def _log_factorial(x: Any) -> Any:
    """``log(x!)`` of integer-valued float64 ``x >= 0`` (the preamble's ``sl_log_factorial``): the
    exact factorial's below 10, Stirling's from there."""
    y = np.maximum(x, 10.0)
    return np.where(x < 10, _small_log_factorial(x),
                    (y + 0.5) * np.log(y + 1.0) - (y + 1.0) + 0.9189385332046727 + _stirling_series(y + 1.0))


@_through_host
def _hypergeometric_rounds(good: Any, bad: Any, sample: Any, z0: Any) -> Any:
    """The number of good items in ``sample`` drawn without replacement from ``good`` good and
    ``bad`` bad ones (integer-valued float64), from the outputs of an element's counter ``z0``, as
    ``sl_hypergeometric_rounds`` computes it (NumPy's methods): for ``s = min(sample, good + bad -
    sample)`` below 10, the ``s`` draws one by one, draw ``i`` good where the uniform of output
    ``i`` times the items left is below the good ones left; from 10 on, Stadlober's HRUA ratio of
    uniforms: round ``r`` proposes ``floor(a + h (V - 1/2) / U)`` of the open uniform ``U`` of
    output ``2 r`` and the uniform ``V`` of output ``2 r + 1`` and accepts it by its three tests
    against ``log`` of the probabilities' ratio to the mode's; the first accepted of
    :data:`HYPERGEOMETRIC_ROUNDS`, else the last proposal in the range (else the mode); the count
    complemented where ``s`` was. -1 for parameters NumPy rejects. Each step is computed for the
    elements still going."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        shape = np.broadcast_shapes(*(np.shape(v) for v in (good, bad, sample, z0)))
        good, bad, sample = (np.asarray(v, dtype=np.float64) for v in (good, bad, sample))
        good, bad, sample, z0 = (np.ascontiguousarray(v).reshape(-1) for v in np.broadcast_arrays(good, bad, sample, z0))
        total = good + bad
        valid = (good >= 0) & (bad >= 0) & (sample >= 0) & (sample <= total) & (good < 1e9) & (bad < 1e9)
        cs = np.minimum(sample, total - sample)
        count = np.full(good.shape, -1.0)
        at = np.flatnonzero(valid & (cs < 10))
        left_good, left, drawn = good[at], total[at], np.zeros(at.size)
        for i in range(9):
            u = _uniform53(z0[at], i)
            pick = (i < cs[at]) & (u * left < left_good)
            drawn += pick
            left_good -= pick
            left -= 1.0
        count[at] = drawn
        at = np.flatnonzero(valid & (cs >= 10))
        s, z = cs[at], z0[at]
        small, large = np.minimum(good[at], bad[at]), np.maximum(good[at], bad[at])
        population = total[at]
        a = s * (small / population) + 0.5
        c = np.sqrt((population - s) * s * (small / population) * (large / population) / (population - 1.0) + 0.5)
        h = 1.7155277699214135 * c + 0.8989161620588988
        m = np.floor((s + 1.0) * (small + 1.0) / (population + 2.0))
        g = _log_factorial(m) + _log_factorial(small - m) + _log_factorial(s - m) + _log_factorial(large - s + m)
        b = np.minimum(np.minimum(s, small) + 1.0, np.floor(a + 16.0 * c))
        k_out = m.copy()
        todo = np.arange(at.size)
        for r in range(HYPERGEOMETRIC_ROUNDS):
            if not todo.size:
                break
            zz = z[todo]
            u, v = _open_uniform52(zz, 2 * r), _uniform53(zz, 2 * r + 1)
            x = a[todo] + h[todo] * (v - 0.5) / u
            inside = (x >= 0.0) & (x < b[todo])
            k = np.floor(np.where(inside, x, 0.0))
            t = g[todo] - (_log_factorial(k) + _log_factorial(small[todo] - k) + _log_factorial(s[todo] - k)
                           + _log_factorial(large[todo] - s[todo] + k))
            ok = inside & ((u * (4.0 - u) - 3.0 <= t) | ((u * (u - t) < 1.0) & (2.0 * np.log(u) <= t)))
            k_out[todo[inside]] = k[inside]
            todo = todo[~ok]
        k_out = np.where(good[at] > bad[at], s - k_out, k_out)
        count[at] = k_out
        count = np.where(valid & (cs < sample), good - count, count)
        return count.reshape(shape)


E, R = Kind.ELEMENTWISE, Kind.REDUCE
F = "f"

# --- unary elementwise -----------------------------------------------------------------------
_op("negative", E, 1, np.negative, ufunc=np.negative, cuda={"b": "(!{0})", "*": "(-{0})"}, cuda_half="sl_hneg({0})")
_op("positive", E, 1, np.positive, ufunc=np.positive, cuda="{0}", cuda_half="{0}")
_op("absolute", E, 1, np.absolute, ufunc=np.absolute, cuda={"f": "fabs({0})", "u": "{0}", "b": "{0}", "*": "sl_abs({0})"},
    cuda_half="sl_habs({0})")
_op("exp", E, 1, np.exp, ufunc=np.exp, cuda="exp({0})", cost=4, cuda_f16="sl_exp_f16({0})",
    cuda_bf16="sl_exp_bf16({0})", cuda_fast="__expf({0})")
_op("exp2", E, 1, np.exp2, ufunc=np.exp2, cuda="exp2({0})", cost=4)
_op("expm1", E, 1, np.expm1, ufunc=np.expm1, cuda="expm1({0})", cost=6)
_op("log", E, 1, np.log, ufunc=np.log, cuda="log({0})", cost=4, cuda_fast="__logf({0})")
_op("log2", E, 1, np.log2, ufunc=np.log2, cuda="log2({0})", cost=4, cuda_fast="__log2f({0})")
_op("log10", E, 1, np.log10, ufunc=np.log10, cuda="log10({0})", cost=4, cuda_fast="__log10f({0})")
_op("log1p", E, 1, np.log1p, ufunc=np.log1p, cuda="log1p({0})", cost=6)
_op("sqrt", E, 1, np.sqrt, ufunc=np.sqrt, cuda="sqrt({0})", cost=2)
_op("rsqrt", E, 1, _rsqrt, ufunc=np.sqrt, cuda="rsqrt({0})", cost=2)
_op("square", E, 1, np.square, ufunc=np.square, cuda="({0} * {0})", cuda_half="sl_hmul({0}, {0})")
_op("reciprocal", E, 1, np.reciprocal, ufunc=np.reciprocal, cuda={"f": "(1 / {0})", "*": "sl_int_reciprocal({0})"}, cost=2,
    cuda_fast="__fdividef(1.0f, {0})")
_op("sin", E, 1, np.sin, ufunc=np.sin, cuda="sin({0})", cost=6, cuda_fast="__sinf({0})")
_op("cos", E, 1, np.cos, ufunc=np.cos, cuda="cos({0})", cost=6, cuda_fast="__cosf({0})")
_op("tan", E, 1, np.tan, ufunc=np.tan, cuda="tan({0})", cost=8, cuda_fast="__tanf({0})")
_op("tanh", E, 1, np.tanh, ufunc=np.tanh, cuda="tanh({0})", cost=6, cuda_f16="sl_tanh_f16({0})",
    cuda_bf16="sl_tanh_f16({0})")
_op("sinh", E, 1, np.sinh, ufunc=np.sinh, cuda="sinh({0})", cost=8)
_op("cosh", E, 1, np.cosh, ufunc=np.cosh, cuda="cosh({0})", cost=8)
_op("arcsin", E, 1, np.arcsin, ufunc=np.arcsin, cuda="asin({0})", cost=8)
_op("arccos", E, 1, np.arccos, ufunc=np.arccos, cuda="acos({0})", cost=8)
_op("arctan", E, 1, np.arctan, ufunc=np.arctan, cuda="atan({0})", cost=8)
_op("arcsinh", E, 1, np.arcsinh, ufunc=np.arcsinh, cuda="asinh({0})", cost=8)
_op("arccosh", E, 1, np.arccosh, ufunc=np.arccosh, cuda="acosh({0})", cost=8)
_op("arctanh", E, 1, np.arctanh, ufunc=np.arctanh, cuda="atanh({0})", cost=8)
_op("cbrt", E, 1, np.cbrt, ufunc=np.cbrt, cuda="cbrt({0})", cost=6)
_op("rint", E, 1, np.rint, ufunc=np.rint, cuda="rint({0})")
_op("signbit", E, 1, np.signbit, ufunc=np.signbit, cuda="signbit({0})")
_op("sigmoid", E, 1, _sigmoid, ufunc=np.exp, cuda="sl_sigmoid({0})", cost=5,
    cuda_f16="sl_rcp_ge1(1.0f + sl_exp_f16(-{0}))", cuda_bf16="(1.0f / (1.0f + sl_exp_bf16(-{0})))",
    cuda_fast="sl_rcp_ge1(1.0f + __expf(-{0}))")
_op("erf", E, 1, _erf, ufunc=np.exp, cuda="erf({0})", cost=8)
_op("erfc", E, 1, _erfc, ufunc=np.exp, cuda="erfc({0})", cost=8)
# radians/degrees compute as deg2rad/rad2deg, but are ufuncs of their own: ml_dtypes gives
# deg2rad and rad2deg a bfloat16 loop, not radians and degrees (their bfloat16 result is float32)
_op("deg2rad", E, 1, np.deg2rad, ufunc=np.deg2rad, cuda="sl_deg2rad({0})")
_op("radians", E, 1, np.radians, ufunc=np.radians, cuda="sl_deg2rad({0})")
_op("rad2deg", E, 1, np.rad2deg, ufunc=np.rad2deg, cuda="sl_rad2deg({0})")
_op("degrees", E, 1, np.degrees, ufunc=np.degrees, cuda="sl_rad2deg({0})")
_op("floor", E, 1, np.floor, ufunc=np.floor, cuda={"f": "floor({0})", "*": "{0}"})
_op("ceil", E, 1, np.ceil, ufunc=np.ceil, cuda={"f": "ceil({0})", "*": "{0}"})
_op("trunc", E, 1, np.trunc, ufunc=np.trunc, cuda={"f": "trunc({0})", "*": "{0}"})
_op("sign", E, 1, np.sign, ufunc=np.sign, cuda="sl_sign({0})")
_op("logical_not", E, 1, np.logical_not, ufunc=np.logical_not, cuda="(!{0})")
_op("invert", E, 1, np.invert, ufunc=np.invert, cuda={"b": "(!{0})", "*": "(~{0})"})
#: floats (NumPy's loops; integers promote to float64): the next value after x1 toward x2, and
#: the distance to the next value of larger magnitude; float16 and bfloat16 on their bits
_op("nextafter", E, 2, np.nextafter, ufunc=np.nextafter, cuda="sl_nextafter({0}, {1})", cuda_half="sl_nextafter({0}, {1})")
_op("spacing", E, 1, np.spacing, ufunc=np.spacing, cuda="sl_spacing({0})", cuda_half="sl_spacing({0})")
#: internal (``sl.frexp``): the int32 exponent of NumPy's ``frexp`` (0 for zeros, infinities and
#: NaN); the mantissa is ``ldexp(x, -exponent)``, exact. Typed by ``sl.frexp`` (two outputs)
_op("frexp_exponent", E, 1, lambda x: np.frexp(x)[1], cuda="sl_frexp_exp({0})")
#: integers only (NumPy's loops): the number of 1 bits of the magnitude, as uint8 (the magnitude
#: wraps as NumPy's: bitwise_count(int8(-128)) is 1)
_op("bitwise_count", E, 1, np.bitwise_count, ufunc=np.bitwise_count, cuda="sl_popcount({0})")
_op("isnan", E, 1, np.isnan, ufunc=np.isnan, cuda={"f": "isnan({0})", "*": "false"})
_op("isinf", E, 1, np.isinf, ufunc=np.isinf, cuda={"f": "isinf({0})", "*": "false"})
_op("isfinite", E, 1, np.isfinite, ufunc=np.isfinite, cuda={"f": "isfinite({0})", "*": "true"})
#: dtype conversion; the target dtype is the node's dtype. NumPy's ``astype`` semantics.
_op("astype", E, 1, None, cuda="sl_cast")

# --- binary elementwise ----------------------------------------------------------------------
_op("add", E, 2, np.add, ufunc=np.add, cuda={"b": "({0} || {1})", "*": "({0} + {1})"}, commutative=True,
    cuda_half="sl_hadd({0}, {1})")
_op("subtract", E, 2, np.subtract, ufunc=np.subtract, cuda="({0} - {1})", cuda_half="sl_hsub({0}, {1})")
_op("multiply", E, 2, np.multiply, ufunc=np.multiply, cuda={"b": "({0} && {1})", "*": "({0} * {1})"}, commutative=True,
    cuda_half="sl_hmul({0}, {1})")
_op("divide", E, 2, np.true_divide, ufunc=np.true_divide, cuda="({0} / {1})", cost=2, cuda_fast="__fdividef({0}, {1})")
_op("floor_divide", E, 2, np.floor_divide, ufunc=np.floor_divide, cuda="sl_floordiv({0}, {1})", cost=4)
_op("remainder", E, 2, np.remainder, ufunc=np.remainder, cuda="sl_mod({0}, {1})", cost=4)
_op("power", E, 2, np.power, ufunc=np.power, cuda="sl_pow({0}, {1})", cost=8)
#: ``power`` without NumPy's fast paths for a scalar exponent (``np.power(x, 0.5)`` of float32 and
#: float64 is ``sqrt(x)``: NaN for -inf; ``np.float_power(x, 0.5)`` is ``pow``: inf)
_op("float_power", E, 2, np.float_power, ufunc=np.float_power, cuda="sl_pow({0}, {1})", cost=8)
_op("fmod", E, 2, np.fmod, ufunc=np.fmod, cuda="sl_fmod({0}, {1})", cost=4)
_op("left_shift", E, 2, np.left_shift, ufunc=np.left_shift, cuda="sl_lshift({0}, {1})")
_op("right_shift", E, 2, np.right_shift, ufunc=np.right_shift, cuda="sl_rshift({0}, {1})")
_op("heaviside", E, 2, np.heaviside, ufunc=np.heaviside, cuda="sl_heaviside({0}, {1})")
#: internal (``sl.random``), not a NumPy function: SplitMix64's output function of a uint64
#: (Steele, Lea and Flood 2014), typed by ``invert``'s loop (uint64 -> uint64)
_op("splitmix64", E, 1, _splitmix64, ufunc=np.invert, cuda="sl_splitmix64({0})", cost=10)
#: internal (``sl.random``): the value of Marsaglia and Tsang's rounds (``_gamma_rounds``) of a
#: float64 ``d`` and a uint64 counter, float64; built as a node by ``sl.random``, not through
#: type resolution. The kernel loops until a round accepts (1.05 rounds on average at worst)
_op("gamma_rounds", E, 2, _gamma_rounds, cuda="sl_gamma_rounds({0}, {1})", cost=120)
#: internal (``sl.random``): a Poisson count (``_poisson_rounds``) of a float64 rate and a uint64
#: counter, float64 (-1 for a rate NumPy rejects); built as a node by ``sl.random``. The kernel
#: searches (rate below 10) or loops until a round accepts (1.33 rounds on average at worst)
_op("poisson_rounds", E, 2, _poisson_rounds, cuda="sl_poisson_rounds({0}, {1})", cost=160)
#: internal (``sl.random``): a binomial count (``_binomial_rounds``) of float64 ``n`` and ``p`` and a
#: uint64 counter, float64 (-1 for parameters NumPy rejects); built as a node by ``sl.random``. The
#: kernel searches (``n min(p, 1 - p)`` below 10) or loops until a round accepts
_op("binomial_rounds", E, 3, _binomial_rounds, cuda="sl_binomial_rounds({0}, {1}, {2})", cost=180)
#: internal (``sl.random``): a von Mises angle about 0 (``_vonmises_rounds``) of a float64 kappa and
#: a uint64 counter, float64; built as a node by ``sl.random``. The kernel loops until a round accepts
_op("vonmises_rounds", E, 2, _vonmises_rounds, cuda="sl_vonmises_rounds({0}, {1})", cost=160)
#: internal (``sl.random``): a hypergeometric count (``_hypergeometric_rounds``) of float64 good, bad
#: and sample and a uint64 counter, float64 (-1 for parameters NumPy rejects); built by ``sl.random``
_op("hypergeometric_rounds", E, 4, _hypergeometric_rounds, cuda="sl_hypergeometric_rounds({0}, {1}, {2}, {3})",
    cost=200)
#: x1 * 2**x2 exactly (x2 an int32 or int64: NumPy's loops), from C's ldexp; a float16 result is
#: the float32 one rounded once, as NumPy's float16 loop computes it
_op("ldexp", E, 2, np.ldexp, ufunc=np.ldexp, cuda="ldexp({0}, sl_ldexp_exp({1}))", cost=2)
#: integers only (NumPy's loops): greatest common divisor and least common multiple, >= 0 but
#: where the magnitude wraps (gcd(-128, 0) of int8 is -128, as in NumPy)
_op("gcd", E, 2, np.gcd, ufunc=np.gcd, cuda="sl_gcd({0}, {1})", commutative=True, cost=40)
_op("lcm", E, 2, np.lcm, ufunc=np.lcm, cuda="sl_lcm({0}, {1})", commutative=True, cost=44)
# maximum/minimum/fmax/fmin are not commutative bit for bit: of two equal values (-0.0 and +0.0)
# NumPy returns one by position, of two NaNs the first (payload and sign); so their operands are
# never reordered. (add and multiply stay commutative: IEEE gives the same value either way round;
# only the payload of a NaN made from two NaN operands may follow the order.)
_op("maximum", E, 2, np.maximum, ufunc=np.maximum, cuda="sl_maximum({0}, {1})", cuda_half="sl_hmax({0}, {1})")
_op("minimum", E, 2, np.minimum, ufunc=np.minimum, cuda="sl_minimum({0}, {1})", cuda_half="sl_hmin({0}, {1})")
_op("fmax", E, 2, np.fmax, ufunc=np.fmax, cuda={"f": "fmax({0}, {1})", "*": "sl_maximum({0}, {1})"})
_op("fmin", E, 2, np.fmin, ufunc=np.fmin, cuda={"f": "fmin({0}, {1})", "*": "sl_minimum({0}, {1})"})
_op("arctan2", E, 2, np.arctan2, ufunc=np.arctan2, cuda="atan2({0}, {1})", cost=10)
_op("hypot", E, 2, np.hypot, ufunc=np.hypot, cuda="hypot({0}, {1})", cost=4)
_op("copysign", E, 2, np.copysign, ufunc=np.copysign, cuda="copysign({0}, {1})")
_op("logaddexp", E, 2, np.logaddexp, ufunc=np.logaddexp, cuda="sl_logaddexp({0}, {1})", cost=12)
_op("logaddexp2", E, 2, np.logaddexp2, ufunc=np.logaddexp2, cuda="sl_logaddexp2({0}, {1})", cost=12)
_op("equal", E, 2, np.equal, ufunc=np.equal, cuda="({0} == {1})", commutative=True)
_op("not_equal", E, 2, np.not_equal, ufunc=np.not_equal, cuda="({0} != {1})", commutative=True)
_op("less", E, 2, np.less, ufunc=np.less, cuda="({0} < {1})")
_op("less_equal", E, 2, np.less_equal, ufunc=np.less_equal, cuda="({0} <= {1})")
_op("greater", E, 2, np.greater, ufunc=np.greater, cuda="({0} > {1})")
_op("greater_equal", E, 2, np.greater_equal, ufunc=np.greater_equal, cuda="({0} >= {1})")
_op("logical_and", E, 2, np.logical_and, ufunc=np.logical_and, cuda="(bool({0}) && bool({1}))", commutative=True)
_op("logical_or", E, 2, np.logical_or, ufunc=np.logical_or, cuda="(bool({0}) || bool({1}))", commutative=True)
_op("logical_xor", E, 2, np.logical_xor, ufunc=np.logical_xor, cuda="(bool({0}) != bool({1}))", commutative=True)
_op("bitwise_and", E, 2, np.bitwise_and, ufunc=np.bitwise_and, cuda="({0} & {1})", commutative=True)
_op("bitwise_or", E, 2, np.bitwise_or, ufunc=np.bitwise_or, cuda="({0} | {1})", commutative=True)
_op("bitwise_xor", E, 2, np.bitwise_xor, ufunc=np.bitwise_xor, cuda="({0} ^ {1})", commutative=True)

# --- ternary elementwise ---------------------------------------------------------------------
#: where(condition: bool, x, y); x and y share the node's dtype.
_op("where", E, 3, np.where, cuda="({0} ? {1} : {2})", cuda_half="({0} ? {1} : {2})")

# --- reductions (attrs: axes; output keeps reduced axes with extent 1) ------------------------
_op("sum", R, 1, np.sum, cuda="({0} + {1})", identity=0)
_op("prod", R, 1, np.prod, cuda="({0} * {1})", identity=1)
_op("max", R, 1, np.max, cuda="sl_maximum({0}, {1})")
_op("min", R, 1, np.min, cuda="sl_minimum({0}, {1})")
_op("any", R, 1, np.any, cuda="({0} || {1})", identity=False)
_op("all", R, 1, np.all, cuda="({0} && {1})", identity=True)
#: index of the first maximum (NaN counts as the maximum) along one axis; int64 output.
_op("argmax", R, 1, np.argmax, cuda=None)
_op("argmin", R, 1, np.argmin, cuda=None)

# --- broadcast and layout (index maps; no arithmetic) -----------------------------------------
#: attrs shape: input has the same ndim; axes of extent 1 are repeated.
_op("broadcast", Kind.BROADCAST, 1, None)
#: attrs shape: row-major reinterpretation of the same elements.
_op("reshape", Kind.LAYOUT, 1, None)
#: attrs perm: output axis i is input axis perm[i].
_op("transpose", Kind.LAYOUT, 1, None)
#: attrs starts, steps: output index i on axis k reads input index starts[k] + i * steps[k].
_op("slice", Kind.LAYOUT, 1, None)
#: attrs axis, before, extent, mode: output index i on ``axis`` reads the input at NumPy's ``pad``
#: position for ``mode`` ("edge", "wrap", "reflect", "symmetric") of ``i - before`` in an axis of
#: ``extent`` elements (``extent`` is the input's, kept as an attribute: a kernel's text does not
#: depend on the outermost extent of its shapes, and this position does). ``masked`` (an "edge"
#: pad of ``build.pad``'s ``masked``): its values outside the input are never used, and kernels
#: read the input there unclamped.
_op("pad", Kind.LAYOUT, 1, None)

# --- library steps: products, joins, gathers, scans, sorts (run by CuPy/NumPy, one step each) ---
#: NumPy's matmul of its two inputs (already cast to the result dtype): cuBLAS through CuPy.
_op("matmul", Kind.CONTRACT, 2, np.matmul)
#: attrs axis: NumPy's concatenate of its inputs (any number, already cast to the result dtype).
_op("concatenate", Kind.CONTRACT, -1, np.concatenate)
#: attrs subscripts: NumPy's einsum of its inputs (already cast to the result dtype), explicit output.
_op("einsum", Kind.CONTRACT, -1, np.einsum)
#: attrs axis, checked: input 0 at the int64 positions of input 1 along axis (NumPy's take);
#: checked: the positions were validated and made non-negative when the node was built (host
#: indices), else the step checks them against the axis when it runs.
_op("take", Kind.CONTRACT, 2, np.take)
#: attrs axis, checked: NumPy's take_along_axis of input 0 at the positions of input 1 (both
#: already broadcast to the result's shape, input 0 keeping its own extent along axis).
_op("take_along_axis", Kind.CONTRACT, 2, np.take_along_axis)
#: attrs axis, checked: input 0 with the slices at the int64 positions of input 1 (1-d)
#: along axis replaced by input 2's (``out[..., positions, ...] = values``; values shaped as input
#: 0 with len(positions) along axis). checked: the positions were validated, made non-negative
#: and made unique on the host (the last value of a repeated position kept, as NumPy's
#: assignment leaves it); else the step checks them and keeps the last value per position.
_op("scatter", Kind.CONTRACT, 3, None)
#: attrs side: NumPy's searchsorted of input 1 in the sorted 1-d input 0 (both in one dtype); int64.
_op("searchsorted", Kind.CONTRACT, 2, np.searchsorted)
#: attrs axis: running sum / product along axis (input already in the result dtype).
_op("cumsum", Kind.CONTRACT, 1, np.cumsum)
_op("cumprod", Kind.CONTRACT, 1, np.cumprod)
#: attrs axis: running maximum / minimum along axis, NumPy's ``maximum.accumulate`` /
#: ``minimum.accumulate`` (the input's dtype; the first NaN stays).
_op("cummax", Kind.CONTRACT, 1, np.maximum.accumulate)
_op("cummin", Kind.CONTRACT, 1, np.minimum.accumulate)
#: the running ops (a library step of their own, or a phase of a row kernel)
SCANS = ("cumsum", "cumprod", "cummax", "cummin")
#: the running maximum and minimum: in the input's dtype, nothing rounded
EXTREMA_SCANS = ("cummax", "cummin")
#: attrs axis: sorted along axis (NaN last); argsort: the int64 positions that sort it, ties in
#: index order (NumPy's kind="stable").
_op("sort", Kind.CONTRACT, 1, np.sort)
_op("argsort", Kind.CONTRACT, 1, np.argsort)

# --- sources ---------------------------------------------------------------------------------
#: a concrete buffer (or a placeholder while tracing).
_op("input", Kind.SOURCE, 0, None)
#: a 0-d constant; attrs value.
_op("const", Kind.SOURCE, 0, None)
#: attrs start, step: element i is start + i * step, computed in the node's dtype (float64 for floats).
_op("iota", Kind.SOURCE, 0, None)

#: Reductions whose results combine associatively (all but arg-reductions).
ASSOCIATIVE_REDUCTIONS = frozenset({"sum", "prod", "max", "min", "any", "all"})
ARG_REDUCTIONS = frozenset({"argmax", "argmin"})
COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
#: Ops with a hardware approximation (``cuda_fast``) that :func:`stitchlab.fast_math` selects.
FAST_MATH_OPS = frozenset(name for name, op in OPS.items() if op.cuda_fast is not None)


def keeps_earlier_ties(op: str, dtype: Any) -> bool:
    """Whether the running ``op`` in ``dtype`` keeps the earlier of equal values (-0.0, +0.0):
    NumPy's float16 maximum/minimum loop does; its other dtypes keep the later one."""
    return op in EXTREMA_SCANS and np.dtype(dtype) == np.float16


def get(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}") from None
