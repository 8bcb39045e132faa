"""Functions whose result's shape depends on the values (``stitchlab/frontend/selection.py``):
indexing with a boolean mask computed lazily (``x[x > 0]``), ``nonzero``, ``flatnonzero``,
``argwhere``, ``extract``, ``compress`` and ``unique``. They evaluate when called and give NumPy's
values, shapes, dtypes and errors; shape errors come before anything is computed; ``sl.jit``
refuses them with a clear error. GPU: ``tests/gpu/test_selection_gpu.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lazycheck import families, same

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(53)
A = RNG.standard_normal((6, 5)).astype(np.float32)
B3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
I32 = RNG.integers(-3, 3, (4, 7)).astype(np.int32)


@pytest.mark.parametrize("make", [
    lambda a: a > 0, lambda a: a[:, 0] > 0, lambda a: a < -10, lambda a: a > -10,
], ids=["full", "rows", "none-true", "all-true"])
def test_a_mask_computed_lazily_selects_as_numpys(make: Any) -> None:
    x = sl.asarray(A)
    same(x[make(x)], A[make(A)])


@pytest.mark.parametrize("a, make", [
    (B3, lambda a: a[:, :, 0] > 0), (B3, lambda a: a > 0.5), (I32, lambda a: a != 0), (A, lambda a: (a > 0).any()),
    (np.float32(2.5), lambda a: a > 0), (A.astype(np.float16), lambda a: a > 0),
], ids=["3-d leading", "3-d full", "int", "0-d mask", "0-d array", "float16"])
def test_masks_over_leading_axes_and_zero_d(a: Any, make: Any) -> None:
    same(sl.asarray(a)[make(sl.asarray(a))], np.asarray(a)[make(np.asarray(a))])


def test_a_lazy_source_is_computed_once_with_its_mask_and_the_result_stays_lazy() -> None:
    x = sl.asarray(A)
    y = x * 2 + 1
    sl.reset_stats()
    z = y[y > 0]
    assert sl.stats()["evaluations"] == 1 and y.is_materialized  # y and its mask in one plan
    w = sl.exp(z) - 1  # fuses as usual
    assert families(w) == ["interpreted", "pointwise"]
    np.testing.assert_allclose(w.get(), np.exp((A * 2 + 1)[(A * 2 + 1) > 0]) - 1, rtol=1e-6)


def test_mask_shape_errors_are_numpys_and_come_before_any_evaluation() -> None:
    x = sl.asarray(A)
    sl.reset_stats()
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis is 6 but size of corresponding boolean axis is 5"):
        x[sl.asarray(A[:5]) > 0]
    with pytest.raises(IndexError, match="too many indices for array: array is 2-dimensional, but 3 were indexed"):
        x[sl.asarray(B3) > 0]
    with pytest.raises(IndexError, match="a boolean mask must be the only index"):
        x[x[:, 0] > 0, 0]
    assert sl.stats()["evaluations"] == 0


@pytest.mark.parametrize("call", [
    lambda x: x[x > 0], lambda x: sl.nonzero(x)[0], lambda x: sl.unique(x), lambda x: sl.compress(x[:, 0] > 0, x, axis=0),
], ids=["mask", "nonzero", "unique", "compress"])
def test_sl_jit_refuses_them_saying_why(call: Any) -> None:
    f = sl.jit(call)
    with pytest.raises(RuntimeError, match=r"cannot be traced by sl\.jit: its result's shape depends on the values.*outside the jitted function"):
        f(sl.asarray(A))


@pytest.mark.parametrize("a", [A, I32, I32 > 0, B3, A.astype(np.float16), np.zeros((3, 0), np.float32), np.array([0.0, -0.0, np.nan])],
                         ids=["float32", "int32", "bool", "3-d", "float16", "empty", "signed zeros and NaN"])
def test_nonzero_flatnonzero_argwhere_are_numpys(a: np.ndarray) -> None:
    x = sl.asarray(a)
    got = sl.nonzero(x)
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        same(g, w)
    same(sl.flatnonzero(x), np.flatnonzero(a))
    same(sl.argwhere(x), np.argwhere(a))
    same(x.nonzero()[0], a.nonzero()[0])
    for g, w in zip(sl.where(x), np.where(a), strict=True):  # one-argument where is nonzero
        same(g, w)


def test_zero_d_follows_numpy() -> None:
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        sl.nonzero(sl.asarray(np.float32(3)))
    for v in (np.float32(3), np.float32(0)):
        same(sl.argwhere(sl.asarray(v)), np.argwhere(v))
        same(sl.flatnonzero(sl.asarray(v)), np.flatnonzero(v))


@pytest.mark.parametrize("cond", [A > 0, (A > 0).ravel()[:7], np.ones(40, bool)[:30] & (np.arange(30) < 30), A[:, :1] > 0],
                         ids=["same shape", "shorter", "exactly the size", "other shape"])
def test_extract_is_numpys(cond: np.ndarray) -> None:
    same(sl.extract(sl.asarray(cond), sl.asarray(A)), np.extract(cond, A))
    same(sl.extract(cond.astype(np.float32), sl.asarray(A)), np.extract(cond.astype(np.float32), A))


@pytest.mark.parametrize("cond, axis", [
    ([True, False, True, True, False], 1), ([True, False], 0), ([1, 0, 2, 0, 0, 0, 1], None),
    ([False, True, False, True, True, False], -2), ([True, False, True, True, False, False, False], 1),
], ids=["axis 1", "shorter", "flat, ints", "negative axis", "longer, false tail"])
def test_compress_is_numpys(cond: Any, axis: Any) -> None:
    same(sl.compress(cond, sl.asarray(A), axis=axis), np.compress(cond, A, axis=axis))
    same(sl.asarray(A).compress(sl.asarray(np.asarray(cond)), axis), A.compress(cond, axis))


def test_selecting_past_the_end_raises_numpys_index_error() -> None:
    long = [True] * 5 + [False, True]
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 1 with size 5"):
        sl.compress(long, sl.asarray(A), axis=1)
    with pytest.raises(IndexError, match="index 30 is out of bounds for axis 0 with size 30"):
        sl.extract(np.arange(31) == 30, sl.asarray(A))
    with pytest.raises(ValueError, match="condition must be a 1-d array"):
        sl.compress(A > 0, sl.asarray(A), axis=0)
    with pytest.raises(np.exceptions.AxisError):
        sl.compress([True], sl.asarray(A), axis=2)


@pytest.mark.parametrize("a, axis", [
    (I32, None), (I32, 0), (I32, 1), (np.array([2.0, np.nan, 1.0, np.nan, 2.0], np.float32), None),
    (np.round(A * 2).astype(np.float16), None), (np.zeros(0, np.int64), None), (I32 > 0, None),
], ids=["int", "axis 0", "axis 1", "NaN", "float16", "empty", "bool"])
@pytest.mark.parametrize("flags", [(False, False, False), (True, True, True), (False, True, False)], ids=["values", "all", "inverse"])
def test_unique_is_numpys(a: np.ndarray, axis: Any, flags: tuple[bool, bool, bool]) -> None:
    index, inverse, counts = flags
    got = sl.unique(sl.asarray(a), index, inverse, counts, axis)
    want = np.unique(a, index, inverse, counts, axis)
    if not any(flags):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        same(g, w)


def test_unique_equal_nan_and_bfloat16() -> None:
    a = np.array([np.nan, 1.0, np.nan], np.float32)
    same(sl.unique(sl.asarray(a), equal_nan=False), np.unique(a, equal_nan=False))
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    b = np.array([3.0, -1.5, 3.0, 0.0], bf16)
    same(sl.unique(sl.asarray(b)), np.unique(b))


@pytest.mark.parametrize("func, args", [
    (np.nonzero, (I32,)), (np.flatnonzero, (I32,)), (np.argwhere, (I32,)), (np.extract, (I32 > 0, I32)),
    (np.compress, ([True, False, True], I32, 0)), (np.unique, (I32,)), (np.where, (I32 > 0,)),
])
def test_numpys_functions_on_stitchlab_arrays_give_stitchlab_arrays(func: Any, args: tuple[Any, ...]) -> None:
    lazy = tuple(sl.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    got, want = func(*lazy), func(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,), strict=True):
        same(g, w)


@pytest.mark.parametrize("x, kwargs", [(np.array([0, 1, 1, 3, 7, 1]), {}), (np.array([0, 1, 1, 3]), {"minlength": 8}),
                                       (np.array([], np.int64), {}), (np.array([True, False, True]), {}),
                                       (np.array([1, 2], np.uint64), {}), (np.array([], np.uint64), {"minlength": 2}),
                                       (np.array([2, 0, 2], np.uint8), {"weights": np.array([0.5, 1.0, 2.0])}),
                                       (np.array([4, 1], np.int32), {"weights": np.array([3, 4]), "minlength": 2})], ids=str)
def test_bincount_is_numpys(x: np.ndarray, kwargs: dict[str, Any]) -> None:
    want = np.bincount(x, **kwargs)
    for got in (sl.bincount(sl.asarray(x), **kwargs), np.bincount(sl.asarray(x), **kwargs)):
        assert isinstance(got, sl.LazyArray)
        np.testing.assert_array_equal(got.get(), want)
        assert got.dtype == want.dtype


def test_bincount_errors_are_numpys() -> None:
    for bad, err, match in [(np.array([[1, 2]]), ValueError, "object too deep"), (np.array([1.5]), TypeError, "according to the rule 'safe'"),
                            (np.array([-1, 2]), ValueError, "negative"),
                            (np.array([1, 2**63], np.uint64), ValueError, "negative")]:  # NumPy 2: cast to intp
        with pytest.raises(err, match=match):
            sl.bincount(sl.asarray(bad))
    with pytest.raises(ValueError, match="'minlength' must not be negative"):
        sl.bincount(sl.asarray(np.array([1])), minlength=-1)
    with pytest.raises(ValueError, match="same length"):
        sl.bincount(sl.asarray(np.array([1, 2])), weights=np.ones(3))


@pytest.mark.parametrize("kwargs", [{}, {"bins": 3}, {"bins": [0.0, 1.0, 2.5, 4.0]}, {"bins": 4, "range": (-1.0, 2.0)},
                                    {"bins": 5, "density": True}, {"weights": np.arange(40.0), "bins": 6}], ids=str)
def test_histogram_is_numpys(kwargs: dict[str, Any]) -> None:
    import ml_dtypes

    a = np.random.default_rng(9).standard_normal(40) * 2
    want = np.histogram(a, **kwargs)
    for got in (sl.histogram(sl.asarray(a), **kwargs), np.histogram(sl.asarray(a), **kwargs)):
        for g, w in zip(got, want, strict=True):
            assert isinstance(g, sl.LazyArray) and g.dtype == w.dtype
            np.testing.assert_allclose(g.get(), w, rtol=1e-12)
    b = a.astype(ml_dtypes.bfloat16)
    h, e = sl.histogram(sl.asarray(b), bins=4)
    wh, we = np.histogram(b.astype(np.float32), bins=4)
    np.testing.assert_array_equal(h.get(), wh)
    np.testing.assert_array_equal(e.get(), we)
    with pytest.raises(ValueError, match="autodetected range of \\[nan, nan\\] is not finite"):
        sl.histogram(sl.asarray(np.array([np.nan, 1.0])))


@pytest.mark.parametrize("bins", [5, [4, 6], np.linspace(0, 1, 7), [np.linspace(0, 1, 4), 5]])
@pytest.mark.parametrize("kwargs", [{}, {"density": True}, {"weights": True}, {"range": [[0, 0.5], [0, 2]]}])
def test_histogram2d_and_histogramdd_are_numpys(bins: Any, kwargs: dict[str, Any]) -> None:
    x, y, w = RNG.random(500), RNG.random(500) * 3, RNG.random(500)
    want_kw = {**kwargs, "weights": w} if "weights" in kwargs else kwargs
    got_kw = {**kwargs, "weights": sl.asarray(w)} if "weights" in kwargs else kwargs
    for call in (sl.histogram2d, np.histogram2d):
        got = call(sl.asarray(x), sl.asarray(y), bins=bins, **got_kw)
        for g, want in zip(got, np.histogram2d(x, y, bins=bins, **want_kw), strict=True):
            assert isinstance(g, sl.LazyArray) and g.get().dtype == want.dtype
            np.testing.assert_allclose(g.get(), want, rtol=1e-12)
    if isinstance(bins, np.ndarray):
        return  # histogramdd takes edges per dimension only
    pts = np.stack([x, y], 1)
    h, edges = sl.histogramdd(sl.asarray(pts), bins=bins, **got_kw)
    wh, wedges = np.histogramdd(pts, bins=bins, **want_kw)
    np.testing.assert_allclose(h.get(), wh, rtol=1e-12)
    assert len(edges) == len(wedges) and all(np.array_equal(a.get(), b) for a, b in zip(edges, wedges, strict=True))


def test_histogram2d_shape_errors_name_the_shapes() -> None:
    with pytest.raises(ValueError, match=r"x and y of one length, 1-d \(got shapes \(3,\) and \(4,\)\)"):
        sl.histogram2d(sl.asarray(np.ones(3)), sl.asarray(np.ones(4)))
    with pytest.raises(ValueError, match=r"an \(N, D\) array of points \(got shape \(2, 2, 2\)\)"):
        sl.histogramdd(sl.asarray(np.ones((2, 2, 2))))


def test_bincount_and_histogram_refuse_tracing() -> None:
    @sl.jit
    def f(x: Any) -> Any:
        return sl.bincount(x)

    with pytest.raises(RuntimeError, match="bincount cannot be traced by sl.jit"):
        f(np.array([1, 2]))
