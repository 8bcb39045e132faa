"""The preamble's bfloat16 conversions and arithmetic as host C++ (its own text, the branches for
GPUs before sm_80 / sm_90: integer rounding in ``sl_f2bf``, float ``sl_hadd``/``sl_hsub``/``sl_hmul``),
against ml_dtypes (float32 -> bfloat16 is its plain round to nearest even) and the one-rounding
casts of ``stitchlab.ir.dtypes.cast`` (``sl_d2bf``, ``sl_ll2bf``, ``sl_ull2bf``). The sm_90 branches
(PTX ``cvt``/``add.rn.bf16``) run on the GPU in ``tests/gpu/test_bfloat16_gpu.py``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from stitchlab.ir.dtypes import cast

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx
BF16 = np.dtype(ml_dtypes.bfloat16)

# what the preamble takes from CUDA, for the host (rounding toward zero through the FPU's mode)
SHIMS = r"""
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __align__(n) alignas(n)
static inline unsigned int __float_as_uint(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned int u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
static inline double __longlong_as_double(long long u) { double d; std::memcpy(&d, &u, 8); return d; }
static inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
template <class R, class A> static inline R rz(A a) {
  const int mode = std::fegetround(); std::fesetround(FE_TOWARDZERO);
  volatile A in = a; volatile R r = (R)in; std::fesetround(mode); return r;
}
static inline float __double2float_rz(double d) { return rz<float>(d); }
static inline double __ll2double_rz(long long x) { return rz<double>(x); }
static inline double __ull2double_rz(unsigned long long x) { return rz<double>(x); }
"""

MAIN = r"""
// per line: an op letter and its operand bits (hex); prints the bfloat16 bits
int main() {
  char op; unsigned long long a, b;
  while (std::scanf(" %c %llx %llx", &op, &a, &b) == 3) {
    sl_bf16 r{0};
    const sl_bf16 x{(unsigned short)a}, y{(unsigned short)b};
    if (op == 'f') r = sl_f2bf(__uint_as_float((unsigned int)a));
    if (op == 'd') r = sl_d2bf(__longlong_as_double((long long)a));
    if (op == 'l') r = sl_ll2bf((long long)a);
    if (op == 'u') r = sl_ull2bf(a);
    if (op == '+') r = sl_hadd(x, y);
    if (op == '-') r = sl_hsub(x, y);
    if (op == '*') r = sl_hmul(x, y);
    std::printf("%04x\n", r.x);
  }
}
"""


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = preamble_part("struct __align__(2) sl_bf16", "template <class T> struct sl_is_float")
    return build(tmp_path_factory.mktemp("bf16"), "bf16", SHIMS + part + MAIN, "-frounding-math")


def _run(exe: Path, op: str, a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    b = np.zeros_like(a) if b is None else b
    lines = "\n".join(f"{op} {x:x} {y:x}" for x, y in zip(a.tolist(), b.tolist(), strict=True))
    out = subprocess.run([str(exe)], input=lines + "\n", capture_output=True, text=True, check=True).stdout.split()
    return np.array([int(o, 16) for o in out], np.uint16).view(BF16)


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    gf, wf = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(gf), np.isnan(wf), err_msg=what)
    keep = ~np.isnan(wf)
    np.testing.assert_array_equal(got.view(np.uint16)[keep], want.view(np.uint16)[keep], err_msg=what)


def test_float_to_bfloat16_in_integer_arithmetic_is_round_to_nearest_even(host: Path) -> None:
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 1 << 32, 20_000, dtype=np.uint64).astype(np.uint32)
    # ties (low half 0x8000) with even and odd high halves, and their neighbours, and specials
    ties = (rng.integers(0, 1 << 16, 2000, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000
    bits = np.concatenate([bits, ties, ties - 1, ties + 1, np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                                                                     0x7F7FFFFF, 0x00000001, 0x80000000], np.uint32)])
    with np.errstate(invalid="ignore"):  # NaN bit patterns
        want = bits.view(np.float32).astype(BF16)
    _same(_run(host, "f", bits), want, "float -> bfloat16")


def test_one_rounding_casts_match_the_numpy_backend(host: Path) -> None:
    rng = np.random.default_rng(1)
    finite = np.arange(1 << 16, dtype=np.uint16).view(BF16)
    finite = finite[np.isfinite(finite.astype(np.float32))].astype(np.float64)
    mids = (finite[:-1] + finite[1:]) / 2
    d = np.concatenate([mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf), rng.standard_normal(2000) * 1e300,
                        [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-50, -1e-50]])
    _same(_run(host, "d", d.view(np.uint64)), cast(d, BF16), "float64 -> bfloat16")
    i64 = np.concatenate([rng.integers(-(1 << 63), (1 << 63) - 1, 5000, dtype=np.int64), [2**63 - 1, -(2**63), 0, -1]]).astype(np.int64)
    _same(_run(host, "l", i64.view(np.uint64)), cast(i64, BF16), "int64 -> bfloat16")
    u64 = rng.integers(0, 1 << 64, 5000, dtype=np.uint64)
    _same(_run(host, "u", u64), cast(u64, BF16), "uint64 -> bfloat16")


@pytest.mark.parametrize(("op", "ufunc"), [("+", np.add), ("-", np.subtract), ("*", np.multiply)])
def test_arithmetic_before_sm90_is_ml_dtypes(host: Path, op: str, ufunc: np.ufunc) -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(0, 1 << 16, 20_000, dtype=np.uint64).astype(np.uint16)
    b = rng.integers(0, 1 << 16, 20_000, dtype=np.uint64).astype(np.uint16)
    with np.errstate(all="ignore"):
        want = ufunc(a.view(BF16), b.view(BF16))
    _same(_run(host, op, a, b), want, op)
