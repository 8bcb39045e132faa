"""Sorting, searching, counting and index utilities against NumPy 2: the cases a differential
fuzz found apart (argument spellings NumPy takes, its order of checks, empty and 0-d data, NaN
in ``digitize``'s bins). Each test runs the same call on NumPy and on stitchlab and compares the
result (dtype, shape, values) or the exception type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stitchlab as sl


def on_device(value: Any) -> Any:
    """``value`` with its NumPy arrays (also inside a list or tuple) as stitchlab arrays."""
    if isinstance(value, np.ndarray):
        return sl.asarray(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(on_device(v) for v in value)
    return value


def fetched(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [fetched(v) for v in value]
    return sl.asnumpy(value) if isinstance(value, sl.LazyArray) else np.asarray(value)


def assert_same(got: Any, want: Any) -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
        return
    got, want = fetched(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def both(np_call: Callable[..., Any], sl_call: Callable[..., Any], *args: Any, device: bool = True, **kwargs: Any) -> None:
    """``sl_call`` gives NumPy's result, or raises the exception type NumPy raises. ``device``:
    the NumPy arrays among the arguments go to stitchlab as stitchlab arrays (else as they are)."""
    try:
        want = np_call(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - any NumPy error is the one to match
        with pytest.raises(type(error)):
            fetched(sl_call(*(on_device(a) if device else a for a in args),
                            **{k: on_device(v) if device else v for k, v in kwargs.items()}))
        return
    got = sl_call(*(on_device(a) if device else a for a in args), **{k: on_device(v) if device else v for k, v in kwargs.items()})
    assert_same(got, want)


# sort, argsort, partition, lexsort


@pytest.mark.parametrize("kind", ["q", "quick", "Quick", "s", "merge", "H", b"mergesort", "", "x", 3, "stable"])
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sort_kind_is_read_as_numpy_reads_it(name: str, kind: Any) -> None:
    a = np.array([3.0, np.nan, -1.0, 2.0, -1.0])
    if name == "argsort":  # (stitchlab's ties are always in index order: compare with NumPy's stable)
        both(lambda x, kind: np.argsort(x, kind=kind) * 0 + np.argsort(x, kind="stable"), sl.argsort, a, kind=kind)
    else:
        both(np.sort, sl.sort, a, kind=kind)


def test_sort_kind_and_stable_together_are_refused() -> None:
    both(np.sort, sl.sort, np.array([2, 1]), kind="stable", stable=True)
    both(np.argsort, sl.argsort, np.array([2, 1]), kind="quicksort", stable=False)


@pytest.mark.parametrize("method, args", [("sort", ()), ("partition", (1,))])
def test_in_place_sort_and_partition_methods_refuse_axis_none(method: str, args: tuple[Any, ...]) -> None:
    a = np.array([[3, 1], [2, 0]])
    with pytest.raises(TypeError):
        getattr(a.copy(), method)(*args, axis=None)
    x = sl.asarray(a)
    with pytest.raises(TypeError):
        getattr(x, method)(*args, axis=None)
    assert_same(x, a)  # (untouched)


@pytest.mark.parametrize("shape, kth, axis", [((0, 3), 5, 1), ((0, 3), -9, 1), ((1, 0, 3), 3, -1), ((2, 0), 5, 0),
                                              ((4, 2, 0), -5, 0), ((0, 3), 7, None), ((3,), 3, None)])
@pytest.mark.parametrize("name", ["partition", "argpartition"])
def test_partition_of_empty_data_takes_any_kth(name: str, shape: tuple[int, ...], kth: int, axis: Any) -> None:
    a = np.zeros(shape, np.float32)
    both(lambda *a, **k: getattr(np, name)(*a, **k).shape, lambda *a, **k: getattr(sl, name)(*a, **k).shape,
         a, kth, axis=axis)


@pytest.mark.parametrize("axis", [0, -1, 1, -2, 5])
def test_lexsort_of_0d_keys_checks_the_axis(axis: int) -> None:
    both(np.lexsort, sl.lexsort, [np.array(4), np.array(1.5)], axis=axis)


# searchsorted and digitize


@pytest.mark.parametrize("side", ["left", "right", b"right", "L", "r", "RIGHT", "", None, 1])
def test_searchsorted_side_is_checked_as_numpy(side: Any) -> None:
    a, v = np.array([1, 2, 2, 3]), np.array([2, 0, 5])
    both(np.searchsorted, sl.searchsorted, a, v, side=side)
    both(lambda a, v, **k: a.searchsorted(v, **k), lambda a, v, **k: a.searchsorted(v, **k), a, v, side=side)


SORTERS = [np.array([1, 2, 0]), [1, 2, 0], np.array([1, 2, 0], np.int32), np.array([2, 0, 1, 1]),
           np.array([[1, 2, 0]]), np.array([1.0, 2.0, 0.0]), [True, False, True], np.array([1, 2, 3]),
           np.array([-1, 0, 1]), [], np.array([], np.int64)]


@pytest.mark.parametrize("sorter", SORTERS, ids=repr)
@pytest.mark.parametrize("v", [np.array([2.5, -1.0, 9.0]), np.zeros((2, 0))], ids=["values", "no-values"])
def test_searchsorted_sorter_is_checked_as_numpy(sorter: Any, v: np.ndarray) -> None:
    """NumPy's sorter: 1-d integers (``TypeError``), of ``a``'s size (``ValueError``), positions in
    range when something is looked up (``ValueError``; with nothing to look up none is read)."""
    a = np.array([3.0, 1.0, 2.0])
    both(np.searchsorted, sl.searchsorted, a, v, sorter=sorter, device=False)
    s = np.asarray(sorter)
    if s.size == 0 or s.dtype.kind not in "iu" or s.shape != (3,) or np.array_equal(np.sort(s), [0, 1, 2]):
        # (a device sorter's positions are checked when its gather runs: an IndexError there)
        both(np.searchsorted, sl.searchsorted, a, v, sorter=sorter if isinstance(sorter, list) else s)


def test_searchsorted_on_device_sorter() -> None:
    a = np.array([3.0, 1.0, 2.0, np.nan, 0.5])
    sorter = np.argsort(a)
    both(np.searchsorted, sl.searchsorted, a, np.array([0.0, 1.5, 3.0, np.nan, np.inf]), sorter=sorter, side="right")
    with pytest.raises(TypeError):  # (checked before anything runs, as NumPy)
        sl.searchsorted(sl.asarray(a), 1.0, sorter=sl.asarray(sorter.astype(np.float64)))
    with pytest.raises(ValueError):
        sl.searchsorted(sl.asarray(a), 1.0, sorter=sl.asarray(sorter[:-1]))


BINS_WITH_NAN = [[-3.0, -1.2, 0.2, 1.4, np.nan], [1.0, np.nan, 3.0], [np.nan, 1.0, 2.0], [1.0, 1.0, np.nan],
                 [np.nan, np.nan], [3.0, 2.0, np.nan], [-np.inf, -0.9, np.nan], [np.nan, 2.0, 1.0], [2.0, np.nan, 1.0]]


@pytest.mark.parametrize("bins", BINS_WITH_NAN, ids=repr)
@pytest.mark.parametrize("right", [False, True])
def test_digitize_reads_nan_bins_as_numpy(bins: list[float], right: bool) -> None:
    """NumPy takes the bins' direction from the first edge that differs from the first (a NaN
    differs), and a NaN never turns the direction back: sorted bins with NaNs last are
    increasing. Host bins are checked as NumPy checks them; stitchlab bins take its direction."""
    x = np.array([-5.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.nan, np.inf, -np.inf])
    b = np.array(bins)
    both(np.digitize, sl.digitize, x, b, right=right, device=False)
    try:
        want = np.digitize(x, b, right=right)
    except ValueError:
        return  # (stitchlab bins are not checked: that would read them back)
    assert_same(sl.digitize(sl.asarray(x), sl.asarray(b), right=right), want)


@pytest.mark.parametrize("bins", [[], [5.0], [1, 1, 1], [2, 1, 0], [0, 1, 2], [1, 2, 1], [1, 1, 0, 0], [0, 0, 1, 0]])
def test_digitize_host_bins_direction_and_errors(bins: list[float]) -> None:
    both(np.digitize, sl.digitize, np.array([-1, 0, 1, 2, 3]), bins, device=False)


# put, take_along_axis, put_along_axis, choose, select


@pytest.mark.parametrize("ind, values", [(0, []), (0, [1.0]), ([], [1.0]), ([], [])])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_put_into_an_empty_array_raises_as_numpy(ind: Any, values: Any, mode: str) -> None:
    def put(np_or_sl: Any) -> Callable[..., Any]:
        def call(a: Any, ind: Any, v: Any, mode: str) -> Any:
            a = a.copy() if np_or_sl is np else sl.asarray(a)
            np_or_sl.put(a, ind, v, mode=mode)
            return a
        return call

    both(put(np), put(sl), np.zeros(0), ind, values, mode, device=False)


def _put_along_axis(np_or_sl: Any) -> Callable[..., Any]:
    def call(a: Any, indices: Any, values: Any, axis: Any) -> Any:
        a = a.copy() if isinstance(a, np.ndarray) else a
        np_or_sl.put_along_axis(a, indices, values, axis)
        return a
    return call


@pytest.mark.parametrize("indices", [np.array([True, False, True, False]), np.array([1.0, 2.0]), np.array([3, 0])],
                         ids=["bool", "float", "int"])
def test_put_along_axis_none_takes_integer_positions_only(indices: np.ndarray) -> None:
    """A boolean array is no mask here: NumPy's ``IndexError`` (stitchlab set the masked elements)."""
    both(_put_along_axis(np), _put_along_axis(sl), np.arange(4.0), indices, 9.0, None)
    both(np.take_along_axis, sl.take_along_axis, np.arange(4.0), indices, axis=None)


