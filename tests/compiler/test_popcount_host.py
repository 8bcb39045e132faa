"""The preamble's ``sl_popcount`` (``bitwise_count``) as host C++ (its own text, ``__popc`` and
``__popcll`` as the compiler's builtins) against NumPy's ``bitwise_count``: every int8, uint8,
int16 and uint16 value, and random and extreme values of the 32- and 64-bit types (the most
negative value's magnitude wraps to itself, as NumPy's). On the GPU:
``tests/gpu/test_small_int_ops_gpu.py``."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx

SHIMS = r"""
#include <cstdio>
#define __device__
#define __forceinline__ inline
static int __popc(unsigned int x) { return __builtin_popcount(x); }
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
"""

MAIN = r"""
template <class T> void run(long long a) { std::printf("%d\n", (int)sl_popcount((T)a)); }
// per line: the type's code (NumPy's dtype.char) and the value's signed 64-bit bit pattern
int main() {
  char t; long long a;
  while (std::scanf(" %c %lld", &t, &a) == 2) {
    switch (t) {
      case 'b': run<signed char>(a); break;
      case 'B': run<unsigned char>(a); break;
      case 'h': run<short>(a); break;
      case 'H': run<unsigned short>(a); break;
      case 'i': run<int>(a); break;
      case 'I': run<unsigned int>(a); break;
      case 'l': run<long long>(a); break;
      case 'L': run<unsigned long long>(a); break;
    }
  }
}
"""


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_popcount_is_numpys_bitwise_count(dtype: str, tmp_path) -> None:  # noqa: ANN001
    part = preamble_part("// NumPy's bitwise_count", "template <class T> __device__ __forceinline__ T sl_rshift")
    exe = build(tmp_path, "popcount", SHIMS + part + MAIN, "-fwrapv")
    info = np.iinfo(dtype)
    if info.bits <= 16:
        x = np.arange(info.min, info.max + 1, dtype=np.int64).astype(dtype)
    else:
        rng = np.random.default_rng(3)
        extremes = [info.min, info.min + 1, -1 if info.min else 1, 0, 1, info.max - 1, info.max]
        x = np.concatenate([np.array(extremes, dtype), rng.integers(info.min, info.max, 5000, dtype=dtype, endpoint=True)])
    code = {"q": "l", "Q": "L"}.get(x.dtype.char, x.dtype.char)
    # (uint64 beyond 2**63 as its signed bit pattern)
    lines = "".join(f"{code} {int(v)}\n" for v in (x.view(np.int64) if dtype == "uint64" else x.astype(np.int64)))
    out = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True).stdout.split()
    np.testing.assert_array_equal(np.array(out, np.int64), np.bitwise_count(x).astype(np.int64), err_msg=dtype)
