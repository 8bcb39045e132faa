"""Registers and spills of the compiler workloads' kernels, as ptxas reports them for sm_90 (no
GPU needed): no kernel spills to local memory. (A 512-thread GroupNorm float16 variant that read
its weight element by element used 128 registers and spilled; the chosen kernels use 32-80.)

The latency evaluator's register estimate (32 + the row cache) is not checked here: ptxas uses
more for float16 layernorm rows of 4096 (72 against 64) and for rows of 24 (40-48 against 33-34),
so those kernels hold fewer blocks per SM than modelled (docs/compiler.md §3)."""

from __future__ import annotations

import pytest

import stitchlab as sl
from stitchlab.runtime.nvrtc import resource_usage

from .workloads import WORKLOADS, make_args

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")


@pytest.mark.parametrize("shape", [(8192, 4096), (4099, 24)])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_kernels_do_not_spill(name: str, dtype: str, shape: tuple[int, int]) -> None:
    build, _, kinds = WORKLOADS[name]
    plan = sl.explain(*build(*make_args(kinds, *shape, dtype)))
    for k in plan.kernels:
        use = resource_usage(k.source, k.name)
        assert (use.spill_stores, use.spill_loads) == (0, 0), f"{k.name} {k.schedule}: {use}"
        assert use.registers <= 65536 // (k.launch.block[0] * k.launch.block[1]), use


def test_resource_usage_reports_a_spilling_kernel() -> None:
    # 64 live floats per thread under a 32-register cap: ptxas must spill
    src = """
extern "C" __global__ void __launch_bounds__(1024, 2) spill(const float* __restrict__ x, float* __restrict__ y) {
  float v[64];
  #pragma unroll
  for (int i = 0; i < 64; ++i) v[i] = x[threadIdx.x + i * 1024];
  float s = 0.0f;
  #pragma unroll
  for (int i = 0; i < 64; ++i) s += v[i] * v[63 - i];
  __syncthreads();
  #pragma unroll
  for (int i = 0; i < 64; ++i) y[threadIdx.x + i * 1024] = v[i] * s;
}
"""
    use = resource_usage(src, "spill")
    assert use.registers <= 32 and use.spill_stores > 0, use
    assert use.stack_frame > 0


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "add_layernorm", "logsumexp", "rmsnorm"])
def test_streamed_16_byte_chunks_do_not_spill(name: str, dtype: str) -> None:
    """Rows too long for the chip (70000) stream in 16-byte chunks, 4 in flight: no spill."""
    build, _, kinds = WORKLOADS[name]
    (k,) = sl.explain(*build(*make_args(kinds, 272, 70_000, dtype))).kernels
    assert k.schedule.cache == "none" and k.schedule.vec > 1, k.schedule
    use = resource_usage(k.source, k.name)
    assert (use.spill_stores, use.spill_loads) == (0, 0), f"{k.name} {k.schedule}: {use}"
