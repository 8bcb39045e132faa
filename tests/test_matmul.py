"""``x @ w``, ``sl.matmul`` and ``np.matmul`` on stitchlab arrays: a lazy node of its own
(``Kind.CONTRACT``), one interpreted plan step run by the array library, never fused; NumPy's
shapes, dtypes and errors; the work around it fuses; ``sl.jit`` traces and replays it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(3)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("sa, sb", [
    ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (7, 4, 2)),
])
def test_shapes_and_values_are_numpys(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = _f32(*sa), _f32(*sb)
    want = a @ b
    for got in (sl.asarray(a) @ sl.asarray(b), sl.matmul(a, b), np.matmul(sl.asarray(a), b), a @ sl.asarray(b)):
        assert isinstance(got, sl.LazyArray)
        value = got.get()
        assert value.shape == want.shape and value.dtype == want.dtype
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("da, db", [
    ("float16", "float16"), ("float64", "float32"), ("int32", "int32"), ("int8", "float16"),
    ("bool", "bool"), ("int64", "bool"), ("bfloat16", "bfloat16"),
])
def test_dtypes_are_numpys(da: str, db: str) -> None:
    a = (RNG.standard_normal((3, 4)) * 3).astype(np.float32)
    b = (RNG.standard_normal((4, 2)) * 3).astype(np.float32)
    if da == "bool":
        a, b = a > 0, b > 0
    a, b = a.astype(as_dtype(da)), b.astype(as_dtype(db))
    want = np.matmul(a, b)  # bfloat16 @ bfloat16 is float32 in NumPy (ml_dtypes has no matmul loop)
    got = (sl.asarray(a) @ sl.asarray(b)).get()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-2 if "float16" in (da, db) else 1e-6)


def test_errors_are_numpys_and_raised_when_built() -> None:
    x = sl.asarray(_f32(3, 4))
    with pytest.raises(ValueError, match=r"matmul: Input operand 1 has a mismatch in its core dimension 0.*size 3 is different from 4"):
        x @ x
    with pytest.raises(ValueError, match="matmul: Input operand 0 does not have enough dimensions"):
        sl.matmul(sl.asarray(np.float32(2.0)), x)
    with pytest.raises(ValueError, match="operands could not be broadcast"):
        sl.asarray(_f32(2, 3, 4)) @ _f32(3, 4, 5)


def test_a_plan_step_of_its_own_with_the_work_around_it_fused() -> None:
    x, w, b = _f32(64, 32), _f32(32, 48), _f32(48)
    y = sl.tanh((sl.asarray(x) * 2 + 1) @ w + b)
    plan = sl.explain(y)
    families = [k.schedule.family for k in plan.kernels]
    assert families.count("interpreted") == 1 and len(families) == 3, families
    step = plan.kernels[families.index("interpreted")]
    assert step.source == "" and [n.op for n in step.nodes] == ["matmul"]
    np.testing.assert_allclose(y.get(), np.tanh((x * 2 + 1) @ w + b), rtol=1e-5, atol=1e-6)


def test_jit_traces_once_and_replays() -> None:
    @sl.jit
    def dense(x: Any, w: Any, b: Any) -> Any:
        return sl.maximum(x @ w + b, 0.0)

    w, b = _f32(16, 8), _f32(8)
    sl.reset_stats()
    for scale in (1.0, 2.0, -1.0):
        x = _f32(4, 16) * scale
        np.testing.assert_allclose(dense(x, w, b).get(), np.maximum(x @ w + b, 0.0), rtol=1e-5, atol=1e-6)
    assert sl.stats()["traces"] == 1


def test_shared_products_are_computed_once() -> None:
    x, w = sl.asarray(_f32(8, 4)), _f32(4, 4)
    h = x @ w
    a, b = sl.compute(h + 1, h * 2)
    assert [k.schedule.family for k in sl.explain(h + 1, h * 2).kernels].count("interpreted") == 1
    np.testing.assert_allclose(np.asarray(a), x.get() @ w + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b), (x.get() @ w) * 2, rtol=1e-6)


# --- out= of dot, outer, trace and multi_dot, under NumPy's rules for each -----------------------------
_M = np.arange(4.0).reshape(2, 2)
_OUT_CASES = {  # (module, array maker, out maker) -> the call
    "dot": lambda m, a, o: m.dot(a(_M), a(_M), out=o((2, 2))),
    "dot-0d": lambda m, a, o: m.dot(a(np.float64(2)), a(_M), out=o((2, 2))),
    "dot-3d": lambda m, a, o: m.dot(a(np.ones((2, 2, 3))), a(np.ones((4, 3, 2))), out=o((2, 2, 4, 2))),
    "dot-method": lambda m, a, o: a(_M).dot(a(_M), o((2, 2))),
    "outer": lambda m, a, o: m.outer(a(_M), a(_M[0]), out=o((4, 2))),
    "outer-float32": lambda m, a, o: m.outer(a(_M), a(_M[0]), out=o((4, 2), np.float32)),  # same_kind
    "outer-broadcast": lambda m, a, o: m.outer(a(_M), a(_M[0]), out=o((3, 4, 2))),
    "trace": lambda m, a, o: m.trace(a(np.ones((3, 3, 2))), out=o((2,))),
    "trace-int": lambda m, a, o: m.trace(a(np.ones((3, 3, 2))), out=o((2,), np.int64)),  # a reduction's: unsafe
    "trace-dtype": lambda m, a, o: m.trace(a(np.ones((3, 3, 2), np.int64)), dtype=np.float32, out=o((2,), np.int8)),
    "trace-method": lambda m, a, o: a(np.ones((3, 3, 2))).trace(0, 0, 1, None, o((2,))),
    "multi_dot-2": lambda m, a, o: m.linalg.multi_dot([a(_M), a(_M)], out=o((2, 2))),
    "multi_dot-3": lambda m, a, o: m.linalg.multi_dot([a(_M), a(_M), a(_M)], out=o((2, 2))),
    "multi_dot-row": lambda m, a, o: m.linalg.multi_dot([a(_M[0]), a(_M), a(_M)], out=o((1, 2))),
}


@pytest.mark.parametrize("case", list(_OUT_CASES))
@pytest.mark.parametrize("kind", ["stitchlab", "numpy"])
def test_products_and_trace_write_into_out_as_numpy(case: str, kind: str) -> None:
    call = _OUT_CASES[case]
    want_out = []
    want = call(np, lambda x: x, lambda s, d=np.float64: want_out.append(np.zeros(s, d)) or want_out[-1])
    outs = []
    maker = sl.zeros if kind == "stitchlab" else np.zeros
    got = call(sl, sl.asarray, lambda s, d=np.float64: outs.append(maker(s, d)) or outs[-1])
    if case == "multi_dot-row":  # NumPy returns out's ravel: a view (stitchlab: the ravel of out's new value)
        np.testing.assert_allclose(outs[0].get() if kind == "stitchlab" else outs[0], want_out[0], rtol=1e-12)
    else:
        assert got is outs[0]
    value = got.get() if isinstance(got, sl.LazyArray) else got
    assert value.dtype == want.dtype and value.shape == want.shape
    np.testing.assert_allclose(value, want, rtol=1e-12)


@pytest.mark.parametrize(("case", "out", "error", "match"), [
    ("dot", np.zeros((2, 2), np.float32), ValueError, "output array is not acceptable"),
    ("dot", np.zeros((2, 2), np.int64), ValueError, "output array is not acceptable"),
    ("dot", np.zeros((1, 2, 2)), ValueError, "output array is not acceptable"),
    ("dot", np.zeros((2, 2), order="F"), ValueError, "output array is not acceptable"),
    ("dot", np.zeros((2, 4))[:, ::2], ValueError, "output array is not acceptable"),
    ("dot", np.zeros((2, 3)), ValueError, "output array has wrong dimensions"),
    ("dot", [0.0], TypeError, "'out' must be an array"),
    ("dot-0d", np.zeros((2, 2), np.float32), ValueError, "output array is not acceptable"),
    ("multi_dot-2", np.zeros((2, 2), np.float32), ValueError, "output array is not acceptable"),
    ("multi_dot-3", np.zeros((2, 2), np.float32), ValueError, "output array is not acceptable"),
    ("multi_dot-row", np.zeros(2), ValueError, "output array is not acceptable"),  # NumPy's: the 2-d shape
    ("outer", np.zeros((4, 2), np.int64), TypeError, "Cannot cast"),
    ("outer", np.zeros(3), ValueError, "broadcast"),
    ("trace", np.zeros((1, 2)), ValueError, "output parameter"),
])
def test_products_and_trace_refuse_outs_numpy_refuses(case: str, out: Any, error: type, match: str) -> None:
    call = _OUT_CASES[case]
    with pytest.raises(error, match=match):
        call(np, lambda x: x, lambda s, d=np.float64: out)
    with pytest.raises(error, match=match):
        call(sl, sl.asarray, lambda s, d=np.float64: out)
    if isinstance(out, np.ndarray) and out.flags.c_contiguous:  # the same out as a stitchlab array
        with pytest.raises(error, match=match):
            call(sl, sl.asarray, lambda s, d=np.float64: sl.asarray(out))


def test_dot_into_numpys_own_function_takes_the_same_rule() -> None:
    a = sl.asarray(_M)
    out = np.zeros((2, 2))
    assert np.dot(a, a, out=out) is out
    np.testing.assert_array_equal(out, _M @ _M)
    with pytest.raises(ValueError, match="output array is not acceptable"):
        np.dot(a, a, out=np.zeros((2, 2), np.float32))
