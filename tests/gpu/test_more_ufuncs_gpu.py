"""The inverse hyperbolic functions, ``cbrt``, ``rint``, ``round``, ``signbit``, ``hypot``, ``copysign``,
``logaddexp``, ``logaddexp2``, ``fmod``, ``heaviside``, ``nextafter``, ``spacing``, ``frexp``, the shifts, ``gcd``, ``lcm`` and ``ldexp`` in
kernels, against NumPy on the host, with NaN, ±inf, ±0, subnormals and large values among the inputs.

Exact ops (``rint``, ``round``, ``signbit``, ``copysign``, ``fmod``, ``heaviside``, ``nextafter``,
``spacing``, ``gcd``, ``lcm``, ``ldexp``) are NumPy's bits (a NaN's payload aside: CUDA's functions return the canonical NaN); the others are within a few units in the last
place of NumPy's own result (CUDA's and the host libm's functions differ in the last bit; for
``logaddexp``, units of the larger operand: ``x + log1p(exp(y - x))`` cancels near zero), and
NaN, ±inf and signed zeros where NumPy has them.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_more_ufuncs_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype, cast

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

FLOATS = ["float16", "bfloat16", "float32", "float64"]
UNARY = {"arcsinh": None, "arccosh": (1.0, None), "arctanh": (-1.0, 1.0), "cbrt": None, "rint": None, "signbit": None,
         "spacing": None}
BINARY = ["hypot", "copysign", "logaddexp", "logaddexp2", "fmod", "heaviside", "nextafter"]
EXACT = {"rint", "signbit", "copysign", "fmod", "heaviside", "spacing", "nextafter"}
ULPS = {"float16": 1, "bfloat16": 1, "float32": 4, "float64": 4}


def _values(dtype: str, seed: int, domain: tuple[float | None, float | None] | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(4000) * 3, rng.standard_normal(1000) * 1e3, rng.random(500) * 2 - 1,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, 1.5, 2.5, -0.5, -2.5, 1e-30, -1e-30, 1.0, -1.0]])
    if domain is not None:
        lo, hi = domain
        x = np.where(np.isfinite(x), np.clip(x, lo, hi), x)
    return x.astype(as_dtype(dtype))


def _bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """NumPy's bits, NaN payloads aside."""
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if want.dtype.kind == "f" or want.dtype == as_dtype("bfloat16"):
        nan = np.isnan(want.astype(np.float64))
        np.testing.assert_array_equal(np.isnan(got.astype(np.float64)), nan, err_msg=f"{what}: NaN positions")
        got, want = got[~nan], want[~nan]
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=f"{what}: bits")


def _close(got: np.ndarray, want: np.ndarray, ulps: int, what: str, scale: np.ndarray | None = None) -> None:
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{what}: NaN positions")
    finite = np.isfinite(w)
    np.testing.assert_array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)], err_msg=f"{what}: infinities")
    ref = np.abs(want[finite]) if scale is None else np.maximum(np.abs(want[finite]), scale.astype(want.dtype)[finite])
    step = np.spacing(ref).astype(np.float64)
    err = np.abs(g[finite] - w[finite])
    worst = float(np.max(err / step)) if err.size else 0.0
    assert worst <= ulps, f"{what}: {worst:.1f} units in the last place from NumPy's result"
    zeros = finite & (w == 0)
    np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]), err_msg=f"{what}: signed zeros")


def _run(fn: Any, *args: np.ndarray) -> np.ndarray:
    import cupy as cp

    return cp.asnumpy(cp.asarray(fn(*(sl.asarray(cp.asarray(a)) for a in args))))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name: str, dtype: str) -> None:
    x = _values(dtype, 1, UNARY[name])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    got = _run(getattr(sl, name), x)
    if name in EXACT:
        _bits(got, want, f"{name} {dtype}")
    else:
        _close(got, want, ULPS[dtype], f"{name} {dtype}")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", BINARY)
