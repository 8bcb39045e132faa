"""What the emitters and the latency evaluator promise for speed (measured on the H200, see
docs/compiler.md §3 and §7), checked on the generated source with the H200 preset: no GPU needed."""

from __future__ import annotations

import re

import numpy as np
import pytest
from floatbits import compile_or_fail, ptx_of

import stitchlab as sl
from stitchlab.codegen import schedules as sched_mod

from .workloads import WORKLOADS, make_args


def _kernel(name: str, rows: int = 8192, cols: int = 4096, dtype: str = "float32"):
    build, _, kinds = WORKLOADS[name]
    plan = sl.explain(*build(*make_args(kinds, rows, cols, dtype)))
    assert len(plan.kernels) == 1, plan.summary()
    return plan.kernels[0]


def _body(source: str) -> str:
    return source[source.index('extern "C"'):]


@pytest.mark.parametrize("name", ["softmax", "layernorm", "rmsnorm", "logsumexp", "add_layernorm"])
def test_row_kernels_of_4096_floats_use_16_byte_accesses(name: str) -> None:
    k = _kernel(name)
    assert k.schedule.family == "row_block" and k.schedule.cache == "registers" and k.schedule.vec == 4
    assert "sl_vec<float, 4>" in _body(k.source)


def test_evaluator_gives_4096_float_rows_8_vector_loads_per_thread_where_no_row_is_stored() -> None:
    # measured on the H200 (held): logsumexp 31.9 us with 128-thread blocks, 38.7 with 512
    assert _kernel("logsumexp").schedule.block == 128


def test_evaluator_gives_4096_float_rows_it_stores_2_vector_loads_per_thread() -> None:
    # measured on the H200 (held, cost.LOADS_IN_FLIGHT_STORED): softmax 63.5 us with 512-thread
    # blocks against 64.8 with 128, layernorm 64.6 against 66.3
    assert _kernel("softmax").schedule.block == 512
    assert _kernel("layernorm").schedule.block == 512


def test_evaluator_keeps_the_8_load_target_for_stored_rows_shorter_than_measured() -> None:
    # cost.STORED_ROWS_MIN: rows of 1024 floats keep a warp each (not measured with 2 loads)
    assert _kernel("softmax", rows=32768, cols=1024).schedule.family == "row_warp"
    # and rows of 2048 take 256 threads, two vectors of each input a thread (measured: layernorm
    # 16384 x 2048 65.1 us against 66.8 with 64 threads)
    assert _kernel("layernorm", rows=16384, cols=2048).schedule.block == 256
    # two inputs: not 512 threads, which would load one vector of each (as float16 rows of 4096
    # with 512 threads: 43.9 us against 33.8)
    assert _kernel("add_layernorm", rows=16384, cols=2048).schedule.block == 256


def test_evaluator_keeps_float16_rows_it_stores_at_4_vector_loads_per_thread() -> None:
    # float16 layernorm 4096 x 8192: 34.4 us with 256-thread blocks (4 vectors), 37.7 with 512
    x = sl.asarray(np.ones((4096, 8192), np.float16))
    y = (x - x.mean(-1, keepdims=True)) / sl.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert sl.explain(y).kernels[0].schedule.block == 256


@pytest.mark.parametrize("name", ["softmax", "layernorm", "logsumexp"])
def test_evaluator_counts_a_row_block_s_idle_threads_by_the_vectors_of_a_row(name: str) -> None:
    # 32 threads hold a row of 128 floats (16-byte vectors), so a block a row leaves most of a
    # block idle: a warp a row (measured on the H100, 262,144 rows: softmax 91.0 us against 164.1
    # with 128-thread blocks, layernorm 91.2 against 167.5, logsumexp 45.7 against 160.8)
    k = _kernel(name, rows=262144, cols=128)
    assert (k.schedule.family, k.schedule.vec) == ("row_warp", 4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("cols", "lanes", "vec"), [(32, 2, 8), (64, 4, 8), (96, 8, 8), (128, 8, 8), (192, 16, 8),
                                             (248, 16, 8), (256, 32, 8)])
