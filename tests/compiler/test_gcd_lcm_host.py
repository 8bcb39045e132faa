"""The preamble's ``sl_gcd``/``sl_lcm`` (and ``ldexp``'s exponent clamp) as host C++ (their own
text) against NumPy's ``gcd``/``lcm``: every pair of int8 and of uint8 values, and random and
extreme pairs of the 16-, 32- and 64-bit types, wrap-arounds included (``gcd(-128, 0)`` of int8
is -128, ``lcm`` of values whose product leaves the type wraps as NumPy's does). On the GPU:
``tests/gpu/test_more_ufuncs_gpu.py``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx

SHIMS = r"""
#include <cstdio>
#include <cstdint>
#define __device__
#define __forceinline__ inline
template <class T> struct sl_is_signed { static constexpr bool value = T(-1) < T(0); };
"""

MAIN = r"""
template <class T> void run(int fn, long long a, long long b) {
  const T x = (T)a, y = (T)b;
  const long long r = fn == 0 ? (long long)sl_gcd(x, y) : fn == 1 ? (long long)sl_lcm(x, y) : (long long)sl_ldexp_exp(x);
  std::printf("%lld\n", r);
}
// per line: the type's code (NumPy's dtype.char), the function (0 gcd, 1 lcm, 2 ldexp's exponent), two operands
int main() {
  char t; int fn; long long a, b;
  while (std::scanf(" %c %d %lld %lld", &t, &fn, &a, &b) == 4) {
    switch (t) {
      case 'b': run<signed char>(fn, a, b); break;
      case 'B': run<unsigned char>(fn, a, b); break;
      case 'h': run<short>(fn, a, b); break;
      case 'H': run<unsigned short>(fn, a, b); break;
      case 'i': run<int>(fn, a, b); break;
      case 'I': run<unsigned int>(fn, a, b); break;
      case 'l': run<long long>(fn, a, b); break;
      case 'L': run<unsigned long long>(fn, a, b); break;
    }
  }
}
"""


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = preamble_part("// NumPy's gcd", "template <class T> __device__ __forceinline__ T sl_pow")
    return build(tmp_path_factory.mktemp("gcd"), "gcd", SHIMS + part + MAIN, "-fwrapv")


def _call(host: Path, dtype: np.dtype, fn: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    code = {"q": "l", "Q": "L"}.get(dtype.char, dtype.char)
    # operands as their signed 64-bit bit patterns (uint64 beyond 2**63 too)
    xs, ys = x.astype(np.int64), y.astype(np.int64)
    lines = "".join(f"{code} {fn} {a} {b}\n" for a, b in zip(xs, ys, strict=True))
    out = subprocess.run([str(host)], input=lines, capture_output=True, text=True, check=True).stdout.split()
    return np.array([int(v) for v in out], dtype=np.int64).astype(dtype if fn < 2 else np.int64)


def _pairs(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    if dtype.itemsize == 1:
        xs, ys = np.meshgrid(np.arange(info.min, info.max + 1), np.arange(info.min, info.max + 1))
        return xs.ravel().astype(dtype), ys.ravel().astype(dtype)
    rng = np.random.default_rng(dtype.itemsize)
    edge = np.array([info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 6, 1 << (dtype.itemsize * 4)], dtype=object)
    edge = np.array([v for v in edge if info.min <= v <= info.max], dtype=dtype)
    ex, ey = np.meshgrid(edge, edge)
    small = rng.integers(max(info.min, -5000), 5000, size=(2, 3000), endpoint=True).astype(dtype)
    wide = rng.integers(info.min, info.max, size=(2, 2000), endpoint=True, dtype=dtype)
    factor = rng.integers(1, 1 << min(12, dtype.itemsize * 4 - 2), size=(2, 2000)).astype(dtype)  # common factors
    common = (factor * rng.integers(1, 60, size=(2, 2000)).astype(dtype)).astype(dtype)
    return (np.concatenate([ex.ravel(), small[0], wide[0], common[0]]),
            np.concatenate([ey.ravel(), small[1], wide[1], common[1]]))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_gcd_and_lcm_are_numpys(host: Path, dtype: str) -> None:
    dt = np.dtype(dtype)
    x, y = _pairs(dt)
    with np.errstate(all="ignore"):
        for fn, ufunc in ((0, np.gcd), (1, np.lcm)):
            got, want = _call(host, dt, fn, x, y), ufunc(x, y)
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, f"{ufunc.__name__} {dtype}: {bad.size} of {x.size} differ, e.g. {x[bad[:4]]}, {y[bad[:4]]}: {got[bad[:4]]} vs {want[bad[:4]]}"


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_ldexp_exponent_keeps_every_finite_result(host: Path, dtype: str) -> None:
    """The clamp to +-100000 changes no result: beyond 2**+-2200 every double over- or underflows."""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    n = np.array([info.min, -100001, -100000, -2200, -1, 0, 1, 1074, 100000, 100001, info.max], dtype=dt)
    got = _call(host, dt, 2, n, n)
    np.testing.assert_array_equal(got, np.clip(n.astype(np.int64), -100000, 100000))
    for e in (100000, -100000):
        for v in (np.finfo(np.float64).tiny / 2**52, np.finfo(np.float64).max):
            with np.errstate(all="ignore"):
                assert np.ldexp(v, e) == np.ldexp(v, np.int64(info.max if e > 0 else info.min))
