"""``polyval``, ``vander``, ``unwrap``, ``partition``/``argpartition``, ``ix_`` and the index
helpers (``tril_indices``, ``triu_indices``, their ``_from`` forms, ``diag_indices``,
``diag_indices_from``) against NumPy on the numpy backend: values and dtypes exactly, errors, and
``np.<name>`` on stitchlab arrays."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(11)


def _same(got: Any, want: np.ndarray) -> None:
    assert isinstance(got, sl.LazyArray), type(got)
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(g, want)


COEFFICIENTS = [[3, 0, 1], [1.5, -2.0, 0.25, 4.0], np.array([2, 1], np.int8), np.array([0.5, 1.0], np.float32)]
POINTS = [np.array([1.0, 2.0, -3.5]), np.array([1, 2, 3], np.int32), np.full((2, 3), 2.5, np.float32), np.array([1, 2], np.int8)]


@pytest.mark.parametrize("x", POINTS, ids=lambda x: f"{x.dtype}{x.shape}")
def test_polyval_is_numpys(x: np.ndarray) -> None:
    for p in COEFFICIENTS:
        _same(sl.polyval(p, sl.asarray(x)), np.polyval(p, x))
        _same(sl.polyval(sl.asarray(np.asarray(p)), x), np.polyval(p, x))
        _same(np.polyval(p, sl.asarray(x)), np.polyval(p, x))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        sl.polyval(np.float64(2.0), sl.asarray(x))


def test_polyval_is_one_kernel() -> None:
    x = sl.asarray(RNG.standard_normal((256, 512)).astype(np.float32))
    assert len(sl.explain(sl.tanh(sl.polyval([0.5, -1.0, 2.0, 0.1], x)), device="H200").kernels) == 1


@pytest.mark.parametrize("x", [np.array([1, 2, 3]), np.array([1.5, -2.0, 0.5], np.float32), np.array([True, False]),
                               np.array([2, 3], np.int8), np.zeros(0)], ids=lambda x: f"{x.dtype}{x.shape}")
def test_vander_is_numpys(x: np.ndarray) -> None:
    for n in (None, 0, 1, 2, 4):
        for increasing in (False, True):
            _same(sl.vander(sl.asarray(x), n, increasing), np.vander(x, n, increasing))
    with pytest.raises(ValueError, match="x must be a one-dimensional array or sequence"):
        sl.vander(sl.asarray(np.ones((2, 2))))


@pytest.mark.parametrize("p", [np.array([0.0, 3.0, 6.5, 0.5, -3.0, 9.0]), (RNG.standard_normal((3, 7)) * 5).astype(np.float32),
                               np.array([0, 5, 11, 1, 9]), np.array([1.0])], ids=lambda p: f"{p.dtype}{p.shape}")
def test_unwrap_is_numpys(p: np.ndarray) -> None:
    for axis in range(p.ndim):
        for kwargs in ({}, {"discont": 1.0}, {"period": 6}, {"period": 5.0}, {"period": 7}):
            _same(sl.unwrap(sl.asarray(p), axis=axis, **kwargs), np.unwrap(p, axis=axis, **kwargs))


def test_partition_and_argpartition_are_valid_partitions() -> None:
    a = RNG.integers(0, 10, (4, 7))
    x = sl.asarray(a)
    for axis in (-1, 0, None):
        for kth in (0, 3, -1, [1, 2]):
            got, want = sl.partition(x, kth, axis).get(), np.partition(a, kth, axis)
            along = 0 if axis is None else axis
            ks = np.atleast_1d(kth) % want.shape[along]
            np.testing.assert_array_equal(np.take(got, ks, along), np.take(want, ks, along))  # what NumPy fixes
            np.testing.assert_array_equal(np.sort(got, along), np.sort(want, along))
            pos = sl.argpartition(x, kth, axis).get()
            np.testing.assert_array_equal(np.take_along_axis(a.ravel() if axis is None else a, pos, along), got)
    _same(np.partition(x, 2), np.sort(a))  # (stitchlab's partition is the sort)


def test_partition_raises_numpys_errors() -> None:
    for kth in (5, -6, [1, 7], 1.5, True):
        for name in ("partition", "argpartition"):
            with pytest.raises((ValueError, TypeError)) as want:
                getattr(np, name)(np.arange(5), kth)
            with pytest.raises(want.type, match="^" + re.escape(str(want.value)) + "$"):
                getattr(sl, name)(sl.asarray(np.arange(5)), kth)
    with pytest.raises(ValueError, match="select kind must be 'introselect'"):
        sl.partition(sl.asarray(np.arange(5)), 1, kind="quick")


def test_ix_is_numpys() -> None:
    for args in (([0, 1], [2, 4]), ([True, False, True], [1]), ([],), (np.array([3, 1], np.int8), [0], [1, 2])):
        got, want = sl.ix_(*args), np.ix_(*args)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    with pytest.raises(ValueError, match="Cross index must be 1 dimensional"):
        sl.ix_(np.ones((2, 2), int))


def test_index_helpers_are_numpys() -> None:
    for n, k, m in ((3, 0, None), (4, 1, 6), (4, -2, 3), (0, 0, None)):
        for name in ("tril_indices", "triu_indices"):
            for g, w in zip(getattr(sl, name)(n, k, m), getattr(np, name)(n, k, m), strict=True):
                _same(g, w)
    a = np.ones((3, 5))
    for name in ("tril_indices_from", "triu_indices_from"):
        for g, w in zip(getattr(sl, name)(sl.asarray(a), 1), getattr(np, name)(a, 1), strict=True):
            _same(g, w)
        with pytest.raises(ValueError, match="input array must be 2-d"):
            getattr(sl, name)(sl.asarray(np.ones(3)))
    for g, w in zip(sl.diag_indices(4, 3), np.diag_indices(4, 3), strict=True):
        _same(g, w)
    cube = np.ones((3, 3, 3))
    for g, w in zip(sl.diag_indices_from(sl.asarray(cube)), np.diag_indices_from(cube), strict=True):
        _same(g, w)
    for bad, message in ((np.ones(3), "input array must be at least 2-d"), (np.ones((2, 3)), "All dimensions of input must be of equal length")):
        with pytest.raises(ValueError, match=message):
            sl.diag_indices_from(sl.asarray(bad))


def test_delete_is_numpys() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    x = sl.asarray(a)
    cases = [(7, 2), ([1, 9], 2), (np.array([0.5]), 2), (np.array([True, False, True, False]), 2), (slice(1, None, 2), 2),
             (-5, 2), (-1, 1), (1, None), ([], 0), (np.array([], int), 1), ([0, 0, 1], 1), (np.array([True, False]), 0),
             (3, None), (np.int8(2), 2)]
    for obj, axis in cases:
        try:
            want = np.delete(a, obj, axis)
        except (IndexError, ValueError) as err:
            with pytest.raises(type(err), match="^" + re.escape(str(err)) + "$"):
                sl.delete(x, obj, axis)
            continue
        _same(sl.delete(x, obj, axis), want)
    _same(sl.delete(x, sl.asarray(np.array([1, 2])), 2), np.delete(a, [1, 2], 2))  # positions on the device: read back
    _same(np.delete(x, 1, 0), np.delete(a, 1, 0))


def test_insert_is_numpys() -> None:
    a = np.arange(24).reshape(2, 3, 4).astype(np.int16)
    x = sl.asarray(a)
    cases = [(1, [7, 8, 9], 1), ([1], [[7], [8], [9]], 2), ([0, 2], [7, 8], 2), (1, 5.7, None), (slice(0, 3, 2), 9, 1),
             ([2, 0, 2], [1, 2, 3], 2), ([], 5, 0), (-1, 4, 0), (4, [[1, 2, 3]], 2), (0, a[:1] * 10, 0),
             (np.int64(2), -1, None), ([5], 1, 2), (-5, 1, 2), (4, 1, 2), (1, [1, 2], 2), (2, np.arange(6).reshape(2, 3), 2),
             (np.array([[1]]), 1, 0), (0, 40000, None), (1, [[[1, 2, 3, 4]]], 1)]
    for obj, values, axis in cases:
        try:
            want = np.insert(a, obj, values, axis)
        except (IndexError, ValueError, OverflowError) as err:
            with pytest.raises(type(err)):
                sl.insert(x, obj, values, axis)
            continue
        _same(sl.insert(x, obj, values, axis), want)
    _same(sl.insert(x, sl.asarray(np.array([1, 2])), sl.asarray(np.array([0.5, 2.5])), 2),  # device positions and values
          np.insert(a, [1, 2], [0.5, 2.5], 2))
    _same(np.insert(x, 1, 0, 0), np.insert(a, 1, 0, 0))
    with pytest.raises(IndexError, match=r"^index 9 is out of bounds for axis 2 with size 4$"):
        sl.insert(x, [1, 9], 0, 2)  # (NumPy's message names the shifted position, 10, and the new size, 6)
    with pytest.raises(ValueError, match="list of booleans.*flatnonzero"):
        sl.insert(x, [True, False], 0, 0)  # (NumPy 2.4 raises AttributeError)
    for mask, values in [(np.array([True, False, True, False]), [5, 6]), (np.array([False, True, False]), 9),
                         (np.zeros(4, bool), 1), (np.array([True] * 5), 3)]:  # NumPy 2's mask: before each True
        _same(sl.insert(x, mask, values, 2), np.insert(a, mask, values, 2))
    with pytest.raises(ValueError, match="boolean array argument obj to insert must be one dimensional"):
        sl.insert(x, np.ones((2, 2), bool), 0, 2)


POLYNOMIALS = [[1, 2], [9, 5, 4], np.array([1.5, -2.0, 0.25]), np.array([3], np.int32), np.array([2, 1], np.int8), 5,
               np.array([1.0, 2.0], np.float32)]


def _close(got: Any, want: Any, rtol: float = 1e-12) -> None:
    """``got`` is NumPy's ``want``: tuples item by item, arrays by dtype, shape and values within
    ``rtol``, numbers by value."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _close(g, w, rtol)
        return
    if np.ndim(want) == 0 and not isinstance(got, sl.LazyArray):
        assert got == want, (got, want)
        return
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("a", POLYNOMIALS, ids=lambda a: f"{np.asarray(a).dtype}{np.shape(a)}")
def test_polynomial_arithmetic_is_numpys(a: Any) -> None:
    """``polyadd``, ``polysub``, ``polymul``, ``polydiv`` of every pair (dtypes as NumPy's), as
    ``sl.<name>`` and as ``np.<name>`` on stitchlab arrays."""
    x = sl.asarray(np.asarray(a))
    for b in POLYNOMIALS:
        for name in ("polyadd", "polysub", "polymul"):
            want = getattr(np, name)(a, b)
            _same(getattr(sl, name)(x, b), want)
            _same(getattr(np, name)(x, b), want)
        if np.ndim(b) and np.asarray(b)[0] != 0:
            want = np.polydiv(a, b)
            _close(sl.polydiv(x, b), want, 0)
            _close(np.polydiv(x, sl.asarray(np.asarray(b))), want, 0)


