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