def test_binary(name: str, dtype: str) -> None:
    x, y = _values(dtype, 2), _values(dtype, 3)[::-1].copy()
    x[:8] = y[:8]  # equal operands (logaddexp's own case), infinities of one sign among them
    with np.errstate(all="ignore"):
        want = _nextafter(x, y) if name == "nextafter" else getattr(np, name)(x, y)
    got = _run(getattr(sl, name), x, y)
    if name in EXACT:
        _bits(got, want, f"{name} {dtype}")
    else:
        scale = None
        if name.startswith("logaddexp"):  # the larger finite operand
            mags = np.abs(np.stack([x.astype(np.float64), y.astype(np.float64)]))
            scale = np.where(np.isfinite(mags), mags, 0).max(axis=0)
        _close(got, want, ULPS[dtype], f"{name} {dtype}", scale)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_nextafter_and_spacing_of_every_half_value(dtype: str) -> None:
    """Every float16 and bfloat16 bit pattern: NumPy's half loops and ml_dtypes' bfloat16 loops
    (computed on the bits), toward zeros of both signs, infinities, NaN and neighbours."""
    x = np.arange(1 << 16, dtype=np.uint16).view(as_dtype(dtype))
    with np.errstate(all="ignore"):
        _bits(_run(sl.spacing, x), np.spacing(x), f"spacing {dtype}")
        for t in (0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.0, -1e-40):
            y = np.full(x.shape, t, x.dtype)
            _bits(_run(sl.nextafter, x, y), _nextafter(x, y), f"nextafter({dtype}, {t})")
        _bits(_run(sl.nextafter, x, x[::-1].copy()), _nextafter(x, x[::-1]), f"nextafter({dtype}, reversed)")


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp_is_numpys_bits(dtype: str) -> None:
    """Both results of one kernel: every float16 and bfloat16 value, float32 and float64 values
    with zeros, infinities, NaN and (from the 1e-30 among them) subnormal neighbours."""
    x = np.arange(1 << 16, dtype=np.uint16).view(as_dtype(dtype)) if dtype in ("float16", "bfloat16") else _values(dtype, 4)
    if dtype in ("float32", "float64"):
        x = np.concatenate([x, np.array([np.finfo(dtype).smallest_subnormal, np.finfo(dtype).max], dtype)])
    import cupy as cp

    m, e = sl.frexp(sl.asarray(cp.asarray(x)))
    assert len(sl.explain(m, e).kernels) == 1
    want_m, want_e = np.frexp(x)
    _bits(cp.asnumpy(cp.asarray(m)), want_m, f"frexp mantissa {dtype}")
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(e)), want_e, err_msg=f"frexp exponent {dtype}")