@pytest.mark.parametrize(("a", "b"), [([0, 0, 1, 2], [3, 1]), (np.array([False, False, True]), [1.5, 2.0]),
                                      ([], [1, 2]), (np.array([], np.int8), np.array([0, 2], np.int8)),
                                      ([0.0, 0.0], [0.0, 4.0, 1.0]), (np.array([0, 7, -3], np.int16), 2)], ids=str)
def test_polymul_drops_leading_zeros_as_numpys_poly1d(a: Any, b: Any) -> None:
    _same(sl.polymul(sl.asarray(np.asarray(a)), b), np.polymul(a, b))
    _same(sl.polymul(b, sl.asarray(np.asarray(a))), np.polymul(b, a))
    with pytest.raises(ValueError, match="Polynomial must be 1d only"):
        sl.polymul(sl.asarray(np.ones((2, 2))), b)


@pytest.mark.parametrize("p", POLYNOMIALS[:5], ids=lambda a: f"{np.asarray(a).dtype}{np.shape(a)}")
def test_polynomial_derivatives_and_integrals_are_numpys(p: Any) -> None:
    x = sl.asarray(np.asarray(p))
    for m in (0, 1, 2, 4):
        _same(sl.polyder(x, m), np.polyder(p, m))
        _same(np.polyder(x, m), np.polyder(p, m))
        for k in (None, 3.0, [1.0, 2.0, 3.0, 4.0], [1.0, 2.0]):
            try:
                want = np.polyint(p, m, k)
            except ValueError as e:
                with pytest.raises(ValueError, match=re.escape(str(e))):
                    sl.polyint(x, m, k)
                continue
            _close(sl.polyint(x, m, k), want, 1e-15)
            _close(np.polyint(x, m, k), want, 1e-15)
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        sl.polyder(x, -1)
    with pytest.raises(ValueError, match="Order of integral must be positive"):
        sl.polyint(x, -1)


