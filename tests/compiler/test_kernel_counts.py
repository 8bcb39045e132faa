"""The kernel counts the planner promises (on the CPU, through ``sl.explain`` with the H200 preset)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stitchlab as sl

from .workloads import WORKLOADS, make_args


def _views(kinds: str, rows: int, cols: int) -> list[np.ndarray]:
    """Arguments of the right shapes without the memory (read-only broadcast views)."""
    return [np.broadcast_to(np.float32(1.5), (rows, cols) if k == "m" else (cols,)) for k in kinds]


@pytest.mark.parametrize("size", [(64, 1000), (8192, 4096), (100, 24)])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_kernel_count(name: str, size: tuple[int, int]) -> None:
    build, promised, kinds = WORKLOADS[name]
    outs = build(*_views(kinds, *size))
    plan = sl.explain(*outs)
    assert len(plan.kernels) <= promised, plan.summary()
    assert all(k.source and k.error is None for k in plan.kernels)


def test_softmax_is_one_kernel() -> None:
    (z,) = WORKLOADS["softmax"][0](np.ones((8, 128), np.float32))
    plan = sl.explain(z)
    assert len(plan.kernels) == 1
    assert plan.kernels[0].schedule.family.startswith("row")


def test_column_normalization_is_one_column_kernel() -> None:
    (z,) = WORKLOADS["column_norm"][0](np.ones((300, 70), np.float32))
    plan = sl.explain(z)
    assert len(plan.kernels) == 1
    assert plan.kernels[0].schedule.family == "column"


def test_residual_layernorm_stores_both_outputs_from_one_kernel() -> None:
    args = make_args("mmvv", 32, 256)
    h, y = WORKLOADS["add_layernorm"][0](*args)
    plan = sl.explain(h, y)
    (k,) = plan.kernels
    stored = {plan.graph.nodes[i].shape for i in k.outputs}
    assert len(k.outputs) == 2 and stored == {(32, 256)}


def test_adam_is_one_kernel_with_three_outputs() -> None:
    outs = WORKLOADS["adam"][0](*make_args("mmmm", 16, 100))
    plan = sl.explain(*outs)
    assert len(plan.kernels) == 1
    assert len(plan.kernels[0].outputs) == 3


@pytest.mark.parametrize("depth", [1, 5, 40])
def test_any_elementwise_chain_is_one_kernel(depth: int) -> None:
    x = sl.asarray(np.random.rand(33, 17).astype(np.float32))
    y = sl.asarray(np.random.rand(17).astype(np.float32))
    z = x
    for k in range(depth):
        z = [sl.exp, sl.sin, sl.tanh][k % 3](z) * (k + 1) + y
    z = (z.T * 2).astype(np.float16)
    assert len(sl.explain(z).kernels) == 1


def test_full_reduction_is_one_kernel_split_over_blocks() -> None:
    x = sl.asarray(np.ones((4096, 1024), np.float32))
    plan = sl.explain(x.sum())
    (k,) = plan.kernels
    assert k.schedule.family == "row_split"
    assert k.launch.split > 1


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_statistics_of_a_whole_array_are_one_split_kernel(dtype: str) -> None:
    """x.var() and x.std() with x.mean() of 16M elements: one row_split kernel, one pass over the
    input (the variance's squared deviations are taken in the mean's pass)."""
    x = sl.asarray(np.broadcast_to(np.array(1.5, dtype), (1 << 24,)))
    (k,) = sl.explain(x.mean(), x.var(), x.std(ddof=1)).kernels
    assert k.schedule.family == "row_split" and k.launch.split > 1
    assert len(re.findall(r"for \(int c = c0 \+ threadIdx\.x", k.source)) == 1


@pytest.mark.parametrize("shape", [(1 << 20, 64), (100_003, 7), (262_144, 256)])
def test_tall_column_reductions_split_over_blocks(shape: tuple[int, int]) -> None:
    """x.sum(0) of a tall, narrow array has 1-8 tiles of 32 columns: one block per tile would
    leave the GPU idle, so each tile is split along the reduced axis over many blocks."""
    x = sl.asarray(np.broadcast_to(np.float32(1.5), shape))
    (k,) = sl.explain(x.sum(0)).kernels
    assert k.schedule.family == "column_split" and k.launch.split > 1
    assert k.launch.grid[0] == -(-shape[1] // 32) * k.launch.split >= 132
    # each of the last block's 8 threads per column gathers at most 32 partials (the tail)
    assert k.launch.split <= 32 * k.launch.block[1]
    # batch-norm statistics: one split kernel, the variance in the mean's pass (each block's sum
    # and squared deviations about its own mean, combined exactly by the last block)
    plan = sl.explain(x.mean(0), x.var(0))
    assert [k.schedule.family for k in plan.kernels] == ["column_split"]
    assert len(re.findall(r"for \(int c = c0 \+ threadIdx\.y", plan.kernels[0].source)) == 1  # one pass


def test_tall_column_statistics_at_a_new_batch_size_reuse_their_kernels() -> None:
    """The split and the grid follow the batch, the kernel does not: the same block shape, the
    same partition (equal estimates are ties, not decided by rounding), and the mean divides the
    sum by the runtime extent."""
    names = set()
    for rows in (1 << 18, 3 * (1 << 17) + 5, 1 << 20, 5000):
        x = sl.asarray(np.broadcast_to(np.float32(1.5), (rows, 64)))
        names.add(tuple(k.name for k in sl.explain(x.mean(0), x.var(0)).kernels))
    assert len(names) == 1, names


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_tall_column_normalization_at_a_new_batch_size_reuses_its_kernels(dtype: str) -> None:
    """A split kernel (mean and variance in one pass) and a pointwise pass: the pointwise kernel's
    mean and variance divide the sums by the batch read from its size argument (n / 64), not by a
    constant, so a new batch size compiles nothing (it recompiled the pointwise kernel before)."""
    names = set()
    for rows in (1 << 18, 3 * (1 << 17) + 5, 1 << 20, 5000):
        x = sl.asarray(np.broadcast_to(np.array(1.5, dtype), (rows, 64)))
        plan = sl.explain((x - x.mean(0)) / x.std(0, ddof=1))
        assert [k.schedule.family for k in plan.kernels] == ["column_split", "pointwise"]
        names.add(tuple(k.name for k in plan.kernels))
        assert "(n / (int)64)" in plan.kernels[-1].source
    assert len(names) == 1, names


def test_wide_column_reductions_are_not_split() -> None:
    x = sl.asarray(np.broadcast_to(np.float32(1.5), (8192, 8192)))  # 256 tiles: every SM busy
    assert [k.schedule.family for k in sl.explain(x.sum(0)).kernels] == ["column"]


def test_reduction_broadcast_back_over_whole_array_is_split_in_two() -> None:
    x = sl.asarray(np.ones((4096, 1024), np.float32))
    plan = sl.explain(x / x.sum())
    assert [k.schedule.family for k in plan.kernels] == ["row_split", "pointwise"]


def test_materialized_array_and_reshape_need_no_kernel() -> None:
    x = sl.asarray(np.ones((4, 6), np.float32))
    assert len(sl.explain(x).kernels) == 0
    assert len(sl.explain(x.reshape(6, 4)).kernels) == 0


def test_logsumexp_output_is_a_view_of_the_kernel_result() -> None:
    (z,) = WORKLOADS["logsumexp"][0](np.ones((8, 64), np.float32))
    plan = sl.explain(z)
    assert len(plan.kernels) == 1 and plan.views


def test_few_long_rows_split_over_blocks() -> None:
    """Three rows of 50000: one block per row would leave the GPU idle, so each reduction is
    split over many blocks and its consumers run in a second pass."""
    x = sl.asarray(np.broadcast_to(np.float32(1.5), (3, 50000)))
    (z,) = WORKLOADS["softmax"][0](x)
    plan = sl.explain(z)
    assert any(k.schedule.family == "row_split" and k.launch.split > 1 for k in plan.kernels)
    assert len(plan.kernels) <= 4


def test_independent_small_groups_are_packed_into_one_launch() -> None:
    a = sl.asarray(np.random.rand(7, 33).astype(np.float32))
    b = sl.asarray(np.random.rand(100).astype(np.float64))
    c = sl.asarray(np.arange(10, dtype=np.int8))
    plan = sl.explain(sl.exp(a) * 2, sl.sin(b) + 1, c * 3)
    (k,) = plan.kernels
    assert k.schedule.family == "packed" and len(k.parts) == 3
    assert k.launch.grid[0] == sum(p.launch.grid[0] for p in k.parts)
    assert {n.op for n in k.nodes} == {"exp", "multiply", "sin", "add"}


def test_large_independent_groups_are_not_packed() -> None:
    a = sl.asarray(np.broadcast_to(np.float32(1), (4096, 4096)))
    b = sl.asarray(np.broadcast_to(np.float32(2), (4096, 4096)))
    plan = sl.explain(sl.exp(a), sl.sin(b))
    assert [k.schedule.family for k in plan.kernels] == ["pointwise", "pointwise"]