def _nextafter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy 2.5's ``nextafter``: equal values give ``y`` for float16 too (numpy/numpy#31475; 2.4
    gave ``x``, so ``nextafter(-0.0, +0.0)`` was -0.0)."""
    return np.where((x.astype(np.float64) == 0) & (y.astype(np.float64) == 0), y, np.nextafter(x, y))


def test_integer_inputs_take_numpys_float_loops() -> None:
    x = np.arange(-50, 50, dtype=np.int32)
    _close(_run(sl.cbrt, x), np.cbrt(x), 4, "cbrt int32")
    _close(_run(sl.hypot, x, x[::-1].copy()), np.hypot(x, x[::-1]), 4, "hypot int32")
    _bits(_run(sl.rint, x), np.rint(x), "rint int32")


def test_a_logsumexp_of_pairs_fuses_into_one_kernel() -> None:
    import cupy as cp

    a = np.random.default_rng(4).standard_normal((256, 1024)).astype(np.float32)
    x = sl.asarray(cp.asarray(a))
    out = sl.logaddexp(x, x * 0.5).sum(axis=-1)
    assert len(sl.explain(out).kernels) == 1
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(out)), np.logaddexp(a, a * 0.5).sum(-1), rtol=1e-5)


@pytest.mark.parametrize("dtype", [*FLOATS, "int32", "int64", "uint8"])
@pytest.mark.parametrize("decimals", [-2, 0, 1, 3])
def test_round_is_numpys_bits(dtype: str, decimals: int) -> None:
    if dtype in FLOATS:
        x = _values(dtype, 5)
    else:
        info = np.iinfo(dtype)
        x = np.random.default_rng(5).integers(max(info.min, -10**6), min(info.max, 10**6), 5000).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.round(x, decimals)
        if dtype == "bfloat16":  # in float64, rounded once (ml_dtypes' own loops differ by version)
            want = cast(np.round(x.astype(np.float64), decimals), x.dtype)
    got = _run(lambda t: sl.round(t, decimals), x)
    _bits(got, want, f"round({dtype}, {decimals})")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"])
def test_integer_fmod_and_shifts_are_numpys(dtype: str) -> None:
    """Including what C leaves undefined: a zero divisor and the minimum over -1 (``fmod``), and
    shifts by the width or more or by a negative amount (0, or -1 for a negative value shifted
    right), which NumPy defines."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True),
                        np.array([0, 1, info.max, info.min, info.min, 7, 7], dtype)])
    y_mod = np.concatenate([rng.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True),
                            np.array([0, 0, -1 if info.min else 1, -1 if info.min else 0, 3, 0, 2], dtype)])
    bits = info.bits
    y_shift = np.concatenate([rng.integers(0, bits + 3, 3000).astype(dtype),
                              np.array([bits, bits - 1, bits + 5, bits, 1, 0, 2], dtype)])
    if info.min:
        y_shift[:200] = -rng.integers(1, 5, 200).astype(dtype)  # negative shift amounts
    with np.errstate(all="ignore"):
        for name, y in (("fmod", y_mod), ("left_shift", y_shift), ("right_shift", y_shift)):
            want = getattr(np, name)(x, y)
            _bits(_run(getattr(sl, name), x, y), want, f"{name} {dtype}")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_gcd_and_lcm_are_numpys(dtype: str) -> None:
    """Every int8/uint8 pair, random and extreme pairs of wider types, and pairs with large common
    factors; wrap-arounds (the most negative value's magnitude, products that leave the type) as
    NumPy's."""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    if dt.itemsize == 1:
        xs, ys = np.meshgrid(np.arange(info.min, info.max + 1), np.arange(info.min, info.max + 1))
        x, y = xs.ravel().astype(dt), ys.ravel().astype(dt)
    else:
        rng = np.random.default_rng(dt.itemsize)
        edge = np.array([v for v in (info.min, info.min + 1, info.max, 0, 1, 6) if info.min <= v <= info.max], dtype=dt)
        ex, ey = np.meshgrid(edge, edge)
        wide = rng.integers(info.min, info.max, (2, 4000), endpoint=True, dtype=dt)
        common = (rng.integers(1, 1 << 10, (2, 4000)) * rng.integers(1, 50, (2, 4000))).astype(dt)
        x = np.concatenate([ex.ravel(), wide[0], common[0]])
        y = np.concatenate([ey.ravel(), wide[1], common[1]])
    with np.errstate(all="ignore"):
        for name in ("gcd", "lcm"):
            _bits(_run(getattr(sl, name), x, y), getattr(np, name)(x, y), f"{name} {dtype}")


@pytest.mark.parametrize("exponent", ["int32", "int64"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_ldexp_is_numpys_bits(dtype: str, exponent: str) -> None:
    """Exact: overflow to inf, results down to the subnormals and to zero, NaN and inf kept,
    exponents far beyond any float's range (bfloat16 takes NumPy's float32 loop)."""
    x = _values(dtype, 3)
    rng = np.random.default_rng(4)
    n = rng.integers(-40, 40, x.size)
    n[:300] = rng.integers(-1200, 1200, 300)
    n[300:310] = [np.iinfo(exponent).min, np.iinfo(exponent).max, -150, -149, -25, -24, 128, 1024, -1075, 0]
    n = n.astype(exponent)
    with np.errstate(all="ignore"):
        want = np.ldexp(x, n)
    _bits(_run(sl.ldexp, x, n), want, f"ldexp {dtype} {exponent}")
