"""bfloat16 (``ml_dtypes.bfloat16``) on the GPU: every elementwise result is float32 arithmetic
rounded once to bfloat16, as ml_dtypes' NumPy loops compute it (bit for bit for the correctly
rounded float32 operations, within one bfloat16 step for the transcendental ones, over every
bfloat16 value); casts to bfloat16 rounded once from every dtype; sums accumulated in float32;
CuPy and torch arrays in and out.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_bfloat16_gpu.py -q``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

BF16 = np.dtype(ml_dtypes.bfloat16)
#: every bfloat16 value, once
ALL = np.arange(1 << 16, dtype=np.uint16).view(BF16)


def _gpu(x: np.ndarray) -> sl.LazyArray:
    import cupy as cp

    return sl.asarray(cp.asarray(x))


def _same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal bit for bit, except that any NaN matches any NaN (payloads are not NumPy's concern)."""
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    g, w = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
    keep = ~np.isnan(w)
    bad = got.view(np.uint16)[keep] != want.view(np.uint16)[keep]
    assert not bad.any(), f"{what}: {int(bad.sum())} differ, e.g. {got[keep][bad][:4]} vs {want[keep][bad][:4]}"


def _steps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in bfloat16 steps between finite bfloat16 arrays (signed zeros 0 apart)."""
    def ordered(x: np.ndarray) -> np.ndarray:
        bits = x.view(np.uint16).astype(np.int64)
        return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)
    return np.abs(ordered(a) - ordered(b))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum"])
def test_arithmetic_is_ml_dtypes_bit_for_bit(op: str) -> None:
    """+, -, *, / of two bfloat16 values in float32, rounded once, is the correctly rounded
    result (float32 carries 24 >= 2 * 8 + 2 bits): every value against a permutation of all."""
    y = np.random.default_rng(0).permutation(ALL)
    got = getattr(sl, op)(_gpu(ALL), _gpu(y)).get()
    with np.errstate(all="ignore"):
        want = getattr(np, op)(ALL, y)
    _same_bits(got, want, op)


@pytest.mark.parametrize("op", ["sqrt", "negative", "absolute", "floor", "square"])
def test_correctly_rounded_unary_ops_are_ml_dtypes_bit_for_bit(op: str) -> None:
    got = getattr(sl, op)(_gpu(ALL)).get()
    with np.errstate(all="ignore"):
        want = getattr(np, op)(ALL)
    _same_bits(got, want, op)


@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sin", "expm1", "log1p", "sigmoid", "erf", "rsqrt"])
def test_transcendental_ops_are_faithful_for_every_bfloat16(op: str) -> None:
    """CUDA's float32 functions (a few float32 ulps) rounded once to bfloat16: within one
    bfloat16 step of the float64 result everywhere (sigmoid: but where float32's exp overflows),
    and the numpy backend's result (float32 math rounded once, as ml_dtypes) for all but a sliver
    of inputs (near rounding midpoints)."""
    got = getattr(sl, op)(_gpu(ALL)).get()
    sl.set_backend("numpy")
    try:
        backend = getattr(sl, op)(sl.asarray(ALL)).get()
        exact = getattr(sl, op)(sl.asarray(ALL.astype(np.float64))).get()
    finally:
        sl.set_backend("cupy")
    assert got.dtype == BF16
    with np.errstate(all="ignore"):
        rounded = exact.astype(np.float32).astype(BF16)
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), np.isnan(rounded.astype(np.float32)), err_msg=op)
    finite = np.isfinite(rounded.astype(np.float32)) & np.isfinite(got.astype(np.float32))
    np.testing.assert_array_equal(got[~finite].astype(np.float32), rounded[~finite].astype(np.float32), err_msg=op)
    same = (got.view(np.uint16) == backend.view(np.uint16)) | np.isnan(backend.astype(np.float32))
    assert same.mean() >= 0.995, (op, float(same.mean()))
    off = finite.copy()
    off[finite] = _steps(got[finite], rounded[finite]) > 1
    if op == "sigmoid":
        # 1 / (1 + exp(-x)) in float32 (the kernels' and the numpy backend's formula): below
        # x = -88.7 exp(-x) overflows, so the six bfloat16 values -91.5 ... -89, whose sigmoid is a
        # subnormal bfloat16, give 0, on both backends
        assert set(ALL[off].astype(np.float32)) <= {-89.0, -89.5, -90.0, -90.5, -91.0, -91.5}, ALL[off]
        _same_bits(got[off], backend[off], "sigmoid where float32's exp overflows")
    else:
        assert not off.any(), (op, ALL[off][:8], got[off][:8], rounded[off][:8])


def test_casts_round_once_as_the_numpy_backend() -> None:
    """To bfloat16: one rounding from every dtype (``stitchlab.ir.dtypes.cast``, whose exactness
    tests/test_bfloat16.py checks); from bfloat16: ml_dtypes' casts."""
    from stitchlab.ir.dtypes import cast

    rng = np.random.default_rng(1)
    bits = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    f32 = bits.view(np.float32)  # every kind of float32: NaN, inf, subnormal, both zeros
    b = ALL.astype(np.float64)
    # float64 just above, at and below the midpoints between neighbouring bfloat16 values: through
    # float32 to nearest the ones just above would round down
    nxt = np.nextafter(ALL, np.array(np.inf, BF16)).astype(np.float64)
    mid = (b + nxt) / 2
    f64 = np.concatenate([mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), rng.standard_normal(1000) * 1e30])
    ints = rng.integers(-(1 << 40), 1 << 40, 100_000)
    u64 = rng.integers(0, 1 << 63, 100_000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    for src in (f32, f64, ints, u64, ints.astype(np.int32), (ints % 256).astype(np.uint8), ints % 3 == 0):
        with np.errstate(all="ignore"):
            _same_bits(_gpu(src).astype(BF16).get(), cast(src, BF16), f"{src.dtype} -> bfloat16")
    for to in (np.float32, np.float64, np.float16, np.bool_):
        with np.errstate(all="ignore"):
            want = ALL.astype(to)
        got = _gpu(ALL).astype(to).get()
        np.testing.assert_array_equal(got, want, err_msg=f"bfloat16 -> {np.dtype(to)}")
    small = ALL[np.abs(ALL.astype(np.float32)) < 1e9]  # in int64 range: C leaves the rest undefined
    np.testing.assert_array_equal(_gpu(small).astype(np.int64).get(), small.astype(np.int64))


def test_sums_and_means_accumulate_in_float32() -> None:
    """A bfloat16 sum accumulates in float32 and rounds once (ml_dtypes' NumPy sum would round
    each partial sum: 4096 ones sum to 256 there)."""
    x = _gpu(np.ones((3, 4096), BF16))
    np.testing.assert_array_equal(x.sum(-1).get().astype(np.float32), [4096.0] * 3)
    np.testing.assert_array_equal(x.mean().get().astype(np.float32), 1.0)
    rng = np.random.default_rng(2)
    v = (rng.standard_normal((64, 70_001)) + 3).astype(BF16)  # long rows: split over blocks too
    s = _gpu(v).sum(-1).get()
    exact = v.astype(np.float64).sum(-1)
    assert _steps(s, exact.astype(np.float32).astype(BF16)).max() <= 1


def test_softmax_layernorm_one_kernel_each_and_close_to_float64() -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((512, 4096)) * 3).astype(BF16)
    a = _gpu(x)
    e = sl.exp(a - a.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    h = (a - a.mean(-1, keepdims=True)) / sl.sqrt(a.var(-1, keepdims=True) + 1e-5)
    assert len(sl.explain(p).kernels) == 1 and len(sl.explain(h).kernels) == 1
    assert "sl_vec<sl_bf16, 8>" in sl.explain(p).kernels[0].source  # 16-byte loads and stores
    x64 = x.astype(np.float64)
    e64 = np.exp(x64 - x64.max(-1, keepdims=True))
    got_p, got_h = sl.compute(p, h)
    np.testing.assert_allclose(got_p.get().astype(np.float64), e64 / e64.sum(-1, keepdims=True), rtol=2e-2, atol=1e-5)
    h64 = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got_h.get().astype(np.float64), h64, rtol=2e-2, atol=2e-2)


