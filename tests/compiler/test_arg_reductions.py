"""argmax/argmin fused into row kernels (``sl_arg`` pairs in the preamble): which groups take
them, the code each row schedule emits for them, and that NVRTC compiles it for every dtype (no
GPU needed; the values are checked against NumPy in ``tests/gpu/test_arg_reductions_gpu.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import emit
from stitchlab.plan.cost import Schedule
from stitchlab.plan.groups import ARG_MAX_COLS

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32", "float64"]


def _families(*arrays: sl.LazyArray) -> list[str]:
    return [k.schedule.family for k in sl.explain(*arrays, device="H200").kernels]


def test_accuracy_is_one_row_kernel_with_its_comparison() -> None:
    """(logits.argmax(-1) == labels): the argmax and the compare in the row kernel."""
    x = sl.asarray(np.zeros((8192, 1000), np.float32))
    t = sl.asarray(np.zeros(8192, np.int64))
    (k,) = sl.explain(x.argmax(-1) == t, device="H200").kernels
    assert k.schedule.family in ("row_warp", "row_block")
    assert {n.op for n in k.nodes} >= {"argmax", "equal"}
    assert "sl_op_argmax()" in k.source and ".i" in k.source


def test_softmax_and_its_argmax_share_the_kernel() -> None:
    x = sl.asarray(np.zeros((4096, 512), np.float32))
    e = sl.exp(x - x.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    plan = sl.explain(p, p.argmin(-1), x.argmax(1, keepdims=True), device="H200")
    assert len(plan.kernels) == 1
    assert {"argmin", "argmax", "sum", "max"} <= {n.op for n in plan.kernels[0].nodes}


@pytest.mark.parametrize(("shape", "axis"), [((300, 4096), 0), ((8, 16, 100), 1), ((1 << 20,), None),
                                             ((4, ARG_MAX_COLS + 1), 1)])
def test_other_arg_reductions_stay_with_cupy(shape: tuple[int, ...], axis: int | None) -> None:
    """Over columns, a middle axis, or rows longer than ARG_MAX_COLS: one interpreted step (CuPy's
    own argmax), not fused."""
    x = sl.asarray(np.zeros(shape, np.float32))
    assert _families(x.argmax(axis)) == ["interpreted"]
    assert _families(sl.exp(x).argmin(axis)) == ["pointwise", "interpreted"]


def test_few_long_rows_with_an_arg_reduction_are_not_split() -> None:
    x = sl.asarray(np.zeros((4, 60_000), np.float32))
    assert _families(x.sum(-1)) == ["row_split"]
    assert _families(x.argmax(-1), x.sum(-1)) == ["row_block"]


ROW_SCHEDULES = [
    Schedule("row_warp", block=128, cache="registers"),
    Schedule("row_warp", block=128, cache="registers", vec=4),
    Schedule("row_block", block=256, cache="shared"),
    Schedule("row_block", block=128, cache="none", index="long long"),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_arg_kernels_compile_under_every_row_schedule(dtype: str) -> None:
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.runtime.nvrtc import compile_cubin

    x = sl.asarray((np.arange(64 * 48) % 7).reshape(64, 48).astype(dtype))
    outs = [x.argmax(-1), x.argmin(-1, keepdims=True)]
    if dtype != "bool":
        outs.append((x - x.max(-1, keepdims=True)).argmax(-1) + 1)
    (k,) = sl.explain(*outs, device="H200").kernels
    for sched in ROW_SCHEDULES:
        if sched.vec > 1 and np.dtype(dtype).itemsize > 4:
            continue
        ks = emit(k.info, sched)
        assert "sl_arg<" in ks.source
        compile_cubin(ks.source, ks.name, "sm_90")


def test_arg_identity_ties_with_every_element() -> None:
    """The accumulator starts at the max/min identity at position 2**31 - 1: any element ties or
    beats it and wins on position, so rows of -inf (argmax) or +inf (argmin) give index 0."""
    x = sl.asarray(np.zeros((256, 64), np.float16))
    (k,) = sl.explain(x.argmax(-1), x.argmin(-1), device="H200").kernels
    assert "sl_arg<float> acc" in k.source
    assert "sl_arg<float>{(-__int_as_float(0x7f800000)), 0x7fffffff}" in k.source  # argmax: -inf
    assert "sl_arg<float>{(__int_as_float(0x7f800000)), 0x7fffffff}" in k.source  # argmin: +inf
