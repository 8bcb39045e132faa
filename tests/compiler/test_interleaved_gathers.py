"""Pointwise kernels that read several buffers of about their domain's size at shifted indices
(stencils over ``pad``/``roll``, convolution taps) interleave their threads' elements
(``stitchlab.codegen.schedules._pointwise_body``): which kernels do, and the interleaved loop built
as host C++ and run over every block and thread of small grids (each element written once, NumPy's
values). On the GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen.schedules import emit, switches

from .hostcxx import build, needs_cxx

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks.stencil import program  # noqa: E402


def _kernel(y: sl.LazyArray) -> object:
    (k,) = sl.explain(y, device="H200").kernels
    return k


@pytest.mark.parametrize(("case", "interleaved"), [
    ("laplace_reflect", True), ("laplace_roll", True), ("blur_zero", True), ("conv9", True),
    ("conv3", False), ("x + 1", False), ("transpose", False), ("float16 laplace", False)])
def test_kernels_with_four_or_more_gathered_reads_interleave(case: str, interleaved: bool) -> None:
    x = sl.asarray(np.zeros((8192, 4096), np.float32))
    x1 = sl.asarray(np.zeros(1 << 24, np.float32))
    y = {"conv9": lambda: sl.convolve(x1, sl.asarray(np.ones(9, np.float32)), "same"),
         "conv3": lambda: sl.convolve(x1, sl.asarray(np.ones(3, np.float32)), "same"),
         "x + 1": lambda: x + 1, "transpose": lambda: x.T * 2,
         "float16 laplace": lambda: program("laplace_reflect", sl, x.astype(np.float16)),
         }.get(case, lambda: program(case, sl, x))()
    k = _kernel(y)
    assert ("elements interleaved" in k.source) is interleaved
    with switches(interleave_gathers=False):
        assert "elements interleaved" not in emit(k.info, k.schedule).source


HOST = r"""
#include <cstdio>
#define __global__
#define __launch_bounds__(x)
#define __restrict__
struct dim { int x; };
static dim blockIdx, threadIdx, gridDim;
static const float* g_in; static long long g_size; static int* g_writes; static float* g_out;
static inline void sl_grid_dependency_wait() {}
template <class T, class S> static inline T sl_cast(S v) { return (T)v; }  // (integers here)
static inline float sl_load(const float* p) {
  if (p < g_in || p - g_in >= g_size) { std::printf("read out of bounds\n"); throw 1; }
  return *p;
}
static inline void sl_store(float* p, float v) { *p = v; g_writes[p - g_out] += 1; }
"""


@needs_cxx
@pytest.mark.parametrize("grid", [None, 3])
@pytest.mark.parametrize("name", ["laplace_reflect", "laplace_roll", "blur_zero"])
def test_the_interleaved_loop_writes_every_element_once(name: str, grid: int | None, tmp_path) -> None:  # noqa: ANN001
    """Every block and thread of the launch (or of a smaller grid, which strides over the tiles)."""
    a = np.random.default_rng(2).standard_normal((37, 53)).astype(np.float32)
    k = _kernel(program(name, sl, sl.asarray(np.zeros((8192, 4096), np.float32))))  # (the planned schedule)
    small = _kernel(program(name, sl, sl.asarray(a)))
    ks = emit(small.info, dataclasses.replace(k.schedule))
    assert "elements interleaved" in ks.source
    body = ks.source.split("// ---- end of preamble")[1].split("\n", 1)[1].replace('extern "C" ', "")
    block, n = k.schedule.block, a.size
    blocks = grid or -(-n // (block * k.schedule.vec))
    main = (f"int main() {{\n  static float in[{n}], out[{n}]; static int writes[{n}];\n"
            f"  for (int j = 0; j < {n}; ++j) std::scanf(\"%f\", &in[j]);\n"
            f"  g_in = in; g_size = {n}; g_out = out; g_writes = writes; gridDim.x = {blocks};\n"
            f"  for (blockIdx.x = 0; blockIdx.x < {blocks}; ++blockIdx.x)\n"
            f"    for (threadIdx.x = 0; threadIdx.x < {block}; ++threadIdx.x) {ks.name}(in, out, {n});\n"
            f"  for (int j = 0; j < {n}; ++j) std::printf(\"%d %.9g\\n\", writes[j], out[j]);\n}}\n")
    exe = build(tmp_path, "interleaved", HOST + body + main)
    run = subprocess.run([str(exe)], input=" ".join(f"{v:.9g}" for v in a.ravel()), capture_output=True, text=True, check=True)
    got = np.array([line.split() for line in run.stdout.splitlines()], dtype=np.float64)
    assert np.array_equal(got[:, 0], np.ones(n)), "each element written once"
    np.testing.assert_allclose(got[:, 1], program(name, np, a.astype(np.float64)).ravel(), rtol=1e-5, atol=1e-5)