def test_evaluator_gives_rows_shorter_than_32_vectors_a_group_of_lanes(dtype: str, cols: int, lanes: int, vec: int) -> None:
    # a row shorter than 32 vectors: a group of lanes holds it, two vectors a lane, several rows
    # a warp (on the H100, 262,144 rows: float16 rows of 64 softmax 24.6 us against 42.2 a warp
    # a row, one element a lane; rows of 128 47.1 against 50.9; rows of 192 logsumexp 39.0
    # against 46.4); rows of 256 fill the warp's lanes with vectors
    k = _kernel("softmax", rows=262144, cols=cols, dtype=dtype)
    assert (k.schedule.family, k.schedule.lanes, k.schedule.vec) == ("row_warp", lanes, vec)
    body = _body(k.source)
    assert ("sl_vec<" in body) == (vec > 1)
    # teams of the last warp past the last row shuffle with the others and store nothing
    assert ("if (live)" in body and "sl_warp_allreduce<" in body) == (lanes < 32)


@pytest.mark.parametrize(("dtype", "cols", "lanes", "stored"), [
    ("float16", 24, 1, 4), ("float16", 40, 2, 4), ("float16", 96, 4, 8), ("float16", 192, 8, 16), ("float32", 12, 1, 4),
    ("float32", 96, 8, 16), ("float16", 248, 16, 16), ("float16", 256, 32, 32),
])
def test_a_short_row_that_is_not_stored_takes_three_vectors_a_lane(dtype: str, cols: int, lanes: int, stored: int) -> None:
    # (only its reductions leave the kernel: fewer lanes, fewer shuffles; on the H100, 262,144
    # rows, against two vectors a lane: logsumexp float16 rows of 24 4.2 us against 5.6, rows
    # of 96 18.6 against 20.8; float32 rows of 96 33.6 against 34.0)
    k = _kernel("logsumexp", rows=262144, cols=cols, dtype=dtype)
    assert (k.schedule.family, k.schedule.lanes) == ("row_warp", lanes)
    x = sl.asarray(make_args("m", 262144, cols, dtype)[0])
    norm = sl.explain(sl.sqrt((x * x).sum(axis=-1))).kernels
    assert [(n.schedule.family, n.schedule.lanes) for n in norm] == [("row_warp", lanes)]
    # a row that is stored keeps two vectors a lane (one, rows of three vectors)
    assert _kernel("softmax", rows=262144, cols=cols, dtype=dtype).schedule.lanes == stored


@pytest.mark.parametrize(("dtype", "cols", "lanes", "layernorm"), [
    ("float16", 8, 1, 1), ("float16", 16, 2, 2), ("float16", 24, 4, 2), ("float16", 32, 2, 2), ("float16", 40, 4, 4),
    ("float32", 8, 2, 2), ("float32", 12, 4, 4), ("float32", 16, 2, 2), ("bfloat16", 24, 4, 2),
])
@pytest.mark.parametrize("name", ["softmax", "rmsnorm", "add_layernorm", "layernorm"])
def test_a_stored_row_of_two_or_three_vectors_takes_one_vector_a_lane(name: str, dtype: str, cols: int, lanes: int,
                                                                      layernorm: int) -> None:
    # (a warp's one load and one store then cover whole rows; with two vectors a lane each moves a
    # 16-byte piece of every row. H100, 262,144 rows: rmsnorm float16 rows of 24 6.1 us against
    # 8.9, float32 rows of 8 3.8 against 7.2. A float16 or bfloat16 layernorm, bound by its
    # instructions, keeps two vectors a lane for rows of three: one of four lanes would idle)
    k = _kernel(name, rows=262144, cols=cols, dtype=dtype)
    assert (k.schedule.family, k.schedule.lanes) == ("row_warp", layernorm if name == "layernorm" else lanes), k.schedule


@pytest.mark.parametrize(("dtype", "cols", "lanes"), [("float32", 96, 16), ("float16", 64, 4), ("float32", 7, 4)])
def test_a_short_row_takes_its_group_of_lanes_at_every_batch_size(dtype: str, cols: int, lanes: int) -> None:
    # (not a warp a row, one element a lane, at some batch sizes: that choice, turning on the
    # rows, compiled a kernel per band of batch sizes and was measured no faster)
    for rows in (1, 16, 64, 128, 1000, 262144):
        k = _kernel("softmax", rows=rows, cols=cols, dtype=dtype)
        assert (k.schedule.family, k.schedule.lanes) == ("row_warp", lanes), (rows, k.schedule)


def test_softmax_computes_exp_once_per_element_and_divides_once_per_row() -> None:
    body = _body(_kernel("softmax").source)
    assert body.count("exp(") == 1
    # the reciprocal of the row sum, once, before the last loop; no division per element
    assert body.count("(float)1 / acc") == 1 and not re.search(r"[\]\w] / acc\d+\)", body)


