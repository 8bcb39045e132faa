"""The preamble's ``sl_logaddexp``/``sl_logaddexp2`` as host C++ (its own text) against NumPy's
``logaddexp``/``logaddexp2``: both follow ``npy_logaddexp`` (equal operands, infinities of one
sign among them, give ``x + log 2`` / ``x + 1``; NaN propagates through the difference), so with
the host's libm under them the bits are NumPy's, float32 and float64, special values included.
On the GPU CUDA's ``exp``/``log1p`` sit under the same code (``tests/gpu/test_more_ufuncs_gpu.py``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
using std::exp; using std::exp2; using std::log1p;
"""

MAIN = r"""
// per line: 'f' or 'd', two operands' bits (hex), the function (1: logaddexp, 2: logaddexp2)
int main() {
  char t; unsigned long long a, b; int fn;
  while (std::scanf(" %c %llx %llx %d", &t, &a, &b, &fn) == 4) {
    if (t == 'f') {
      float x, y; unsigned int ua = (unsigned int)a, ub = (unsigned int)b;
      std::memcpy(&x, &ua, 4); std::memcpy(&y, &ub, 4);
      const float r = fn == 1 ? sl_logaddexp(x, y) : sl_logaddexp2(x, y);
      unsigned int u; std::memcpy(&u, &r, 4); std::printf("%08x\n", u);
    } else {
      double x, y; std::memcpy(&x, &a, 8); std::memcpy(&y, &b, 8);
      const double r = fn == 1 ? sl_logaddexp(x, y) : sl_logaddexp2(x, y);
      unsigned long long u; std::memcpy(&u, &r, 8); std::printf("%016llx\n", u);
    }
  }
}
"""


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = preamble_part("// NumPy's logaddexp / logaddexp2", "template <class T> __device__ __forceinline__ T sl_sign")
    return build(tmp_path_factory.mktemp("logaddexp"), "lae", SHIMS + part + MAIN, "-fno-fast-math")


def _operands(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(17)
    x = np.concatenate([rng.standard_normal(3000) * 4, rng.standard_normal(500) * 300, rng.standard_normal(200) * 1e-3])
    y = np.concatenate([rng.standard_normal(3000) * 4, rng.standard_normal(500) * 300, x[-200:] + rng.standard_normal(200) * 1e-6])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 88.0, -88.0, 700.0])
    xs, ys = np.meshgrid(special, special)
    x = np.concatenate([x, xs.ravel(), x[:50]]).astype(dtype)
    y = np.concatenate([y, ys.ravel(), x[:50].astype(np.float64)]).astype(dtype)  # equal pairs too
    return x, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [1, 2])
def test_host_bits_are_numpys(host: Path, dtype: type, fn: int) -> None:
    x, y = _operands(dtype)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    t = "f" if dtype == np.float32 else "d"
    lines = "".join(f"{t} {int(a):x} {int(b):x} {fn}\n" for a, b in zip(x.view(bits), y.view(bits), strict=True))
    out = subprocess.run([str(host)], input=lines, capture_output=True, text=True, check=True).stdout.split()
    got = np.array([int(v, 16) for v in out], dtype=bits).view(dtype)
    with np.errstate(all="ignore"):
        want = (np.logaddexp if fn == 1 else np.logaddexp2)(x, y)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    mismatch = np.flatnonzero(got[~nan].view(bits) != want[~nan].view(bits))
    assert mismatch.size == 0, (
        f"{mismatch.size} of {(~nan).sum()} differ, e.g. x={x[~nan][mismatch[:3]]} y={y[~nan][mismatch[:3]]}: "
        f"{got[~nan][mismatch[:3]]} vs NumPy {want[~nan][mismatch[:3]]}"
    )
