"""The kernels the planner writes, run on the CPU (``tests/compiler/hostkernels.py``: the CUDA
threads of a block as fibers) against the float64 reference: the emitters' indexing, passes,
barriers and team reductions checked without a GPU, in CI. Each kernel runs twice, its warps
taking turns in increasing and then in decreasing order between barriers, which must give the same
bits (a read of shared memory that no barrier orders gives different ones). The device's own arithmetic stays
with ``tests/gpu``."""

from __future__ import annotations

import dataclasses
import re

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import emit
from stitchlab.codegen.program import build_plan
from stitchlab.ir.graph import build_graph
from stitchlab.plan.device import preset

from .hostkernels import HOST_ASM, host_preamble, run_plan, unsupported
from .workloads import WORKLOADS, make_args

pytestmark = pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))

#: within the float64 reference: float16 about 40 steps, bfloat16 the same in its steps (the
#: affine's cancellation, x * w + b near 0), as the GPU tests allow
TOL = {"float16": 2e-2, "bfloat16": 1.6e-1, "float32": 2e-5, "float64": 1e-12}
ROWS, COLS = 37, 3000


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("host_kernels")


def _graph(build, host: list[np.ndarray]):
    graph, sources = build_graph([o._node for o in build(*[sl.asarray(a) for a in host])])
    return graph, sources, build_plan(graph, preset("H200"))


def _reference(build, host: list[np.ndarray]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [np.asarray(o.get(), np.float64) for o in build(*[sl.asarray(a.astype(np.float64)) for a in host])]


def _both_orders(plan, sources, build_dir) -> list[np.ndarray]:
    """The outputs, the same bits with the warps run in either order between barriers."""
    up, down = run_plan(plan, sources, build_dir), run_plan(plan, sources, build_dir, order=1)
    for a, b in zip(up, down, strict=True):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg="threads in another order")
    return up


def _close(got: list[np.ndarray], want: list[np.ndarray], dtype: str) -> None:
    tol = TOL[dtype]
    for g, w in zip(got, want, strict=True):
        g = g.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _case(name: str, dtype: str, rows: int = ROWS, cols: int = COLS):
    build, _, kinds = WORKLOADS[name]
    host = make_args(kinds, rows, cols, np.dtype(dtype), seed=2)
    if name == "adam":
        host[3] = np.abs(host[3])
    host[0][3, min(11, cols - 1)] = np.nan  # one row carries a NaN through its reductions
    return build, host


def test_every_inline_ptx_instruction_has_a_host_version() -> None:
    host = host_preamble()  # (raises KeyError naming an instruction that has none)
    assert not re.search(r"\basm\s*(volatile\s*)?\(", host)
    assert "h.x = slh_f2h(f);" in host and set(HOST_ASM) >= {"cvt.f32.f16", "max.NaN.f32", "griddepcontrol.wait"}
    with pytest.raises(KeyError, match="'fma.rn.f16'"):
        host_preamble('asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(a), "h"(b), "h"(c));')


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_kernels_match_the_reference(name: str, dtype: str, build_dir) -> None:
    build, host = _case(name, dtype)
    graph, sources, plan = _graph(build, host)
    _close(_both_orders(plan, sources, build_dir), _reference(build, host), dtype)


def _one_element_in(a: np.ndarray) -> np.ndarray:
    """``a`` in a buffer that starts one element before it: no 16-byte vector of it is aligned."""
    flat = np.empty(a.size + 1, a.dtype)
    flat[1:] = a.ravel()
    return flat[1:].reshape(a.shape)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "add_layernorm", "rmsnorm"])
def test_unaligned_buffers_take_the_element_paths(name: str, dtype: str, build_dir) -> None:
    """Inputs that start 4 (2) bytes past a 16-byte boundary: every vector load and store of the
    row kernels takes its element-by-element branch (the kernel checks the pointers)."""
    build, host = _case(name, dtype)
    host = [_one_element_in(a) for a in host]
    graph, sources, plan = _graph(build, host)
    assert all(s.value.ctypes.data % 16 for s in sources)
    assert any(k.schedule.vec > 1 for k in plan.kernels)
    _close(_both_orders(plan, sources, build_dir), _reference(build, host), dtype)