def test_layernorm_loads_weight_and_bias_as_vectors() -> None:
    body = _body(_kernel("layernorm").source)
    assert body.count("sl_load_vec<float, 4>") == 2


@pytest.mark.parametrize("dtype, st, vec", [("float32", "float", 4), ("float16", "sl_half", 8)])
def test_row_reductions_without_full_outputs_load_their_rows_with_the_streaming_hint(dtype: str, st: str, vec: int) -> None:
    # measured on the H200 (compiler.md §4), the suite's calls A/B in one device call:
    # cross-entropy float32 33.1 -> 31.7 us, float16 21.3 -> 20.2; logsumexp 1 % faster. Kernels
    # that store full-size rows were 2-7 % slower with it, with or without hints on their stores
    x = sl.asarray(np.ones((8192, 4096), dtype))
    t = sl.asarray(np.arange(8192, dtype=np.int32))
    lse = sl.log(sl.sum(sl.exp(x - x.max(-1, keepdims=True)), -1, keepdims=True))
    for out in (lse, lse - _one_hot_sum(sl, x, t)):
        (k,) = sl.explain(out).kernels
        body = _body(k.source)
        assert body.count(f"ld_in0 = sl_load_stream<{st}, {vec}>(in0 + ") == 1
        assert "reinterpret_cast<const sl_vec" not in body
        compile_or_fail(k.source, k.name)
    for name in ("softmax", "layernorm", "rmsnorm", "groupnorm"):
        body = _body(_kernel(name, dtype=dtype).source)
        assert "sl_load_stream" not in body and f"reinterpret_cast<const sl_vec<{st}, {vec}>*>(in" in body, name


def test_the_streaming_hint_switches_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sched_mod.OPTIONS, "cache_hints", False)
    body = _body(_kernel("logsumexp").source)
    assert "sl_load_stream" not in body and "reinterpret_cast<const sl_vec<float, 4>*>(in0 + " in body


def test_odd_rows_and_byte_types_stay_scalar() -> None:
    assert _kernel("softmax", 300, 1003).schedule.vec == 1
    x = sl.asarray(np.ones((300, 4096), dtype=np.int8))
    k = sl.explain((x - x.max(axis=1, keepdims=True)).astype(np.int8)).kernels[0]
    assert k.schedule.vec == 1


@pytest.mark.parametrize("dtype, vec", [("float16", 8), ("float32", 4)])
def test_groupnorm_rows_strided_over_memory_are_cached_and_read_as_vectors(dtype: str, vec: int) -> None:
    # each (batch, group) row is 256 runs of 128 channels, 4096 apart: runs of whole vectors.
    # Measured (float16): 63.5 us cached with vectors, 68.6 scalar, 118 streamed over 128 threads
    k = _kernel("groupnorm", dtype=dtype)
    assert (k.schedule.family, k.schedule.block, k.schedule.cache, k.schedule.vec) == ("row_block", 1024, "registers", vec)
    st = "sl_half" if dtype == "float16" else "float"
    body = _body(k.source)
    assert body.count(f"reinterpret_cast<const sl_vec<{st}, {vec}>*>(in0 + ") == 1
    assert body.count(f"reinterpret_cast<sl_vec<{st}, {vec}>*>(out0 + ") == 1


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_rows_of_one_block_per_sm_prefetch_the_next_waves_row_after_their_first_reduction(dtype: str) -> None:
    # GroupNorm's 1024-thread blocks hold their row in all the registers: one block per SM, so
    # its loads, reductions and stores run in turn. Measured (float16): 45.5 us with the row of
    # the block that replaces it (132 rows ahead: one per SM) prefetched into L2, 51.3 without
    from stitchlab.plan.device import PRESETS

    k = _kernel("groupnorm", dtype=dtype)
    assert k.schedule.prefetch == PRESETS["H200"].sms == 132
    body = _body(k.source)
    first_reduction = body.index("sl_block_allreduce")
    assert body.index("const int rp = r + 132;") > first_reduction
    assert "if (rp < R)" in body and body.count("sl_prefetch_l2(in0 + ") == 1
    # several blocks per SM overlap each other's phases: no prefetch
    soft = _kernel("softmax", dtype=dtype)
    assert soft.schedule.prefetch == 0 and "sl_prefetch_l2" not in _body(soft.source)


