"""Random numbers as lazy arrays (``sl.random``), computed inside the kernels that use them.

A draw is an expression of its elements' positions, not a buffer: element ``j`` of the stream of
a generator is SplitMix64's output ``mix(key + j * 0x9E3779B97F4A7C15)`` (Steele, Lea and Flood,
2014: a 64-bit counter-based generator that passes BigCrush): an ``iota`` of positions, a uint64
multiply and add, and the op ``splitmix64`` (the output function: shifts, xors and two
multiplies), elementwise like any other op. So ``x * (sl.random.random(x.shape) >=
p) / (1 - p)`` (dropout) is one pointwise kernel that reads ``x`` and writes the result, with no
random buffer in memory, and the numpy backend computes the same bits. Each draw takes the next
stretch of the generator's stream: its start (one uint64) goes to the device as a 0-d input, so
every draw of one shape and dtype reuses one compiled kernel.

What the values are (the same on every backend and device, for one seed):

* ``random``/``uniform``: the top 53 bits of an output as a float64 in [0, 1) (24 for float32,
  11 for float16, 8 for bfloat16: every value a multiple of the type's step, never 1.0);
* ``standard_normal``/``normal``: Box-Muller over two float64 uniforms for float64 (tails to
  about 8.6 standard deviations); for float32, float16 and bfloat16 in float32 from one output
  (tails to 6.76), rounded once to the dtype; the last bits of ``log`` and ``cos`` differ between
  CUDA and the host's libm;
* ``integers``: ``low + output % (high - low)`` (a bias below ``(high - low) / 2**64``);
* ``standard_gamma`` and the distributions made of it: Marsaglia and Tsang's rounds, the first
  accepted of :data:`GAMMA_ROUNDS` taken (the op ``gamma_rounds``: a kernel loops until a round
  accepts, the numpy backend computes them all).

These are not NumPy's or CuPy's streams (their generators are PCG64, XORWOW, Philox), and not
for cryptography. Inside :func:`stitchlab.jit` a draw takes the next stretch of its generator's
stream at every call (the start is an input the replay makes anew), but for a generator the
function made from a seed, whose draws are the same at every call, as eagerly; under a CUDA-graph capture a
draw raises ``RuntimeError`` (the graph would replay the same numbers).
"""

from __future__ import annotations

import math
import operator
import secrets
import threading
from typing import Any

import numpy as np

from .. import runtime
from ..ir import ops as _ops
from ..ir.dtypes import as_dtype, is_float
from ..ir.node import Node
from ..ir.ops import OPS
from . import build
from . import jit as _jit
from .array import LazyArray
from .creation import _iota, _shape, asarray, full
from .library import argsort, searchsorted, take, take_along_axis

__all__ = [
    "Generator", "default_rng", "seed", "random", "random_sample", "rand", "randn", "uniform",
    "normal", "standard_normal", "integers", "randint", "permutation", "shuffle", "choice",
    "standard_exponential", "exponential", "gumbel", "laplace", "logistic", "lognormal", "rayleigh", "weibull",
    "pareto", "power", "standard_cauchy", "triangular", "wald", "geometric", "standard_gamma", "gamma", "beta",
    "chisquare", "standard_t", "f", "dirichlet", "multivariate_normal", "poisson", "binomial", "hypergeometric",
    "logseries", "negative_binomial", "permuted", "bytes", "noncentral_chisquare", "noncentral_f", "multinomial", "vonmises",
]

_GOLDEN = _ops.STREAM_STEP
_MASK = (1 << 64) - 1
_U64 = np.dtype(np.uint64)
#: float dtype name -> the top bits of an output that make a uniform value (its step: 2**-bits)
_UNIFORM_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
#: Marsaglia and Tsang's rounds a gamma draw may take (each accepts with probability 0.95 or more):
#: an element whose every round rejects, below 0.0495**12 = 2.2e-16, keeps the last round's proposal
GAMMA_ROUNDS = _ops.GAMMA_ROUNDS
#: Hörmann's PTRS rounds a Poisson draw of an array of rates may take (each rejects with probability
#: 0.25 at most): an element whose every round rejects, below 0.25**26 = 2e-16, keeps the last proposal
POISSON_ROUNDS = _ops.POISSON_ROUNDS
#: Hörmann's BTRS rounds a binomial draw of arrays may take (each rejects with probability 0.3 at
#: most): an element whose every round rejects, below 0.3**30 = 2e-16, keeps the last proposal
BINOMIAL_ROUNDS = _ops.BINOMIAL_ROUNDS
#: Best and Fisher's rounds a von Mises draw may take (each rejects with probability 0.343 at most):
#: an element whose every round rejects, below 0.343**34 = 2e-16, keeps the last proposal
VONMISES_ROUNDS = _ops.VONMISES_ROUNDS
#: Stadlober's HRUA rounds a hypergeometric draw of arrays may take (each rejects with probability
#: 0.59 at most in the cases measured): an element whose every round rejects, below 1e-16, keeps
#: the last proposal
HYPERGEOMETRIC_ROUNDS = _ops.HYPERGEOMETRIC_ROUNDS
#: the most entries the inverse distribution table of a discrete draw may have (``poisson``...)
TABLE_LIMIT = 1 << 22


def _mix(z: LazyArray) -> LazyArray:
    """SplitMix64's output function over a lazy uint64 array (the op ``splitmix64``)."""
    return LazyArray(build.elementwise("splitmix64", z._node))


def _uniform(z: LazyArray, dtype: np.dtype) -> LazyArray:
    """``z``'s top bits as a float of ``dtype`` in [0, 1), every value exact."""
    bits = _UNIFORM_BITS[dtype.name]
    top = z >> (64 - bits)
    if bits <= 32:  # a 32-bit conversion to float (a 64-bit one is several times slower on the GPU)
        top = top.astype(np.uint32)
    return top.astype(dtype) * (2.0 ** -bits)


def _normal64(z1: LazyArray, z2: LazyArray) -> LazyArray:
    """A float64 standard normal from two outputs: Box-Muller's ``sqrt(-2 log(1 - u1)) cos(2 pi u2)``."""
    from .api import cos, log, sqrt  # type: ignore[attr-defined]

    f64 = np.dtype(np.float64)
    radius = sqrt(-2.0 * log(1.0 - _uniform(z1, f64)))  # 1 - u in (0, 1]
    return radius * cos((2 * math.pi) * _uniform(z2, f64))


def _normal32(z: LazyArray) -> LazyArray:
    """A float32 standard normal from one output: Box-Muller's ``sqrt(-2 log u) cos(2 pi v)`` in
    float32, ``u = (h + 1/2) / 2**32`` of the high 32 bits ``h`` (in (0, 1); its logarithm taken
    where it is exact, ``log(t)`` below 1/2 and ``log1p(-t)`` above for the distance ``t`` to the
    nearer end, so neither the tails nor the centre are coarsened: tails to 6.76 standard
    deviations) and ``v`` the top 24 of the low 32 bits. Several times faster on the GPU than the
    float64 form, whose ``log`` and ``cos`` are double precision."""
    from .api import cos, log, log1p, sqrt, where  # type: ignore[attr-defined]

    f32, u32 = np.dtype(np.float32), np.dtype(np.uint32)
    high = (z >> 32).astype(u32)
    low = high < (1 << 31)
    # the distance to the nearer end: ~high above 2**31 (an xor with the sign spread over the word,
    # not a select: ptxas before 13.4 compiles integer selects unoptimized, kernels.py)
    t = ((high ^ ((high >> 31) * 0xFFFFFFFF)).astype(f32) + 0.5) * np.float32(2.0**-32)
    radius = sqrt(-2.0 * where(low, log(t), log1p(-t)))
    angle = np.float32(2 * math.pi) * (((z & 0xFFFFFFFF) >> 8).astype(u32).astype(f32) * np.float32(2.0**-24))
    return radius * cos(angle)


def _open_uniform(z: LazyArray) -> LazyArray:
    """A float64 uniform in (0, 1), both ends excluded: ``(k + 0.5) / 2**52`` for the top 52 bits ``k``."""
    return ((z >> 12).astype(np.float64) + 0.5) * 2.0 ** -52


def _float_dtype(name: str, dtype: Any) -> np.dtype:
    dt = as_dtype(dtype)
    if not is_float(dt) or dt.name not in _UNIFORM_BITS:
        raise TypeError(f"sl.random.{name}: dtype must be float16, bfloat16, float32 or float64, got {dt}")
    return dt


def _key(seed: Any) -> int:
    """A 64-bit key from a seed as NumPy takes them: a non-negative integer of any size (or a 0-d
    integer array), a sequence of them or a ``numpy.random.SeedSequence``; the last two through
    NumPy's ``SeedSequence``, whose first 128 bits of state are folded as an integer seed is."""
    if isinstance(seed, np.ndarray) and seed.ndim == 0 and seed.dtype.kind in "iu":
        seed = seed[()]
    if isinstance(seed, (np.random.SeedSequence, list, tuple, np.ndarray)):
        if not isinstance(seed, np.random.SeedSequence):
            seed = np.random.SeedSequence(seed)  # (NumPy's checks: integers, non-negative)
        low, high = (int(v) for v in seed.generate_state(2, np.uint64))
        seed = low | high << 64
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"sl.random: a seed must be a non-negative integer, a sequence of them or a "
                        f"numpy.random.SeedSequence (or None for fresh entropy), got {seed!r}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"sl.random: a seed must be a non-negative integer, got {seed}")
    key = _GOLDEN
    while True:  # fold 64-bit pieces of a large seed
        key = int(OPS["splitmix64"].numpy(np.uint64(((key ^ (seed & _MASK)) + _GOLDEN) & _MASK)))
        seed >>= 64
        if not seed:
            return key


