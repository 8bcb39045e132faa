"""Every schedule family x dtype emits CUDA C that NVRTC compiles for sm_90 (no GPU needed)."""

from __future__ import annotations

import re
from collections.abc import Callable

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import emit
from stitchlab.plan.cost import Schedule
from stitchlab.runtime.nvrtc import CompileError, compile_cubin

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64", "bfloat16"]


def _arrays(dtype: str, rows: int = 6, cols: int = 37) -> tuple[sl.LazyArray, sl.LazyArray, sl.LazyArray]:
    rng = np.random.default_rng(1)
    x = sl.asarray((rng.random((rows, cols)) * 10).astype(dtype))
    y = sl.asarray((rng.random((rows, cols)) * 10 + 1).astype(dtype))
    v = sl.asarray((rng.random(cols) * 10).astype(dtype))
    return x, y, v


def _elementwise(dtype: str) -> list[sl.LazyArray]:
    x, y, v = _arrays(dtype)
    kind = np.dtype(dtype).kind
    xt = x[:, ::2].T  # index maps: slice with a step, transpose
    if kind == "b":
        outs = [sl.logical_xor(x, y) | (x & v), sl.where(x, y, v), ~x, x.astype(np.float16), sl.bitwise_count(x)]
    elif kind in "iu":
        outs = [x // y + x % y - sl.maximum(x, v), sl.abs(x) * 3 - sl.minimum(y, 2), x ** y,
                ~x ^ y, sl.sign(x), (x > y).astype(np.int8), xt * 2, sl.reciprocal(y), x.astype(np.float32),
                sl.fmod(x, y), sl.left_shift(x, y), sl.right_shift(x, v), sl.gcd(x, y) + sl.lcm(x, v),
                sl.bitwise_count(x) + sl.bitwise_count(~y)]
    else:
        outs = [sl.exp(x) / sl.sqrt(y) + sl.tanh(v), x // y + x % y, x ** y, sl.maximum(x, y) - sl.fmin(x, v),
                sl.sigmoid(x) * sl.erf(y), sl.isnan(x) | sl.isinf(y), xt + 1, sl.sign(x),
                x.astype(np.int32), x.astype(np.uint8), x.astype(bool), sl.floor(x) + sl.log1p(y),
                sl.fmod(x, y), sl.heaviside(x, v), sl.ldexp(x, (y * 3).astype(np.int32)), sl.ldexp(v, -7),
                sl.nextafter(x, y) + sl.spacing(v),
                x * (sl.random.default_rng(0).random(x.shape, x.dtype) >= 0.5),
                sl.random.default_rng(1).standard_normal(x.shape, x.dtype),
                sl.random.default_rng(2).beta(0.5, v.astype(np.float64) + 1, x.shape, x.dtype)]
    return outs


def _stitched_rows(dtype: str) -> list[sl.LazyArray]:
    x, y, v = _arrays(dtype)
    if dtype == "bool":
        a = x.any(axis=1, keepdims=True)
        return [sl.logical_and(x, a) | y.all(axis=1, keepdims=True), a]
    m = x.max(axis=1, keepdims=True)
    s = (x * v).sum(axis=1, keepdims=True)
    return [(x - m) * s + y, (s + m).reshape(-1)]