@pytest.mark.parametrize(("name", "shape"), [
    ("softmax", (300, 24)), ("layernorm", (300, 24)), ("column_norm", (300, 24)),  # a warp a row; column lanes
    ("softmax", (5, 40_000)), ("layernorm", (5, 40_000)),  # rows split over blocks (row_split)
    ("column_norm", (20_000, 16)),  # columns split over blocks (column_split)
])
def test_short_and_long_rows_match_the_reference(name: str, shape: tuple[int, int], build_dir) -> None:
    """Short rows (a warp each; columns two a thread) and split reductions (partial results, the
    last block's combine through the counters)."""
    build, host = _case(name, "float32", *shape)
    graph, sources, plan = _graph(build, host)
    _close(_both_orders(plan, sources, build_dir), _reference(build, host), "float32")


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize(("dtype", "cols", "lanes", "vec"), [
    # (lanes: softmax's and add + layernorm's rows, two vectors a lane, one where a row has two
    # or three / layernorm's, the same but two vectors a lane for three of float16 / logsumexp's,
    # three vectors a lane)
    ("float16", 64, (4, 4, 4), 8), ("bfloat16", 128, (8, 8, 8), 8), ("float32", 64, (8, 8, 8), 4),
    ("float32", 7, (4, 4, 4), 1), ("float16", 24, (4, 2, 1), 8), ("float32", 12, (4, 4, 1), 4),
    ("float32", 8, (2, 2, 1), 4), ("float16", 96, (8, 8, 4), 8), ("float32", 96, (16, 16, 8), 4),
    ("float32", 68, (16, 16, 8), 4), ("float16", 200, (16, 16, 16), 8), ("float32", 99, (32, 32, 32), 1),
])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "logsumexp", "add_layernorm"])
def test_rows_shorter_than_a_warp_of_vectors_match_the_reference(name: str, dtype: str, cols: int, lanes: tuple[int, int, int],
                                                                  vec: int, aligned: bool, build_dir) -> None:
    """Rows shorter than 32 vectors: a row to each group of lanes, several a warp, each lane
    holding up to two vectors of a row that is stored (one of a row of two or three vectors:
    float16 rows of 24 in four lanes, one of them idle, but for a float16 layernorm's), three
    of one that is not (a single lane
    a row: float16 rows of 24, logsumexp); 301 rows: the last warp's teams past the last row
    store nothing. Rows whose length is no multiple of a vector (float32 rows of 99): a warp a
    row, one element a lane. Aligned, or taking the element paths."""
    lanes = lanes[{"layernorm": 1, "logsumexp": 2}.get(name, 0)]
    build, host = _case(name, dtype, 301, cols)
    if not aligned:
        host = [_one_element_in(a) for a in host]
    graph, sources, plan = _graph(build, host)
    assert [(k.schedule.family, k.schedule.lanes, k.schedule.vec) for k in plan.kernels] == [("row_warp", lanes, vec)], plan.summary()
    _close(_both_orders(plan, sources, build_dir), _reference(build, host), dtype)


def _with_schedule(plan, kernel, schedule, grid: int):
    ks = emit(kernel.info, schedule)
    block = (32, schedule.ty, 1) if schedule.family == "column" else (schedule.block, 1, 1)  # (scalar columns)
    k = dataclasses.replace(kernel, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule,
                            launch=dataclasses.replace(kernel.launch, grid=(grid, 1, 1), block=block))
    return dataclasses.replace(plan, kernels=[k if x is kernel else x for x in plan.kernels])


