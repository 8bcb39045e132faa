"""Scans stitched into row kernels (``plan/groups.py``, ``fusable_scan``; ``sl_row_scan`` in the
preamble): which scans join a row group, and the kernels built as host C++ (threads as fibers,
``tests/compiler/hostkernels.py``) against NumPy: warps of a block in either order, teams of a
warp and of a block, rows that do not fill the last chunk, unaligned buffers, scans of scans and
reductions of running sums; rows too long for registers, walked in tiles. On the GPU:
``tests/gpu/test_row_scans_gpu.py``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from rowscans import (
    EXTREMA_DTYPES,
    PROGRAMS,
    assert_same_bits,
    extremes_data,
    scanning,
    with_special_rows,
)
from rowscans import softmax as _softmax

import stitchlab as sl
from stitchlab.codegen.program import build_plan
from stitchlab.ir.graph import build_graph
from stitchlab.plan.device import preset

from .hostkernels import run_plan, unsupported

RNG = np.random.default_rng(58)


def _plan(outs: list[Any], sms: int | None = None) -> tuple[Any, Any]:
    """The plan of ``outs`` for the H200 (with ``sms``: as if it had that many SMs, which makes a
    few long rows worth a kernel of a block a row)."""
    import dataclasses

    graph, sources = build_graph([o._node for o in outs])
    dev = preset("H200")
    return build_plan(graph, dev if sms is None else dataclasses.replace(dev, sms=sms)), sources


def _scanning(plan: Any) -> list[Any]:
    return scanning(plan.kernels)


def test_a_scan_joins_the_row_kernel_of_the_work_around_it() -> None:
    x = sl.asarray(RNG.standard_normal((2048, 32000)).astype(np.float32))
    mask = sl.cumsum(_softmax(sl, x), axis=1) < 0.9
    plan, _ = _plan([mask])
    (k,) = plan.kernels
    assert k.schedule.family == "row_block" and k.schedule.cache == "registers" and k.schedule.vec == 4
    assert [n.op for n in k.info.scans] == ["cumsum"] and _scanning(plan) == [k]


@pytest.mark.parametrize(("shape", "dtype", "axis", "kernels"), [
    ((132, 512), "float32", 1, (True, True)), ((262144, 128), "bfloat16", 1, (True, True)),
    ((512, 128256), "float64", 1, (True, True)), ((4, 33, 700), "int64", -1, (True, True)),
    ((131, 512), "float32", 1, (False, False)), ((2**22,), "float32", 0, (False, False)),
    ((8192, 4096), "float32", 0, (False, False)), ((8192, 4096), "float16", 1, (False, True)),
    ((8192, 4096), "int32", 1, (True, True)),
])
def test_a_lone_scan_over_as_many_rows_as_sms_is_a_row_kernel(shape: tuple[int, ...], dtype: str, axis: int,
                                                               kernels: tuple[bool, bool], monkeypatch: pytest.MonkeyPatch) -> None:
    """``groups.lone_row_scan``: a scan alone along the rows is a row kernel of its own where there
    are at least as many rows as SMs (132 on the H200); fewer rows (a row a block would leave SMs
    idle), another axis and float16 sums (NumPy's out-of-range results through the step; float16
    running maxima do not) keep the scan kernels' step, and so does every one with the planner
    switch off. An int32 sum is int64's of a cast, which the row kernel reads through.
    ``kernels``: whether the sum and the running maximum are row kernels."""
    from stitchlab.plan import groups

    x = sl.asarray(np.zeros(shape, sl.bfloat16 if dtype == "bfloat16" else dtype))
    for y, want in zip((sl.cumsum(x, axis=axis), sl.maximum.accumulate(x, axis=axis)), kernels, strict=True):
        (k,) = _plan([y])[0].kernels
        assert (k.schedule.family != "interpreted") == want, (y._node.op, k.schedule)
        if want:
            rows_a_block = k.launch.block[0] // 32 if k.schedule.family == "row_warp" else 1
            assert [n.op for n in k.info.scans] == [y._node.op]
            assert k.launch.grid[0] == math.ceil(math.prod(shape[:-1]) / rows_a_block), k.schedule
    monkeypatch.setitem(groups.OPTIONS, "lone_row_scans", False)
    assert [k.schedule.family for k in _plan([sl.maximum.accumulate(x, axis=axis)])[0].kernels] == ["interpreted"]


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize(("shape", "cache"), [((37, 3000), "registers"), ((3, 40000), "tiles"), ((40, 7), "registers"),
                                               ((40, 128), "registers")])  # (a warp a row; 16-bit ones one element a lane)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "float16", "int8"])
def test_a_lone_scan_as_a_row_kernel_is_numpys(shape: tuple[int, int], cache: str, dtype: str,
                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    """A lone scan's row kernel (planned for as many SMs as rows), in registers and walked in
    tiles, warps in either order: running maxima NumPy's bits in every dtype (ties of -0.0 and
    +0.0, NaN); sums of random values (not float16's, which stay steps) to the order of adds,
    bfloat16 to a rounding, integers (int8 into int64) exact."""
    dt = np.dtype(sl.bfloat16 if dtype == "bfloat16" else dtype)
    a = extremes_data(shape, dt, "cummax", RNG)
    b = (RNG.integers(-100, 100, shape) if dt.kind in "iu" else RNG.standard_normal(shape)).astype(dt)
    d = tmp_path_factory.mktemp("lone")
    for y in (sl.maximum.accumulate(sl.asarray(a), axis=1), sl.cumsum(sl.asarray(b), axis=1)):
        plan, sources = _plan([y], sms=shape[0])
        if y._node.op == "cumsum" and dtype == "float16":
            assert [k.schedule.family for k in plan.kernels] == ["interpreted"]
            continue
        (k,) = plan.kernels
        assert k.schedule.family != "interpreted" and k.schedule.cache == cache, k.schedule
        (got,), (other,) = run_plan(plan, sources, d), run_plan(plan, sources, d, order=1)
        if y._node.op == "cummax":
            assert_same_bits(got, np.maximum.accumulate(a, axis=1))
            assert_same_bits(other, np.maximum.accumulate(a, axis=1))
            continue
        want, scale = np.cumsum(b.astype(np.float64), axis=1), np.cumsum(np.abs(b.astype(np.float64)), axis=1)
        tol = {"float64": 1e-14, "float32": 2e-6, "bfloat16": 2.0**-8}.get(dtype, 0)
        assert got.dtype == np.cumsum(b[:1, :1], axis=1).dtype
        assert float(np.max(np.abs(got.astype(np.float64) - want) / (scale + 1e-30))) <= tol
        assert_same_bits(other, got)


@pytest.mark.parametrize(("why", "build"), [
    ("alone", lambda x: [sl.cumsum(x, axis=1)]),
    ("down the columns", lambda x: [sl.cumsum(x * 2, axis=0) + 1]),
    ("float16 (NumPy's float16 scans out of range: the step's fix-up)", lambda x: [sl.cumsum(x.astype("float16") * 2, axis=1) + 1]),
])
def test_other_scans_stay_steps_of_their_own(why: str, build: Callable[[Any], list[Any]]) -> None:
    x = sl.asarray(RNG.standard_normal((64, 512)).astype(np.float32))
    plan, _ = _plan(build(x))
    assert "interpreted" in [k.schedule.family for k in plan.kernels] and not _scanning(plan), why


def test_a_scan_read_at_other_positions_is_stored_first() -> None:
    """A kernel holds each running value at its own element only: a reader through a slice is in
    a kernel after the one that scans and stores them."""
    x = sl.asarray(RNG.standard_normal((64, 512)).astype(np.float32))
    plan, _ = _plan([sl.cumsum(x * 2, axis=1)[:, 1:] + x[:, :-1]])
    assert [k.schedule.family for k in plan.kernels] == ["row_block", "pointwise"] and _scanning(plan) == plan.kernels[:1]


def test_the_planner_switch_keeps_scans_steps_and_keys_the_recipe_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """``groups.OPTIONS["row_scans"]`` (what ``benchmarks/scans.py`` turns off to time the steps
    side by side): off, top-p's mask is three steps again, under another recipe cache key."""
    from stitchlab.plan import groups
    from stitchlab.runtime import plan_cache

    x = sl.asarray(RNG.standard_normal((64, 512)).astype(np.float32))
    mask = sl.cumsum(_softmax(sl, x), axis=1) < 0.9
    fused, _ = _plan([mask])
    on = plan_cache.components("g", preset("H200"))
    monkeypatch.setitem(groups.OPTIONS, "row_scans", False)
    steps, _ = _plan([mask])
    assert len(fused.kernels) == 1 and [k.schedule.family for k in steps.kernels] == ["row_block", "interpreted", "pointwise"]
    assert plan_cache.components("g", preset("H200")) != on


def test_a_new_batch_size_reuses_the_scanning_kernel() -> None:
    """The rows are a kernel argument: top-p's mask over 64 to 4,096 rows of 32,000 logits is one
    kernel text (one compile)."""
    names = set()
    for rows in (64, 300, 2048, 3000, 4096):
        x = sl.asarray(RNG.standard_normal((rows, 32000)).astype(np.float32))
        plan, _ = _plan([sl.cumsum(_softmax(sl, x), axis=1) < 0.9])
        names |= {k.name for k in plan.kernels}
    assert len(names) == 1


def test_what_a_scanning_row_holds_counts_inputs_read_after_the_scan() -> None:
    """``groups.scan_words``: the row's inputs, or the scans' running values beside the inputs
    that later passes (a later scan's input too) read again."""
    from stitchlab.plan.groups import scan_words

    x = sl.asarray(RNG.standard_normal((64, 512)).astype(np.float32))
    cases = [(sl.cumsum(_softmax(sl, x), axis=1) < 0.9, 1),  # (the logits dead once scanned)
             (sl.cumsum(x, axis=1) + x, 2), (sl.cumsum(sl.cumsum(x, axis=1) + x, axis=1), 3),
             (sl.cumsum(sl.cumsum(x, axis=1) * 0.5, axis=1), 2)]
    for y, words in cases:
        plan, _ = _plan([y])
        (k,) = scanning(plan.kernels)
        assert scan_words(k.info) == words


def test_rows_too_long_for_registers_are_walked_in_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A team of 1,024 threads holds 32 registers of a row a thread: 32,768 float32 (with nothing
    else of the row held after the scan), half as many int64. A longer row is walked in tiles by
    a block (each pass scans each tile again from the tiles before it); with the planner switch
    ``scan_tiles`` off its scan is a step of its own."""
    from stitchlab.plan import groups

    cases = [((4, 32768), np.float32, "registers"), ((4, 32769), np.float32, "tiles"),
             ((4, 16384), np.int64, "registers"), ((4, 16385), np.int64, "tiles"), ((64, 128256), np.float32, "tiles")]
    for shape, dtype, cache in cases:
        x = sl.asarray(RNG.integers(-9, 9, shape).astype(dtype))
        plan, _ = _plan([sl.cumsum(x * 2, axis=1) - 1])
        (k,) = _scanning(plan)
        assert (k.schedule.family, k.schedule.cache) == ("row_block", cache), (shape, dtype)
    monkeypatch.setitem(groups.OPTIONS, "scan_tiles", False)
    plan, _ = _plan([sl.cumsum(sl.asarray(np.ones((4, 32769), np.float32)) * 2, axis=1) - 1])
    assert not _scanning(plan) and "interpreted" in [k.schedule.family for k in plan.kernels]


def test_top_p_over_a_long_vocabulary_reads_its_logits_twice() -> None:
    """The sum of exps shares the max's pass (``GroupInfo.online_exp_sums``, also with a scan at
    a third depth), which walks the tiles last to first (``reverse_tiles``); the second pass
    scans and stores each tile, first to last."""
    x = sl.asarray(RNG.standard_normal((64, 128256)).astype(np.float32))
    plan, _ = _plan([sl.cumsum(_softmax(sl, x), axis=1) < 0.9])
    (k,) = plan.kernels
    body = k.source[k.source.find('extern "C"'):]
    assert k.schedule.cache == "tiles" and body.count("for (int tb = 0;") == 1
    assert body.index("tb >= 0;") < body.index("for (int tb = 0;") < body.index("sl_row_scan<")


def _error_bound(name: str, a: np.ndarray) -> float:
    """A few roundings of the largest running value (the program of ``|a|`` bounds them all)."""
    eps = np.finfo(a.dtype).eps if a.dtype.kind == "f" else 0.0
    return 64 * eps * max([float(np.max(np.abs(w))) for w in PROGRAMS[name](np, np.abs(a.astype(np.float64)))] + [1.0])


def _check_both_orders(name: str, plan: Any, sources: Any, a: np.ndarray, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``plan`` of program ``name`` over ``a`` run on the host with warps in either order: the
    same bits, within a few roundings of NumPy's float64 result."""
    d = tmp_path_factory.mktemp("row_scans")
    up, down = run_plan(plan, sources, d), run_plan(plan, sources, d, order=1)
    for got, other, want in zip(up, down, PROGRAMS[name](np, a.astype(np.float64)), strict=True):
        np.testing.assert_array_equal(got.view(np.uint8), other.view(np.uint8), err_msg="warps in another order")
        assert got.shape == np.shape(want)
        err = float(np.max(np.abs(got.astype(np.float64) - want)))
        assert err <= _error_bound(name, a), (name, a.dtype, a.shape, err)


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("shape", [(37, 3000), (300, 24), (5, 3001), (3, 7), (2, 32000)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_scanning_row_kernels_are_numpys(name: str, dtype: str, shape: tuple[int, int], tmp_path_factory: pytest.TempPathFactory) -> None:
    if name == "3-d" and shape[1] % 8:
        pytest.skip("rows of 8")
    a = RNG.standard_normal(shape).astype(dtype)
    plan, sources = _plan(PROGRAMS[name](sl, sl.asarray(a)))
    if shape != (2, 32000) and not (dtype == "float64" and name == "two scans" and shape[1] > 2048):
        assert _scanning(plan), "a row kernel scans"
    _check_both_orders(name, plan, sources, a, tmp_path_factory)


def _tiled(plan: Any, block: int) -> Any:
    """``plan`` with its scanning kernel walking its rows in tiles with blocks of ``block``."""
    import dataclasses

    from stitchlab.codegen.schedules import emit
    from stitchlab.plan.cost import Schedule, row_vector_width

    (k,) = _scanning(plan)
    ks = emit(k.info, Schedule("row_block", block=block, vec=row_vector_width(k.info), cache="tiles"))
    tiled = dataclasses.replace(k, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule,
                                launch=dataclasses.replace(k.launch, grid=(k.info.rows, 1, 1), block=(block, 1, 1)))
    return dataclasses.replace(plan, kernels=[tiled if x is k else x for x in plan.kernels])


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("reverse", [True, False], ids=["reversed", "forward"])
@pytest.mark.parametrize(("block", "shape"), [(128, (3, 7)), (128, (5, 3001)), (256, (2, 9000)), (1024, (2, 33000))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rows_walked_in_tiles_are_numpys(name: str, dtype: str, block: int, shape: tuple[int, int], reverse: bool,
                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    """Kernels that walk their rows in tiles (``cache="tiles"``: one tile, the last one partial,
    many; blocks of 4 to 32 warps), warps in either order, against NumPy; the passes that read
    no scan walk the tiles last to first (``reverse_tiles``: of these programs, softmax's max and
    sum before its scan) or first to last."""
    if name == "3-d":
        pytest.skip("rows of 8 elements, a block each: thousands of blocks on the host for no tile")
    from stitchlab.codegen.schedules import switches

    a = RNG.standard_normal(shape).astype(dtype)
    plan, sources = _plan(PROGRAMS[name](sl, sl.asarray(a)), sms=shape[0])
    with switches(reverse_tiles=reverse):
        plan = _tiled(plan, block)
    (k,) = _scanning(plan)
    assert k.schedule.cache == "tiles"
    assert k.source.count("tb >= 0;") == (1 if reverse and name == "cumsum of softmax" else 0)
    _check_both_orders(name, plan, sources, a, tmp_path_factory)


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("reverse", [True, False], ids=["reversed", "forward"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_of_exps_in_tiles_keep_numpys_infinities_and_nans(dtype: str, reverse: bool,
                                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    """The max's pass of a softmax walked in tiles adds ``exp(v - m)`` with ``m`` the largest value
    of the tiles so far (``_group_maxima``): rows whose maximum rises in every tile and in none
    after the first, infinities, tiles and rows of -inf and NaNs give NumPy's values and NaNs."""
    from stitchlab.codegen.schedules import switches

    a = with_special_rows(RNG.standard_normal((8, 9000)).astype(dtype))
    plan, sources = _plan(PROGRAMS["cumsum of softmax"](sl, sl.asarray(a)), sms=a.shape[0])
    with switches(reverse_tiles=reverse):
        plan = _tiled(plan, 256)
    (k,) = _scanning(plan)
    assert k.source.count(" = fmax(tm") == 1 and k.source.count("for (int tb = ") == 2
    (got,) = run_plan(plan, sources, tmp_path_factory.mktemp("tile_maxima"))
    with np.errstate(invalid="ignore"):
        (want,) = PROGRAMS["cumsum of softmax"](np, a.astype(np.float64))
    assert np.isnan(want[[3, 5, 6, 7]]).all() and not np.isnan(want[[0, 1, 2, 4]]).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=64 * np.finfo(dtype).eps)


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_beside_a_scan_in_tiles_is_numpys_first_index(op: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """An argmax or argmin in a pass of a tiled kernel keeps NumPy's first index of ties and of
    NaNs: its thread steps up its positions, so that pass walks the tiles first to last even
    where ``reverse_tiles`` turns the passes that read no scan."""
    a = RNG.integers(0, 4, (3, 40000)).astype(np.float32)  # (ties: each row's extreme many times)
    a[1, [9000, 20000, 35000]] = np.nan
    x = sl.asarray(a)
    outs = [getattr(x, op)(axis=1), sl.cumsum(x, axis=1) - getattr(x, op)(axis=1, keepdims=True)]
    plan, sources = _plan(outs, sms=a.shape[0])
    (k,) = _scanning(plan)
    assert k.schedule.cache == "tiles" and "tb >= 0;" not in k.source
    got = run_plan(plan, sources, tmp_path_factory.mktemp("argmax_tiles"))
    want = getattr(np, op)(a, axis=1)
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], np.cumsum(a.astype(np.float64), axis=1).astype(np.float32) - want[:, None])


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("shape", [(5, 7), (37, 3000), (3, 40000)])
@pytest.mark.parametrize("name", ["cumsum(2x) + x", "cumsum of softmax", "cumprod"])
def test_bfloat16_scans_are_the_steps_to_a_rounding(name: str, shape: tuple[int, int], monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    """A bfloat16 scan in a row kernel (a warp's, a block's, tiles) adds in float32 and rounds each
    running value once, as the library step does: another order of adds moves a result by a
    bfloat16 rounding of the running values' size at most (2**-8; with the later work's own
    rounding 2**-7)."""
    from stitchlab.ir.dtypes import bfloat16
    from stitchlab.plan import groups

    a = RNG.standard_normal(shape).astype(bfloat16())
    plan, sources = _plan(PROGRAMS[name](sl, sl.asarray(a)), sms=shape[0])
    assert _scanning(plan)
    d = tmp_path_factory.mktemp("row_scans")
    (got,) = run_plan(plan, sources, d)
    monkeypatch.setitem(groups.OPTIONS, "row_scans", False)
    steps, sources = _plan(PROGRAMS[name](sl, sl.asarray(a)), sms=shape[0])
    assert not _scanning(steps)
    (want,) = run_plan(steps, sources, d)
    assert got.dtype == want.dtype == a.dtype
    if name == "cumsum(2x) + x":  # (sums of small integers: exact in either order, so the same bits)
        ints = RNG.integers(-4, 5, shape).astype(a.dtype)
        outs = []
        for fused in (True, False):
            monkeypatch.setitem(groups.OPTIONS, "row_scans", fused)
            p, srcs = _plan(PROGRAMS[name](sl, sl.asarray(ints)), sms=shape[0])
            outs.append(run_plan(p, srcs, d)[0])
        np.testing.assert_array_equal(outs[0].view(np.uint16), outs[1].view(np.uint16))
    # (elementwise, relative to the running values' size: the program of |a| bounds it)
    (size,) = PROGRAMS[name](np, np.abs(a.astype(np.float64)))
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(err <= 2.0**-7 * (np.abs(size) + np.abs(a.astype(np.float64)))), float(np.max(err))


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cache", ["registers", "tiles"])
def test_float_sums_of_negative_zeros_stay_negative_zeros(cache: str, dtype: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A scan stitched into a row kernel starts a float sum from -0.0, as NumPy's (-0.0 + x is x
    for every x): ``cumsum(2x) + x`` of rows of -0.0 is -0.0, of a row with a +0.0 +0.0 from
    there on, in registers and walked in tiles."""
    a = np.full((8, 1000), -0.0, dtype)
    a[1, 7] = a[3, 0] = 0.0
    a[5] = RNG.standard_normal(1000)
    plan, sources = _plan(PROGRAMS["cumsum(2x) + x"](sl, sl.asarray(a)), sms=a.shape[0])
    if cache == "tiles":
        plan = _tiled(plan, 256)
    assert _scanning(plan)[0].schedule.cache == cache
    (got,) = run_plan(plan, sources, tmp_path_factory.mktemp("negative_zeros"))
    (want,) = PROGRAMS["cumsum(2x) + x"](np, a)
    zero = want == 0
    assert zero.sum() == 7 * 1000 and not np.signbit(want[1, 7:]).any() and np.signbit(want[0]).all()
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("shape", [(37, 3000), (5, 7), (4, 9000)])
@pytest.mark.parametrize("dtype", EXTREMA_DTYPES)
@pytest.mark.parametrize("cache", ["registers", "tiles"])
def test_running_maxima_and_minima_in_row_kernels_are_numpys_bits(cache: str, dtype: str, shape: tuple[int, int],
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """``maximum.accumulate``/``minimum.accumulate`` stitched into a row kernel (in registers and
    walked in tiles, warps in either order) keep NumPy's element semantics, not the max
    reduction's: of equal values (-0.0, +0.0) the later one, the first NaN."""
    for op, ufunc in (("cummax", sl.maximum), ("cummin", sl.minimum)):
        a = extremes_data(shape, sl.bfloat16 if dtype == "bfloat16" else np.dtype(dtype), op, RNG)
        plan, sources = _plan([ufunc.accumulate(sl.asarray(a), axis=1) * a.dtype.type(1)], sms=shape[0])
        if cache == "tiles":
            plan = _tiled(plan, 256)
        assert [n.op for n in _scanning(plan)[0].info.scans] == [op] and _scanning(plan)[0].schedule.cache == cache
        d = tmp_path_factory.mktemp("extremes")
        (got,), (other,) = run_plan(plan, sources, d), run_plan(plan, sources, d, order=1)
        want = getattr(np, ufunc.__name__).accumulate(a, axis=1) * a.dtype.type(1)
        assert_same_bits(got, want)
        assert_same_bits(other, want)


@pytest.mark.parametrize("dtype", EXTREMA_DTYPES)
def test_running_maxima_and_minima_in_row_kernels_compile_with_nvrtc(dtype: str) -> None:
    """The kernels of the test above, in registers and in tiles, compiled by NVRTC for sm_90."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.runtime.nvrtc import compile_cubin

    x = sl.asarray(np.zeros((37, 3000), sl.bfloat16 if dtype == "bfloat16" else dtype))
    plan, _ = _plan([sl.maximum.accumulate(x, axis=1) * 1 + sl.minimum.accumulate(x * 2, axis=1)], sms=37)
    for p in (plan, _tiled(plan, 256)):
        (k,) = _scanning(p)
        assert sorted(n.op for n in k.info.scans) == ["cummax", "cummin"]
        compile_cubin(k.source, k.name, "sm_90")


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
def test_unaligned_rows_scan_the_same_slots(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Inputs 4 bytes past a 16-byte boundary: the vector loads and stores take their element
    branches; the scan's slots are the same."""
    flat = RNG.standard_normal(37 * 4096 + 1).astype(np.float32)
    a = flat[1:].reshape(37, 4096)
    assert a.ctypes.data % 16
    plan, sources = _plan(PROGRAMS["cumsum(2x) + x"](sl, sl.asarray(a)))
    assert _scanning(plan) and plan.kernels[0].schedule.vec == 4
    (got,) = run_plan(plan, sources, tmp_path_factory.mktemp("row_scans"))
    (want,) = PROGRAMS["cumsum(2x) + x"](np, a.astype(np.float64))
    assert float(np.max(np.abs(got - want))) <= _error_bound("cumsum(2x) + x", a)


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("shape", [(6, 32000), (2, 128256), (1, 151936)])
def test_the_top_p_mask_is_numpys(shape: tuple[int, int], tmp_path_factory: pytest.TempPathFactory) -> None:
    """Vocabularies of 32,000 (the row in registers) and 128,256 and 151,936 (walked in tiles; a
    kernel the planner takes for 64 rows and more of them, here for as many SMs as rows)."""
    a = (RNG.standard_normal(shape) * 3).astype(np.float32)
    plan, sources = _plan([sl.cumsum(_softmax(sl, sl.asarray(a)), axis=1) < 0.9], sms=shape[0])
    assert len(plan.kernels) == 1 and _scanning(plan)
    (got,) = run_plan(plan, sources, tmp_path_factory.mktemp("row_scans"))
    running = np.cumsum(_softmax(np, a.astype(np.float64)), axis=1)
    clear = np.abs(running - 0.9) > 1e-5
    assert got.dtype == np.bool_ and clear.mean() > 0.99
    np.testing.assert_array_equal(got[clear], (running < 0.9)[clear])


#: random programs: work before the scan, the scan, work after it (NumPy's or stitchlab's ``o``)
_BEFORE: list[Callable[[Any, Any, Any], Any]] = [
    lambda o, x, y: x * y, lambda o, x, y: o.exp(x - x.max(axis=-1, keepdims=True)),
    lambda o, x, y: x / o.abs(x).sum(axis=-1, keepdims=True), lambda o, x, y: o.where(x > 0, x, y),
    lambda o, x, y: (x - x.mean(axis=-1, keepdims=True)) * 0.5, lambda o, x, y: o.tanh(x) + y.max(axis=-1, keepdims=True)]
_SCAN: list[Callable[[Any, Any], Any]] = [
    lambda o, v: o.cumsum(v, axis=-1), lambda o, v: o.cumprod(1 + v * 0.01, axis=-1),
    lambda o, v: o.cumsum(o.cumsum(v, axis=-1), axis=-1)]
_AFTER: list[Callable[[Any, Any, Any, Any], list[Any]]] = [
    lambda o, s, x, y: [s + x], lambda o, s, x, y: [s.sum(axis=-1)], lambda o, s, x, y: [s * y, s.max(axis=-1)],
    lambda o, s, x, y: [s - s.mean(axis=-1, keepdims=True)], lambda o, s, x, y: [s, x.sum(axis=-1)],
    lambda o, s, x, y: [o.exp(s * 0.01) / o.exp(s * 0.01).sum(axis=-1, keepdims=True)]]


@pytest.mark.skipif(unsupported() is not None, reason=str(unsupported()))
@pytest.mark.parametrize("seed", range(24))
def test_random_programs_around_a_scan_are_numpys(seed: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Work before and after a scan (reductions of the row on either side, a scan of a scan),
    random shapes (3-d too) and dtypes: within a few roundings of NumPy's own result in the
    dtype (its sequential order) and of the scan's tree of the float64 one."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(str(rng.choice(["float32", "float64"])))
    rows, cols = int(rng.choice([1, 3, 17, 64])), int(rng.choice([2, 5, 31, 128, 1000, 4099, 8192]))
    shape = (rows, 2, cols) if rng.random() < 0.2 else (rows, cols)
    a, b = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    before, scan, after = (f[rng.integers(len(f))] for f in (_BEFORE, _SCAN, _AFTER))

    def program(o: Any, x: Any, y: Any) -> list[Any]:
        return after(o, scan(o, before(o, x, y)), x, y)

    plan, sources = _plan(program(sl, sl.asarray(a), sl.asarray(b)))
    assert _scanning(plan)
    got = run_plan(plan, sources, tmp_path_factory.mktemp("row_scans"))
    with np.errstate(all="ignore"):
        exact, plain = program(np, a.astype(np.float64), b.astype(np.float64)), program(np, a, b)
    for g, w, p in zip(got, exact, plain, strict=True):
        g, w, p = g.astype(np.float64), np.asarray(w, np.float64), np.asarray(p, np.float64)
        # (where the dtype overflows, NaN as NumPy's in the dtype: the softmax of large running sums)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(p))
        # (a rounding a level of the scan's tree, of the largest value: a lost chunk is far past it)
        ulp = np.finfo(dtype).eps * max(1.0, float(np.nanmax(np.abs(w))))
        bound = 8 * float(np.nanmax(np.abs(p - w))) + 64 * ulp * np.log2(cols + 1)
        assert float(np.nanmax(np.abs(g - w))) <= bound, (seed, dtype, shape)
