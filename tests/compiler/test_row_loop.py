"""``Schedule.row_loop`` (``_row_body`` in ``stitchlab/codegen/schedules.py``): a streamed
``row_block`` kernel whose blocks walk their rows, so that the grid bounds the rows in flight, and
whose passes after the first turn round (the second starts at the row's end, the part the first
read last). Checked here on the text of the kernels and with ptxas (no GPU needed); their values
on the GPU in ``tests/gpu/test_streamed_vectors_gpu.py``."""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any

import numpy as np
import pytest
from rowscans import with_special_rows

import stitchlab as sl
from stitchlab.codegen import emit
from stitchlab.codegen.elemental import CodegenError
from stitchlab.plan.cost import Schedule

from .workloads import WORKLOADS, make_args

ROWS, COLS = 272, 70_000  # rows too long to stay on chip: every workload below streams them


def _streamed(name: str, dtype: str):
    build, _, kinds = WORKLOADS[name]
    (k,) = sl.explain(*build(*make_args(kinds, ROWS, COLS, dtype))).kernels
    assert k.schedule.family == "row_block" and k.schedule.cache == "none", k.schedule
    return k


def test_the_planner_walks_long_rows_of_vectors_with_1024_thread_blocks() -> None:
    """Measured on the H200 (``cost.ROW_LOOP_BLOCKS_PER_SM``): rows of 16-byte chunks too long for
    a block's registers are walked by 1024-thread blocks, at most 4 an SM; float32 sums of exps in
    the max's pass (``OPTIONS["online_exp_sum"]``), one pass fewer."""
    from stitchlab.codegen.schedules import switches

    for name, dtype in (("softmax", "float32"), ("logsumexp", "float16"), ("layernorm", "bfloat16")):
        k = _streamed(name, dtype)
        assert k.schedule.row_loop and k.schedule.block == 1024 and k.schedule.vec == 16 // np.dtype(dtype).itemsize
        assert k.launch.grid[0] == ROWS  # (fewer rows than 4 blocks an SM: a row a block)
    k = _streamed("softmax", "float32")
    with switches(online_exp_sum=False):
        two = emit(k.info, k.schedule).source
    assert k.source.count("for (int t = ") == two.count("for (int t = ") - 1
    build, _, kinds = WORKLOADS["softmax"]
    (many,) = sl.explain(*build(*make_args(kinds, 2048, COLS, "float32"))).kernels
    assert many.schedule == k.schedule and many.launch.grid[0] == 4 * 132  # the grid is capped
    if importlib.util.find_spec("cuda.bindings") is not None:  # (NVRTC, pip cuda-bindings)
        from stitchlab.runtime.nvrtc import resource_usage

        for name, dtype in (("softmax", "float32"), ("logsumexp", "float32"), ("add_layernorm", "float16")):
            walked = _streamed(name, dtype)
            use = resource_usage(walked.source, walked.name)
            assert (use.spill_stores, use.spill_loads) == (0, 0), f"{walked.schedule}: {use}"
    # rows a 1024-thread block holds, and float64 rows (element by element), stay as they were
    for rows, cols, dtype in ((4096, 32000, "float32"), (ROWS, COLS, "float64")):
        (other,) = sl.explain(*build(*make_args(kinds, rows, cols, dtype))).kernels
        assert not other.schedule.row_loop, other.schedule


def test_no_walking_block_where_a_1024_thread_block_does_not_fit(monkeypatch) -> None:
    """The walking schedule is estimated from the best streamed one, so it must not stand in for a
    1024-thread block the SM cannot hold (its own estimate infinite)."""
    from stitchlab.plan import cost

    occupancy = cost._occupancy
    monkeypatch.setattr(cost, "_occupancy", lambda dev, threads, *a: 0 if threads == 1024 else occupancy(dev, threads, *a))
    k = _streamed("softmax", "float32")
    assert not k.schedule.row_loop and k.schedule.block < 1024, k.schedule


