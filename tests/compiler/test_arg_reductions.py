"""argmax/argmin fused into row and column kernels (``sl_arg`` pairs in the preamble): which
groups take them, the code each schedule emits for them, and that NVRTC compiles it for every
dtype (no GPU needed; the values are checked against NumPy in
``tests/gpu/test_arg_reductions_gpu.py``)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import emit
from stitchlab.plan import groups
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


@pytest.mark.parametrize(("shape", "axis", "family"), [((300, 4096), 0, "column"), ((8, 16, 100), 1, "column"),
                                                      ((1 << 20, 64), 0, "column_split")])
def test_column_arg_reductions_are_fused(shape: tuple[int, ...], axis: int, family: str) -> None:
    """Over columns or a middle axis: one column kernel with what feeds it (before, CuPy's own
    argmax, and passes of its own for NumPy's first NaN); tall and narrow: split over blocks."""
    x = sl.asarray(np.zeros(shape, np.float32))
    assert _families(x.argmax(axis)) == [family]
    (k,) = sl.explain(sl.exp(x).argmin(axis), x.sum(axis), device="H200").kernels
    assert k.schedule.family == family
    assert {n.op for n in k.nodes} == {"exp", "argmin", "sum"}
    assert "sl_op_argmin().step(acc" in k.source and "(int)(c))" in k.source


def _column_passes(k) -> list[str]:
    """The column loops of a column kernel: "up" (positions ascending) or "down" (with several
    kept indices a thread, a pass's loop for aligned pointers)."""
    loops = re.findall(r"for \(int cc = [^;]*;[^;]*;[^)]*\) \{\n\s*const int c = ([^;]*);", k.source)
    loops += re.findall(r"if \(valid && aligned\) \{\n\s*for \(int c0 = [^\n]*\n(?:[^\n]*\n)*?\s*const int c = ([^;]*);", k.source)
    return ["down" if "K - 1" in c else "up" for c in loops]


def test_column_passes_of_an_arg_group_all_go_up() -> None:
    """A column kernel alternates its passes' direction (the rows read last are still in L2),
    but a thread's argmax steps must come in increasing positions: a group with an arg
    reduction reads every pass going up."""
    x = sl.asarray(np.zeros((8192, 4096), np.float32))
    (k,) = sl.explain((x - x.max(0)).sum(0), device="H200").kernels
    assert k.schedule.family == "column" and _column_passes(k) == ["up", "down"]
    (k,) = sl.explain((x - x.max(0)).argmin(0), device="H200").kernels
    assert k.schedule.family == "column" and _column_passes(k) == ["up", "up"]


def test_rows_of_any_int_length_are_fused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole array (flattened: a 1-D row), and a vocabulary's rows (128256), are row kernels;
    rows longer than ARG_MAX_COLS (positions must stay below the identity's 2**31 - 1) go to
    CuPy."""
    assert ARG_MAX_COLS == 2**31 - 2
    assert _families(sl.asarray(np.zeros(1 << 20, np.float32)).argmax()) == ["row_split"]
    assert _families(sl.asarray(np.zeros((4, 5, 6), np.float32)).argmin())[0].startswith("row_")
    assert _families(sl.asarray(np.zeros((8, 128256), np.float16)).argmax(-1))[0].startswith("row_")
    monkeypatch.setattr(groups, "ARG_MAX_COLS", 1000)
    x = sl.asarray(np.zeros((4, 1001), np.float32))
    assert _families(x.argmax(-1)) == ["interpreted"]
    assert _families(x[:, :1000].argmin(-1))[0].startswith("row_")


def test_few_long_rows_with_an_arg_reduction_are_split() -> None:
    """Each block of a row_split steps up its chunk's positions and writes its (value, position)
    pair; the last block combines the pairs: one kernel with the sum, a workspace of pairs."""
    x = sl.asarray(np.zeros((4, 60_000), np.float32))
    assert _families(x.sum(-1)) == ["row_split"]
    (k,) = sl.explain(x.argmax(-1), x.sum(-1), device="H200").kernels
    assert k.schedule.family == "row_split"
    assert "sl_arg<float>* __restrict__ ws" in k.source and "sl_load_cg(ws" in k.source
    assert "sl_op_argmax().step(acc" in k.source and "(int)(c))" in k.source


@pytest.mark.parametrize(("dtype", "words"), [("float16", 1), ("float32", 1), ("int8", 1), ("float64", 2), ("int64", 2)])
def test_split_arg_workspace_holds_the_pairs(dtype: str, words: int) -> None:
    """The recipe sizes a split argmax's workspace in int64 words: sizeof(sl_arg<V>) is 8 bytes
    for values of at most 4 bytes (float16 pairs hold a float), 16 for 8-byte values."""
    from stitchlab.runtime.plan_cache import lower_kernel

    x = sl.asarray(np.zeros((3, 50_000), dtype))
    plan = sl.explain(x.argmax(-1), device="H200")
    (k,) = plan.kernels
    assert k.schedule.family == "row_split" and k.launch.split > 1
    pos = {id(n): i for i, n in enumerate(plan.graph.nodes)}
    (ws,) = [p for p in lower_kernel(k, "key", pos)["params"] if p[0] == "ws"]
    assert ws == ["ws", "int64", 3 * k.launch.split * words]


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


@pytest.mark.parametrize("dtype", DTYPES)
def test_arg_kernels_compile_under_every_column_schedule(dtype: str) -> None:
    """Every schedule the evaluator considers (threads per column, a register cache, 64-bit
    indices), and a split over blocks for one pass."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.plan.cost import schedules
    from stitchlab.runtime.nvrtc import compile_cubin

    x = sl.asarray((np.arange(48 * 64) % 7).reshape(48, 64).astype(dtype))
    one = [x.argmax(0), x.argmin(0, keepdims=True)]
    two = [*one, (x ^ x.max(0) if dtype == "bool" else x - x.max(0)).argmax(0) + 1]  # two passes
    for outs in (one, two):
        plan = sl.explain(*outs, device="H200")
        (k,) = plan.kernels
        tried = [e.schedule for e in schedules(k.info, plan.device)]
        tried.append(dataclasses.replace(tried[0], index="long long"))
        if outs is one:
            tried.append(Schedule("column_split", block=32, ty=8))
        else:
            assert "registers" in {s.cache for s in tried}
        assert {s.ty for s in tried} >= {4, 8, 16}
        for sched in tried:
            ks = emit(k.info, sched)
            assert "sl_arg<" in ks.source
            compile_cubin(ks.source, ks.name, "sm_90")


@pytest.mark.parametrize(("dtype", "count", "op"), [("float64", 7, "sum"), ("float32", 12, "sum"),
                                                    ("float64", 3, "argmax"), ("int64", 4, "argmin")])
def test_many_column_reductions_fit_shared_memory(dtype: str, count: int, op: str) -> None:
    """A column kernel combines each reduction over its threads in static shared memory (ty x 33
    accumulators); the evaluator keeps it within a block's 48 KB (seven float64 sums at 32
    threads a column took 59 KB: ptxas refused the kernel, which then ran unfused)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.runtime.nvrtc import compile_cubin

    x = sl.asarray(np.ones((8192, 4096), dtype))
    (k,) = sl.explain(*[getattr(x * i, op)(0) for i in range(1, count + 1)], device="H200").kernels
    assert len(k.info.reductions) == count
    compile_cubin(k.source, k.name, "sm_90")


def test_arg_identity_is_read_as_the_first_position() -> None:
    """The accumulator starts at the max/min identity at position 2**31 - 1; an element equal to
    it never replaces it (each thread steps up its positions and keeps the first extreme), so a
    row of -inf (argmax) or +inf (argmin) keeps that position, which ``sl_arg_index`` reads as 0."""
    x = sl.asarray(np.zeros((256, 64), np.float16))
    (k,) = sl.explain(x.argmax(-1), x.argmin(-1), device="H200").kernels
    assert "sl_arg<float> acc" in k.source
    assert "sl_arg<float>{(-__int_as_float(0x7f800000)), 0x7fffffff}" in k.source  # argmax: -inf
    assert "sl_arg<float>{(__int_as_float(0x7f800000)), 0x7fffffff}" in k.source  # argmin: +inf
    body = k.source[k.source.index('extern "C"'):]
    assert body.count("sl_arg_index(acc") == 2 and ".i)" not in body


def test_arg_reductions_run_by_another_array_module_give_the_first_nan() -> None:
    """A column argmax/argmin runs through NumPy's function on the device array, which CuPy
    answers, and CuPy's position of a slice holding NaN need not be the first NaN's (it was not:
    fuzz seed 184 on the H200). Arrays whose argmax/argmin give the last NaN's position stand in
    for CuPy's here."""
    import types

    from stitchlab.runtime.interpreter import eval_node

    def last_nan(fn, a, axis=None, keepdims=False):
        out = fn(a, axis=axis, keepdims=keepdims)
        if a.dtype.kind == "f":
            nan = np.isnan(a)
            last = a.shape[axis] - 1 - np.argmax(np.flip(nan, axis), axis=axis, keepdims=keepdims)
            out = np.where(nan.any(axis=axis, keepdims=keepdims), last, out)
        return out

    class LastNan(np.ndarray):
        def __array_function__(self, func, types_, args, kwargs):
            plain = [a.view(np.ndarray) if isinstance(a, LastNan) else a for a in args]
            if func in (np.argmax, np.argmin):
                return last_nan(func, *plain, **kwargs)
            return func(*plain, **kwargs)

    xp = types.SimpleNamespace(**{k: getattr(np, k) for k in ("isnan", "argmax", "take_along_axis", "where")})
    rng = np.random.default_rng(4)
    x_np = rng.integers(-4, 4, (40, 7)).astype(np.float32)
    x_np[x_np < -2] = np.nan
    x = x_np.view(LastNan)
    for fn in ("argmax", "argmin"):
        want = getattr(np, fn)(x_np, axis=0, keepdims=True)
        assert not np.array_equal(getattr(np, fn)(x, axis=0, keepdims=True), want)  # the stand-in differs
        node = getattr(sl, fn)(sl.asarray(x_np), axis=0, keepdims=True)._node
        np.testing.assert_array_equal(np.asarray(eval_node(node, [x], xp)), want)
