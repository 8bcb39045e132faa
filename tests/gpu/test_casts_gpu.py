"""Casts and order-dependent ops on the GPU, bit for bit against NumPy.

* float64 -> float16 rounds once (``cvt.rn.f16.f64``), as NumPy's ``astype``; through float32 it
  would round twice (a float64 just above a float16 midpoint becomes the midpoint).
* ``maximum``/``minimum`` return NumPy's operand: the first NaN (payload and sign kept), and of
  -0.0 and +0.0 the one NumPy picks (float32/float64 on x86-64: the second; float16: the first).

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_casts_gpu.py -q``.
The CPU side of these checks is ``tests/test_signed_zero_and_casts.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from floatbits import bits, nan_with_payload

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

FLOATS = [np.float16, np.float32, np.float64]

def _samebits(got: np.ndarray, want: np.ndarray, what: str, nan_payloads: bool = True) -> None:
    """Equal bit patterns; with ``nan_payloads=False`` a NaN only has to be a NaN (GPU arithmetic
    makes the canonical NaN, the CPU keeps an operand's payload)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape, want.dtype, want.shape)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN positions differ"
    keep = np.ones(want.shape, bool) if nan_payloads else ~nan
    g, w = bits(got)[keep], bits(want)[keep]
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, (f"{what}: {bad.size} elements differ, e.g. got {got[keep][bad[:4]]} want "
                           f"{want[keep][bad[:4]]} (bits {[hex(v) for v in g[bad[:4]]]} vs {[hex(v) for v in w[bad[:4]]]})")


def _on_gpu(build: Callable[..., Any], *arrays: np.ndarray) -> np.ndarray:
    import cupy as cp

    out = build(*[sl.asarray(cp.asarray(a)) for a in arrays])
    return cp.asnumpy(sl.compute(out)[0])


# --- float64 -> float16 ------------------------------------------------------------------------------
def _near_half_midpoints(n: int, seed: int) -> np.ndarray:
    """float64 values at, just above and just below midpoints between neighbouring float16 values
    (normal, subnormal, near the overflow threshold), with inf, NaN and signed zeros."""
    rng = np.random.default_rng(seed)
    h = rng.integers(0, 0x7BFF, n, dtype=np.uint16).view(np.float16)  # finite, non-negative
    lo = h.astype(np.float64)
    hi = np.nextafter(h, np.float16(np.inf)).astype(np.float64)
    mid = (lo + hi) / 2  # exact in float64
    ulp = np.spacing(mid)
    offset = rng.choice([-1.0, 0.0, 1.0], n) * ulp * rng.choice([1.0, 2.0**10, 2.0**20, 2.0**28], n)
    out = (mid + offset) * rng.choice([-1.0, 1.0], n)
    specials = np.array([1 + 2.0**-11 + 2.0**-40, 65519.99999, 65520.0, 65504.0, 2.0**-25 + 2.0**-60, 2.0**-25,
                         0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, 1e-300])
    specials = np.concatenate([specials, -specials])
    out[: specials.size] = specials
    return out


@pytest.mark.parametrize("shape", [(64, 4096), (7, 33), (1001,)])
def test_float64_to_float16_matches_numpy_bit_for_bit(shape: tuple[int, ...]) -> None:
    x = _near_half_midpoints(int(np.prod(shape)), seed=1).reshape(shape)
    with np.errstate(all="ignore"):
        want = x.astype(np.float16)
        assert (bits(want) != bits(x.astype(np.float32).astype(np.float16))).sum() > 0  # the cases bite
    _samebits(_on_gpu(lambda a: a.astype(np.float16), x), want, f"astype {shape}", nan_payloads=False)
    # fused behind a float64 op and in front of float16 ones
    with np.errstate(all="ignore"):
        want = (x * 1.0).astype(np.float16) * np.float16(2.0) + np.float16(1.0)
    got = _on_gpu(lambda a: (a * 1.0).astype(np.float16) * 2.0 + 1.0, x)
    _samebits(got, want, f"fused {shape}", nan_payloads=False)


def test_float64_row_value_to_float16_matches_numpy() -> None:
    """A float64 row maximum cast to float16 and broadcast back (a stitched row kernel)."""
    x = _near_half_midpoints(300 * 257, seed=2).reshape(300, 257)
    x[np.isnan(x)] = 0.0
    with np.errstate(all="ignore"):
        want = (x - x.max(axis=1, keepdims=True)).astype(np.float16)
    got = _on_gpu(lambda a: (a - a.max(axis=1, keepdims=True)).astype(np.float16), x)
    _samebits(got, want, "row", nan_payloads=False)


# --- maximum and minimum -----------------------------------------------------------------------------
def _pairs(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of special values: signed zeros, NaNs with distinct payloads and signs,
    infinities, equal and unequal finite values; tiled to 4099 elements (vector and tail paths)."""
    s = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.0, 1.0, 0.5], dtype)
    s = np.concatenate([s, np.array([nan_with_payload(dtype, 1), nan_with_payload(dtype, 2, negative=True)], dtype)])
    a, b = np.repeat(s, s.size), np.tile(s, s.size)
    reps = -(-4099 // a.size)
    return np.tile(a, reps)[:4099], np.tile(b, reps)[:4099]


def _require_x86_tie_rule() -> None:
    """NumPy's signed-zero ties depend on the CPU's loops; the device functions follow x86-64's."""
    f64 = np.maximum(np.array([-0.0]), np.array([0.0]))[0]
    f16 = np.maximum(np.array([-0.0], np.float16), np.array([0.0], np.float16))[0]
    if np.signbit(f64) or not np.signbit(f16):
        pytest.skip("NumPy on this host resolves maximum(-0.0, +0.0) unlike x86-64's loops (second "
                    "operand for float32/float64, first for float16), which the device functions follow")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_matches_numpy_bit_for_bit(dtype: Any, name: str) -> None:
    _require_x86_tie_rule()
    a, b = _pairs(dtype)
    np_fn, sl_fn = getattr(np, name), getattr(sl, name)
    _samebits(_on_gpu(sl_fn, a, b), np_fn(a, b), f"{name}(a, b) {np.dtype(dtype)}")
    _samebits(_on_gpu(sl_fn, b, a), np_fn(b, a), f"{name}(b, a) {np.dtype(dtype)}")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_of_a_difference_keeps_numpys_signed_zero(dtype: Any, name: str) -> None:
    """``maximum(a - c, b)`` and ``maximum(b, a - c)`` in one kernel: whichever operand the
    canonical sort would put first, the sign of a zero result is NumPy's."""
    _require_x86_tie_rule()
    a, b = _pairs(dtype)
    c = np.zeros_like(a)
    np_fn, sl_fn = getattr(np, name), getattr(sl, name)
    with np.errstate(all="ignore"):
        want1, want2 = np_fn(a - c, b), np_fn(b, a - c)
    import cupy as cp

    x, y, z = (sl.asarray(cp.asarray(v)) for v in (a, b, c))
    got1, got2 = (cp.asnumpy(v) for v in sl.compute(sl_fn(x - z, y), sl_fn(y, x - z)))
    _samebits(got1, want1, f"{name}(a - c, b)", nan_payloads=False)
    _samebits(got2, want2, f"{name}(b, a - c)", nan_payloads=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_matches_numpy_apart_from_ties(dtype: Any, name: str) -> None:
    """fmax/fmin: NumPy's values; the sign of a zero from -0.0 and +0.0 and the payload of a NaN
    from two NaNs are left open (NumPy's own vary with an element's position in the array)."""
    a, b = _pairs(dtype)
    got, want = _on_gpu(getattr(sl, name), a, b), getattr(np, name)(a, b)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~np.isnan(want)], want[~np.isnan(want)])  # == : -0.0 == +0.0