def test_blocks_walk_their_rows_and_the_second_pass_turns_round() -> None:
    from stitchlab.codegen.schedules import switches

    k = _streamed("softmax", "float32")
    k = dataclasses.replace(k, schedule=dataclasses.replace(k.schedule, block=128))
    with switches(online_exp_sum=False):  # (the sum of exps in a pass of its own)
        src = emit(k.info, k.schedule).source
    assert "for (int r = (int)blockIdx.x; r < R; r += (int)gridDim.x) {" in src
    assert "if (r >= R) return;" not in src
    # max going up, the sum of exps coming down from the last chunk, the stores going up again
    nt = -(-COLS // (128 * 4))
    up = f"for (int t = 0; (lane + t * 128) * 4 < {COLS}; ++t)"
    down = f"for (int t = {nt - 1}; t >= 0; --t) if ((lane + t * 128) * 4 < {COLS})"
    assert k.schedule.block == 128 and src.count(up) == 2 and src.count(down) == 1
    assert src.index(up) < src.index(down) < src.rindex(up)
    # the block's reduction buffers serve the next row only once every thread is past them
    body_end = src.rindex("__syncthreads();")
    assert src.rindex("sl_block_allreduce") < body_end and src.rindex("sl_store(") < body_end


def test_element_by_element_passes_turn_round_too() -> None:
    from stitchlab.codegen.schedules import switches

    k = _streamed("logsumexp", "float64")  # float64 rows stream element by element (vec 1)
    assert k.schedule.vec == 1
    with switches(online_exp_sum=False):  # (the sum of exps in a pass of its own)
        src = emit(k.info, dataclasses.replace(k.schedule, row_loop=True)).source
    team = k.schedule.block
    last = (COLS - 1) // team * team
    assert f"for (int c = lane; c < {COLS}; c += {team})" in src
    assert f"for (int c = lane + {last}; c >= 0; c -= {team})" in src and f"if (c < {COLS})" in src


def test_argmax_passes_keep_going_up() -> None:
    """An argmax/argmin thread steps up its positions (the preamble's ``sl_arg``): no turn."""
    x = sl.asarray(np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32))
    m = x.max(-1, keepdims=True)
    (k,) = sl.explain((x - m).argmax(-1), sl.exp(x - m).sum(-1)).kernels
    assert k.schedule.family == "row_block" and k.schedule.cache == "none", k.schedule
    src = emit(k.info, dataclasses.replace(k.schedule, row_loop=True)).source
    assert "r += (int)gridDim.x" in src and "--t)" not in src and "c -= " not in src


def test_only_streamed_row_blocks_walk_rows() -> None:
    build, _, kinds = WORKLOADS["softmax"]
    (k,) = sl.explain(*build(*make_args(kinds, 8192, 4096, "float32"))).kernels
    assert k.schedule.cache == "registers"
    with pytest.raises(CodegenError, match="row_loop is a schedule of row_block with cache='none'"):
        emit(k.info, dataclasses.replace(k.schedule, row_loop=True))


def test_row_loop_is_part_of_the_registry_key_only_where_set() -> None:
    """The schedule's part of a kernel's registry key (``runtime/kernels.py``) stays what it was
    for every other kernel, so a registry filled before keeps its entries."""
    plain = Schedule("row_block", block=128, vec=4)
    assert "row_loop" not in plain.params() and "row_loop" not in str(plain)
    walking = dataclasses.replace(plain, row_loop=True)
    assert walking.params() == {**plain.params(), "row_loop": True}
    assert str(walking) == "row_block(block=128, vec=4, row_loop, index=int)"
    few = dataclasses.replace(walking, few_rows=True)
    assert few.params() == {**walking.params(), "few_rows": True} and "few_rows" not in walking.params()
    assert str(few) == "row_block(block=128, vec=4, row_loop, few_rows, index=int)"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "add_layernorm", "logsumexp", "rmsnorm"])