@pytest.mark.parametrize("name, dtype, vec", [("groupnorm", "float16", 8), ("groupnorm", "float32", 4),
                                             ("bias_gelu", "float16", 8), ("bias_gelu", "float32", 4)])
def test_buffers_broadcast_along_leading_axes_are_read_as_one_vector_per_chunk(name: str, dtype: str, vec: int) -> None:
    # GroupNorm's weight and bias at (x % 4096) of the (B, HW, G, C/G) domain, a bias of a
    # pointwise kernel: a vector per chunk instead of a scalar load per element (with its own
    # alignment check: these pointers are not in the kernel's ``aligned``)
    k = _kernel(name, dtype=dtype)
    body = _body(k.source)
    st = "sl_half" if dtype == "float16" else "float"
    loads = re.findall(rf"sl_load_vec<{st}, {vec}>\((in\d) \+ \(\w+\) % \(int\)4096, \(\(\(unsigned long long\)\1 &", body)
    assert sorted(loads) == (["in1", "in2"] if name == "groupnorm" else ["in1"]), body
    assert not re.search(r"in[12]\[", body.split("} else {")[0]), "a scalar read of the broadcast buffer in the vector path"


def test_strided_rows_whose_innermost_axis_is_kept_or_odd_stay_scalar() -> None:
    x = sl.asarray(np.ones((64, 256, 8, 102), dtype=np.float32))
    ks = sl.explain(x - x.mean(axis=(1, 3), keepdims=True)).kernels  # runs of 102: not whole vectors
    assert all(k.schedule.vec == 1 for k in ks)
    y = sl.asarray(np.ones((64, 256, 8, 128), dtype=np.float32))
    ks = sl.explain(y - y.mean(axis=(1, 2), keepdims=True)).kernels  # innermost axis kept
    assert all(k.schedule.vec == 1 for k in ks)


def test_nan_propagating_max_and_min_are_selects_not_branches() -> None:
    # a row's max reduction compiled to a branch per element (softmax, logsumexp, cross-entropy)
    from stitchlab.codegen.preamble import PREAMBLE

    for fn in ("sl_maximum", "sl_minimum"):
        start = PREAMBLE.index(f"T {fn}(")
        body = PREAMBLE[start:PREAMBLE.index("\n", start)]
        # one select: 2 compares and a select per element (three selects compiled to 3 and 1)
        assert body.count("return") == 1 and body.count("?") == 1 and "if" not in body, body


def test_emitter_switches_change_the_source() -> None:
    k = _kernel("softmax")
    with sched_mod.switches(reciprocal=False):
        plain = sched_mod.emit(k.info, k.schedule)
    assert plain.source != k.source
    assert "(float)1 / acc" not in plain.source and re.search(r"\] / acc\d+\)", _body(plain.source))


def test_column_passes_alternate_direction() -> None:
    k = _kernel("column_norm")
    body = _body(k.source)
    assert k.schedule.family == "column"
    assert re.search(r"c = K - 1 [+-]", body) and "c = cc;" in body


def test_pointwise_grid_covers_the_domain() -> None:
    k = _kernel("bias_gelu")
    assert k.launch.grid[0] * k.schedule.block * k.schedule.vec >= 8192 * 4096


def test_constant_divisors_become_multiplies() -> None:
    x = sl.asarray(np.ones((64, 64), dtype=np.float32))
    body = _body(sl.explain(x / 3.0).kernels[0].source)
    assert " / " not in body and "0.3333333" in body


def test_empty_reductions_plan() -> None:
    x = sl.asarray(np.ones((0, 9), dtype=np.int32))
    plan = sl.explain((x * x).sum(), x.sum(axis=1))
    assert all(k.error is None for k in plan.kernels)


@pytest.mark.parametrize("shape", [(32, 0, 256), (0, 8192), (2, 0, 4096)])
def test_long_rows_of_an_empty_result_plan(shape) -> None:
    """No rows, each long (the reduced axes are not empty): the row-split schedule does not
    apply (its cost divided by zero blocks; found by tests/fuzzgraphs.py --compile-only, seed
    503434)."""
    x = sl.asarray(np.ones(shape, dtype=np.float32))
    axes = tuple(a for a, d in enumerate(shape) if d != 0)
    plan = sl.explain(x.min(axis=axes, keepdims=True), x.sum(axis=axes), device="H200")
    assert all(k.error is None for k in plan.kernels)


