"""Shifted reads in a pointwise kernel's vector chunks come from the chunk's aligned vectors
(``stitchlab.codegen.elemental``, ``Writer._lane_vector``): lane ``u`` of a read at ``p + u + K``
takes element ``(u + K) & (W - 1)`` of the vector at ``p + ((u + K) >> log2 W) * W``. Whole
generated kernels (both branches of the chunk loop, every thread of a small grid) built as host
C++ over int32 arrays that hold their own positions, every load bounds-checked and every vector
load alignment-checked, against NumPy on the same arrays: shifts 0 to 16 along the last axis,
rows, rolls, joins, pads of every mode (read as lane vectors in the chunks away from the edges), rows
whose extent is not a multiple of the width (chunks that cross a row take the other branch), a
trailing unit axis, 1-d arrays whose length is and is not a multiple of the width, inputs aligned
and one element off. On the GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import elemental

from .hostcxx import build, needs_cxx

pytestmark = needs_cxx


@pytest.fixture(autouse=True)
def _rows_of_any_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels here have short rows, which the code generator keeps away from tested chunks
    (``SHIFTED_ROW_WARPS``...): allow them, so both branches are built and run."""
    for name in ("SHIFTED_ROW_WARPS", "PLAIN_ROW_WARPS", "PAD_ROW_WARPS"):
        monkeypatch.setattr(elemental, name, 0)


#: positions below 2**10, so a program's three terms ``a + b * 2**10 + c * 2**20`` tell which
#: element each read took
S = 1 << 10

HEADER = r"""
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
struct sl_dim { int x; };
static sl_dim blockIdx, threadIdx, gridDim;
#define __global__
#define __launch_bounds__(n)
#define __restrict__
template <class T, int N> struct sl_vec { T v[N]; };
// the input lies in an arena with guards either side: a read in the arena outside the input fails
alignas(16) static int g_arena[1 << 16]; static const int* g_in; static long long g_size;
static void sl_check(const int* p, int count) {
  if (p >= g_arena && p < g_arena + (1 << 16) && (p < g_in || p + count > g_in + g_size)) {
    std::printf("out of bounds: %lld\n", (long long)(p - g_in)); std::exit(3);
  }
}
static int sl_load(const int* p) { sl_check(p, 1); return *p; }
template <class T, int N> static sl_vec<T, N> sl_load_vec_ro(const T* p) {
  if ((std::uintptr_t)p % sizeof(sl_vec<T, N>)) { std::printf("misaligned vector load\n"); std::exit(4); }
  sl_check(p, N);
  sl_vec<T, N> v; std::memcpy(&v, p, sizeof v); return v;
}
static void sl_store(int* p, int v) { *p = v; }
static void sl_grid_dependency_wait() {}
template <class To, class From> static To sl_cast(From x) { return (To)x; }
"""


def _stencil_steps(x: Any, steps: int, rows: tuple[int, int], mode: str) -> Any:
    """``steps`` steps of ``x + (second differences along the rows, padded back)`` (in ``mode``),
    plus, where ``rows`` pads, those along the columns: an edge pad read at the last step's pad
    positions plus a slice's constant (``_reclamped``)."""
    x = x * 1  # (a row slice of an evaluated x would be a view of its buffer: an input of its own)
    for _ in range(steps):
        d = sl.pad(x[:, 2:] - 2 * x[:, 1:-1] + x[:, :-2], ((0, 0), (1, 1)), mode)
        if rows != (0, 0):
            d = d + sl.pad(x[2:] - 2 * x[1:-1] + x[:-2], (rows, (0, 0)), mode)
        x = x + d
    return x