def _row_kernel(plan):
    (k,) = [k for k in plan.kernels if k.schedule.family in ("row_block", "row_warp")]
    return k


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("name", ["softmax", "layernorm", "add_layernorm", "logsumexp", "rmsnorm"])
def test_streamed_rows_walked_by_blocks(name: str, dtype: str, build_dir) -> None:
    """``Schedule.row_loop``: the same bits whatever the grid, the row-a-block kernel's values up
    to the order of the turned passes' sums (float64: element by element, no vectors)."""
    build, host = _case(name, dtype)
    graph, sources, plan = _graph(build, host)
    k = _row_kernel(plan)
    vec = k.schedule.vec if dtype != "float64" else 1
    streamed = dataclasses.replace(k.schedule, family="row_block", block=128, cache="none", prefetch=0, vec=vec)
    plain = _both_orders(_with_schedule(plan, k, streamed, ROWS), sources, build_dir)
    walking = dataclasses.replace(streamed, row_loop=True)
    walked = _both_orders(_with_schedule(plan, k, walking, 5), sources, build_dir)
    for grid in (1, ROWS):  # which block takes a row changes no bit of it
        for a, b in zip(run_plan(_with_schedule(plan, k, walking, grid), sources, build_dir), walked, strict=True):
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg=f"grid {grid}")
    _close(walked, [p.astype(np.float64) for p in plain], dtype)
    _close(walked, _reference(build, host), dtype)


def test_argmax_rows_walked_by_blocks_give_numpys_first_positions(build_dir) -> None:
    """Values of 7 levels: thousands of ties in each row for its maximum; NumPy gives the first."""
    host = np.random.default_rng(3).integers(-3, 4, (ROWS, COLS)).astype(np.float32)
    host[5, 100:] = -4.0
    host[5, -1] = 9.0  # a row whose only maximum is its last element

    def build(a):
        x = sl.asarray(a)
        m = x.max(-1, keepdims=True)
        return [(x - m).argmax(-1), sl.exp(x - m).sum(-1)]

    graph, sources, plan = _graph(build, [host])
    k = _row_kernel(plan)
    walking = dataclasses.replace(k.schedule, family="row_block", block=128, cache="none", prefetch=0, row_loop=True)
    arg, total = _both_orders(_with_schedule(plan, k, walking, 5), sources, build_dir)
    shifted = host - host.max(-1, keepdims=True)
    np.testing.assert_array_equal(arg, np.argmax(shifted, -1))
    np.testing.assert_allclose(total, np.exp(shifted.astype(np.float64)).sum(-1), rtol=2e-5)


def test_a_missing_barrier_is_caught(build_dir) -> None:
    """The check can fail: without the barrier at the end of a walked row, the next row's block
    reduction overwrites the shared values of the last one before every thread read them (rmsnorm:
    one reduction a row; where a row has two, the second one's barrier orders the first's reuse)."""
    build, host = _case("rmsnorm", "float32")
    graph, sources, plan = _graph(build, host)
    k = _row_kernel(plan)
    walking = dataclasses.replace(k.schedule, family="row_block", block=128, cache="none", prefetch=0, row_loop=True)
    good = _with_schedule(plan, k, walking, 5)
    (kernel,) = good.kernels
    barrier = "    __syncthreads();  // the next row's reductions reuse the block's buffers\n"
    assert kernel.source.count(barrier) == 1
    racy = dataclasses.replace(good, kernels=[dataclasses.replace(kernel, source=kernel.source.replace(barrier, ""))])
    want = run_plan(good, sources, build_dir)
    got = [run_plan(racy, sources, build_dir, order=o)[0] for o in (0, 1)]
    assert any(not np.array_equal(g, want[0], equal_nan=True) for g in got)


def _edge_rows(dtype: str) -> np.ndarray:
    """Random rows, and rows of -inf, +inf (once, twice, at the end), NaN, -inf heads and tails,
    and a constant row whose exps overflow without the shift."""
    x = np.random.default_rng(1).standard_normal((ROWS, COLS)).astype(dtype) * 3
    x[0, :] = -np.inf
    x[1, 5] = x[2, 5] = x[2, -1] = x[6, 7] = np.inf
    x[3, 11] = np.nan
    x[4, :1500] = x[5, 1000:] = x[6, 8] = -np.inf
    x[7, :] = 80.0 if dtype == "float32" else 700.0
    return x


