"""``sl.vectorize`` (``stitchlab/frontend/vectorize.py``): a Python function of elements as one fused
expression where what it builds is elementwise, NumPy's ``vectorize`` on the host (with a warning
naming why) where not; each result against ``numpy.vectorize`` on the same values."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

A = np.random.default_rng(5).standard_normal((64, 33)).astype(np.float32)
B = np.random.default_rng(6).standard_normal(33).astype(np.float32)


def huber(r: Any, delta: float = 1.0) -> Any:
    a = abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def _same(got: Any, want: Any) -> None:
    got, want = got.get(), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("func, args", [
    (huber, (A,)),
    (lambda x, y: x * y + np.exp(-x) / (1 + y * y), (A, B)),
    (lambda x, y: (x > y) & (x < 2 * y), (A, B)),
    (lambda x: 3, (A,)),
    (lambda x, k: x ** k, (A[:, :5], np.arange(5))),
], ids=["huber", "broadcast", "bool", "constant", "ints"])
def test_elementwise_functions_are_one_fused_expression(func: Any, args: tuple[Any, ...]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # (no host fallback)
        got = sl.vectorize(func)(*[sl.asarray(a) for a in args])
    assert len(sl.explain(got).kernels) <= 1
    _same(got, np.vectorize(func)(*args))


def test_decorator_forms_otypes_excluded_and_two_outputs() -> None:
    @sl.vectorize
    def f(x: Any) -> Any:
        return x * 2
    assert f.__name__ == "f"
    _same(f(sl.asarray(A)), A * 2)

    g = sl.vectorize(otypes=[np.float64])(lambda x: x + 1)
    _same(g(sl.asarray(A)), np.vectorize(lambda x: x + 1, otypes=[np.float64])(A))

    def scaled(x: Any, table: Any) -> Any:
        return x * table[1]
    h = sl.vectorize(scaled, excluded={1})
    _same(h(sl.asarray(A), [0.5, 3.0]), np.vectorize(scaled, excluded={1})(A, [0.5, 3.0]))

    two = sl.vectorize(lambda x, y: (x + y, x - y))
    s, d = two(sl.asarray(A), sl.asarray(B))
    assert len(sl.explain(s, d).kernels) == 1
    ws, wd = np.vectorize(lambda x, y: (x + y, x - y))(A, B)
    _same(s, ws)
    _same(d, wd)


@pytest.mark.parametrize("func, reason", [
    (lambda x: x if x > 0 else 0.0, "truth value of an array"),
    (lambda x: math.exp(x), "only 0-dimensional arrays"),
    (lambda x: x - B[:3], "reads an array it was not given"),
], ids=["control-flow", "math", "captured-array"])
def test_other_functions_run_on_the_host_as_numpy_would(func: Any, reason: str) -> None:
    a = A[:4, :3]
    x = sl.asarray(a)
    with pytest.warns(UserWarning, match=f"not one kernel .*{reason}.*element by element on the host"):
        try:
            got = sl.vectorize(func)(x)
        except ValueError as e:  # (NumPy's own error for a function returning arrays)
            with pytest.raises(ValueError, match=str(e)[:30]):
                np.vectorize(func)(a)
            return
    assert isinstance(got, sl.ndarray)
    _same(got, np.vectorize(func)(a))


def test_a_reduction_inside_is_not_taken_for_elementwise() -> None:
    # per element, x.sum() is the element itself: NumPy's vectorize gives 1 everywhere
    func = lambda x: x / np.sum(x)  # noqa: E731
    with pytest.warns(UserWarning, match="applies 'sum'"):
        got = sl.vectorize(func)(sl.asarray(A[:3, :3] + 5))
    _same(got, np.vectorize(func)(A[:3, :3] + 5))


def test_signature_runs_on_the_host() -> None:
    f = sl.vectorize(lambda v: v.sum(), signature="(n)->()")
    with pytest.warns(UserWarning, match="signature"):
        got = f(sl.asarray(A))
    _same(got, A.sum(1))