@pytest.mark.parametrize("indices, axis", [(np.array([1, 0]), -3), (np.array([1.0, 0.0]), 0), (np.array([[True]]), 1),
                                           (np.array([[1, 0]]), 2)], ids=["axis", "float", "bool", "axis2"])
def test_along_axis_checks_come_in_numpys_order(indices: np.ndarray, axis: int) -> None:
    """Axis first (``AxisError``), then the positions' type (``IndexError``), then their ndim."""
    a = np.arange(6).reshape(2, 3)
    both(np.take_along_axis, sl.take_along_axis, a, indices, axis=axis)
    both(_put_along_axis(np), _put_along_axis(sl), a, indices, 0, axis)


@pytest.mark.parametrize("index, choices", [(np.array([True]), np.zeros((1, 0), np.uint32)),
                                            (np.array([5]), [np.zeros((0, 1))]),
                                            (np.array([[3], [-1]]), [np.zeros((2, 0)), np.ones(0)]),
                                            (np.array([5]), [np.zeros((2, 1))])])
def test_choose_of_an_empty_result_reads_no_entry(index: np.ndarray, choices: Any) -> None:
    both(np.choose, sl.choose, index, choices)
    both(np.choose, sl.choose, index, choices, device=False)


def test_select_broadcasts_before_it_checks_the_conditions() -> None:
    both(np.select, sl.select, [np.array([], bool), np.array([], np.int64)], [np.array([], np.uint32), 1],
         default=np.array([1, 2, 3]))
    both(np.select, sl.select, [np.array([True]), np.array([1, 0])], [np.array([1, 2]), np.array([1, 2, 3])])