def test_polyder_and_polyint_of_0d_coefficients_raise_numpys_type_error() -> None:
    for call in (lambda m: m.polyder(np.array(3.0)), lambda m: m.polyder(2.0, 0), lambda m: m.polyint(np.array(3.0)),
                 lambda m: m.polyint(3, 2)):
        with pytest.raises(TypeError):
            call(np)
        with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
            call(sl)
    _close(sl.polyint(sl.asarray(np.array(3.0)), 0), np.polyint(np.array(3.0), 0))  # (m=0: p as it is)


@pytest.mark.parametrize("kwargs", [{}, {"w": True}, {"full": True}, {"cov": True}, {"cov": "unscaled", "w": True}],
                         ids=["plain", "weights", "full", "cov", "cov-unscaled"])
@pytest.mark.parametrize("columns", [1, 2])
def test_polyfit_is_numpys(kwargs: dict[str, Any], columns: int) -> None:
    x = np.linspace(-2, 3, 40)
    y = 3 * x**3 - x + 0.5 + RNG.standard_normal(40) * 0.1
    ys = y if columns == 1 else np.stack([y, 2 * y + 1], 1)
    if kwargs.get("w"):
        kwargs = kwargs | {"w": RNG.random(40)}
    want = np.polyfit(x, ys, 3, **kwargs)
    _close(sl.polyfit(sl.asarray(x), sl.asarray(ys), 3, **kwargs), want, 1e-9)
    _close(np.polyfit(sl.asarray(x), sl.asarray(ys), 3, **kwargs), want, 1e-9)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