def test_walking_kernels_spill_no_more_than_a_row_a_block(name: str, dtype: str) -> None:
    """None spills, but for the float64 logsumexp (8 bytes; a row a block spills 20 there, and 44
    in float64 softmax, which walking does not: docs/compiler.md §4)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.codegen.schedules import switches
    from stitchlab.runtime.nvrtc import resource_usage

    k = _streamed(name, dtype)
    plain_schedule = dataclasses.replace(k.schedule, block=128, row_loop=False)
    with switches(online_exp_sum=False):  # the passes alone (the planner's sums: the test above)
        ks = emit(k.info, dataclasses.replace(plain_schedule, row_loop=True))
        k = emit(k.info, plain_schedule)
    use, plain = resource_usage(ks.source, ks.name), resource_usage(k.source, k.name)
    assert use.spill_stores <= plain.spill_stores and use.spill_loads <= plain.spill_loads, (use, plain)
    if (name, dtype) != ("logsumexp", "float64"):
        assert (use.spill_stores, use.spill_loads) == (0, 0), f"{ks.name} {ks.schedule}: {use}"


@pytest.mark.parametrize(("op", "few_rows"), [("logsumexp", False), ("softmax", True)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_of_exps_of_streamed_chunks_keep_infinities_and_nans(op: str, few_rows: bool, dtype: str,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """A walking kernel that stores no full-size output (logsumexp), or one planned for few rows
    (softmax, ``Schedule.few_rows``), scales its sum of exps once a 16-byte chunk, to the chunk's
    maximum found first (``_group_maxima``), run on the host against NumPy: rows whose maximum
    rises at every chunk and at none after the first, +inf, chunks and a row of -inf, NaN.
    float64 rows stream element by element: the maximum an element at a time."""
    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.device import preset

    from .hostkernels import run_plan, unsupported

    if unsupported() is not None:
        pytest.skip(str(unsupported()))
    a = with_special_rows(np.random.default_rng(61).standard_normal((8, 9000)).astype(dtype))
    graph, sources = build_graph([getattr(sl, op)(sl.asarray(a), axis=-1)._node])
    plan = build_plan(graph, preset("H200"))
    (k,) = plan.kernels
    sched = Schedule("row_block", block=256, vec=4, cache="none", row_loop=True)
    ks = emit(k.info, dataclasses.replace(sched, few_rows=few_rows))
    assert "for (int r = (int)blockIdx.x; r < R;" in ks.source
    assert ks.source.count(" = fmax(tm") == (1 if dtype == "float32" else 0)
    if few_rows:  # (without it, a kernel that stores its rows scales at each element)
        assert " = fmax(tm" not in emit(k.info, sched).source
    k = dataclasses.replace(k, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule,
                            launch=dataclasses.replace(k.launch, grid=(3, 1, 1), block=(256, 1, 1)))
    (got,) = run_plan(dataclasses.replace(plan, kernels=[k]), sources, tmp_path_factory.mktemp("chunk_maxima"))
    x = a.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = x.max(axis=1, keepdims=True)
        if op == "logsumexp":
            shift = np.where(np.isfinite(m), m, 0.0)
            want = (shift + np.log(np.exp(x - shift).sum(axis=1, keepdims=True)))[:, 0]
            assert np.isnan(want[6]) and (want[[3, 7]] == np.inf).all() and want[5] == -np.inf
        else:
            e = np.exp(x - m)
            want = e / e.sum(axis=1, keepdims=True)
            assert np.isnan(want[[3, 5, 6, 7]]).all()
    assert np.isfinite(want[[0, 1, 2, 4]]).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isfinite(want)], want[~np.isfinite(want)])
    ok = np.isfinite(want)
    # (a float32 softmax: x - max rounded, so exp(x - max) is good to |x - max| roundings of 1)
    np.testing.assert_allclose(got[ok], want[ok], rtol=64 * np.finfo(dtype).eps, atol=0)


def test_few_rows_of_a_softmax_are_planned_to_scale_its_sums_once_a_chunk() -> None:
    """``Schedule.few_rows``: the walking kernel of no more rows than SMs, and only where it
    changes the kernel (a sum of exps beside full-size outputs), so every other kernel keeps one
    registry key for every row count."""
    def plan(op: str, rows: int) -> Any:
        if op in WORKLOADS:
            build, _, kinds = WORKLOADS[op]
            (k,) = sl.explain(*build(*make_args(kinds, rows, 128256, "float32"))).kernels
        else:
            (k,) = sl.explain(getattr(sl, op)(sl.asarray(np.ones((rows, 128256), np.float32)), axis=-1)).kernels
        return k

    few, many = plan("softmax", 64), plan("softmax", 1024)
    assert few.schedule.row_loop and few.schedule.few_rows and " = fmax(tm" in few.source
    assert many.schedule.row_loop and not many.schedule.few_rows and " = fmax(tm" not in many.source
    assert dataclasses.replace(few.schedule, few_rows=False) == many.schedule
    layernorm = plan("layernorm", 64)
    assert layernorm.schedule.row_loop and not layernorm.schedule.few_rows  # (no sum of exps)
    lse = plan("logsumexp", 1024)  # (no full-size output: the chunk maxima whatever the rows)
    assert not lse.schedule.few_rows and " = fmax(tm" in lse.source
