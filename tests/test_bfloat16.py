"""bfloat16 (``ml_dtypes.bfloat16``) on the CPU: the dtype by name, promotion (NumPy's, with
NEP 50's weak Python floats), the numpy backend's semantics (ml_dtypes' float32-then-round loops,
sums in float32), torch tensors in, and the kernels the compiler writes for it."""

from __future__ import annotations

import bisect
import builtins
import functools
import math
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import stitchlab as sl

BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(autouse=True)
def _numpy_backend():
    before = sl.get_backend()
    sl.set_backend("numpy")
    yield
    sl.set_backend(before)


def _x() -> sl.LazyArray:
    return sl.asarray(np.array([1.5, 2.25, -3.0, 0.1], BF16))


def test_the_dtype_by_name_attribute_and_type() -> None:
    assert sl.bfloat16 is ml_dtypes.bfloat16
    for spec in ("bfloat16", sl.bfloat16, BF16):
        assert sl.ones(3, spec).dtype == BF16
        assert sl.asarray(np.ones(2), dtype=spec).dtype == BF16
        assert _x().astype(spec).dtype == BF16


def test_a_missing_ml_dtypes_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_ml_dtypes(name, *args, **kwargs):
        if name == "ml_dtypes":
            raise ImportError("No module named 'ml_dtypes'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "ml_dtypes")
    monkeypatch.setattr(builtins, "__import__", no_ml_dtypes)
    with pytest.raises(TypeError, match="pip install ml-dtypes"):
        sl.zeros(3, "bfloat16")


@pytest.mark.parametrize(("expr", "dtype"), [
    ("x * 0.5", "bfloat16"),  # NEP 50: a Python float takes the array's float dtype (ml_dtypes: float32)
    ("0.5 - x", "bfloat16"),
    ("x + 1", "bfloat16"),
    ("x + True", "bfloat16"),
    ("x * np.float32(2)", "float32"),
    ("x + x.astype(np.float16)", "float32"),  # no common 16-bit type: float32, as ml_dtypes resolves
    ("x + sl.asarray(np.int8([1, 2, 3, 4]))", "bfloat16"),
    ("x + sl.asarray(np.int32([1, 2, 3, 4]))", "float64"),
    ("x > 0.1", "bool"),
    ("sl.where(x > 0, x, 0.5)", "bfloat16"),
    ("sl.where(x > 0, 0.5, x)", "bfloat16"),  # weak in either place (NumPy + ml_dtypes 0.7: float32 with the float first)
    ("sl.zeros(1, sl.result_type(0.5, x))", "bfloat16"),
    ("sl.exp(x)", "bfloat16"),
    ("x ** 2", "bfloat16"),
    ("x.sum()", "bfloat16"),
    ("x.mean()", "bfloat16"),
    ("sl.var(x)", "bfloat16"),
    ("x.argmax()", "int64"),
])
def test_promotion(expr: str, dtype: str) -> None:
    assert eval(expr, {"x": _x(), "sl": sl, "np": np}).dtype == np.dtype(dtype if dtype != "bfloat16" else BF16)


def test_a_weak_float_is_rounded_to_bfloat16_before_comparing() -> None:
    x = _x()  # 0.1 is 0.10009765625 in bfloat16, as NEP 50 converts the scalar
    np.testing.assert_array_equal((x == 0.1).get(), [False, False, False, True])
    np.testing.assert_array_equal((x > 0.1).get(), [True, True, False, False])


def test_elementwise_results_are_ml_dtypes_loops_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(10_000) * 10).astype(BF16)
    b = (rng.standard_normal(10_000) * 10).astype(BF16)
    x, y = sl.asarray(a), sl.asarray(b)
    with np.errstate(all="ignore"):
        pairs = [(x + y, a + b), (x * y, a * b), (x / y, a / b), (sl.exp(x), np.exp(a)),
                 (sl.tanh(x), np.tanh(a)), (sl.sqrt(x), np.sqrt(a)), (x.astype(np.float32), a.astype(np.float32))]
        for got, want in pairs:
            np.testing.assert_array_equal(got.get().view(np.uint16), want.view(np.uint16))


def test_sums_and_means_accumulate_in_float32() -> None:
    """ml_dtypes' own sum rounds each partial sum to bfloat16 (4096 ones: 256); the numpy backend
    sums in float32 and rounds once, as the kernels do and as NumPy sums float16."""
    ones = np.ones(4096, BF16)
    assert float(ones.sum()) == 256.0  # what stitchlab does not do
    x = sl.asarray(ones)
    assert float(x.sum()) == 4096.0 and float(x.mean()) == 1.0
    v = np.random.default_rng(1).standard_normal((8, 5000)).astype(BF16)
    want = v.astype(np.float32).sum(-1).astype(BF16)
    np.testing.assert_array_equal(sl.asarray(v).sum(-1).get().view(np.uint16), want.view(np.uint16))