def _compile(source: str, name: str) -> None:
    try:
        compile_cubin(source, name, "sm_90")
    except CompileError as exc:  # show the kernel with the log
        pytest.fail(f"{exc}\n--- source ---\n{source[source.index('extern'):]}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_pointwise_compiles(dtype: str) -> None:
    plan = sl.explain(*_elementwise(dtype))
    assert len(plan.kernels) >= 1
    for k in plan.kernels:
        assert k.error is None, k.error
        _compile(k.source, k.name)


ROW_SCHEDULES = [
    Schedule("row_warp", block=128, cache="registers"),
    Schedule("row_block", block=256, cache="shared"),
    Schedule("row_block", block=128, cache="none", index="long long"),
    Schedule("column", block=32, ty=8),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_stitched_row_reductions_compile_under_every_schedule(dtype: str) -> None:
    plan = sl.explain(*_stitched_rows(dtype))
    (k,) = plan.kernels
    assert k.info is not None and k.info.phases >= 1
    for sched in ROW_SCHEDULES:
        ks = emit(k.info, sched)
        _compile(ks.source, ks.name)


SPLIT_SCHEDULES = {
    1: [Schedule("row_split", block=256, index=i) for i in ("int", "long long")],
    0: [Schedule("column_split", block=32, ty=ty, index=i) for i in ("int", "long long") for ty in (8, 32)],
}


@pytest.mark.parametrize("axis", [1, 0], ids=["rows", "columns"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float16", "float32", "float64", "bfloat16"])
def test_split_reduction_compiles(dtype: str, axis: int) -> None:
    x, _, _ = _arrays(dtype)
    outs = [x.any(axis=axis)] if dtype == "bool" else [x.sum(axis=axis), x.min(axis=axis) * 2, x.max(axis=axis)]
    plan = sl.explain(*outs)
    (k,) = plan.kernels
    for sched in SPLIT_SCHEDULES[axis]:
        ks = emit(k.info, sched)
        _compile(ks.source, ks.name)


@pytest.mark.parametrize("axis", [1, 0], ids=["rows", "columns"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
def test_split_variance_in_the_means_pass_compiles(dtype: str, axis: int) -> None:
    """mean, var and std of a split group: the variance shares the mean's pass (each block's
    squared deviations about its own mean, combined exactly by the last block)."""
    x, _, _ = _arrays(dtype)
    plan = sl.explain(x.mean(axis=axis), x.var(axis=axis, ddof=1), x.std(axis=axis))
    (k,) = plan.kernels
    assert k.info is not None and k.info.one_pass_variances()
    for sched in SPLIT_SCHEDULES[axis]:
        ks = emit(k.info, sched)
        assert ks.source.count("atomicAdd") == 1 and "nj * dj" in ks.source  # one handshake, Chan's merge
        _compile(ks.source, ks.name)


@pytest.mark.parametrize("dtype", ["int32", "float16", "float32", "float64", "bfloat16"])
def test_column_stitched_normalization_compiles(dtype: str) -> None:
    x, _, _ = _arrays(dtype, rows=50, cols=9)
    xf = x.astype(np.float32) if dtype not in ("float64", "bfloat16") else x
    plan = sl.explain((xf - xf.mean(0)) / (xf.std(0) + 1))
    (k,) = plan.kernels
    assert k.schedule.family == "column"
    _compile(k.source, k.name)


def test_long_long_indexing_for_more_than_2_31_elements() -> None:
    x = sl.asarray(np.empty(0, np.float32))
    # planning only needs shapes: a lazy broadcast of a scalar to 2**31 + 5 elements
    big = sl.broadcast_to(sl.asarray(np.float32(1.5)), (2**31 + 5,))
    plan = sl.explain(sl.exp(big) + 1)
    (k,) = plan.kernels
    assert k.schedule.index == "long long"
    assert "const long long n" in k.source
    _compile(k.source, k.name)
    del x


def test_int_indices_stop_short_of_the_int32_limit() -> None:
    # 2**31 - 4096 elements: within a block's span of the limit, so long long indices
    near = sl.broadcast_to(sl.asarray(np.float32(1.5)), (2**31 - 4096,))
    (k,) = sl.explain(sl.exp(near) + 1).kernels
    assert k.schedule.index == "long long"
    # past 2**30 elements int indices remain, and the grid-stride loop counts vector chunks and
    # never steps past the last one (e * vec < n with e += stride wrapped around there)
    past = sl.broadcast_to(sl.asarray(np.float32(1.5)), (2**30 + 2**29,))
    (k,) = sl.explain(sl.exp(past) + 1).kernels
    assert k.schedule.index == "int"
    assert re.search(r"for \(int e = [^;]*; e < (\w+); e = e < \1 - stride \? e \+ stride : \1\)", k.source), k.source
    assert not re.search(r"e \* \d+ < n", k.source)
    _compile(k.source, k.name)


def test_split_rows_end_inside_the_index_range() -> None:
    # the last block of a row split over G blocks ends at G * chunk, past the row by up to
    # G * block elements: with int indices that end must not wrap (it would skip the block's share)
    for n in (2**30 + 12345, 2**31 - 2**25, 2**31 - 2**17):
        big = sl.broadcast_to(sl.asarray(np.float32(1.5)), (n,))
        (k,) = sl.explain(sl.exp(big).sum()).kernels
        assert k.schedule.family == "row_split"
        G, unit = k.launch.split, k.schedule.block
        chunk = ((n + G - 1) // G + unit - 1) // unit * unit  # as the kernel computes it
        if k.schedule.index == "int":
            assert G * chunk <= 2**31 - 1 and n + G - 1 <= 2**31 - 1, (n, G, chunk)
        else:
            assert n > 2**31 - 2**25, n  # long long only near the limit
        if n == 2**31 - 2**17:
            assert k.schedule.index == "long long"  # int would wrap there


def test_packed_kernel_compiles() -> None:
    a = sl.asarray(np.random.rand(7, 33).astype(np.float16))
    b = sl.asarray(np.random.rand(100).astype(np.float64))
    c = sl.asarray(np.arange(10, dtype=np.uint8))
    plan = sl.explain(sl.exp(a) * 2, sl.sin(b) + 1, (c * 3).T, sl.asarray(np.ones(5, bool)) | True)
    (k,) = plan.kernels
    assert k.schedule.family == "packed"
    _compile(k.source, k.name)


def test_compiling_leaves_python_bytes_objects_intact() -> None:
    """NVRTC writes its log and cubin into buffers we pass: they must be fresh bytearrays. A one-byte
    ``b" " * 1`` is CPython's shared object, and NVRTC's terminating zero turned every ``b" "`` of
    the process into ``b"\\x00"`` (f-strings then lost their spaces)."""
    cubin, log = compile_cubin('extern "C" __global__ void k(float* x) { x[0] = 1.0f; }', "k", "sm_90")
    assert cubin[:4] == b"\x7fELF" and log == ""
    # (compare byte values: every one-byte bytes object is the same shared object)
    assert bytes([32])[0] == 32 and b" "[0] == 32 and chr(32).encode()[0] == 32


def test_a_groupnorm_with_its_affine_compiles_as_one_kernel() -> None:
    """GroupNorm over channels-last (B, HW, C) reduced over (HW, C/G) of (B, HW, G, C/G), stored
    as (B, HW, C) with a per-channel affine: one row kernel (the output is a reshape of its domain)."""
    rng = np.random.default_rng(2)
    x = sl.asarray(rng.standard_normal((2, 12, 16)).astype(np.float32))
    g = sl.asarray(rng.standard_normal(16).astype(np.float32))
    b = sl.asarray(rng.standard_normal(16).astype(np.float32))
    x4 = x.reshape(2, 12, 4, 4)
    d = x4 - x4.mean(axis=(1, 3), keepdims=True)
    y = d * sl.rsqrt((d * d).mean(axis=(1, 3), keepdims=True) + 1e-5)
    out = y.reshape(2, 12, 16) * g + b
    plan = sl.explain(out)
    assert len(plan.kernels) == 1 and plan.kernels[0].schedule.family.startswith("row"), plan.summary()
    _compile(plan.kernels[0].source, plan.kernels[0].name)
    a = x.get().reshape(2, 12, 4, 4).astype(np.float64)
    dd = a - a.mean(axis=(1, 3), keepdims=True)
    ref = (dd / np.sqrt((dd * dd).mean(axis=(1, 3), keepdims=True) + 1e-5)).reshape(2, 12, 16) * g.get() + b.get()
    np.testing.assert_allclose(out.get(), ref, rtol=1e-5, atol=1e-5)


def test_casts_to_bfloat16_from_every_dtype_compile() -> None:
    """float64 and 32/64-bit integers take the one-rounding casts (sl_d2bf, sl_ll2bf, sl_ull2bf)."""
    outs = [sl.asarray(np.arange(12).astype(d)).astype("bfloat16") for d in DTYPES if d != "bfloat16"]
    outs.append(sl.arange(5, dtype="bfloat16"))
    plan = sl.explain(*outs)
    text = "".join(k.source[k.source.index("extern"):] for k in plan.kernels)
    for fn in ("sl_d2bf(", "sl_ll2bf(", "sl_ull2bf("):
        assert fn in text, fn
    for k in plan.kernels:
        _compile(k.source, k.name)


NEW_UFUNCS = ["arcsinh", "arccosh", "arctanh", "cbrt", "rint", "signbit", "hypot", "copysign", "logaddexp", "logaddexp2"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_inverse_hyperbolic_rounding_and_log_add_ufuncs_compile(dtype: str) -> None:
    x, y, _ = _arrays(dtype)
    outs = []
    for name in NEW_UFUNCS:
        fn = getattr(sl, name)
        try:
            outs.append(fn(x) if fn.__name__ in ("arcsinh", "arccosh", "arctanh", "cbrt", "rint", "signbit") else fn(x, y))
        except TypeError:  # NumPy has no loop for this dtype (signbit of integers, ...): neither has stitchlab
            with pytest.raises(TypeError):
                getattr(np, name)(*([np.ones(2, dtype)] * (1 if name in NEW_UFUNCS[:6] else 2)))
    plan = sl.explain(*outs)
    for k in plan.kernels:
        assert k.error is None, k.error
        _compile(k.source, k.name)


def test_arg_reduction_positions_combine_with_int64_values() -> None:
    """An argmax/argmin position is an int in the kernel and int64 to what reads it: ``//``,
    ``maximum`` and ``minimum`` with int64 values compile (they did not: found by
    ``tests/fuzzgraphs.py --compile-only``). (Rows of 512 float64: 256 threads hold one, so a
    block a row, whose warps combine their positions.)"""
    x = sl.asarray(np.random.default_rng(0).random((32, 512)))
    outs = [sl.argmax(x, axis=1) // 3, sl.maximum(sl.argmin(x, axis=-1), 5), sl.minimum(sl.argmax(x, axis=1), np.int64(2))]
    plan = sl.explain(*outs, device="H200")
    assert [k.schedule.family for k in plan.kernels] == ["row_block"], plan.summary()
    for k in plan.kernels:
        _compile(k.source, k.name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_multiply_and_an_add_stay_two_roundings(dtype: str) -> None:
    """Kernels are compiled with --fmad=false: ``x * y + z`` is an IEEE multiply and an IEEE add
    (NumPy's two roundings) in the PTX, never an fma that ptxas or NVVM contracted."""
    from fuzzgraphs import ptx_of

    x, y, v = _arrays(dtype)
    (k,) = sl.explain(x * y + v - x * v).kernels
    ptx = ptx_of(k.source)
    bits = dtype[-2:]
    assert f"mul.rn.f{bits}" in ptx and f"add.rn.f{bits}" in ptx, ptx[-1500:]
    assert f"fma.rn.f{bits}" not in ptx and f"mul.f{bits}" not in ptx and f"add.f{bits}" not in ptx


@pytest.mark.parametrize("case", ["float16 sigmoid", "column variance"])
def test_reciprocals_of_values_at_least_one_are_one_rcp(case: str) -> None:
    """A float16 sigmoid's ``1 / (1 + exp(-x))`` and Welford's ``1 / n`` are ``rcp.approx.ftz``
    (one MUFU.RCP in SASS): ``__fdividef`` compiles to ``div.approx.f32``, which ptxas guards
    against subnormal divisors under --fmad=false (four more instructions per element)."""
    from fuzzgraphs import ptx_of

    x, _, _ = _arrays("float16" if case == "float16 sigmoid" else "float32", rows=50, cols=9)
    (k,) = sl.explain(sl.sigmoid(x) if case == "float16 sigmoid" else x.std(0)).kernels
    ptx = ptx_of(k.source)
    assert "rcp.approx.ftz.f32" in ptx and "div.approx" not in ptx, ptx[-1500:]


def test_bfloat16_results_round_through_the_packed_conversion() -> None:
    """A float result rounded to bfloat16 is ``cvt.rn.bf16x2.f32`` with a zero high half (one
    F2FP.BF16.F32.PACK_AB in SASS; for ``cvt.rn.bf16.f32`` ptxas often chose the conversion
    unit's F2F.BF16.F32: bfloat16 logsumexp 21.2 -> 20.6 us on the H200, same bits)."""
    from fuzzgraphs import ptx_of

    x, _, _ = _arrays("bfloat16")
    (k,) = sl.explain(sl.log(sl.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))).kernels
    ptx = ptx_of(k.source)
    assert "cvt.rn.bf16x2.f32" in ptx and "cvt.rn.bf16.f32" not in ptx, ptx[-1500:]



#: one-op and two-op int8/uint8 kernels of the 16-element vector loop (2**20 elements)
BYTE_CASES: dict[str, Callable[[sl.LazyArray], sl.LazyArray]] = {
    "x // 2": lambda x: x // 2, "x // 16": lambda x: x // 16, "x // -2": lambda x: x // -2, "x % 4": lambda x: x % 4,
    "(x - 2) >> x": lambda x: sl.right_shift(x - 2, x), "sign(x - 1)": lambda x: sl.sign(x - 1),
    "(x + 3) // 2": lambda x: (x + 3) // 2, "x - 2 > 90": lambda x: (x - 2) > 90,
    "float32(x * 3)": lambda x: (x * 3).astype(np.float32), "maximum(x - 1, 2)": lambda x: sl.maximum(x - 1, 2),
}


@pytest.mark.parametrize(("case", "dtype"), [(c, t) for c in BYTE_CASES for t in ("int8", "uint8")
                                             if not (t == "uint8" and "-2" in c)])  # (-2 is no uint8)
def test_bytes_of_a_vector_load_are_not_computed_on_in_pairs(case: str, dtype: str) -> None:
    """No instruction reads past the low byte of a 16-bit half that holds two bytes of a vector
    load (``fuzzgraphs.packed_byte_reads``): NVVM 13.0 to 13.5 left out the sign extension of the
    low byte before right shifts and comparisons (``floor_divide(x, 2)`` of int8 gave 126 for -3
    on the H200, wide fuzz seeds 3500191 and 4300003); a byte load now goes through an opaque int
    (``sl_load`` in the preamble). tests/gpu/test_small_int_ops_gpu.py checks the values."""
    from fuzzgraphs import packed_byte_reads, ptx_of

    x = sl.asarray(np.random.default_rng(0).integers(-100, 100, 1 << 20).astype(dtype))
    (k,) = sl.explain(BYTE_CASES[case](x), device="H200").kernels
    ptx = ptx_of(k.source)
    assert "ld.global.v4" in ptx  # (the vector loop)
    assert packed_byte_reads(ptx) == []


def test_packed_byte_reads_finds_nvvms_floor_division() -> None:
    """The PTX NVVM 13.5 emitted for int8 ``floor_divide(x, 2)`` before the fix (the low byte of
    each half: the neighbour's bit 0 shifted into its sign) and the same with the byte extended."""
    from fuzzgraphs import packed_byte_reads

    half = """
        ld.global.v4.u32 {%r39, %r40, %r41, %r42}, [%rd3];
        mov.b32 {%rs129, %rs130}, %r39;
        and.b16 %rs131, %rs129, 128;
        shr.u16 %rs132, %rs131, 7;
        add.s16 %rs133, %rs129, %rs132;
        shr.u16 %rs134, %rs133, 1;
        shr.u16 %rs138, %rs129, 8;
        cvt.s16.s8 %rs140, %rs138;
    """
    assert packed_byte_reads(half) == ["shr.u16 %rs134, %rs133, 1"]
    fixed = half.replace("add.s16 %rs133, %rs129, %rs132;", "cvt.s16.s8 %rs128, %rs129;\n add.s16 %rs133, %rs128, %rs132;")
    assert packed_byte_reads(fixed) == []