#: sums of exp(a - max(a)): logsumexp (its shift is where(isfinite(max), max, 0)), the same written
#: out (the shift is the max), softmax (rows) and softmax over columns
_EXP_SUMS = {
    "logsumexp": lambda x: [sl.logsumexp(x, axis=-1)],
    "written out": lambda x: [sl.log(sl.exp(x - x.max(-1, keepdims=True)).sum(-1)) + x.max(-1)],
    "softmax": lambda x: [(lambda e: e / e.sum(-1, keepdims=True))(sl.exp(x - x.max(-1, keepdims=True)))],
    "column softmax": lambda x: [(lambda e: e / e.sum(0, keepdims=True))(sl.exp(x - x.max(0, keepdims=True)))],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_EXP_SUMS))
def test_online_exp_sums_keep_every_inf_and_nan(name: str, dtype: str, build_dir) -> None:
    """``OPTIONS["online_exp_sum_streamed"]`` (``GroupInfo.online_exp_sums``): the sum in the max's pass,
    one pass fewer, with the two-pass kernel's NaN and infinities in every edge row and its finite
    values up to rounding."""
    from stitchlab.codegen.schedules import switches

    build = _EXP_SUMS[name]
    host = _edge_rows(dtype)
    graph, sources, plan = _graph(build, [host])
    (k,) = [k for k in plan.kernels if k.schedule.family in ("row_block", "row_warp", "column")]
    assert set(k.info.online_exp_sums()) == {id(r) for r in k.info.reductions if r.op == "sum"}
    if k.schedule.family == "column":  # (passes that re-read memory: columns streamed, rows streamed)
        streamed = dataclasses.replace(k.schedule, cache="none", vec=1, ty=32)
    else:
        streamed = dataclasses.replace(k.schedule, family="row_block", block=128, cache="none", prefetch=0)
    outs, loops = {}, {}
    for on in (False, True):
        with switches(online_exp_sum_streamed=on):
            p = _with_schedule(plan, k, streamed, k.launch.grid[0] if streamed.family == "column" else ROWS)
        body = p.kernels[-1].source.split("// ---- end of preamble")[1]
        loops[on] = sum(body.count(h) for h in ("for (int t = ", "for (int c = lane", "for (int cc = "))
        outs[on] = _both_orders(p, sources, build_dir)
    assert loops[True] == loops[False] - 1  # the sum's pass is gone
    want = _reference(build, [host])
    for on in (False, True):
        for got, w in zip(outs[on], want, strict=True):
            got = got.astype(np.float64)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(w))
            np.testing.assert_array_equal(np.isposinf(got), np.isposinf(w))
            np.testing.assert_array_equal(np.isneginf(got), np.isneginf(w))
            np.testing.assert_allclose(got, w, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("start, stop, step", [(2**64 - 700, 2**64 - 1, 1), (2**63 + 900, 2**63 - 900, -3), (5, 2005, 2)])
def test_uint64_positions_past_int64_are_numpys(start: int, stop: int, step: int, build_dir) -> None:
    """``arange`` of uint64 (an iota in a kernel) counts in uint64: starts past int64's range and
    negative steps wrap as NumPy's do."""
    x = np.arange(abs(stop - start) // abs(step), dtype=np.uint64)
    graph, sources = build_graph([(sl.arange(start, stop, step, dtype=np.uint64) ^ sl.asarray(x))._node])
    plan = build_plan(graph, preset("H200"))
    assert any(k.source for k in plan.kernels)
    got = _both_orders(plan, sources, build_dir)
    np.testing.assert_array_equal(got[0], np.arange(start, stop, step, dtype=np.uint64) ^ x)