@functools.cache
def _finite_bfloat16() -> list[float]:
    finite = np.arange(1 << 16, dtype=np.uint16).view(BF16)
    return sorted({float(f) for f in finite[np.isfinite(finite.astype(np.float32))].astype(np.float64)})


def _nearest_bfloat16(v: Fraction) -> float:
    """The bfloat16 nearest ``v`` (ties to even; beyond the largest finite value plus half a
    step: inf), found exactly among every finite bfloat16."""
    vals = _finite_bfloat16()
    top = Fraction(vals[-1]) + Fraction(2) ** (127 - 8)
    if abs(v) >= top:
        return math.copysign(math.inf, v)
    i = bisect.bisect_left(vals, float(v))
    near = [vals[k] for k in (i - 2, i - 1, i, i + 1) if 0 <= k < len(vals)]
    return min(near, key=lambda c: (abs(Fraction(c) - v), int(np.array(c).astype(BF16).view(np.uint16)) & 1))


def test_casts_to_bfloat16_round_once_whatever_ml_dtypes_does() -> None:
    """float64 and 64-bit integers round once to bfloat16 (ml_dtypes 0.6 casts float64 through
    float32, rounding twice; 0.7 casts int32 directly and int64 through float32)."""
    d = np.array([1 + 2**-8 + 2**-30])  # just above a midpoint; through float32 it becomes the midpoint
    assert float(sl.asarray(d).astype(BF16).get()[0]) == 1 + 2**-7
    assert float(sl.asarray(d, dtype="bfloat16").get()[0]) == 1 + 2**-7
    assert float(sl.full(1, 1 + 2**-8 + 2**-30, "bfloat16").get()[0]) == 1 + 2**-7
    rng = np.random.default_rng(4)
    mids = (rng.integers(1, 1 << 7, 300) * 2 + 1) * 2.0 ** rng.integers(-140, 120, 300) / 2**8  # bfloat16 midpoints
    f64 = np.concatenate([mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf), -mids,
                          rng.standard_normal(200) * 1e38, [3.4e38, 3.5e38, 1e300, 1e-50, -1e-50, 0.0]])
    i64 = np.concatenate([rng.integers(-(1 << 62), 1 << 62, 300), [2**63 - 1, -(2**63), 2**40 + 2**32 + 1]]).astype(np.int64)
    u64 = rng.integers(0, 1 << 63, 300, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    i32 = rng.integers(-(1 << 31), 1 << 31, 300).astype(np.int32)
    for src in (f64, i64, u64, i32):
        got = sl.asarray(src).astype(BF16).get().astype(np.float64)
        want = [_nearest_bfloat16(Fraction(int(v)) if src.dtype.kind in "iu" else Fraction(float(v))) for v in src]
        np.testing.assert_array_equal(got, want, err_msg=str(src.dtype))


def test_nan_to_num_and_finfo_limits() -> None:
    x = sl.asarray(np.array([np.inf, -np.inf, np.nan, 2.0], BF16))
    got = sl.nan_to_num(x).get().astype(np.float64)
    big = float(ml_dtypes.finfo(BF16).max)
    np.testing.assert_array_equal(got, [big, -big, 0.0, 2.0])


def test_a_torch_bfloat16_tensor_is_read_as_its_bits() -> None:
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -2.25, 3.0], dtype=torch.bfloat16)
    x = sl.asarray(t)
    assert x.dtype == BF16
    np.testing.assert_array_equal((x * 2).get().astype(np.float32), [3.0, -4.5, 6.0])
    assert sl.asarray(t, dtype=np.float32).dtype == np.float32


def test_softmax_kernel_works_on_bfloat16_bits_and_rounds_each_float_result() -> None:
    x = sl.asarray(np.random.default_rng(2).standard_normal((64, 4096)).astype(BF16))
    e = sl.exp(x - x.max(-1, keepdims=True))
    (k,) = sl.explain(e / e.sum(-1, keepdims=True)).kernels
    body = k.source[k.source.index("extern"):]
    assert "const sl_bf16* __restrict__ in0" in body and "sl_vec<sl_bf16, 8>" in body
    assert "sl_hsub(" in body  # x - max: one bfloat16 instruction on the bits
    assert "sl_f2bf((float)(sl_exp_bf16(" in body  # exp in float, rounded once to bits
    assert "sl_exp_f16" not in body and "sl_half" not in body  # ex2.approx.ftz would flush subnormals


def test_column_variance_of_bfloat16_takes_the_one_pass_form() -> None:
    x = sl.asarray(np.random.default_rng(3).standard_normal((512, 64)).astype(BF16))
    (k,) = sl.explain((x - x.mean(0)) / x.std(0)).kernels
    assert k.info is not None and k.info.one_pass_variances()