def _programs() -> list[tuple[tuple[int, ...], Callable[[Any], Any]]]:
    def terms(*parts: Any) -> Any:
        return parts[0] + parts[1] * S + parts[2] * (S * S)

    out: list[tuple[tuple[int, ...], Callable[[Any], Any]]] = []
    for shape in ((6, 40), (5, 36)):  # rows of 24 and 20 lanes (multiples of 4), and of 40, 36
        n = shape[1] - 16
        for ks in ((0, 1, 2), (1, 3, 16), (4, 5, 8), (15, 2, 7), (0, 4, 12)):
            out.append((shape, lambda x, ks=ks, n=n: terms(*(x[:, k:k + n] for k in ks))))
        # rows shifted, of x upside down (x[1:] of an evaluated x is a view of its buffer: an input of its own)
        out.append((shape, lambda x: terms(*(y for r in [x[::-1]] for y in (r[1:], r[:-1], r[1:] * 0 + 1)))))
        out.append((shape, lambda x, m=sl: terms(m.roll(x, 1, 0), m.roll(x, -1, 0), x)))
        out.append((shape, lambda x, m=sl: terms(m.roll(x, 1, 1), m.roll(x, -1, 1), m.roll(x, 3, 1))))
        out.append((shape, lambda x, m=sl: terms(m.concatenate([x[:, 1:5], x[:, 4:]], 1), m.concatenate([x[:, 8:], x[:, :8]], 1), x)))
        for mode in ("constant", "edge", "wrap", "reflect", "symmetric"):  # (interior chunks: lane vectors)
            out.append((shape, lambda x, mode=mode, c=shape[1], m=sl: terms(*(p[1:-1, k:k + c] for p in [m.pad(x, ((1, 1), (2, 2)), mode)] for k in (0, 1, 4)))))
            out.append((shape, lambda x, mode=mode, c=shape[1], m=sl: terms(*(p[1:-1, k:k + c] for p in [m.pad(x, 1, mode)] for k in (0, 2, 1)))))
        for modes in (((0, 0), "edge"), ((1, 1), "constant"), ((1, 1), "edge")):  # steps of a stencil: pads of slices of pads
            out.append((shape, lambda x, modes=modes: _stencil_steps(x, 3, *modes)))
    for shape in ((6, 40), (5, 37)):  # rows of 38 and 35 lanes: chunks that cross a row take the other branch
        out.append((shape, lambda x: terms(x[1:-1, 2:], x[1:-1, :-2], x[:-2, 1:-1])))
        out.append((shape, lambda x, m=sl: terms(*(p[1:-1, k:k + x.shape[1] - 1] for p in [m.pad(x, ((1, 1), (0, 1)), "reflect")] for k in (0, 1, 2)))))
    out.append(((7, 40, 1), lambda x: terms(x[:, 3:35], x[:, 0:32], x[:, 8:40])))
    for n in (100, 101, 104):
        out.append(((n,), lambda x: terms(x[:-9] + x[4:-5], x[3:-6], x[9:])))
        for mode in ("constant", "reflect"):
            out.append(((n,), lambda x, mode=mode, n=n, m=sl: terms(*(p[k:k + n] for p in [m.pad(x, (3, 2), mode)] for k in (0, 3, 5)))))
    return out


def _body(k: Any) -> str:
    return k.source.split("// ---- end of preamble")[1].split("\n", 1)[1]


def _kernel(y: Any) -> tuple[str, str, int]:
    (k,) = sl.explain(y).kernels
    body = _body(k)
    name = re.search(r"void (?:__launch_bounds__\(\d+\) )?(sl_\w+)\(", body).group(1)
    block = int(re.search(r"__launch_bounds__\((\d+)\)", body).group(1))
    return body, name, block


def test_whole_kernels_with_lane_vectors_are_numpys(tmp_path) -> None:  # noqa: ANN001
    kernels, calls, wants = [], [], []
    for shape, program in _programs():
        size = int(np.prod(shape))
        for off in (0, 1):  # off 1: the input one element past an aligned address (the output aligned)
            positions = np.arange(off, off + size, dtype=np.int32).reshape(shape)
            y = program(sl.asarray(np.arange(size, dtype=np.int32).reshape(shape)))
            body, name, block = _kernel(y)
            if off == 0:
                kernels.append(body)
                lanes, row = (y.shape[-2], shape[-2]) if y.shape[-1] == 1 else (y.shape[-1], shape[-1])
                if lanes % 4 == 0 and row % 4 == 0:  # (rows of the output and of the input)
                    assert "sl_load_vec_ro<int, 4>" in body, (shape, "no lane vectors")
            calls.append(f"  {{ alignas(16) static int out[{y.size} + 4];\n"
                         f"    g_in = g_arena + 1024 + {off}; g_size = {size};\n"
                         f"    for (int j = 0; j < {size}; ++j) const_cast<int*>(g_in)[j] = {off} + j;\n"
                         f"    gridDim.x = 3;\n"
                         f"    for (blockIdx.x = 0; blockIdx.x < 3; ++blockIdx.x)\n"
                         f"      for (threadIdx.x = 0; threadIdx.x < {block}; ++threadIdx.x)\n"
                         f"        {name}(g_in, out, {y.size});\n"
                         f"    for (int j = 0; j < {y.size}; ++j) std::printf(\"%d \", out[j]);\n"
                         f"    std::printf(\"\\n\"); }}\n")
            # (the same program on the interpreter of the numpy backend)
            wants.append(program(sl.asarray(positions)).get().ravel())
    source = HEADER + "".join(dict.fromkeys(kernels)) + "int main() {\n" + "".join(calls) + "}\n"
    exe = build(tmp_path, "lane_vectors", source)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-500:]
    out = run.stdout.splitlines()
    assert len(out) == len(wants), out[-3:]
    for line, want in zip(out, wants, strict=True):
        np.testing.assert_array_equal(np.array(line.split(), dtype=np.int64), want)