def _passes(body: str) -> int:
    """Loops over the reduced elements in a column or streamed row kernel (element by element,
    or in 16-byte chunks ``t``; a column kernel of several kept indices a thread has two loops a
    pass, for aligned pointers or not: the first counts; rows walked by blocks turn every pass
    after the first round, ``t`` counting down)."""
    return len(re.findall(r"for \(int (cc|c) = (threadIdx\.y|lane)|for \(int t = 0; \(lane \+ t|for \(int t = \d+; t >= 0; --t\)"
                          r"|if \(valid && aligned\) \{\n\s*for \(int c0 =", body))


def _three_passes(k, monkeypatch) -> str:
    monkeypatch.setitem(sched_mod.OPTIONS, "one_pass_variance", False)
    return _body(sched_mod.emit(k.info, k.schedule).source)


def _standardize_rows(dtype: str):
    """Rows of 300,000 elements (1.2 MB in float32): too long to stay on chip, streamed; enough
    of them to fill the GPU (fewer rows split each row's statistics over blocks instead)."""
    x = sl.asarray(np.zeros((300, 300_000), dtype))
    plan = sl.explain((x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True))
    return plan.kernels[0]


@pytest.mark.parametrize(("name", "family", "dtype"), [
    ("column_norm", "column", "float32"), ("column_norm", "column", "float16"),
    ("long rows", "row_block", "float32"), ("long rows", "row_block", "float16"),
])
def test_variance_shares_the_mean_pass(name: str, family: str, dtype: str, monkeypatch) -> None:
    """colnorm's variance and that of rows streamed from memory keep Welford's running sums in the
    mean's pass: two passes over the input instead of three, and the evaluator counts two."""
    k = _kernel(name, dtype=dtype) if name in WORKLOADS else _standardize_rows(dtype)
    assert k.schedule.family == family and k.schedule.cache == "none"
    assert len(k.info.one_pass_variances()) == 1
    body = _body(k.source)
    assert _passes(body) == (2 if any(lvl == "full" for _, lvl in k.info.outputs) else 1)
    assert "sl_rcp_ge1(wn" in body
    three = _three_passes(k, monkeypatch)
    assert _passes(three) == _passes(body) + 1 and "wn" not in three


@pytest.mark.parametrize(("dtype", "unroll"), [("float32", 8), ("float16", 8), ("float64", 4)])
def test_streamed_rows_unroll_eight_deep(dtype: str, unroll: int) -> None:
    """A row too long to stay on chip, of a length no 16-byte vector divides, streams element by
    element with 8 iterations' loads in flight (4 for float64, whose streamed kernels spill at
    8): measured on the H200, softmax 128 x 65536 float32 39.4 us against 50.3 at 4."""
    x = sl.asarray(np.zeros((128, 65537), dtype))
    e = sl.exp(x - x.max(axis=1, keepdims=True))
    (k,) = sl.explain(e / e.sum(axis=1, keepdims=True)).kernels
    assert k.schedule.family == "row_block" and k.schedule.cache == "none" and k.schedule.vec == 1
    pragmas = [line.strip() for line in _body(k.source).splitlines() if "#pragma" in line]
    assert pragmas == [f"#pragma unroll {unroll}"] * 3, pragmas  # max, sum and store passes


@pytest.mark.parametrize(("dtype", "vec"), [("float32", 4), ("float16", 8)])
def test_streamed_rows_load_16_byte_chunks(dtype: str, vec: int) -> None:
    """Where the vector width divides the row, a streamed row loop steps over 16-byte chunks
    (``STREAM_VEC_UNROLL`` in flight), each loaded as one vector where the pointer is aligned,
    and its full output is stored as vectors. (float64 rows stream element by element: slower
    in chunks on the H200, ``cost._row``.)"""
    from stitchlab.plan.cost import STREAM_VEC_UNROLL

    x = sl.asarray(np.zeros((128, 65536), dtype))
    e = sl.exp(x - x.max(axis=1, keepdims=True))
    (k,) = sl.explain(e / e.sum(axis=1, keepdims=True)).kernels
    assert k.schedule.family == "row_block" and k.schedule.cache == "none" and k.schedule.vec == vec
    body = _body(k.source)
    pragmas = [line.strip() for line in body.splitlines() if "#pragma unroll " in line]
    assert pragmas == [f"#pragma unroll {STREAM_VEC_UNROLL}"] * 3, pragmas  # max, sum and store passes
    assert _passes(body) == 3
    assert body.count(f"sl_load_vec<{'sl_half' if dtype == 'float16' else 'float'}, {vec}>(in0") == 3
    assert "*reinterpret_cast<sl_vec<" in body and "out0 + " in body
    x64 = sl.asarray(np.zeros((128, 65536), np.float64))
    (k64,) = sl.explain(sl.exp(x64 - x64.max(axis=1, keepdims=True))).kernels
    assert k64.schedule.cache == "none" and k64.schedule.vec == 1