# unravel_index, ravel_multi_index, ix_, indices


@pytest.mark.parametrize("positions", [np.array([True, False]), np.array(True), np.ones((2, 2), bool)], ids=repr)
@pytest.mark.parametrize("shape", [(2, 3), (3,), (5, 0)])
def test_unravel_index_takes_bool_positions(positions: np.ndarray, shape: tuple[int, ...]) -> None:
    both(np.unravel_index, sl.unravel_index, positions, shape)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_ravel_multi_index_takes_bool_coordinates(mode: str) -> None:
    both(np.ravel_multi_index, sl.ravel_multi_index, (np.array([True, False]), np.array([1, 0])), (2, 3), mode=mode)


@pytest.mark.parametrize("coords", [(np.array([0]), np.array([0])), (np.array([1, 0, 2]), np.array([2, 0, 1])),
                                    (np.array([], np.int64), np.array([], np.int64))], ids=["one", "three", "none"])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", ("clip", "wrap")])
def test_ravel_multi_index_into_zero_size_dims(coords: tuple[np.ndarray, ...], mode: Any) -> None:
    both(np.ravel_multi_index, sl.ravel_multi_index, coords, (0, 3), mode=mode)


@pytest.mark.parametrize("order", ["C", "F", "A", "K", None, "x"])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_unravel_and_ravel_check_order_as_numpy(order: Any, dtype: type) -> None:
    both(np.unravel_index, sl.unravel_index, np.array([1, 4]).astype(dtype), (2, 3), order=order)
    both(np.ravel_multi_index, sl.ravel_multi_index, (np.array([1, 0]).astype(dtype), np.array([2, 1])), (2, 3),
         order=order)