def test_cupy_and_torch_arrays_in_and_out() -> None:
    import cupy as cp

    torch = pytest.importorskip("torch")
    x = (np.random.default_rng(4).standard_normal((64, 256)) * 4).astype(BF16)
    want = (x.astype(np.float32) * 2 + 1).astype(BF16)
    # CuPy's bfloat16 arrays (CuPy 14 with ml_dtypes) in and out
    y = sl.asarray(cp.asarray(x)) * 2 + 1
    assert isinstance(cp.asarray(y), cp.ndarray) and cp.asarray(y).dtype == BF16
    _same_bits(y.get(), want, "cupy")
    # a torch bfloat16 tensor on the GPU in (read as its bits: torch's CUDA array interface says
    # "<V2"), and the result out through DLPack
    t = torch.from_numpy(x.view(np.int16)).cuda().view(torch.bfloat16)
    z = sl.asarray(t) * 2 + 1
    _same_bits(z.get(), want, "torch in")
    back = torch.from_dlpack(z)
    assert back.dtype == torch.bfloat16 and back.is_cuda
    np.testing.assert_array_equal(back.view(torch.int16).cpu().numpy(), want.view(np.int16))


def test_jit_with_bfloat16_arguments_compiles_once() -> None:
    import cupy as cp

    @sl.jit
    def rms(x, w):
        return x * sl.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w

    rng = np.random.default_rng(5)
    x = cp.asarray((rng.standard_normal((256, 1024))).astype(BF16))
    w = cp.asarray(rng.standard_normal(1024).astype(BF16))
    first = rms(x, w).get()
    sl.reset_stats()
    second = rms(x, w).get()
    assert sl.stats()["nvrtc_compiles"] == 0
    _same_bits(second, first, "second call")
    x64 = cp.asnumpy(x).astype(np.float64)
    want = x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * cp.asnumpy(w).astype(np.float64)
    np.testing.assert_allclose(first.astype(np.float64), want, rtol=2e-2, atol=2e-2)