def test_float64_variance_keeps_its_pass() -> None:
    k = _kernel("column_norm", rows=2048, dtype="float64")
    assert not k.info.one_pass_variances() and _passes(_body(k.source)) == 3


@pytest.mark.parametrize("expr", [
    lambda x: ((x - x.mean(0)) ** 3).sum(0),  # not squared deviations
    lambda x: ((x - x.max(0)) ** 2).sum(0),  # deviations from something other than a mean
    lambda x: (x * x).sum(0) - x.sum(0),  # one phase
])
def test_reductions_that_are_not_a_variance_keep_their_passes(expr) -> None:
    x = sl.asarray(np.ones((8192, 4096), np.float32))
    for k in sl.explain(expr(x)).kernels:
        assert not (k.info is not None and k.info.one_pass_variances())


def test_any_constant_divisor_is_a_mean() -> None:
    # sum((x - s / c)**2) = q + n (m - s / c)**2 per thread for any row value: ddof and sums
    # over a constant work the same way
    x = sl.asarray(np.ones((8192, 4096), np.float32))
    (k,) = sl.explain(((x - x.sum(0) / 7.0) ** 2).sum(0)).kernels
    assert k.info.one_pass_variances() and _passes(_body(k.source)) == 1


def test_rows_held_on_chip_keep_their_phases() -> None:
    # a cached row costs nothing to read again: the extra arithmetic would be pure cost
    k = _kernel("layernorm")
    assert k.schedule.cache == "registers" and k.info.one_pass_variances()
    assert "wn" not in _body(k.source)


