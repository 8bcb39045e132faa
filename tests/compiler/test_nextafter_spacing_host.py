"""The preamble's ``sl_nextafter`` and ``sl_spacing`` as host C++ (their own text) against NumPy's
``nextafter`` and ``spacing``: every float16 and bfloat16 value (the half types on their bits:
NumPy 2.5's half loops, ml_dtypes' bfloat16 loops) toward 13 targets and as spacings, and float32 and
float64 special and random values. On the GPU: ``tests/gpu/test_more_ufuncs_gpu.py``."""

from __future__ import annotations

import subprocess

import ml_dtypes
import numpy as np
import pytest

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx

SHIMS = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
using std::copysign; using std::isinf; using std::nextafter; using std::nextafterf; using std::copysignf;
struct sl_half { unsigned short x; };
struct sl_bf16 { unsigned short x; };
static float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
static float sl_bf2f(sl_bf16 b) { return __int_as_float((int)((unsigned)b.x << 16)); }
static sl_bf16 sl_bf16_of(float f) { return sl_bf16{(unsigned short)(__float_as_uint(f) >> 16)}; }
"""

MAIN = r"""
// per line: a type code (e float16, b bfloat16 as bits; f float32, d float64 as bit patterns),
// the function (0 nextafter, 1 spacing) and two operands; prints the result's bits
int main() {
  char t; int fn; unsigned long long a, b;
  while (std::scanf(" %c %d %llu %llu", &t, &fn, &a, &b) == 4) {
    if (t == 'e') {
      const sl_half x{(unsigned short)a}, y{(unsigned short)b};
      std::printf("%u\n", (unsigned)(fn ? sl_spacing(x) : sl_nextafter(x, y)).x);
    } else if (t == 'b') {
      const sl_bf16 x{(unsigned short)a}, y{(unsigned short)b};
      std::printf("%u\n", (unsigned)(fn ? sl_spacing(x) : sl_nextafter(x, y)).x);
    } else if (t == 'f') {
      float x, y; unsigned ua = (unsigned)a, ub = (unsigned)b; std::memcpy(&x, &ua, 4); std::memcpy(&y, &ub, 4);
      const float r = fn ? sl_spacing(x) : sl_nextafter(x, y); unsigned u; std::memcpy(&u, &r, 4);
      std::printf("%u\n", u);
    } else {
      double x, y; std::memcpy(&x, &a, 8); std::memcpy(&y, &b, 8);
      const double r = fn ? sl_spacing(x) : sl_nextafter(x, y); unsigned long long u; std::memcpy(&u, &r, 8);
      std::printf("%llu\n", u);
    }
  }
}
"""

UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> object:
    part = preamble_part("// nextafter and spacing:", "// NumPy's bitwise_count")
    return build(tmp_path_factory.mktemp("nextafter"), "nextafter", SHIMS + part + MAIN)


def _values(dtype: np.dtype) -> np.ndarray:
    if dtype.itemsize == 2:
        return np.arange(1 << 16, dtype=np.uint16).view(dtype)
    info = np.finfo(dtype)
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.tiny, -info.tiny, info.max, -info.max,
               info.smallest_subnormal, -info.smallest_subnormal, 2.0, 0.5, -2.0 ** -30]
    rng = np.random.default_rng(9)
    return np.concatenate([np.array(special, dtype), (rng.standard_normal(3000) * 10.0 ** rng.integers(-30, 30, 3000)).astype(dtype)])


def _run(host: object, code: str, fn: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    u = UINT[x.dtype.itemsize]
    lines = "".join(f"{code} {fn} {int(a)} {int(b)}\n" for a, b in zip(x.view(u), y.view(u), strict=True))
    out = subprocess.run([str(host)], input=lines, capture_output=True, text=True, check=True).stdout.split()
    return np.array([int(v) for v in out], dtype=np.uint64).astype(u).view(x.dtype)


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal bits, NaNs of any payload equal (NumPy's and ml_dtypes' NaNs differ from C's)."""
    nan = np.isnan(want.astype(np.float64))
    assert np.array_equal(np.isnan(got.astype(np.float64)), nan), what
    u = UINT[want.dtype.itemsize]
    bad = np.flatnonzero(got[~nan].view(u) != want[~nan].view(u))
    assert bad.size == 0, f"{what}: {got[~nan][bad[:5]]} against {want[~nan][bad[:5]]}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nextafter_and_spacing_are_numpys(dtype: str, host: object) -> None:
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    code = {"float16": "e", "bfloat16": "b", "float32": "f", "float64": "d"}[dtype]
    x = _values(dt)
    with np.errstate(all="ignore"):
        _same(_run(host, code, 1, x, x), np.spacing(x), f"spacing {dtype}")
        targets = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 1e-40, -1e-40, 65504.0, -65504.0], dt)
        for t in targets:
            y = np.full(x.shape, t, dt)
            _same(_run(host, code, 0, x, y), nextafter(x, y), f"nextafter({dtype}, {t})")
        _same(_run(host, code, 0, x, x), nextafter(x, x), f"nextafter({dtype}, x)")


def nextafter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy's ``nextafter`` as NumPy 2.5 computes it: equal values give ``y`` for float16 too (so
    ``nextafter(-0.0, +0.0)`` is +0.0; numpy/numpy#31475), where NumPy 2.4 gave ``x``."""
    both_zero = (x.astype(np.float64) == 0) & (y.astype(np.float64) == 0)
    return np.where(both_zero, y, np.nextafter(x, y))