@pytest.mark.parametrize("dtype", ["float16", "int8", "int64"])
def test_lane_vectors_by_width(dtype: str) -> None:
    """Every width: the kernel reads shifted taps as vectors of the schedule's width, and the aligned
    check covers the input they come from."""
    x = sl.asarray(np.zeros((8, 96), dtype))
    (k,) = sl.explain(x[:, 1:65] + x[:, 3:67] + x[:, 32:96]).kernels
    vec = k.schedule.vec
    assert vec > 1 and re.search(rf"sl_load_vec_ro<[\w ]+, {vec}>\(in0 \+", _body(k))
    assert "(unsigned long long)in0 &" in _body(k)


def test_unaligned_rows_take_no_lane_vectors_and_pads_check_their_edges() -> None:
    """A row whose extent is not a multiple of the width (its vectors would cross rows) is read
    element by element; a narrow pad along the lanes reads lane vectors in the chunks whose
    positions are all inside the input (the chunk's branch tests it), a wide one (a join's) its
    computed positions."""
    x = sl.asarray(np.zeros((8, 42), np.float32))
    (k,) = sl.explain(x[:, 1:37] + x[:, 2:38]).kernels
    assert "sl_load_vec_ro" not in _body(k)
    p = sl.pad(sl.asarray(np.zeros((8, 40), np.float32)), 1)
    (k,) = sl.explain(p[1:-1, :-2] + p[1:-1, 2:]).kernels
    branch = next(line for line in _body(k).splitlines() if "if (aligned" in line)
    assert "sl_load_vec_ro<float, 4>" in _body(k) and branch.count(">= (int)0") == 2, branch
    y = sl.asarray(np.zeros((8, 40), np.float32))
    (k,) = sl.explain(sl.concatenate([y[:, 20:], y[:, :20]], 1) + y).kernels
    branch = next(line for line in _body(k).splitlines() if "if (aligned" in line)
    assert ">= (int)0" not in branch, branch


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_only_long_rows_take_tested_chunks(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    """At the default bounds, a chunk test is made only for rows of at least so many warps' chunks
    (in shorter ones more warps hold a chunk that takes the element-by-element branch, and run
    both): a row of another extent than a multiple of the width from ``SHIFTED_ROW_WARPS`` in a
    kernel with shifted reads to merge, from ``PLAIN_ROW_WARPS`` in others (a bias), a narrow pad
    from ``PAD_ROW_WARPS``."""
    monkeypatch.undo()
    width = 16 // np.dtype(dtype).itemsize

    def tested(body: str, cols: int) -> bool:
        return f"+ (int){width} <= (int){cols})" in body

    shifted, plain = (warps * 32 * width for warps in (elemental.SHIFTED_ROW_WARPS, elemental.PLAIN_ROW_WARPS))
    assert shifted < plain
    for cols in (shifted - 1, shifted + 1, plain - 1, plain + 1, 257):
        x = sl.asarray(np.zeros((4096, cols + 2), dtype))  # (enough rows for vector chunks)
        (k,) = sl.explain(x[:, 2:] - x[:, :-2]).kernels
        assert tested(_body(k), cols) == (cols >= shifted), (cols, _body(k)[-1500:])
        x, b = sl.asarray(np.zeros((4096, cols), dtype)), sl.asarray(np.zeros(cols, dtype))
        (k,) = sl.explain(x * 2 + b).kernels
        assert tested(_body(k), cols) == (cols >= plain), (cols, _body(k)[-1500:])
    long_row = elemental.PAD_ROW_WARPS * 32 * width
    for cols, interior in ((long_row, True), (long_row - 4 * width, False)):  # (the output rows: a multiple of the width)
        p = sl.pad(sl.asarray(np.zeros((512, cols), dtype)), 1)
        (k,) = sl.explain(p[1:-1, :-2] + p[1:-1, 2:]).kernels
        branch = next(line for line in _body(k).splitlines() if "if (aligned" in line)
        assert (">= (int)0" in branch) == interior, (cols, branch)
