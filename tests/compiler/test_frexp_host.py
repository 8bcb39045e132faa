"""The preamble's ``sl_frexp_exp`` (``frexp``'s exponent) as host C++ (its own text) against
NumPy's ``frexp``: float32 and float64 zeros, infinities, NaN, subnormals, the largest values and
random ones (float16 and bfloat16 go through float, where their values are exact). On the GPU:
``tests/gpu/test_more_ufuncs_gpu.py``."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx

MAIN = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
using std::frexp; using std::isinf;
%s
int main() {
  char t; unsigned long long a;
  while (std::scanf(" %%c %%llu", &t, &a) == 2) {
    if (t == 'f') { float x; unsigned u = (unsigned)a; std::memcpy(&x, &u, 4); std::printf("%%d\n", sl_frexp_exp(x)); }
    else { double x; std::memcpy(&x, &a, 8); std::printf("%%d\n", sl_frexp_exp(x)); }
  }
}
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_exponent_is_numpys(dtype: str, tmp_path) -> None:  # noqa: ANN001
    part = preamble_part("// frexp's exponent", "// NumPy's bitwise_count")
    exe = build(tmp_path, "frexp", MAIN % part)
    info = np.finfo(dtype)
    rng = np.random.default_rng(4)
    special = [0.0, -0.0, 1.0, 0.5, -0.75, np.inf, -np.inf, np.nan, -np.nan, info.tiny, info.max, -info.max,
               info.smallest_subnormal, info.smallest_subnormal * 3, -info.tiny / 2]
    x = np.concatenate([np.array(special, dtype), (rng.standard_normal(4000) * 10.0 ** rng.integers(-300, 300, 4000)).astype(dtype)])
    u = np.uint32 if dtype == "float32" else np.uint64
    lines = "".join(f"{'f' if dtype == 'float32' else 'd'} {int(v)}\n" for v in x.view(u))
    with np.errstate(all="ignore"):
        out = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True).stdout.split()
    np.testing.assert_array_equal(np.array(out, np.int64), np.frexp(x)[1])
