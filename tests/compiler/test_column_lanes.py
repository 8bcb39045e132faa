"""Column schedules with several kept indices a thread (``Schedule.vec``, 8-byte accesses): when
the planner picks them, and that their kernels compile (no GPU needed; the values are checked by
``tests/gpu/test_column_lanes_gpu.py``)."""

from __future__ import annotations

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import emit
from stitchlab.codegen.elemental import CodegenError
from stitchlab.plan.cost import Schedule, column_vector_width

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")


def _kernel(*outs):
    (k,) = sl.explain(*outs).kernels
    return k


def _x(shape, dtype):
    return sl.asarray((np.random.default_rng(0).standard_normal(shape) * 4).astype(dtype))


@pytest.mark.parametrize(("dtype", "vec"), [("float16", 4), ("bfloat16", 4), ("float32", 2), ("int32", 2)])
def test_column_normalization_reads_8_bytes_a_thread(dtype: str, vec: int) -> None:
    x = _x((8192, 4096), dtype)
    k = _kernel((x - x.mean(0)) / x.std(0)) if dtype != "int32" else _kernel(x - x.max(0), x.sum(0))
    assert k.schedule.family == "column" and k.schedule.vec == vec and k.schedule.ty == 32 * vec
    assert k.launch.block == (32 // vec, 32 * vec, 1)
    storage = {"float16": "sl_half", "bfloat16": "sl_bf16", "float32": "float", "int32": "int"}[dtype]
    assert f"sl_load_vec_ro<{storage}, {vec}>" in k.source
    assert "__shfl_xor_sync" in k.source


@pytest.mark.parametrize(("make", "why"), [
    (lambda: _x((64, 37), "float16").sum(0), "kept extent not a multiple of the width"),
    (lambda: _x((64, 48), "float64").sum(0), "8-byte elements"),
    (lambda: _x((64, 48), "int8").max(0), "an 8-bit accumulator"),
    (lambda: (_x((64, 48), "float32") > 0).any(0), "a bool accumulator"),
    (lambda: _x((64, 48), "float32").argmax(0), "argmax pairs"),
    (lambda: _x((48, 64), "float32").sum(1), "a row reduction"),
])
def test_column_vector_width_is_one_where_lanes_do_not_apply(make, why: str) -> None:
    (k,) = sl.explain(make()).kernels
    assert k.info is not None and column_vector_width(k.info) == 1, why


def _programs(dtype: str) -> list[list[sl.LazyArray]]:
    x = _x((96, 64), dtype)
    w = _x((64,), dtype)
    x3 = _x((12, 8, 16), dtype)
    if dtype == "int32":
        return [[x - x.max(0), x.sum(0), x.min(0)], [x3.sum(0), x3.max(0)], [x3 - x3.min((0, 1), keepdims=True)]]
    m = x.mean(0)
    return [[(x - m) / x.std(0), m], [(x - m) * w + x.var(0)], [x3.sum(0) * 2, x3.max(0)],
            [x3 - x3.mean((0, 1), keepdims=True)]]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32"])
def test_lane_kernels_compile(dtype: str) -> None:
    from stitchlab.runtime.nvrtc import compile_cubin

    for outs in _programs(dtype):
        k = _kernel(*outs)
        assert k.info is not None
        vec = column_vector_width(k.info)
        assert vec > 1, sl.explain(*outs).summary()
        ks = emit(k.info, Schedule("column", block=32, vec=vec, ty=32 * vec))
        compile_cubin(ks.source, ks.name, "sm_90")


def test_a_lane_schedule_that_does_not_fit_the_group_is_refused() -> None:
    k = _kernel(_x((96, 64), "float32").sum(0))
    assert k.info is not None
    with pytest.raises(CodegenError, match="kept indices a thread"):
        emit(k.info, Schedule("column", block=32, vec=4, ty=128))


def test_lane_kernels_compile_with_64_bit_indices_and_empty_columns() -> None:
    from stitchlab.runtime.nvrtc import compile_cubin

    x = _x((96, 64), "float16")
    k = _kernel((x - x.mean(0)) / x.std(0))
    ks = emit(k.info, Schedule("column", block=32, vec=4, ty=128, index="long long"))
    assert "const long long rb0" in ks.source
    compile_cubin(ks.source, ks.name, "sm_90")
    # no rows to reduce: the lanes keep their identities (the plan has no error)
    plan = sl.explain(_x((0, 64), "float32").sum(0))
    assert all(k.error is None for k in plan.kernels)


def test_float16_columns_of_an_extent_2_mod_4_take_two_a_thread() -> None:
    x = _x((300, 38), "float16")
    k = _kernel((x - x.mean(0)) / x.std(0))
    assert k.info is not None and column_vector_width(k.info) == 2
    assert k.schedule.vec == 2 and "sl_load_vec_ro<sl_half, 2>" in k.source


@pytest.mark.parametrize(("dtype", "vec"), [("float32", 2), ("float16", 4), ("bfloat16", 4), ("int32", 2)])
def test_tall_column_sums_split_with_lanes(dtype: str, vec: int) -> None:
    from stitchlab.runtime.nvrtc import compile_cubin

    x = _x((1 << 20, 64), dtype)
    for outs in ([x.sum(0)], [x.max(0), x.min(0) * 2], [x.mean(0)]):
        k = _kernel(*outs)
        assert k.schedule.family == "column_split" and k.schedule.vec == vec and k.schedule.ty == 8 * vec
        assert k.launch.block == (32 // vec, 8 * vec, 1) and k.launch.split > 1
        compile_cubin(k.source, k.name, "sm_90")


def test_a_split_variance_in_its_means_pass_stays_scalar() -> None:
    x = _x((1 << 20, 64), "float32")
    plan = sl.explain(x.mean(0), x.var(0))
    assert [k.schedule.vec for k in plan.kernels] == [1]
    k = plan.kernels[0]
    with pytest.raises(CodegenError, match="kept indices a thread"):
        emit(k.info, Schedule("column_split", block=32, vec=2, ty=16))