@pytest.mark.parametrize("seq", [np.array([], np.float64), np.array([], np.float32), [], np.array([], bool), [1, 2]],
                         ids=repr)
def test_ix_keeps_an_empty_arrays_dtype(seq: Any) -> None:
    both(np.ix_, sl.ix_, seq)
    both(np.ix_, sl.ix_, seq, device=False)


@pytest.mark.parametrize("dims", [(3,), (2,), (2, 1), (1, 3), ()])
@pytest.mark.parametrize("sparse", [False, True])
def test_indices_of_bool_dtype_as_numpy(dims: tuple[int, ...], sparse: bool) -> None:
    """NumPy's ``arange`` of booleans stops at length 2 (``TypeError``); stitchlab cast 0, 1, 2."""
    both(np.indices, sl.indices, dims, dtype=bool, sparse=sparse)


@pytest.mark.parametrize("start, stop", [(0, 3), (0, 2), (1, 3), (-1, 1), (5, 5)])
def test_arange_of_bool_dtype_as_numpy(start: int, stop: int) -> None:
    both(np.arange, sl.arange, start, stop, dtype=bool)


# packbits, unpackbits, bincount


@pytest.mark.parametrize("axis", [None, 0, -1, 1])
def test_packbits_and_unpackbits_of_0d_data(axis: Any) -> None:
    both(np.packbits, sl.packbits, np.array(7), axis=axis)
    both(np.unpackbits, sl.unpackbits, np.array(7, np.uint8), axis=axis)


@pytest.mark.parametrize("bitorder", ["big", "little", "l", "lit", "bogus", "L", "B", "x", "", None])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_unpackbits_reads_bitorder_by_its_first_letter(bitorder: Any, dtype: type) -> None:
    """NumPy's ``unpackbits`` takes any string that starts with ``l`` or ``b`` (checked before the
    dtype); ``packbits`` only ``"big"`` and ``"little"``."""
    a = np.array([1, 6, 255]).astype(dtype)
    both(np.unpackbits, sl.unpackbits, a, bitorder=bitorder)
    both(np.packbits, sl.packbits, a, bitorder=bitorder)


@pytest.mark.parametrize("x, kwargs", [([], {}), ([], {"weights": []}), ([], {"minlength": 3}),
                                       (np.array([], np.uint8), {"weights": np.array([1.0, 2.0])}),
                                       (np.array([], np.int64), {"weights": np.array([1.0, 2.0]), "minlength": 2}),
                                       (np.array([], np.float64), {}), ([[]], {})], ids=repr)
def test_bincount_of_nothing_as_numpy(x: Any, kwargs: dict[str, Any]) -> None:
    both(np.bincount, sl.bincount, x, **kwargs)


@pytest.mark.parametrize("out_dtype", [np.float64, np.int64, np.float32])
@pytest.mark.parametrize("axis", [None, 1])
def test_compress_writes_into_out(axis: Any, out_dtype: type) -> None:
    """NumPy's ``compress(..., out=)``: the result cast ``unsafe`` into ``out``, which is returned."""
    a = np.arange(6.0).reshape(2, 3) + 0.5
    cond = [True, False, True]
    want_out = np.zeros((2, 2) if axis == 1 else (2,), out_dtype)
    want = np.compress(cond, a, axis=axis, out=want_out)
    for out in (sl.zeros(want_out.shape, dtype=out_dtype), np.zeros(want_out.shape, out_dtype)):
        got = sl.compress(cond, sl.asarray(a), axis=axis, out=out)
        assert got is out
        assert_same(out, want)
    out = sl.zeros(want_out.shape, dtype=out_dtype)
    assert sl.asarray(a).compress(cond, axis=axis, out=out) is out
    assert_same(out, want)
    with pytest.raises(ValueError):
        np.compress(cond, a, axis=axis, out=np.zeros(7))
    with pytest.raises(ValueError):
        sl.compress(cond, sl.asarray(a), axis=axis, out=sl.zeros(7))
