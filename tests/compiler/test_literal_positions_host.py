"""Positions known while a kernel is written (``stitchlab.codegen.elemental``: ``constant_index``,
the literals of ``Writer``): a basic-index assignment reads and writes rows and elements at
constant positions, so chains of them (``for i in ...: x[i] = x[i - 1] * 2 + 1``) compare
constants with constants. Those compares, the masks made of them and the ``where`` they select
with are computed while the kernel is written, and positions that differ only by parentheses are
one position, so a chain's kernel grows with its length, not with its square (40 row assignments:
51 KB of source, not 1.1 MB). The kernels' element loops, built as host C++, give NumPy's values;
the plans of the 12 workloads are unchanged by it (``benchmarks/results``' plan digests)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen.elemental import constant_index

from .hostcxx import INT_KERNEL_HEADER, build, element_loop, needs_cxx


@pytest.fixture(autouse=True)
def _chains_stay_lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chains as long as the loop (an array is otherwise evaluated every 16 assignments)."""
    from stitchlab.frontend import array

    monkeypatch.setattr(array, "ASSIGNMENTS_PENDING", 1 << 30)


def _row_chain(n: int, shape: tuple[int, int]) -> tuple[sl.LazyArray, np.ndarray]:
    a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape) % 7
    x, want = sl.asarray(a), a.copy()
    for i in range(1, n + 1):
        x[i] = x[i - 1] * 2 + 1
        want[i] = want[i - 1] * 2 + 1
    return x, want


def _element_chain(n: int, shape: tuple[int, int]) -> tuple[sl.LazyArray, np.ndarray]:
    a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape) % 11
    y, want = sl.asarray(a), a.copy()
    for i in range(n):
        y[i, (3 * i) % shape[1]] = i + 100
        want[i, (3 * i) % shape[1]] = i + 100
        y[:, 0] = y[:, 1] + y[i, 2]
        want[:, 0] = want[:, 1] + want[i, 2]
        y[i % shape[0], 1:3] = y[(i + 1) % shape[0], 2:4] - 1
        want[i % shape[0], 1:3] = want[(i + 1) % shape[0], 2:4] - 1
    return y, want



@needs_cxx
def test_assignment_chains_compute_numpys_values(tmp_path) -> None:  # noqa: ANN001
    cases = [_row_chain(6, (8, 3)), _row_chain(12, (13, 5)), _element_chain(5, (6, 5)), _element_chain(9, (11, 4))]
    functions, calls = [], []
    for c, (lazy, want) in enumerate(cases):
        (k,) = sl.explain(lazy, device="H200").kernels
        # inputs: the array before the assignments; a row chain's first read, x[0], is a view of
        # its buffer (an input of its own, at the same address)
        assert "in2" not in k.source and ("in1" in k.source) == (c < 2), c
        view, row0 = (", const int* in1", ", in") if c < 2 else ("", "")
        functions.append(f"static void case{c}(const int* in0, int* out0, const int n{view}) {{\n"
                         f"  for (int i = 0; i < n; ++i) {{{element_loop(k.source)}\n  }}\n}}\n")
        calls.append(f"  {{ static int in[{want.size}], out[{want.size}];\n"
                     f"    for (int j = 0; j < {want.size}; ++j) in[j] = j % {7 if c < 2 else 11};\n"
                     f"    g_in = in; g_size = {want.size}; case{c}(in, out, {want.size}{row0});\n"
                     f"    for (int j = 0; j < {want.size}; ++j) std::printf(\"%d \", out[j]);\n"
                     f"    std::printf(\"\\n\"); }}\n")
    exe = build(tmp_path, "chains", INT_KERNEL_HEADER + "".join(functions) + "int main() {\n" + "".join(calls) + "}\n")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(cases), out[-3:]
    for (lazy, want), line in zip(cases, out, strict=True):
        np.testing.assert_array_equal(np.array(line.split(), dtype=np.int64).reshape(want.shape), want)
        np.testing.assert_array_equal(lazy.get(), want)  # (and the numpy backend's)


@pytest.mark.parametrize(("chain", "growth"), [(_row_chain, 2), (_element_chain, 8)])
def test_a_chains_kernels_grow_with_its_length(chain, growth: int) -> None:  # noqa: ANN001
    """Four times the assignments (10 -> 40, 64 x 33 int32): under twice the source for rows (it
    was 15 times: 68 KB -> 1.06 MB), under 8 times for elements whose slices read other rows,
    where positions along the columns stay expressions (it was 42 times: 459 KB -> 19.3 MB)."""
    sizes = []
    for n in (10, 40):
        lazy, _ = chain(n, (64, 33))
        sizes.append(sum(len(k.source) for k in sl.explain(lazy, device="H200").kernels))
    assert sizes[1] < growth * sizes[0], sizes


def test_constant_positions_are_read_as_numbers() -> None:
    assert constant_index("7") == 7
    assert constant_index("(0 + 1)") == 1
    assert constant_index("((3) * (int)64 + (2 + 5))") == 199
    assert constant_index("(long long)0 + (long long)((4)) * (long long)1") == 4
    for expr in ("i5", "(i5 + 1)", "(i / (int)4)", "(7 % (int)3)", "u", "", "(2 ** 3)", "sl_x(1)"):
        assert constant_index(expr) is None, expr
