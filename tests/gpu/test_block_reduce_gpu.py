"""Block reductions of row kernels combine the warps' results in log2(warps) shuffle steps
(``sl_block_allreduce_once<W>`` in ``stitchlab/codegen/preamble.py``): every block size the
evaluator considers gives the bits of the 32-lane combine (``single_sync`` off), on the GPU.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_block_reduce_gpu.py -q``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from compiler import workloads as _wl  # tests/ is on sys.path (tests/conftest.py)

from stitchlab.codegen import schedules as sched_mod
from stitchlab.ir.graph import build_graph

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


def _run(plan, k0, sched, launch, bufs, single_sync: bool) -> list[np.ndarray]:
    from stitchlab.runtime.launch import build_executable

    with sched_mod.switches(single_sync=single_sync):
        ks = sched_mod.emit(k0.info, sched)
    assert ("sl_block_allreduce_once<" in ks.source) == single_sync
    k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule, launch=launch)
    exe = build_executable(dataclasses.replace(plan, kernels=[k] + plan.kernels[1:]))
    return [o.get() for o in exe(bufs)]


@pytest.mark.parametrize("name", ["softmax", "logsumexp", "layernorm"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_every_row_block_size_gives_the_bits_of_the_32_lane_combine(name: str, dtype: str) -> None:
    import cupy as cp

    from stitchlab.plan.cost import schedules
    from stitchlab.runtime import _instance

    build, _, kinds = _wl.WORKLOADS[name]
    host = _wl.make_args(kinds, 257, 1000, np.dtype(dtype), seed=3)
    host[0][5, 7] = np.nan  # one row with a NaN: the max and the sum carry it
    graph, sources = build_graph([o._node for o in build(*[cp.asarray(a) for a in host])])
    bufs = [s.value for s in sources]
    exe0 = _instance("cupy").plan(graph)
    plan = exe0.plan
    k0 = plan.kernels[0]
    ref = [o.get() for o in exe0(bufs)]
    blocks = set()
    for est in schedules(k0.info, plan.device):
        if est.schedule.family != "row_block":
            continue
        fewer = _run(plan, k0, est.schedule, est.launch, bufs, True)
        full = _run(plan, k0, est.schedule, est.launch, bufs, False)
        for a, b, r in zip(fewer, full, ref, strict=True):
            assert a.tobytes() == b.tobytes(), f"{est.schedule}: bits differ from the 32-lane combine"
            np.testing.assert_allclose(a.astype(np.float64), r.astype(np.float64), rtol=2e-2 if dtype == "float16" else 1e-5,
                                       atol=2e-2 if dtype == "float16" else 1e-5)
        blocks.add(est.schedule.block)
    assert {64, 128, 256, 512, 1024} <= blocks, blocks