def _one_hot_sum(xp, x, t, zero=0.0, start=0):
    """Cross-entropy's pick of the target logit with a one-hot mask (no fancy indexing)."""
    onehot = xp.reshape(t, (-1, 1)) == xp.arange(start, start + x.shape[1], dtype=t.dtype)
    return xp.sum(xp.where(onehot, x, zero), -1, keepdims=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_rows_one_hot_sum_reads_the_one_element_it_picks(dtype: str) -> None:
    # cross-entropy float16 1296 -> 1016 SASS instructions, float32 752 -> 592 (logsumexp's 584)
    x = sl.asarray(np.ones((256, 4096), dtype))
    t = sl.asarray(np.arange(256, dtype=np.int32))
    lse = sl.log(sl.sum(sl.exp(x - x.max(-1, keepdims=True)), -1, keepdims=True))
    (k,) = sl.explain(lse - _one_hot_sum(sl, x, t)).kernels
    body = _body(k.source)
    assert not re.search(r"\(v\d+ == v\d+\)", body), body  # no per-element compare
    assert re.search(r"if \((v\d+) >= 0 && \1 < 4096\) \{", body), body
    assert re.search(r"in0\[\(r \* \(int\)4096 \+ \(int\)\(v\d+\)\)\]", body) or "sl_load(in0 + (r * (int)4096 + (int)(v" in body, body
    compile_or_fail(k.source, k.name)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_the_cost_model_does_not_count_the_work_a_pick_removes(dtype: str) -> None:
    # cross-entropy plans as logsumexp does: 128-thread blocks (float16 with 64, 79 registers
    # a thread: 27.6 us on the H200; with 128, 47 registers: 25.9)
    x = sl.asarray(np.ones((8192, 4096), dtype))
    t = sl.asarray(np.arange(8192, dtype=np.int32))
    lse = sl.log(sl.sum(sl.exp(x - x.max(-1, keepdims=True)), -1, keepdims=True))
    (ce,) = sl.explain(lse - _one_hot_sum(sl, x, t)).kernels
    (alone,) = sl.explain(lse).kernels
    assert len(ce.info.one_hot_picks()) == 1
    assert ce.schedule == alone.schedule and ce.schedule.block == 128


@pytest.mark.parametrize("variant", ["negative zero", "arange from 1", "index varies along the row", "float index"])
def test_sums_that_are_not_a_single_pick_stay_per_element(variant: str) -> None:
    x = sl.asarray(np.ones((256, 1024), np.float32))
    t = sl.asarray(np.arange(256, dtype=np.int32))
    if variant == "negative zero":  # -0.0 + -0.0 is -0.0: the empty sum is not NumPy's +0
        y = _one_hot_sum(sl, x, t, zero=-0.0)
    elif variant == "arange from 1":
        y = _one_hot_sum(sl, x, t, start=1)
    elif variant == "index varies along the row":
        y = sl.sum(sl.where(sl.asarray(np.ones((256, 1024), np.int32)) == sl.arange(1024, dtype=np.int32), x, 0.0), -1)
    else:
        y = _one_hot_sum(sl, x, sl.asarray(np.arange(256, dtype=np.float32)))
    (k,) = sl.explain(y).kernels
    assert re.search(r"\(v\d+ == v\d+\)", _body(k.source))


@pytest.mark.parametrize("dtype, tdtype, shape", [("float32", np.int64, (300, 40)), ("float64", np.int32, (64, 4096)),
                                                  ("float16", np.int32, (200, 70_000))])
def test_picks_of_computed_indices_and_values_compile(dtype: str, tdtype: type, shape: tuple[int, int]) -> None:
    """The index a row value the kernel computes (t + 1), the value a full value of the group
    (x * 2 - max): read at (row, index) outside every loop, in rows held by a warp, by a block, and
    streamed from memory."""
    x = sl.asarray(np.ones(shape, dtype))
    t = sl.asarray(np.arange(shape[0], dtype=tdtype))
    m = x.max(-1, keepdims=True)
    y = _one_hot_sum(sl, x * 2 - m, t + 1) + m
    (k,) = sl.explain(y).kernels
    assert k.schedule.family in ("row_warp", "row_block") and len(k.info.one_hot_picks()) == 1
    assert not re.search(r"\(v\d+ == v\d+\)", _body(k.source))
    compile_or_fail(k.source, k.name)


@pytest.mark.parametrize("name, block", [("logsumexp", 128), ("groupnorm", 1024)])
def test_block_reductions_combine_the_warps_in_log2_warps_steps(name: str, block: int) -> None:
    # the second stage of a block reduction: 2 shuffle steps for 4 warps instead of 5 (logsumexp
    # float16 24.6 -> 23.8 us on the H200); each group of W lanes reads every warp's result, so
    # every thread of the block gets it
    k = _kernel(name)
    assert k.schedule.family == "row_block" and k.schedule.block == block
    calls = re.findall(r"sl_block_allreduce_once<(\d+)>\(", _body(k.source))
    assert calls and set(calls) == {str(block // 32)}
    compile_or_fail(k.source, k.name)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_max_and_min_reductions_over_floats_are_one_nan_propagating_instruction(dtype: str) -> None:
    # max.NaN / min.NaN (one FMNMX.NAN) instead of two compares and a select per element:
    # logsumexp float16 24.0 -> 20.2 us on the H200; float64 keeps the selects (no max.NaN.f64)
    x = sl.asarray(np.ones((256, 4096), dtype))
    (k,) = sl.explain(x.max(-1), x.min(-1)).kernels
    ptx = ptx_of(k.source)
    fast = dtype != "float64"
    assert ("max.NaN.f32" in ptx, "min.NaN.f32" in ptx) == (fast, fast)
    (e,) = sl.explain(sl.maximum(x, x * 2)).kernels  # the elementwise op keeps NumPy's operands
    assert "max.NaN" not in ptx_of(e.source)


def test_split_variances_ignore_the_one_pass_switch(monkeypatch) -> None:
    """A split schedule has no second pass: with ``OPTIONS["one_pass_variance"]`` off (the sweep's
    switch) its variance is still taken in the mean's pass, the same kernel (it was a
    CodegenError)."""
    x = sl.asarray(np.zeros(1 << 22, np.float32))
    tall = sl.asarray(np.zeros((1 << 20, 64), np.float32))
    for expr in (x.var(), tall.std(0)):
        (k,) = sl.explain(expr).kernels
        assert k.schedule.family in ("row_split", "column_split") and k.info.one_pass_variances()
        on = sched_mod.emit(k.info, k.schedule).source
        monkeypatch.setitem(sched_mod.OPTIONS, "one_pass_variance", False)
        assert sched_mod.emit(k.info, k.schedule).source == on
        monkeypatch.setitem(sched_mod.OPTIONS, "one_pass_variance", True)


def _shifted(x, m=None, extra=None):
    import stitchlab as sl_

    m = x.max(-1, keepdims=True) if m is None else m
    e = sl_.exp(x - m)
    s = e.sum(-1, keepdims=True)
    return [sl_.log(s) + m] if extra is None else [sl_.log(s) + m, extra(e)]


@pytest.mark.parametrize("variant, flushed", [
    ("logsumexp", True), ("sl.logsumexp", True), ("cross-entropy", True), ("softmax", False), ("exp also stored", False),
    ("max of another array", False), ("mean, not max", False), ("float16", False), ("float32", False),
])
def test_only_bfloat16_sums_of_max_shifted_exps_flush_subnormal_exps(variant: str, flushed: bool) -> None:
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    dtype = {"float16": np.float16, "float32": np.float32}.get(variant, bf16)
    x = sl.asarray(np.ones((256, 1024), dtype))
    if variant == "sl.logsumexp":
        ys = [sl.logsumexp(x, axis=-1)]
    elif variant == "cross-entropy":
        ys = [_shifted(x)[0] - _one_hot_sum(sl, x, sl.asarray(np.arange(256, dtype=np.int32)))]
    elif variant == "softmax":
        e = sl.exp(x - x.max(-1, keepdims=True))
        ys = [e / e.sum(-1, keepdims=True)]
    elif variant == "exp also stored":
        ys = _shifted(x, extra=lambda e: e * 2)
    elif variant == "max of another array":
        ys = _shifted(x, m=(x * 2).max(-1, keepdims=True))
    elif variant == "mean, not max":
        ys = _shifted(x, m=x.mean(-1, keepdims=True))
    else:
        ys = _shifted(x)
    ks = sl.explain(*ys).kernels
    exps = [k for k in ks if any(n.op == "exp" for n in k.info.members)]
    assert len(exps) == 1
    (k,) = exps
    assert ("sl_exp_f16(" in _body(k.source)) == (flushed or dtype == np.float16)
    assert len(k.info.shifted_exps()) == flushed
    with sched_mod.switches(shifted_exp_ftz=False):
        off = sched_mod.emit(k.info, k.schedule)
    assert ("sl_exp_f16(" in _body(off.source)) == (dtype == np.float16)
    compile_or_fail(k.source, k.name)


def test_a_division_by_a_row_value_read_through_a_view_takes_the_same_reciprocal() -> None:
    """``y = x / d`` (``d`` one value per row) is ``x * (1 / d)`` with the reciprocal hoisted; an
    output that reads ``y`` through a view (``y[:, ::-1]``) in the same kernel takes the same
    reciprocal, not an IEEE division: NumPy's flip of the stored ``y`` is then the flipped output,
    bit for bit (wide fuzz family, seed 600989, on the H200: 112,512 of 525,312 values 1 ulp off)."""
    x = sl.asarray(np.random.default_rng(0).random((64, 1024)).astype(np.float32))
    y = x / sl.sqrt(sl.mean(x * x, axis=-1, keepdims=True) + 1e-6)
    plan = sl.explain(y, y.max(axis=1), y[:, ::-1], device="H200")
    (k,) = [k for k in plan.kernels if "slice" in [n.op for n in k.nodes]]
    body = k.source[k.source.index('extern "C"'):]
    assert re.findall(r"\* h\d+\)", body) and re.findall(r"\* \(\(float\)1 / v\d+\)\)", body), body
    assert not re.findall(r"\(v\d+ / v\d+\)", body), body


def test_a_row_value_divided_by_a_row_value_is_numpys_division_once_per_row() -> None:
    """``x.sum(1) / x.max(1)`` stored as a row value and broadcast into ``x * r``: one IEEE
    division per row wherever it is read, no reciprocal (it would save nothing)."""
    x = sl.asarray(np.random.default_rng(0).random((64, 1024)).astype(np.float32))
    r = x.sum(1, keepdims=True) / x.max(1, keepdims=True)
    (k,) = sl.explain(r, x * r, device="H200").kernels
    body = k.source[k.source.index('extern "C"'):]
    assert len(re.findall(r"\(acc\d+ / acc\d+\)", body)) == 1 and "(float)1 /" not in body, body