def test_polyfit_full_gives_rcond_in_xs_float_dtype_as_numpy(dtype: Any) -> None:
    x = np.array([0.5, 6.0, 2.5, -1.5, 1.5, -0.25, -3.5], dtype)
    y = np.linspace(0.0, 1.0, 7)
    want = np.polyfit(x, y, 2, full=True)[4]
    got = sl.polyfit(sl.asarray(x), sl.asarray(y), 2, full=True)[4]
    assert type(got) is type(want) and got == want, (type(got), got, type(want), want)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.RankWarning")
def test_polyfit_warns_and_refuses_as_numpy() -> None:
    with pytest.warns(np.exceptions.RankWarning, match="Polyfit may be poorly conditioned"):
        sl.polyfit(sl.asarray(np.ones(5)), sl.asarray(np.arange(5.0)), 2)
    assert sl.polyfit(sl.arange(5), sl.arange(5), 1).dtype == np.polyfit(np.arange(5), np.arange(5), 1).dtype
    for bad in [{"deg": -1}, {"x": np.ones((2, 2))}, {"x": np.ones(0), "y": np.ones(0)}, {"y": np.ones((4, 2, 2))},
                {"y": np.ones(3)}, {"w": np.ones((4, 1))}, {"w": np.ones(3)}, {"cov": True, "deg": 4}]:
        args = {"x": np.arange(4.0), "y": np.arange(4.0), "deg": 1} | bad
        with pytest.raises((TypeError, ValueError)) as want:
            np.polyfit(**args)
        with pytest.raises(want.type, match=re.escape(str(want.value))):
            sl.polyfit(**{k: sl.asarray(v) if isinstance(v, np.ndarray) else v for k, v in args.items()})


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64])
def test_polyder_of_an_order_beyond_the_degree_is_numpys_empty_array(dtype: Any) -> None:
    """Each derivative drops a coefficient: past the last, NumPy's empty array (float64 or int64, as
    the first step made it); an order of 10**20 builds len(p) + 1 steps, not 10**20 (NumPy's own
    recursion stops at its depth limit)."""
    p = np.array([1, 2, 3], dtype)
    for m in (0, 1, 3, 4, 50):
        _same(sl.polyder(sl.asarray(p), m), np.polyder(p, m))
    seen, todo = set(), [sl.polyder(sl.asarray(p), 2000)._node]
    while todo:  # (the nodes of the graph built: not a chain of 2000 products)
        n = todo.pop()
        if id(n) not in seen:
            seen.add(id(n))
            todo.extend(n.inputs)
    assert len(seen) < 40
    _same(sl.polyder(sl.asarray(p), 10**20), np.polyder(p, 4))