class Generator:
    """A stream of random numbers (NumPy's ``Generator`` methods, SplitMix64 underneath: see
    :mod:`stitchlab.random`). Each draw returns a lazy array that takes the next stretch of the
    stream; draws are thread-safe.

    Example:
        >>> import stitchlab as sl
        >>> rng = sl.random.default_rng(42)
        >>> x = rng.random((2, 3), dtype="float32")
        >>> x.shape, str(x.dtype), bool(((x >= 0) & (x < 1)).all())
        ((2, 3), 'float32', True)
    """

    def __init__(self, seed: Any = None) -> None:
        self._key = _key(secrets.randbits(64) if seed is None else seed)
        self._counter = 0
        self._spawned = 0
        self._lock = threading.Lock()
        # the sl.jit trace that made it from a seed (None: from fresh entropy, or outside a trace):
        # its draws there are constants of the trace, the numbers a call would make it draw anew
        self._trace = None if seed is None else _jit.current_trace()

    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` new generators with streams of their own (NumPy's ``Generator.spawn``):
        one per worker or rank, say. The ``s``-th child spawned is seeded by this generator's key
        and ``s``, so spawning again gives further, different children."""
        n = operator.index(n_children)
        if n < 0:
            raise ValueError(f"sl.random.Generator.spawn: n_children must be non-negative, got {n}")
        with self._lock:
            first = self._spawned
            self._spawned += n
        children = [Generator((self._key << 64) | s) for s in range(first, first + n)]  # a 128-bit seed
        for child in children:  # made in a trace as their parent was (or not)
            child._trace = self._trace
        return children

    def __repr__(self) -> str:
        return f"Generator(SplitMix64, {self._counter} values drawn)"

    def _start(self, name: str, values: int) -> Any:
        """The stream's next ``values`` outputs start at the returned key (a 0-d uint64 buffer on
        the current backend's device), the stream moves past them."""
        if runtime.current().device() != "cpu":
            import cupy

            from ..runtime.scratch import capturing

            if capturing(cupy.cuda.get_current_stream()):
                raise RuntimeError(
                    f"sl.random.{name} under a CUDA-graph capture: the graph would replay the same numbers; "
                    "draw before the capture begins and pass the array in"
                )
        with self._lock:
            start = self._counter
            self._counter += values
        return asarray(np.array((self._key + start * _GOLDEN) & _MASK, dtype=_U64))._node.value

    def _counters(self, name: str, shape: tuple[int, ...], count: int) -> tuple[LazyArray, np.dtype]:
        """The stream's start (a 0-d uint64 input, made anew at every :func:`~stitchlab.jit` call
        but for a generator seeded in that function) and the dtype of the positions of a draw of
        ``count`` outputs an element."""
        n = math.prod(shape)
        # in a trace, a generator from outside it (or from fresh entropy) draws anew at each call
        tracing = _jit.tracing() and (self._trace is None or self._trace is not _jit.current_trace())
        start = None if tracing else self._start(name, n * count)
        base = LazyArray(Node("input", (), (), _U64, value=start, device=runtime.current().device()))
        if tracing:
            _jit.per_call_input(base._node, lambda: self._start(name, n * count))
        # positions as uint32 where they fit: the multiply by the 64-bit constant is then a wide
        # 32-bit one (bits unchanged: the positions are the same numbers)
        return base, np.dtype(np.uint32) if n * count <= 1 << 32 else _U64

    def _streams(self, name: str, shape: tuple[int, ...], count: int) -> list[LazyArray]:
        """``count`` lazy uint64 arrays of ``shape``: the next ``count * size`` outputs of the
        stream, interleaved (element i of stream k is output ``count * i + k``)."""
        base, width = self._counters(name, shape, count)
        n = math.prod(shape)
        return [_mix(base + _iota(n, k, count, width).astype(_U64) * _GOLDEN).reshape(shape) for k in range(count)]

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> LazyArray:
        """Uniform floats in [0, 1) (NumPy's ``Generator.random``; float16 and bfloat16 too).
        ``out`` (of ``dtype``, and of ``size`` where both are given) receives the draw, as in NumPy."""
        dt = _float_dtype("random", dtype)
        (z,) = self._streams("random", _drawn_shape(size, out, dt), 1)
        return _into(_uniform(z, dt), out)

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> LazyArray:
        """Normally distributed floats, mean 0 and standard deviation 1: Box-Muller in float64 for
        float64 (tails to 8.6 standard deviations), in float32 from one output for float32,
        float16 and bfloat16 (tails to 6.76, rounded once to ``dtype``). ``out`` as :meth:`random`'s."""
        dt = _float_dtype("standard_normal", dtype)
        shape = _drawn_shape(size, out, dt)
        if dt.itemsize <= 4:
            (z,) = self._streams("standard_normal", shape, 1)
            return _into(_normal32(z).astype(dt), out)
        z1, z2 = self._streams("standard_normal", shape, 2)
        return _into(_normal64(z1, z2), out)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """``loc + scale * standard_normal`` (NumPy's ``Generator.normal``; ``loc`` and ``scale``
        may be arrays, broadcast with ``size``)."""
        _check_scale("normal", "scale", scale)
        dt = _float_dtype("normal", dtype)
        loc, scale = _parameters(loc, scale)
        shape = _broadcast_size(size, loc, scale)
        z = self.standard_normal(shape, np.float32 if dt.itemsize <= 4 else np.float64)
        return (loc + scale * z.astype(np.float64)).astype(dt)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Uniform floats in [low, high) (NumPy's ``Generator.uniform``). Bounds on the host are
        checked as NumPy checks them: ``high - low`` must be finite (``OverflowError``) and not
        negative (``ValueError``)."""
        return self._uniform(low, high, size, dtype, check=True)

    def _uniform(self, low: Any, high: Any, size: Any, dtype: Any, check: bool) -> LazyArray:
        """:meth:`uniform`; ``check=False`` takes ``high < low`` (NumPy's and CuPy's module
        ``uniform``, which draw in (high, low] then)."""
        dt = _float_dtype("uniform", dtype)
        if _on_host(low) and _on_host(high):
            with np.errstate(invalid="ignore", over="ignore"):
                span = np.subtract(np.asarray(high, np.float64), np.asarray(low, np.float64))
            if not np.all(np.isfinite(span)):
                raise OverflowError(f"sl.random.uniform: high - low range exceeds valid bounds (low={low!r}, "
                                    f"high={high!r}): high - low is not finite")
            if check and np.any(span < 0):
                raise ValueError(f"sl.random.uniform: high - low < 0 (low={low!r}, high={high!r}); give low <= high")
        low, high = _parameters(low, high)
        shape = _broadcast_size(size, low, high)
        return (low + (high - low) * self.random(shape, np.float64)).astype(dt)

    def _open(self, name: str, shape: tuple[int, ...]) -> LazyArray:
        """Uniform float64 values in (0, 1), both ends excluded, what the inverse distribution
        functions below take the log of: ``(k + 0.5) / 2**52`` for the top 52 bits ``k`` of an
        output, every step exact (from ``2**-53`` to ``1 - 2**-53``)."""
        (z,) = self._streams(name, shape, 1)
        return _open_uniform(z)

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64, method: str = "zig") -> LazyArray:
        """Exponentially distributed floats of mean 1 (NumPy's ``Generator.standard_exponential``):
        ``-log(u)`` of uniform ``u`` in (0, 1) (never 0 or inf), in float64, rounded once to ``dtype``. Both of
        NumPy's methods ("zig", "inv") are this inverse transform here."""
        if method not in ("zig", "inv"):
            raise ValueError(f"sl.random.standard_exponential: method must be 'zig' or 'inv', got {method!r}")
        dt = _float_dtype("standard_exponential", dtype)
        from .api import log  # type: ignore[attr-defined]

        return (-log(self._open("standard_exponential", _shape(() if size is None else size)))).astype(dt)

    def exponential(self, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """``scale * standard_exponential`` (NumPy's ``Generator.exponential``; ``scale`` a number
        or an array broadcast with ``size``)."""
        _check_scale("exponential", "scale", scale)
        dt = _float_dtype("exponential", dtype)
        (scale,) = _parameters(scale)
        return (scale * self.standard_exponential(_broadcast_size(size, scale))).astype(dt)

    def _location_scale(self, name: str, loc: Any, scale: Any, size: Any, dtype: Any) -> tuple[Any, Any, LazyArray, np.dtype]:
        _check_scale(name, "scale", scale)
        dt = _float_dtype(name, dtype)
        loc, scale = _parameters(loc, scale)
        return loc, scale, self._open(name, _broadcast_size(size, loc, scale)), dt

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Gumbel (maximum) distributed floats, ``loc - scale * log(-log(u))`` (NumPy's
        ``Generator.gumbel``): add them to logits and take the argmax to sample a softmax."""
        from .api import log  # type: ignore[attr-defined]

        loc, scale, u, dt = self._location_scale("gumbel", loc, scale, size, dtype)
        return (loc - scale * log(-log(u))).astype(dt)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Laplace (double exponential) distributed floats (NumPy's ``Generator.laplace``: its
        inverse transform of ``u``, ``loc - scale * log(2 - 2u)`` above one half, ``loc + scale *
        log(2u)`` below)."""
        from .api import log, where  # type: ignore[attr-defined]

        loc, scale, u, dt = self._location_scale("laplace", loc, scale, size, dtype)
        return where(u >= 0.5, loc - scale * log(2.0 - u - u), loc + scale * log(u + u)).astype(dt)

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Logistic distributed floats, ``loc + scale * log(u / (1 - u))`` (NumPy's
        ``Generator.logistic``)."""
        from .api import log  # type: ignore[attr-defined]

        loc, scale, u, dt = self._location_scale("logistic", loc, scale, size, dtype)
        return (loc + scale * log(u / (1.0 - u))).astype(dt)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """``exp(normal(mean, sigma))`` (NumPy's ``Generator.lognormal``)."""
        from .api import exp  # type: ignore[attr-defined]

        _check_scale("lognormal", "sigma", sigma)
        dt = _float_dtype("lognormal", dtype)
        mean, sigma = _parameters(mean, sigma)
        return exp(mean + sigma * self.standard_normal(_broadcast_size(size, mean, sigma))).astype(dt)

    def _shaped(self, name: str, a: Any, size: Any, dtype: Any) -> tuple[Any, LazyArray, np.dtype]:
        """A one-parameter distribution's parameter, a float64 standard exponential of the broadcast
        shape, and the result dtype."""
        dt = _float_dtype(name, dtype)
        (a,) = _parameters(a)
        return a, self.standard_exponential(_broadcast_size(size, a)), dt

    def rayleigh(self, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Rayleigh distributed floats, ``scale * sqrt(2 * standard_exponential)`` (NumPy's
        ``Generator.rayleigh``)."""
        from .api import sqrt  # type: ignore[attr-defined]

        _check_scale("rayleigh", "scale", scale)
        scale, e, dt = self._shaped("rayleigh", scale, size, dtype)
        return (scale * sqrt(e + e)).astype(dt)

    def weibull(self, a: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Weibull distributed floats of shape ``a``, ``standard_exponential ** (1 / a)`` (NumPy's
        ``Generator.weibull``; ``a = 0`` gives zeros, as in NumPy)."""
        from .api import where  # type: ignore[attr-defined]

        _check_scale("weibull", "a", a)
        a, e, dt = self._shaped("weibull", a, size, dtype)
        if not isinstance(a, LazyArray):
            return (e * 0.0 if a == 0 else e ** (1.0 / a)).astype(dt)
        return where(a == 0, 0.0, e ** (1.0 / a)).astype(dt)

    def pareto(self, a: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Pareto II (Lomax) distributed floats of shape ``a``, ``expm1(standard_exponential / a)``
        (NumPy's ``Generator.pareto``: add 1 and multiply by ``m`` for the classical Pareto of
        minimum ``m``)."""
        from .api import expm1  # type: ignore[attr-defined]

        _check("pareto", a, lambda v: v <= 0, "a <= 0")
        a, e, dt = self._shaped("pareto", a, size, dtype)
        return expm1(e / a).astype(dt)

    def power(self, a: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Floats in (0, 1) with density ``a * x**(a - 1)``, ``u ** (1 / a)`` of uniform ``u`` in
        (0, 1) (NumPy's ``Generator.power``)."""
        _check("power", a, lambda v: v <= 0, "a <= 0")
        dt = _float_dtype("power", dtype)
        (a,) = _parameters(a)
        return (self._open("power", _broadcast_size(size, a)) ** (1.0 / a)).astype(dt)

    def standard_cauchy(self, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Cauchy (Lorentz) distributed floats, ``tan(pi * (u - 1/2))`` of uniform ``u`` in (0, 1)
        (NumPy's ``Generator.standard_cauchy``; always finite)."""
        from .api import tan  # type: ignore[attr-defined]

        dt = _float_dtype("standard_cauchy", dtype)
        u = self._open("standard_cauchy", _shape(() if size is None else size))
        return tan(math.pi * (u - 0.5)).astype(dt)

    def triangular(self, left: Any, mode: Any, right: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Triangular distributed floats over [left, right] peaking at ``mode`` (NumPy's
        ``Generator.triangular``: its inverse distribution function of a uniform)."""
        from .api import sqrt, where  # type: ignore[attr-defined]

        host = [v for v in (left, mode, right) if _on_host(v)]
        if len(host) == 3:
            lo, md, hi = (np.asarray(v, dtype=np.float64) for v in host)
            for bad, message in ((lo > md, "left > mode"), (md > hi, "mode > right"), (lo == hi, "left == right")):
                if np.any(bad):
                    raise ValueError(f"sl.random.triangular: {message} (left={left!r}, mode={mode!r}, right={right!r})")
        dt = _float_dtype("triangular", dtype)
        left, mode, right = _parameters(left, mode, right)
        u = self.random(_broadcast_size(size, left, mode, right))
        base, below, above = right - left, mode - left, right - mode
        return where(u <= below / base, left + sqrt(u * below * base), right - sqrt((1.0 - u) * above * base)).astype(dt)

    def wald(self, mean: Any, scale: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Wald (inverse Gaussian) distributed floats (NumPy's ``Generator.wald``: Michael, Schucany
        and Haas' transform of a normal and a uniform, here in a form without cancellation: the
        smaller root is ``mean / (r + sqrt(r*r + 1))**2`` for ``r = |z| * sqrt(mean / (4 scale))``)."""
        from .api import absolute, sqrt, where  # type: ignore[attr-defined]

        _check("wald", mean, lambda v: v <= 0, "mean <= 0")
        _check("wald", scale, lambda v: v <= 0, "scale <= 0")
        dt = _float_dtype("wald", dtype)
        mean, scale = _parameters(mean, scale)
        shape = _broadcast_size(size, mean, scale)
        r = absolute(self.standard_normal(shape)) * sqrt(mean / (4.0 * scale))
        w = r + sqrt(r * r + 1.0)
        w = w * w
        small = mean / w  # the root below the mean, taken with probability mean / (mean + small)
        return where(self.random(shape) * (mean + small) <= mean, small, mean * w).astype(dt)

    def geometric(self, p: Any, size: Any = None) -> LazyArray:
        """The number of Bernoulli trials of success probability ``p`` up to the first success, as
        int64 (NumPy's ``Generator.geometric``): ``ceil(standard_exponential / -log1p(-p))``, the
        inverse distribution function, for every ``p`` (NumPy searches for ``p >= 1/3``: the same
        distribution); counts past int64 are its largest value, as in NumPy."""
        from .api import ceil, log1p, maximum, minimum, where  # type: ignore[attr-defined]

        _check("geometric", p, lambda v: ~((v > 0) & (v <= 1)), "p <= 0, p > 1 or p contains NaNs")
        (p,) = _parameters(p)
        e = self.standard_exponential(_broadcast_size(size, p))
        k = maximum(ceil(e / -log1p(-p)), 1.0)  # p = 1: e / inf = 0, one trial
        top = np.iinfo(np.int64).max
        return where(k >= 2.0**63, top, minimum(k, 2.0**62).astype(np.int64))

    def _gamma(self, name: str, shape_: Any, size: tuple[int, ...], log: bool = False) -> LazyArray:
        """Float64 standard gamma draws of shape parameter ``shape_`` (a number or a lazy array
        broadcast to ``size``), or with ``log`` their logarithms: Marsaglia and Tsang's method
        (2000), ``d v`` for ``d = a - 1/3``, ``v = (1 + x / sqrt(9 d))**3`` of a normal ``x``, accepted
        where ``log u < x**2 / 2 + d - d v + d log v``, for ``a >= 1``; below 1 a draw for ``a + 1``
        times ``u**(1 / a)``. The op ``gamma_rounds`` (``ir/ops.py``) takes the first accepted of
        :data:`GAMMA_ROUNDS` rounds; in a kernel it stops there. An element takes
        ``2 * GAMMA_ROUNDS + 1`` outputs of the stream: the rounds' normals (Box-Muller pairs), their
        uniforms, and ``u``."""
        from .api import log as ln  # type: ignore[attr-defined]
        from .api import where  # type: ignore[attr-defined]

        lazy = isinstance(shape_, LazyArray)
        if lazy:
            shape_ = shape_.astype(np.float64)
            d_node = (where(shape_ < 1, shape_ + 1.0, shape_) - 1.0 / 3.0)._node
        else:
            d_node = build.const(float((shape_ + 1.0 if shape_ < 1 else shape_) - 1.0 / 3.0), np.dtype(np.float64))
        d = LazyArray(build.broadcast_to(d_node, size))
        count = 2 * GAMMA_ROUNDS + 1
        base, width = self._counters(name, size, count)
        z0 = base + _iota(math.prod(size), 0, count, width).astype(_U64) * _GOLDEN
        chosen = LazyArray(Node("gamma_rounds", (d._node, z0.reshape(size)._node), size, np.dtype(np.float64),
                                device=runtime.current().device()))
        u = _open_uniform(_mix(z0 + ((2 * GAMMA_ROUNDS * _GOLDEN) & _MASK)).reshape(size))
        # (a shape of 0 gives 0: u ** inf, log u / 0 = -inf)
        if log:
            out = ln(d * chosen)
            if lazy:
                return where(shape_ < 1, out + ln(u) / shape_, out)
            if shape_ == 0:
                return out * 0.0 - math.inf
            return out + ln(u) / shape_ if shape_ < 1 else out
        g = d * chosen
        if lazy:
            return where(shape_ < 1, g * u ** (1.0 / shape_), g)
        if shape_ == 0:
            return g * 0.0
        return g * u ** (1.0 / shape_) if shape_ < 1 else g

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Gamma distributed floats of shape parameter ``shape`` and scale 1 (NumPy's
        ``Generator.standard_gamma``): Marsaglia and Tsang's method, every round in one fused
        kernel (see :data:`GAMMA_ROUNDS`), in float64, rounded once to ``dtype``."""
        _check("standard_gamma", shape, lambda v: v < 0, "shape < 0")
        dt = _float_dtype("standard_gamma", dtype)
        (a,) = _parameters(shape)
        return self._gamma("standard_gamma", a, _broadcast_size(size, a)).astype(dt)

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """``scale * standard_gamma(shape)`` (NumPy's ``Generator.gamma``)."""
        _check("gamma", shape, lambda v: v < 0, "shape < 0")
        _check_scale("gamma", "scale", scale)
        dt = _float_dtype("gamma", dtype)
        a, scale = _parameters(shape, scale)
        return (scale * self._gamma("gamma", a, _broadcast_size(size, a, scale))).astype(dt)

    def beta(self, a: Any, b: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Beta distributed floats in [0, 1], ``Ga / (Ga + Gb)`` of two gamma draws, taken from their
        logarithms, ``sigmoid(log Ga - log Gb)``, so that tiny ``a`` and ``b`` (gammas below the
        smallest float) still give 0 or 1 in the right proportion (NumPy's ``Generator.beta``)."""
        from .api import sigmoid  # type: ignore[attr-defined]

        _check("beta", a, lambda v: v <= 0, "a <= 0")
        _check("beta", b, lambda v: v <= 0, "b <= 0")
        dt = _float_dtype("beta", dtype)
        a, b = _parameters(a, b)
        shape = _broadcast_size(size, a, b)
        return sigmoid(self._gamma("beta", a, shape, log=True) - self._gamma("beta", b, shape, log=True)).astype(dt)

    def chisquare(self, df: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Chi-square distributed floats of ``df`` degrees of freedom, ``2 * standard_gamma(df / 2)``
        (NumPy's ``Generator.chisquare``)."""
        _check("chisquare", df, lambda v: v <= 0, "df <= 0")
        dt = _float_dtype("chisquare", dtype)
        (df,) = _parameters(df)
        return (2.0 * self._gamma("chisquare", df / 2.0, _broadcast_size(size, df))).astype(dt)

    def standard_t(self, df: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Student's t distributed floats of ``df`` degrees of freedom, ``z * sqrt(df / 2 / g)`` of a
        normal ``z`` and a gamma ``g`` of shape ``df / 2`` (NumPy's ``Generator.standard_t``)."""
        from .api import sqrt  # type: ignore[attr-defined]

        _check("standard_t", df, lambda v: v <= 0, "df <= 0")
        dt = _float_dtype("standard_t", dtype)
        (df,) = _parameters(df)
        shape = _broadcast_size(size, df)
        g = self._gamma("standard_t", df / 2.0, shape)
        return (self.standard_normal(shape) * sqrt((df / 2.0) / g)).astype(dt)

    def f(self, dfnum: Any, dfden: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """F distributed floats, ``(chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden)`` (NumPy's
        ``Generator.f``)."""
        _check("f", dfnum, lambda v: v <= 0, "dfnum <= 0")
        _check("f", dfden, lambda v: v <= 0, "dfden <= 0")
        dt = _float_dtype("f", dtype)
        dfnum, dfden = _parameters(dfnum, dfden)
        shape = _broadcast_size(size, dfnum, dfden)
        num = self._gamma("f", dfnum / 2.0, shape) / (dfnum / 2.0)
        return (num / (self._gamma("f", dfden / 2.0, shape) / (dfden / 2.0))).astype(dt)

    def noncentral_chisquare(self, df: Any, nonc: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Noncentral chi-square distributed floats of ``df`` degrees of freedom and
        noncentrality ``nonc`` (NumPy's ``Generator.noncentral_chisquare`` and its method): for
        ``df > 1`` a chi-square of ``df - 1`` plus the square of a normal of mean ``sqrt(nonc)``;
        otherwise a chi-square of ``df + 2 i`` for a Poisson count ``i`` of mean ``nonc / 2``;
        ``nonc = 0`` is :meth:`chisquare`. ``df`` and ``nonc`` may be arrays."""
        from .api import isnan, sqrt, where  # type: ignore[attr-defined]

        _check("noncentral_chisquare", df, lambda v: v <= 0, "df <= 0")
        _check("noncentral_chisquare", nonc, lambda v: v < 0, "nonc < 0")
        dt = _float_dtype("noncentral_chisquare", dtype)
        df, nonc = _parameters(df, nonc)
        shape = _broadcast_size(size, df, nonc)
        one_df = isinstance(df, float)
        if isinstance(nonc, float) and nonc == 0:
            return self.chisquare(df, shape, dt)
        if isinstance(nonc, float) and math.isnan(nonc):  # NumPy's draws are NaN (its checks let NaN through)
            nonc = full((), nonc)
        if not one_df or df > 1:
            shifted = self.standard_normal(shape) + sqrt(nonc)
            big = 2.0 * self._gamma("noncentral_chisquare", (df - 1.0 if one_df else where(df > 1, df - 1.0, df)) / 2.0, shape)
            big = big + shifted * shifted
            if one_df:
                return big.astype(dt)
        small = 2.0 * self._gamma("noncentral_chisquare", df / 2.0 + self.poisson(nonc / 2.0, shape), shape)
        out = small if one_df else where(df > 1, big, small)
        if isinstance(nonc, LazyArray):  # a NaN rate's Poisson count is -1 (device) or a table's: NaN, as NumPy's
            out = where(isnan(nonc), math.nan, out)
        return out.astype(dt)

    def noncentral_f(self, dfnum: Any, dfden: Any, nonc: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Noncentral F distributed floats (NumPy's ``Generator.noncentral_f``):
        ``noncentral_chisquare(dfnum, nonc) * dfden / (chisquare(dfden) * dfnum)``."""
        _check("noncentral_f", dfnum, lambda v: v <= 0, "dfnum <= 0")
        _check("noncentral_f", dfden, lambda v: v <= 0, "dfden <= 0")
        _check("noncentral_f", nonc, lambda v: v < 0, "nonc < 0")
        dt = _float_dtype("noncentral_f", dtype)
        dfnum, dfden, nonc = _parameters(dfnum, dfden, nonc)
        shape = _broadcast_size(size, dfnum, dfden, nonc)
        t = self.noncentral_chisquare(dfnum, nonc, shape) * dfden
        return (t / (self.chisquare(dfden, shape) * dfnum)).astype(dt)

    def vonmises(self, mu: Any, kappa: Any, size: Any = None) -> LazyArray:
        """Von Mises (circular normal) distributed angles in [-pi, pi] about ``mu`` of concentration
        ``kappa``, float64 (NumPy's ``Generator.vonmises`` and its method): Best and Fisher's
        rejection rounds in the kernel (the op ``vonmises_rounds``, a loop over at most
        :data:`VONMISES_ROUNDS` rounds, 1.5 on average at worst), uniform below ``kappa`` 1e-8 and a
        normal of variance ``1 / kappa`` above 1e6; ``mu`` added and the angle wrapped to
        [-pi, pi] as NumPy wraps it. ``mu`` and ``kappa`` may be arrays (broadcast with ``size``); a
        negative ``kappa`` on the host raises NumPy's ``ValueError``, on the device gives NaN."""
        from .api import absolute, fmod, where  # type: ignore[attr-defined]

        _check("vonmises", kappa, lambda v: v < 0, "kappa < 0")
        mu, kappa = _parameters(mu, kappa)
        shape = _broadcast_size(size, mu, kappa)
        turned = self._rounds("vonmises_rounds", "vonmises", (kappa,), shape, 2 * VONMISES_ROUNDS + 1) + mu
        wrapped = fmod(absolute(turned) + math.pi, 2 * math.pi) - math.pi
        return where(turned < 0, -wrapped, wrapped)

    def dirichlet(self, alpha: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
        """Dirichlet distributed vectors along a new last axis of ``len(alpha)`` (NumPy's
        ``Generator.dirichlet``): gamma draws of shapes ``alpha`` normalized to sum 1, from their
        logarithms (a softmax over the last axis: one row kernel), so that small ``alpha`` does not
        give 0 / 0; a zero ``alpha`` gives that component 0, as in NumPy."""
        from .api import softmax  # type: ignore[attr-defined]

        if _on_host(alpha):
            host = np.asarray(alpha, dtype=np.float64)
            if host.ndim == 0:
                raise ValueError("object of too small depth for desired array")
            if np.any(host < 0):
                raise ValueError(f"sl.random.dirichlet: alpha < 0 ({alpha!r})")
        dt = _float_dtype("dirichlet", dtype)
        a = asarray(np.asarray(alpha, dtype=np.float64)) if _on_host(alpha) else asarray(alpha).astype(np.float64)
        if a.ndim != 1:
            raise ValueError(f"sl.random.dirichlet: alpha must be a 1-d sequence, got {a.ndim} dimensions")
        shape = _shape(() if size is None else size) + (a.shape[-1],)
        if a.shape[-1] == 0:  # no components: empty vectors, as NumPy's (a softmax of none has no maximum)
            return full(shape, 0.0, dtype=dt)
        return softmax(self._gamma("dirichlet", a, shape, log=True), axis=-1).astype(dt)

    def multivariate_normal(self, mean: Any, cov: Any, size: Any = None, check_valid: str = "warn", tol: float = 1e-8,
                            *, method: str = "svd", dtype: Any = np.float64) -> LazyArray:
        """Normal vectors of mean ``mean`` and covariance ``cov`` along a new last axis (NumPy's
        ``Generator.multivariate_normal``, its methods ``"svd"``, ``"eigh"``, ``"cholesky"``, its
        ``check_valid`` and errors): ``mean + z @ factor.T`` for standard normals ``z``, a matrix
        product step. ``mean`` and ``cov`` are read on the host and the factor computed there by
        NumPy (a ``d x d`` decomposition); the draw is lazy."""
        import warnings

        if method not in {"eigh", "svd", "cholesky"}:
            raise ValueError("method must be one of {'eigh', 'svd', 'cholesky'}")
        m, c = np.array(np.asarray(mean), dtype=np.float64), np.array(np.asarray(cov), dtype=np.float64)
        if m.ndim != 1:
            raise ValueError("mean must be 1 dimensional")
        if c.ndim != 2 or c.shape[0] != c.shape[1]:
            raise ValueError("cov must be 2 dimensional and square")
        if m.shape[0] != c.shape[0]:
            raise ValueError("mean and cov must have same length")
        dt = _float_dtype("multivariate_normal", dtype)
        if method == "svd":
            u, s, vh = np.linalg.svd(c)
        elif method == "eigh":
            s, u = np.linalg.eigh(c)
        else:
            factor = np.linalg.cholesky(c)
        if check_valid != "ignore" and method != "cholesky":
            if check_valid not in ("warn", "raise"):
                raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
            psd = np.allclose(np.dot(vh.T * s, vh), c, rtol=tol, atol=tol) if method == "svd" else not np.any(s < -tol)
            if not psd:
                if check_valid == "raise":
                    raise ValueError("covariance is not symmetric positive-semidefinite.")
                warnings.warn("covariance is not symmetric positive-semidefinite.", RuntimeWarning, stacklevel=2)
        if method != "cholesky":
            factor = u * np.sqrt(abs(s) if method == "eigh" else s)
        shape = _shape(() if size is None else size) + (m.shape[0],)
        z = self.standard_normal(shape)
        return (z @ asarray(np.ascontiguousarray(factor.T)) + asarray(m)).astype(dt)

    def _table(self, name: str, lo: int, mode: int, hi: int, ratio: Any, size: Any) -> LazyArray:
        """Int64 draws of a discrete distribution on ``lo .. hi`` by its inverse distribution
        function: the probabilities from ``ratio(k) = P(k + 1) / P(k)`` outward from the ``mode``
        (each step at most 1, so nothing overflows; the sum normalizes), their cumulative sum on the
        host and a search of it at uniform float64 draws (a search step). ``lo .. hi`` is the
        support, or a window of it outside which the probability is below 2**-100."""
        if hi - lo + 1 > TABLE_LIMIT:
            raise ValueError(f"sl.random.{name}: these parameters need a table of {hi - lo + 1} entries (at most "
                             f"{TABLE_LIMIT}); draw with NumPy's or CuPy's {name}")
        up = down = np.zeros(0)
        with np.errstate(under="ignore", divide="ignore"):
            if hi > mode:
                up = np.cumprod(ratio(np.arange(mode, hi, dtype=np.float64)))
            if mode > lo:
                down = np.cumprod(1.0 / ratio(np.arange(mode - 1, lo - 1, -1, dtype=np.float64)))
        cdf = np.cumsum(np.concatenate([down[::-1], [1.0], up]))
        cdf /= cdf[-1]
        cdf[-1] = 1.0  # (every uniform below 1 finds its entry)
        u = self.random(_shape(() if size is None else size))
        return searchsorted(asarray(cdf), u, side="right") + lo

    def poisson(self, lam: Any = 1.0, size: Any = None) -> LazyArray:
        """Poisson distributed int64 counts of mean ``lam`` (NumPy's ``Generator.poisson``). One
        ``lam`` (a number): its inverse distribution function over ``lam +- (13 sqrt(lam) + 40)``,
        exact to float64's rounding (:meth:`_table`). An array of rates (broadcast with ``size``):
        a count per element in the kernel (the op ``poisson_rounds``): below rate 10 the inverse
        distribution function searched from 0 with one uniform, from 10 on Hörmann's transformed
        rejection (PTRS) with a loop over :data:`POISSON_ROUNDS` rounds. Rates on the host are
        checked as NumPy checks them; a rate on the device that NumPy would reject (negative,
        NaN, above 9.2e18) gives -1."""
        if not (_on_host(lam) and np.ndim(lam) == 0):
            # NumPy's checks of an array and their order (a NaN is "too large")
            _check("poisson", lam, lambda v: v < 0, "lam < 0 or lam contains NaNs")
            _check("poisson", lam, lambda v: ~(v <= 9.2e18), "lam value too large")
            (lam,) = _parameters(lam)
            return self._poisson("poisson", lam, _broadcast_size(size, lam))
        lam = float(lam)
        if not lam >= 0:
            raise ValueError("lam < 0 or lam is NaN")
        if lam > 9.2e18:
            raise ValueError("lam value too large")
        mode, width = int(lam), int(13 * math.sqrt(lam) + 40)
        return self._table("poisson", max(0, mode - width), mode, mode + width, lambda k: lam / (k + 1), size)

    def _rounds(self, op: str, name: str, params: tuple[Any, ...], shape: tuple[int, ...], count: int) -> LazyArray:
        """The float64 values of a loop op of ``ir/ops.py`` (``poisson_rounds``...) over its
        parameters (numbers or lazy arrays, broadcast to ``shape``) and each element's counter: an
        element takes ``count`` outputs of the stream."""
        base, width = self._counters(name, shape, count)
        z0 = base + _iota(math.prod(shape), 0, count, width).astype(_U64) * _GOLDEN
        operands = [build.broadcast_to(build.const(v, np.dtype(np.float64)) if isinstance(v, float)
                                       else v.astype(np.float64)._node, shape) for v in params]
        return LazyArray(Node(op, (*operands, z0.reshape(shape)._node), shape, np.dtype(np.float64),
                              device=runtime.current().device()))

    def _poisson(self, name: str, lam: LazyArray, size: tuple[int, ...]) -> LazyArray:
        """Int64 Poisson counts of the rates ``lam`` (a lazy array broadcast to ``size``), one
        element each (the op ``poisson_rounds``)."""
        return self._rounds("poisson_rounds", name, (lam,), size, 2 * POISSON_ROUNDS).astype(np.int64)

    def binomial(self, n: Any, p: Any, size: Any = None) -> LazyArray:
        """Binomially distributed int64 counts of ``n`` trials of success probability ``p`` (NumPy's
        ``Generator.binomial``). One ``n`` and one ``p`` (numbers; ``n`` truncated to an integer, as
        NumPy's): its inverse distribution function (:meth:`_table`) over the support or 13 standard
        deviations and 40 beyond the mode. Arrays (``n`` of an integer dtype, as NumPy requires;
        broadcast with ``size``): a count per element in the kernel (the op ``binomial_rounds``):
        where ``n min(p, 1 - p) < 10`` the inverse distribution function searched from 0 with one
        uniform, from 10 on Hörmann's transformed rejection (BTRS) with a loop over
        :data:`BINOMIAL_ROUNDS` rounds. Parameters on the host are checked as NumPy checks them;
        on the device, an ``n`` or ``p`` NumPy would reject gives -1 (``n`` above 2**53 is rounded
        to float64)."""
        if not all(_on_host(v) and np.ndim(v) == 0 for v in (n, p)):
            return self._binomial(n, p, size)
        n = int(float(n))
        p = float(p)
        if n < 0:
            raise ValueError("n < 0")
        if not 0 <= p <= 1:
            raise ValueError("p < 0, p > 1 or p is NaN")
        if p in (0.0, 1.0) or n == 0:
            return self._table("binomial", n if p == 1 else 0, n if p == 1 else 0, n if p == 1 else 0, None, size)
        mode, width = int((n + 1) * p), int(13 * math.sqrt(n * p * (1 - p)) + 40)
        odds = p / (1 - p)
        return self._table("binomial", max(0, mode - width), min(mode, n), min(n, mode + width),
                           lambda k: (n - k) / (k + 1) * odds, size)

    def _binomial(self, n: Any, p: Any, size: Any) -> LazyArray:
        """:meth:`binomial` with arrays: NumPy's checks, then the op ``binomial_rounds``."""
        n = _trials("binomial", n)
        _check("binomial", p, lambda v: ~((v >= 0) & (v <= 1)), "p < 0, p > 1 or p contains NaNs")
        n, p = _parameters(n, p)
        return self._binomial_counts("binomial", n, p, _broadcast_size(size, n, p)).astype(np.int64)

    def _binomial_counts(self, name: str, n: Any, p: Any, shape: tuple[int, ...]) -> LazyArray:
        """Float64 binomial counts of ``n`` trials and probabilities ``p`` (numbers or lazy
        arrays broadcast to ``shape``; unchecked): the op ``binomial_rounds``."""
        return self._rounds("binomial_rounds", name, (n, p), shape, 2 * BINOMIAL_ROUNDS)

    def multinomial(self, n: Any, pvals: Any, size: Any = None) -> LazyArray:
        """Counts of ``n`` trials over ``k`` categories of probabilities ``pvals`` along a new last
        axis of ``k``, as int64 (NumPy's ``Generator.multinomial`` and its method): category ``i``
        a binomial count of the trials left with probability ``pvals[i]`` over what is left of 1,
        the last category the rest; ``k - 1`` binomial draws per element of one kernel
        (:meth:`binomial`'s ops). ``n`` a number or an integer array, ``pvals`` on the host, of
        shape ``(..., k)`` (a batch of distributions broadcast with ``n`` and ``size``), checked
        as NumPy checks them."""
        from .api import stack  # type: ignore[attr-defined]

        pv = np.asarray(pvals.get() if isinstance(pvals, LazyArray) else pvals, dtype=np.float64)
        if pv.ndim == 0 or pv.shape[-1] == 0:
            raise ValueError("pvals must have at least 1 dimension and the last dimension of pvals must be greater than 0.")
        if np.any(~((pv >= 0) & (pv <= 1))):
            raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
        if np.any(pv[..., :-1].sum(axis=-1) > 1.0 + 1e-12):
            raise ValueError("sum(pvals[:-1]) > 1.0")
        (n,) = _parameters(_trials("multinomial", n))
        batch = _broadcast_size(size, n, pv[..., 0])  # n and pvals' leading axes
        # each category's probability over what its predecessors left (NumPy's order of operations)
        left = np.ones(pv.shape[:-1])
        counts, rest = [], n
        for i in range(pv.shape[-1] - 1):
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.where(left > 0, np.clip(pv[..., i] / left, 0.0, 1.0), 0.0)
            share = float(share) if share.ndim == 0 else asarray(share)
            draw = self._binomial_counts("multinomial", rest, share, batch)
            counts.append(draw)
            rest = rest - draw
            left = left - pv[..., i]
        counts.append(rest if isinstance(rest, LazyArray) else LazyArray(build.broadcast_to(
            build.const(rest, np.dtype(np.float64)), batch)))
        return stack([c.astype(np.int64) for c in counts], axis=-1)

    def negative_binomial(self, n: Any, p: Any, size: Any = None) -> LazyArray:
        """The number of failures before the ``n``-th success of trials of success probability ``p``
        (``n`` a positive real), as int64 (NumPy's ``Generator.negative_binomial``). One ``n`` and
        one ``p`` (numbers): its inverse distribution function (:meth:`_table`); arrays (broadcast
        with ``size``): NumPy's method per element, a Poisson count of a gamma draw of shape ``n``
        and scale ``(1 - p) / p`` (:meth:`poisson`'s array path)."""
        if not all(_on_host(v) and np.ndim(v) == 0 for v in (n, p)):
            _check("negative_binomial", n, lambda v: ~(v > 0), "n <= 0")
            _check("negative_binomial", p, lambda v: ~((v > 0) & (v <= 1)), "p <= 0, p > 1 or p contains NaNs")
            n, p = _parameters(n, p)
            shape = _broadcast_size(size, n, p)
            rate = self._gamma("negative_binomial", n, shape) * ((1.0 - p) / p)
            return self._poisson("negative_binomial", asarray(rate), shape)
        n = float(n)
        p = float(p)
        if not n > 0:
            raise ValueError("n <= 0")
        if not 0 < p <= 1:
            raise ValueError("p <= 0, p > 1 or p contains NaNs")
        mode = int((n - 1) * (1 - p) / p) if n > 1 else 0
        width = int(13 * math.sqrt(n * (1 - p)) / p + 40)
        return self._table("negative_binomial", max(0, mode - width), mode, mode + width,
                           lambda k: (k + n) / (k + 1) * (1 - p), size)

    def hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None) -> LazyArray:
        """The number of good items in ``nsample`` drawn without replacement from ``ngood`` good and
        ``nbad`` bad ones, as int64 (NumPy's ``Generator.hypergeometric``). Numbers: its inverse
        distribution function (:meth:`_table`). Integer arrays (broadcast with ``size``): NumPy's
        methods per element in the kernel (the op ``hypergeometric_rounds``): for ``s =
        min(nsample, ngood + nbad - nsample)`` below 10 the ``s`` draws one by one, from 10 on
        Stadlober's ratio-of-uniforms rejection (HRUA) with a loop over at most
        :data:`HYPERGEOMETRIC_ROUNDS` rounds. Checked as NumPy checks them on the host; on the
        device, parameters NumPy would reject give -1."""
        if not all(_on_host(v) and np.ndim(v) == 0 for v in (ngood, nbad, nsample)):
            return self._hypergeometric(ngood, nbad, nsample, size)
        good, bad, sample = (int(float(v)) for v in (ngood, nbad, nsample))
        for bad_value, message in ((good < 0, "ngood < 0"), (sample < 0, "nsample < 0"),
                                   (good + bad < sample, "ngood + nbad < nsample"), (bad < 0, "nbad < 0"),
                                   (good >= 10**9 or bad >= 10**9, "both ngood and nbad must be less than 1000000000")):
            if bad_value:
                raise ValueError(message)
        lo, hi = max(0, sample - bad), min(sample, good)
        total = good + bad
        mode = min(max(lo, (sample + 1) * (good + 1) // (total + 2)), hi)
        sd = math.sqrt(sample * good / max(total, 1) * bad / max(total, 1) * (total - sample) / max(total - 1, 1))
        width = int(13 * sd + 40)

        def ratio(k: np.ndarray) -> np.ndarray:
            return (good - k) * (sample - k) / ((k + 1) * (bad - sample + k + 1))

        return self._table("hypergeometric", max(lo, mode - width), mode, min(hi, mode + width), ratio, size)

    def _hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Any) -> LazyArray:
        """:meth:`hypergeometric` with arrays: NumPy's checks of host values (its order for
        arrays), then the op ``hypergeometric_rounds``."""
        params = [_integers_of("hypergeometric", w, v) for w, v in (("ngood", ngood), ("nbad", nbad), ("nsample", nsample))]
        if all(_on_host(v) for v in params):
            good, bad, sample = (np.asarray(v, dtype=np.float64) for v in params)
            for bad_value, message in ((good + bad < sample, "ngood + nbad < nsample"),
                                       ((good >= 1e9) | (bad >= 1e9), "both ngood and nbad must be less than 1000000000"),
                                       (good < 0, "ngood < 0"), (bad < 0, "nbad < 0"), (sample < 0, "nsample < 0")):
                if np.any(bad_value):
                    raise ValueError(message)
        else:
            for what, value in zip(("ngood", "nbad", "nsample"), params, strict=True):
                _check("hypergeometric", value, lambda v: v < 0, f"{what} < 0")
        params = _parameters(*params)
        shape = _broadcast_size(size, *params)
        return self._rounds("hypergeometric_rounds", "hypergeometric", tuple(params), shape,
                            2 * HYPERGEOMETRIC_ROUNDS).astype(np.int64)

    def logseries(self, p: Any, size: Any = None) -> LazyArray:
        """Logarithmic series distributed int64 counts ``k >= 1``, ``P(k)`` proportional to ``p**k / k``
        (NumPy's ``Generator.logseries``). One ``p`` (a number): its inverse distribution function
        (:meth:`_table`) up to where ``p**k / k`` falls below ``2**-100``; ``p`` so close to 1 that the
        table would pass :data:`TABLE_LIMIT` entries raises ``ValueError``. An array of ``p``
        (broadcast with ``size``): Kemp's method per element, as NumPy's, from two open uniforms
        ``v`` and ``u``: 1 where ``v >= p``, else for ``q = -expm1(u log1p(-p))``
        ``floor(1 + log(v) / log(q))`` where ``v <= q**2``, 1 where ``v >= q`` and 2 between (no
        rejection: one pointwise expression); checked as NumPy checks ``p`` on the host, -1 for a
        ``p`` outside [0, 1) on the device."""
        if not (_on_host(p) and np.ndim(p) == 0):
            return self._logseries(p, size)
        p = float(p)
        if not 0 <= p < 1:
            raise ValueError("p < 0, p >= 1 or p is NaN")
        hi = 1 if p == 0 else 1 + int(math.ceil(70 * math.log(2) / -math.log(p)))
        return self._table("logseries", 1, 1, hi, lambda k: p * k / (k + 1), size)

    def _logseries(self, p: Any, size: Any) -> LazyArray:
        """:meth:`logseries` with an array of ``p``: Kemp's method, one pointwise expression."""
        from .api import expm1, floor, log, log1p, minimum, where  # type: ignore[attr-defined]

        _check("logseries", p, lambda v: ~((v >= 0) & (v < 1)), "p < 0, p >= 1 or p contains NaNs")
        (p,) = _parameters(p)
        p = p.astype(np.float64)
        shape = _broadcast_size(size, p)
        zv, zu = self._streams("logseries", shape, 2)
        v, u = _open_uniform(zv), _open_uniform(zu)
        q = -expm1(u * log1p(-p))
        k = floor(1.0 + log(v) / log(q))
        top = np.iinfo(np.int64).max
        counts = where(k >= 2.0**63, top, minimum(k, 2.0**62).astype(np.int64))
        counts = where(v >= p, 1, where(v <= q * q, counts, where(v >= q, 1, 2)))
        return where((p >= 0) & (p < 1), counts, -1)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> LazyArray:
        """Integers in [low, high), or [low, high] with ``endpoint`` (NumPy's
        ``Generator.integers``; ``integers(n)`` draws from [0, n)), of an integer ``dtype`` or bool. ``low`` and ``high`` may be
        arrays (broadcast with ``size``; checked as NumPy checks them where they are on the
        host): ``low + output % (high - low)`` element by element, in uint64 arithmetic. Float
        bounds are truncated to integers, as NumPy's are."""
        if high is None:
            low, high = 0, low
        dt = as_dtype(dtype)
        if dt.kind not in "biu":
            raise TypeError(f"sl.random.integers: dtype must be an integer dtype or bool, got {dt}")
        low, high = _truncated(low), _truncated(high)
        try:
            lo, hi = operator.index(low), operator.index(high)
        except TypeError:
            if np.ndim(low) or np.ndim(high) or not (_on_host(low) and _on_host(high)):
                return self._integers_between(low, high, size, dt, endpoint)
            raise TypeError(
                f"sl.random.integers: low and high must be integers or integer arrays, got {low!r} and {high!r}"
            ) from None
        top = hi if endpoint else hi - 1
        if lo > top:
            raise ValueError("low > high" if endpoint else "low >= high")
        least, most = _integer_range(dt)
        if lo < least:
            raise ValueError(f"low is out of bounds for {dt}")
        if top > most:
            raise ValueError(f"high is out of bounds for {dt}")
        (z,) = self._streams("integers", _shape(() if size is None else size), 1)
        span = top - lo + 1
        picked = z if span == 1 << 64 else z % span
        return (picked + (lo & _MASK)).astype(dt)  # modulo 2**64, then the low bits: the value itself

    def _integers_between(self, low: Any, high: Any, size: Any, dt: np.dtype, endpoint: bool) -> LazyArray:
        """:meth:`integers` with array bounds."""
        from .api import where  # type: ignore[attr-defined]

        least, most = _integer_range(dt)
        low, high = (_truncated_array(v, "low", least, most + (0 if endpoint else 1), dt) for v in (low, high))
        lo, hi = asarray(low), asarray(high)
        if lo.dtype.kind not in "biu" or hi.dtype.kind not in "biu":
            raise TypeError(f"sl.random.integers: low and high must be numbers or arrays of them, got dtypes {lo.dtype} "
                            f"and {hi.dtype}")
        if _on_host(low) and _on_host(high):  # NumPy's checks, on Python integers
            lo_h, hi_h = np.asarray(low).astype(object), np.asarray(high).astype(object)
            top = hi_h if endpoint else hi_h - 1
            for bad, message in ((lo_h > top, "low > high" if endpoint else "low >= high"),
                                 (lo_h < least, f"low is out of bounds for {dt}"),
                                 (top > most, f"high is out of bounds for {dt}")):
                if np.any(bad):
                    raise ValueError(message)
        (z,) = self._streams("integers", _broadcast_size(size, lo, hi), 1)
        base = lo.astype(_U64)
        span = hi.astype(_U64) - base + np.uint64(1 if endpoint else 0)  # modulo 2**64: 0 is all 2**64 values
        picked = where(span == 0, z, z % where(span == 0, np.uint64(1), span))
        return (picked + base).astype(dt)

    def permutation(self, x: Any, axis: int = 0) -> LazyArray:
        """A random ordering of ``range(x)`` for an integer ``x`` (int64), else ``x`` with its
        entries along ``axis`` in random order (NumPy's ``Generator.permutation``): the argsort
        of one draw of 64-bit keys (ties: probability below ``n**2 / 2**65``), a sort step and,
        for an array, a gather."""
        if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
            (keys,) = self._streams("permutation", (max(int(x), 0),), 1)
            return argsort(keys)
        arr = asarray(x)
        ax = build.normalize_axis(axis, arr.ndim)
        return take(arr, self.permutation(arr.shape[ax]), axis=ax)

    def permuted(self, x: Any, axis: Any = None, out: Any = None) -> LazyArray:
        """``x`` with each 1-d slice along ``axis`` in its own random order (``None``: all elements,
        the shape kept; NumPy's ``Generator.permuted``): the argsort of a draw of 64-bit keys along
        the axis (a sort step) and a gather. ``out`` (of ``x``'s shape) receives the result, as a
        ufunc's ``out`` does, and is returned."""
        from .ufunc import write

        arr = asarray(x)
        if axis is None:
            result = take(arr.reshape(-1), self.permutation(arr.size)).reshape(arr.shape)
        else:
            ax = build.normalize_axis(axis, arr.ndim)
            (keys,) = self._streams("permuted", arr.shape, 1)
            result = take_along_axis(arr, argsort(keys, axis=ax), axis=ax)
        if out is None:
            return result
        if tuple(np.shape(out)) != arr.shape:
            raise ValueError("out must have the same shape as x")
        return write(result, out, casting="unsafe", name="permuted")

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes (NumPy's ``Generator.bytes``): the low bytes of the stream's next
        outputs, evaluated (a Python ``bytes``)."""
        n = operator.index(length)
        if n < 0:
            raise ValueError(f"sl.random.bytes: length must be non-negative, got {n}")
        return np.asarray(self.integers(0, 256, n, dtype=np.uint8).get()).tobytes()

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Reorder a stitchlab array ``x`` along ``axis`` (NumPy's ``shuffle``): ``x`` then stands for
        :meth:`permutation`'s result. NumPy and CuPy arrays are refused (this would not write into them)."""
        if not isinstance(x, LazyArray):
            raise TypeError(f"sl.random.shuffle reorders stitchlab arrays (got {type(x).__name__}); use "
                            f"y = rng.permutation(x, axis), or NumPy's/CuPy's shuffle on their arrays")
        x._rebind(self.permutation(x, axis)._node)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> LazyArray:
        """Samples of ``range(a)`` for an integer ``a``, else of the entries of ``a`` along ``axis``
        (NumPy's ``Generator.choice``): uniform, or with probabilities ``p`` (host values, checked
        as NumPy checks them); without ``replace``, uniform samples are the first of a random
        permutation and weighted ones the smallest of exponential keys over ``p`` (the
        distribution of NumPy's successive draws). Samples come in random order (``shuffle`` is
        accepted for NumPy's signature)."""
        if isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "biu":  # NumPy's: a 0-d array is a count
            a = int(a)
        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            n, population = int(a), None
        else:
            population = asarray(a)
            if population.ndim == 0:
                raise ValueError("a must be 1-dimensional or an integer")
            axis = build.normalize_axis(axis, population.ndim)
            n = population.shape[axis]
        shape = _shape(() if size is None else size)
        k = math.prod(shape)
        if n <= 0 and k:
            raise ValueError("a must be a positive integer unless no samples are taken")
        weights = None
        if p is not None:
            weights = np.asarray(p, dtype=np.float64)
            if weights.ndim != 1:
                raise ValueError("p must be 1-dimensional")
            if weights.size != n:
                raise ValueError("a and p must have same size")
            if np.any(weights < 0) or not np.all(np.isfinite(weights)):
                raise ValueError("Probabilities are not non-negative")
            if abs(weights.sum() - 1) > math.sqrt(np.finfo(np.float64).eps):
                raise ValueError("Probabilities do not sum to 1")
        if replace:
            if weights is None:
                picked = self.integers(0, max(n, 1), shape)
            else:  # NumPy's method: the cumulative sum searched at uniform draws
                cdf = np.cumsum(weights)
                picked = searchsorted(asarray(cdf / cdf[-1]), self.random(shape), side="right")
        else:
            if k > n:
                raise ValueError("Cannot take a larger sample than population when replace is False")
            if weights is not None and np.count_nonzero(weights) < k:
                raise ValueError("Fewer non-zero entries in p than size")
            if weights is None:
                order = self.permutation(n)
            else:  # exponential race: E_i / p_i, the k smallest
                from .api import log1p  # type: ignore[attr-defined]

                with np.errstate(divide="ignore"):
                    inverse = asarray(1 / weights)
                order = argsort(-log1p(-self.random(n)) * inverse)
            picked = order[:k].reshape(shape)
        if population is None:
            return picked
        return take(population, picked, axis=axis)


def _drawn_shape(size: Any, out: Any, dt: np.dtype) -> tuple[int, ...]:
    """The shape of a draw of ``size`` into ``out`` (None: none), with NumPy's checks of ``out``:
    an array (stitchlab, NumPy or CuPy; a NumPy one C- or Fortran-contiguous and writeable) of
    the draw's dtype, of ``size``'s shape where both are given."""
    if out is None:
        return _shape(() if size is None else size)
    if not (isinstance(out, (LazyArray, np.ndarray)) or hasattr(out, "__cuda_array_interface__")):
        raise ValueError(f"Supplied output array must be contiguous, writable, aligned, and in machine byte-order "
                         f"(got a {type(out).__name__}: give a stitchlab, NumPy or CuPy array)")
    flags = out.flags
    if not isinstance(out, LazyArray) and not ((flags.c_contiguous or flags.f_contiguous) and getattr(flags, "writeable", True)):
        raise ValueError("Supplied output array must be contiguous, writable, aligned, and in machine byte-order.")
    if np.dtype(out.dtype) != dt:
        fix = (f"give dtype={np.dtype(out.dtype).name!r} to draw in out's dtype" if np.dtype(out.dtype).name in _UNIFORM_BITS
               else "give a float out")
        raise TypeError(f"Supplied output array has the wrong type. Expected {dt}, got {np.dtype(out.dtype)} ({fix})")
    if size is not None and _shape(size) != tuple(out.shape):
        raise ValueError(f"size must match out.shape when used together (size {_shape(size)}, out {tuple(out.shape)})")
    return tuple(out.shape)


def _into(draw: LazyArray, out: Any) -> Any:
    """``draw``, or ``out`` with it written in (a stitchlab ``out`` then stands for it)."""
    if out is None:
        return draw
    from .ufunc import write

    return write(draw, out, casting="no", name="sl.random", exact=True)


def _integer_range(dt: np.dtype) -> tuple[int, int]:
    """The least and the greatest value of an integer or bool dtype."""
    if dt.kind == "b":
        return 0, 1
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def _truncated(value: Any) -> Any:
    """A float bound of ``integers`` (a number, or a 0-d host array) truncated to an int, as NumPy
    converts it (``int(value)``: NaN raises ``ValueError``, an infinity ``OverflowError``);
    anything else as it is."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (float, np.floating)):
        return int(value)
    return value


def _truncated_array(value: Any, what: str, least: int, beyond: int, dt: np.dtype) -> Any:
    """A float array of bounds of ``integers`` cast to integers as NumPy casts them: a host one
    checked against the dtype's range (``least``, and ``beyond`` the greatest bound) on its float
    values first, then truncated (int64, or uint64 past it); a lazy one truncated to int64."""
    if isinstance(value, LazyArray) or hasattr(value, "__cuda_array_interface__"):
        arr = asarray(value)
        return arr.astype(np.int64) if arr.dtype.kind == "f" else arr
    host = np.asarray(value)
    if host.dtype.kind != "f":
        return value
    if not np.all(np.isfinite(host)):
        raise ValueError(f"sl.random.integers: {what} holds NaN or an infinity ({value!r}); NumPy cannot convert it "
                         "to an integer either")
    if np.any(host < least):
        raise ValueError(f"low is out of bounds for {dt}")
    if np.any(host > beyond):
        raise ValueError(f"high is out of bounds for {dt}")
    whole = np.trunc(host)
    if np.any(whole >= 2.0**64):  # (uint64's exclusive end: no integer array holds it)
        raise ValueError(f"sl.random.integers: a float {what} of 2**64 has no uint64 value; give high=2**64 as a "
                         "Python int, or high - 1 with endpoint=True")
    return whole.astype(np.uint64) if np.any(whole >= 2.0**63) else whole.astype(np.int64)


def _integers_of(name: str, what: str, value: Any) -> Any:
    """A count parameter as NumPy takes it: a number truncated to an integer, an array of an
    integer dtype (``TypeError`` for others, as NumPy's casting rule)."""
    if _on_host(value) and np.ndim(value) == 0:
        return int(float(value))  # truncated, as NumPy's
    kind = value.dtype if isinstance(value, LazyArray) or hasattr(value, "__cuda_array_interface__") else np.asarray(value).dtype
    if kind.kind not in "biu" or kind == np.uint64:
        raise TypeError(f"sl.random.{name}: {what} must be an array of integers (NumPy's rule), got dtype {kind}; "
                        "cast it with .astype(np.int64) (which truncates)")
    return value


def _trials(name: str, n: Any) -> Any:
    """A number of trials (:func:`_integers_of`); ``ValueError("n < 0")`` where a value on the host
    is negative."""
    n = _integers_of(name, "n", n)
    if isinstance(n, int) and n < 0:
        raise ValueError("n < 0")
    _check(name, n, lambda v: v < 0, "n < 0")
    return n


def _on_host(value: Any) -> bool:
    """``value`` is a number or a host array (parameters on the device are not read back to be checked)."""
    return not isinstance(value, LazyArray) and not hasattr(value, "__cuda_array_interface__")


def _check(name: str, value: Any, bad: Any, message: str) -> None:
    """NumPy's check of a host parameter: ``ValueError(message)`` where ``bad`` of its values holds."""
    if _on_host(value):
        with np.errstate(invalid="ignore"):
            if np.any(bad(np.asarray(value, dtype=np.float64))):
                raise ValueError(f"sl.random.{name}: {message} ({value!r})")


def _check_scale(name: str, what: str, value: Any) -> None:
    _check(name, value, lambda v: v < 0, f"{what} < 0")


def _parameters(*values: Any) -> list[Any]:
    """Numbers (Python or NumPy scalars) as Python floats, constants of the kernel (the result is
    float64 either way), anything else as a lazy array."""
    return [float(v) if isinstance(v, (int, float, np.integer, np.floating)) else asarray(v) for v in values]


def _broadcast_size(size: Any, *params: Any) -> tuple[int, ...]:
    """``size``, or the broadcast shape of array parameters (NumPy's rule for distributions); a
    ``size`` the parameters do not broadcast to raises NumPy's ``ValueError`` (the draw would have
    had the parameters' shape)."""
    inputs = np.broadcast_shapes(*(np.shape(p) if isinstance(p, (LazyArray, np.ndarray)) else () for p in params))
    if size is None:
        return inputs
    out = _shape(size)
    try:
        fits = np.broadcast_shapes(out, inputs) == out
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"Output size {out} is not compatible with broadcast dimensions of inputs {inputs}.")
    return out


def default_rng(seed: Any = None) -> Generator:
    """A new :class:`Generator` (NumPy's ``default_rng``): from ``seed`` (a non-negative
    integer, a sequence of them or a ``numpy.random.SeedSequence``: NumPy's state of it makes the
    key), from fresh entropy for ``None``; a Generator passed in is returned as it is.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> a = sl.random.default_rng(7).integers(0, 10, 5)
        >>> np.array_equal(a.get(), sl.random.default_rng(7).integers(0, 10, 5).get())
        True
    """
    return seed if isinstance(seed, Generator) else Generator(seed)


_global: Generator | None = None
_global_lock = threading.Lock()


def _generator() -> Generator:
    global _global
    with _global_lock:
        if _global is None:
            _global = Generator()
        return _global


def seed(seed: Any = None) -> None:
    """Reseed the generator behind the module-level functions (``rand``, ``normal``...)."""
    global _global
    with _global_lock:
        _global = Generator(seed)


def random(size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Uniform floats in [0, 1) from the module's generator (NumPy's and CuPy's ``random``)."""
    return _generator().random(size, dtype)


random_sample = random


def rand(*size: int, dtype: Any = np.float64) -> LazyArray:
    """Uniform floats in [0, 1) of shape ``size`` (CuPy's ``rand(d0, d1, ..., dtype)``)."""
    return _generator().random(size, dtype)


def randn(*size: int, dtype: Any = np.float64) -> LazyArray:
    """Standard normal floats of shape ``size`` (CuPy's ``randn(d0, d1, ..., dtype)``)."""
    return _generator().standard_normal(size, dtype)


def standard_normal(size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Standard normal floats from the module's generator."""
    return _generator().standard_normal(size, dtype)


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """``loc + scale * standard_normal`` from the module's generator (CuPy's ``normal``)."""
    return _generator().normal(loc, scale, size, dtype)


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Uniform floats in [low, high) from the module's generator (CuPy's ``uniform``; as NumPy's
    and CuPy's module functions, ``high < low`` draws in (high, low])."""
    return _generator()._uniform(low, high, size, dtype, check=False)


def integers(low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64, endpoint: bool = False) -> LazyArray:
    """Integers in [low, high) from the module's generator (see :meth:`Generator.integers`)."""
    return _generator().integers(low, high, size, dtype, endpoint)


def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64) -> LazyArray:
    """Integers in [low, high) (NumPy's and CuPy's ``randint``; ``randint(n)`` draws from [0, n))."""
    return _generator().integers(low, high, size, dtype)


def standard_exponential(size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Exponential floats of mean 1 from the module's generator (see :meth:`Generator.standard_exponential`)."""
    return _generator().standard_exponential(size, dtype)


def exponential(scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """``scale * standard_exponential`` from the module's generator (NumPy's and CuPy's ``exponential``)."""
    return _generator().exponential(scale, size, dtype)


def gumbel(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Gumbel floats from the module's generator (see :meth:`Generator.gumbel`)."""
    return _generator().gumbel(loc, scale, size, dtype)


def laplace(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Laplace floats from the module's generator (see :meth:`Generator.laplace`)."""
    return _generator().laplace(loc, scale, size, dtype)


def logistic(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Logistic floats from the module's generator (see :meth:`Generator.logistic`)."""
    return _generator().logistic(loc, scale, size, dtype)


def lognormal(mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Log-normal floats from the module's generator (see :meth:`Generator.lognormal`)."""
    return _generator().lognormal(mean, sigma, size, dtype)


def rayleigh(scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Rayleigh floats from the module's generator (see :meth:`Generator.rayleigh`)."""
    return _generator().rayleigh(scale, size, dtype)


def weibull(a: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Weibull floats from the module's generator (see :meth:`Generator.weibull`)."""
    return _generator().weibull(a, size, dtype)


def pareto(a: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Pareto II floats from the module's generator (see :meth:`Generator.pareto`)."""
    return _generator().pareto(a, size, dtype)


def power(a: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Power-distributed floats from the module's generator (see :meth:`Generator.power`)."""
    return _generator().power(a, size, dtype)


def standard_cauchy(size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Cauchy floats from the module's generator (see :meth:`Generator.standard_cauchy`)."""
    return _generator().standard_cauchy(size, dtype)


def triangular(left: Any, mode: Any, right: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Triangular floats from the module's generator (see :meth:`Generator.triangular`)."""
    return _generator().triangular(left, mode, right, size, dtype)


def wald(mean: Any, scale: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Wald floats from the module's generator (see :meth:`Generator.wald`)."""
    return _generator().wald(mean, scale, size, dtype)


def geometric(p: Any, size: Any = None) -> LazyArray:
    """Geometric int64 counts from the module's generator (see :meth:`Generator.geometric`)."""
    return _generator().geometric(p, size)


def standard_gamma(shape: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Standard gamma floats from the module's generator (see :meth:`Generator.standard_gamma`)."""
    return _generator().standard_gamma(shape, size, dtype)


def gamma(shape: Any, scale: Any = 1.0, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Gamma floats from the module's generator (see :meth:`Generator.gamma`)."""
    return _generator().gamma(shape, scale, size, dtype)


def beta(a: Any, b: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Beta floats from the module's generator (see :meth:`Generator.beta`)."""
    return _generator().beta(a, b, size, dtype)


def chisquare(df: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Chi-square floats from the module's generator (see :meth:`Generator.chisquare`)."""
    return _generator().chisquare(df, size, dtype)


def standard_t(df: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Student's t floats from the module's generator (see :meth:`Generator.standard_t`)."""
    return _generator().standard_t(df, size, dtype)


def f(dfnum: Any, dfden: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """F floats from the module's generator (see :meth:`Generator.f`)."""
    return _generator().f(dfnum, dfden, size, dtype)


def noncentral_chisquare(df: Any, nonc: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Noncentral chi-square floats from the module's generator (see
    :meth:`Generator.noncentral_chisquare`)."""
    return _generator().noncentral_chisquare(df, nonc, size, dtype)


def noncentral_f(dfnum: Any, dfden: Any, nonc: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Noncentral F floats from the module's generator (see :meth:`Generator.noncentral_f`)."""
    return _generator().noncentral_f(dfnum, dfden, nonc, size, dtype)


def dirichlet(alpha: Any, size: Any = None, dtype: Any = np.float64) -> LazyArray:
    """Dirichlet vectors from the module's generator (see :meth:`Generator.dirichlet`)."""
    return _generator().dirichlet(alpha, size, dtype)


def multivariate_normal(mean: Any, cov: Any, size: Any = None, check_valid: str = "warn", tol: float = 1e-8, *,
                        method: str = "svd", dtype: Any = np.float64) -> LazyArray:
    """Multivariate normal vectors from the module's generator (see :meth:`Generator.multivariate_normal`)."""
    return _generator().multivariate_normal(mean, cov, size, check_valid, tol, method=method, dtype=dtype)


def poisson(lam: Any = 1.0, size: Any = None) -> LazyArray:
    """Poisson counts from the module's generator (see :meth:`Generator.poisson`)."""
    return _generator().poisson(lam, size)


def binomial(n: Any, p: Any, size: Any = None) -> LazyArray:
    """Binomial counts from the module's generator (see :meth:`Generator.binomial`)."""
    return _generator().binomial(n, p, size)


def negative_binomial(n: Any, p: Any, size: Any = None) -> LazyArray:
    """Negative binomial counts from the module's generator (see :meth:`Generator.negative_binomial`)."""
    return _generator().negative_binomial(n, p, size)


def vonmises(mu: Any, kappa: Any, size: Any = None) -> LazyArray:
    """Von Mises angles from the module's generator (see :meth:`Generator.vonmises`)."""
    return _generator().vonmises(mu, kappa, size)


def multinomial(n: Any, pvals: Any, size: Any = None) -> LazyArray:
    """Multinomial counts from the module's generator (see :meth:`Generator.multinomial`)."""
    return _generator().multinomial(n, pvals, size)


def hypergeometric(ngood: Any, nbad: Any, nsample: Any, size: Any = None) -> LazyArray:
    """Hypergeometric counts from the module's generator (see :meth:`Generator.hypergeometric`)."""
    return _generator().hypergeometric(ngood, nbad, nsample, size)


def logseries(p: Any, size: Any = None) -> LazyArray:
    """Logarithmic series counts from the module's generator (see :meth:`Generator.logseries`)."""
    return _generator().logseries(p, size)


def permuted(x: Any, axis: Any = None, out: Any = None) -> LazyArray:
    """``x`` with its slices along ``axis`` shuffled independently (see :meth:`Generator.permuted`)."""
    return _generator().permuted(x, axis, out)


def bytes(length: int) -> bytes:  # noqa: A001 (NumPy's name)
    """Random bytes from the module's generator (see :meth:`Generator.bytes`)."""
    return _generator().bytes(length)


def permutation(x: Any, axis: int = 0) -> LazyArray:
    """A random ordering of ``range(x)``, or ``x`` reordered along ``axis`` (see
    :meth:`Generator.permutation`), from the module's generator."""
    return _generator().permutation(x, axis)


def shuffle(x: Any, axis: int = 0) -> None:
    """Reorder a stitchlab array in place (see :meth:`Generator.shuffle`), from the module's generator."""
    _generator().shuffle(x, axis)


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None) -> LazyArray:
    """Samples of ``range(a)`` or of ``a``'s entries (see :meth:`Generator.choice`), from the
    module's generator."""
    return _generator().choice(a, size, replace, p)
