"""The preamble's ``sl_compare_mixed`` (a signed and an unsigned 64-bit integer compared
exactly, as NumPy's ``qQ->?`` and ``Qq->?`` loops do; C converts the signed operand, so that
``-1 < 2**63`` is false) as host C++ against NumPy's six comparisons, both operand orders, over
the extreme values and random ones. On the GPU: ``tests/gpu/test_small_int_ops_gpu.py``."""

from __future__ import annotations

import operator
import subprocess

import numpy as np
import pytest

from .hostcxx import build, needs_cxx, preamble_part

pytestmark = needs_cxx

SOURCE = r"""
#include <cstdio>
#define __device__
#define __forceinline__ inline
""" + preamble_part("// The sign of a - b for a signed", "// NumPy's fmod") + r"""
// per line: the order (0: int64 first), the int64 and the uint64 operand; prints the sign of a - b
int main() {
  int order; long long s; unsigned long long u;
  while (std::scanf(" %d %lld %llu", &order, &s, &u) == 3)
    std::printf("%d\n", order == 0 ? sl_compare_mixed(s, u) : sl_compare_mixed(u, s));
}
"""

#: NumPy's comparison -> the emitter's relation of ``sl_compare_mixed(a, b)`` to 0
RELATIONS = {np.less: operator.lt, np.less_equal: operator.le, np.greater: operator.gt, np.greater_equal: operator.ge,
             np.equal: operator.eq, np.not_equal: operator.ne}


def test_signed_and_unsigned_64_bit_comparisons_are_numpys(tmp_path) -> None:  # noqa: ANN001
    exe = build(tmp_path, "mixed", SOURCE)
    rng = np.random.default_rng(7)
    edges_s = np.array([-2**63, -2**63 + 1, -2, -1, 0, 1, 2, 2**62, 2**63 - 2, 2**63 - 1], np.int64)
    edges_u = np.array([0, 1, 2, 2**62, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1], np.uint64)
    s = np.concatenate([np.repeat(edges_s, edges_u.size), rng.integers(-2**63, 2**63 - 1, 2000, np.int64, True)])
    u = np.concatenate([np.tile(edges_u, edges_s.size), rng.integers(0, 2**64 - 1, 2000, np.uint64, True)])
    u[-500:] = s[-500:].astype(np.uint64)  # (equal values where s >= 0)
    for order in (0, 1):
        lines = "".join(f"{order} {a} {b}\n" for a, b in zip(s.tolist(), u.tolist(), strict=True))
        out = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True).stdout.split()
        sign = np.array(out, dtype=np.int64)
        for ufunc, rel in RELATIONS.items():
            want = ufunc(s, u) if order == 0 else ufunc(u, s)
            got = rel(sign, 0)
            assert np.array_equal(got, want), (ufunc.__name__, order, np.flatnonzero(got != want)[:5])


@pytest.mark.parametrize("order", ["int64 first", "uint64 first"])
def test_the_emitter_compares_mixed_64_bit_operands_with_it(order: str) -> None:
    import stitchlab as sl

    a = sl.asarray(np.array([-1, 5], np.int8))
    b = sl.asarray(np.array([2**63, 5], np.uint64))
    x, y = (a, b) if order == "int64 first" else (b, a)
    (k,) = sl.explain(x < y, x == y).kernels
    assert k.source.count("sl_compare_mixed(") >= 4 and "< 0)" in k.source and "== 0)" in k.source
