"""Indexing and array manipulation at NumPy's edges: a '...' between index arrays, nested lists
of bools, axis 0 or -1 of 0-d data, empty axes, joins with ``dtype=``/``casting=``/``out=``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl


def _same(expected: Any, got: Any) -> None:
    expected, got = np.asarray(expected), np.asarray(got)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    np.testing.assert_array_equal(got, expected)


A3 = np.arange(24).reshape(2, 3, 4)


@pytest.mark.parametrize("key", [
    (slice(None), [1, 0], Ellipsis, 1),      # the '...' stands for no axis, and still separates
    ([1, 0], Ellipsis, [2, 3]),
    (Ellipsis, [1, 0], 2),                   # adjacent: in place
    (0, Ellipsis, [1, 2]),
    ([[0], [1]], slice(None), [0, 3]),
])
def test_a_key_with_index_arrays_lays_out_axes_as_numpys(key: tuple[Any, ...]) -> None:
    _same(A3[key], sl.asarray(A3)[key].get())
    expected, x = A3.copy(), sl.asarray(A3)
    value = -np.arange(A3[key].size).reshape(A3[key].shape)
    expected[key] = value
    x[key] = value
    _same(expected, x.get())


@pytest.mark.parametrize("key", [
    (None, [1, 0]), ([1, 0], None, slice(1, None)), (True, [1, 0]), ([1], False), ([0, 1], None, [2, 1]),
    ([0, 1], True, [2, 1]), (slice(None), [0, 2], None), (0, None, [1, 2]), (None, 1, Ellipsis, [0, 3]),
    ([[0], [1]], True, slice(None), None), (True, True, [1]), (True, 0), (np.array(True), [1, 0], None, 2),
    (np.False_, Ellipsis, [[0], [1]]), (None, [], True), ([1], slice(None), False, slice(None)),
], ids=repr)
@pytest.mark.parametrize("where", ["host", "device"])
def test_none_and_boolean_scalars_beside_index_arrays_are_numpys(key: tuple[Any, ...], where: str) -> None:
    """A ``None`` is a new axis of 1 that keeps the arrays beside it apart (their result first); a
    boolean scalar is an advanced index of shape (1,) (True) or (0,) (False): read, assigned and
    ``ufunc.at`` as NumPy's."""
    dev = tuple(sl.asarray(np.asarray(k)) if isinstance(k, list) and k else k for k in key) if where == "device" else key
    _same(A3[key], sl.asarray(A3)[dev].get())
    for value in (-np.arange(A3[key].size).reshape(A3[key].shape), np.int64(-5)):
        expected, x = A3.copy(), sl.asarray(A3)
        expected[key] = value
        x[dev] = value
        _same(expected, x.get())
    expected, x = A3.copy(), sl.asarray(A3)
    np.add.at(expected, key, 10)
    np.add.at(x, dev, 10)
    _same(expected, x.get())


def test_none_and_boolean_scalars_beside_index_arrays_match_numpy_on_random_keys() -> None:
    """Random keys of ``None``, booleans, integers, slices, '...' and index arrays (some out of
    bounds, some that do not broadcast) into arrays of 0 to 3 dimensions: the result or the error
    type of reading and of assignment are NumPy's."""
    rng = np.random.default_rng(7)

    def item() -> Any:
        r = rng.integers(0, 8)
        if r < 3:
            return [None, True, False, np.array(True)][int(rng.integers(0, 4))]
        if r == 3:
            return Ellipsis
        if r == 4:
            return slice(int(rng.integers(-3, 3)), int(rng.integers(-3, 4)), [1, 2, -1, None][int(rng.integers(0, 4))])
        if r == 5:
            return int(rng.integers(-2, 2))
        return rng.integers(-2, 2, tuple(int(n) for n in rng.integers(0, 3, rng.integers(0, 3)))).tolist()

    def outcome(f: Any, *args: Any) -> Any:
        try:
            return f(*args)
        except Exception as e:  # noqa: BLE001 - the same type of error
            return type(e)

    def read(x: Any, key: Any) -> Any:
        return np.asarray(x[key])

    def write(x: Any, key: Any, value: Any) -> Any:
        x[key] = value
        return np.asarray(x)

    ok = 0
    for _ in range(400):
        a = rng.integers(0, 9, tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 4))))
        key = [item() for _ in range(int(rng.integers(1, 4)))]
        key.insert(int(rng.integers(0, len(key) + 1)), rng.integers(-2, 2, int(rng.integers(0, 3))))
        key = tuple(key)
        want, got = outcome(read, a, key), outcome(read, sl.asarray(a), key)
        if isinstance(want, type):
            assert got is want, key
        else:
            _same(want, got)
            ok += 1
        value = rng.integers(10, 20, np.shape(want)[len(np.shape(want)) // 2:])
        want, got = outcome(write, a.copy(), key, value), outcome(write, sl.asarray(a), key, value)
        if isinstance(want, type):
            assert got is want, key
        else:
            _same(want, got)
    assert ok > 100  # (most keys are valid)


@pytest.mark.parametrize("key", [
    (None, [0, 5]), ([0, 5], None), (None, slice(None), [1, -9]), (None, Ellipsis, [[0], [4]]),
    (None, [0, 5], slice(None), None), (None, slice(0, 0), [0, 7]), (slice(None), [0, 9]),
], ids=repr)
@pytest.mark.parametrize("where", ["host", "device"])
def test_a_position_out_of_bounds_beside_new_axes_names_numpys_axis(key: tuple[Any, ...], where: str) -> None:
    """One index array with a position out of bounds, beside ``None``: reading, assignment and
    ``ufunc.at`` (binary and unary) raise NumPy's ``IndexError``, which names the axis of the array
    indexed (not counting the new axes), also where the positions are on the device and the step
    checks them."""
    dev = tuple(sl.asarray(np.asarray(k)) if isinstance(k, list) else k for k in key) if where == "device" else key
    a = np.arange(12.0).reshape(3, 4)

    def read(x: Any, k: Any) -> Any:
        return x[k]

    def write(x: Any, k: Any) -> None:
        x[k] = 1.0

    for f, g in ((read, read), (write, write), (lambda x, k: np.add.at(x, k, 1.0), lambda x, k: sl.add.at(x, k, 1.0)),
                 (np.negative.at, sl.negative.at)):
        with pytest.raises(IndexError) as want:
            f(a.copy(), key)
        x = sl.asarray(a)
        with pytest.raises(IndexError) as got:
            y = g(x, dev)
            (x if y is None else y).get()
        assert str(got.value) == str(want.value)


def test_a_nested_list_of_bools_is_a_mask() -> None:
    b = np.arange(6).reshape(2, 3)
    k = [[True, False, True], [False, True, False]]
    _same(b[k], sl.asarray(b)[k].get())
    expected, x = b.copy(), sl.asarray(b)
    expected[k] = -1
    x[k] = -1
    _same(expected, x.get())
    _same(b[[True, 1]], sl.asarray(b)[[True, 1]].get())  # (a mixed list is integers)
    with pytest.raises(IndexError, match="too many indices"):
        sl.asarray(np.arange(3))[[[True, False, True]]]


@pytest.mark.parametrize("name, call", [
    ("repeat", lambda m, s, ax: m.repeat(s, 2, axis=ax)),
    ("take", lambda m, s, ax: m.take(s, [0], axis=ax)),
    ("argsort", lambda m, s, ax: m.argsort(s, axis=ax)),
    ("squeeze", lambda m, s, ax: m.squeeze(s, axis=ax)),
    ("compress", lambda m, s, ax: m.compress([True], s, axis=ax)),
    ("argpartition", lambda m, s, ax: m.argpartition(s, 0, axis=ax)),
])
@pytest.mark.parametrize("axis", [0, -1])
def test_axis_0_or_minus_1_of_0_d_data_is_its_one_element(name: str, call: Any, axis: int) -> None:
    data = np.array(5)
    _same(call(np, data, axis), call(sl, sl.asarray(data), axis).get())
    with pytest.raises(np.exceptions.AxisError):
        call(sl, sl.asarray(data), 1)


def test_empty_axes_partition_and_repeat_as_numpys() -> None:
    e = np.zeros(0)
    _same(np.partition(e, 5), sl.partition(sl.asarray(e), 5).get())
    _same(np.argpartition(np.zeros((2, 0)), 0), sl.argpartition(sl.asarray(np.zeros((2, 0))), 0).get())
    _same(np.repeat(e, []), sl.repeat(sl.asarray(e), []).get())
    _same(np.repeat(e, -1), sl.repeat(sl.asarray(e), -1).get())
    _same(np.repeat(np.zeros((2, 0)), [], axis=1), sl.repeat(sl.asarray(np.zeros((2, 0))), [], axis=1).get())
    with pytest.raises(ValueError):
        sl.repeat(sl.asarray(np.zeros(3)), -1)


@pytest.mark.parametrize("mode", ["mean", "median"])
@pytest.mark.parametrize("data", [[True, False], [True, False, False], [3, 4], [1.0, 2.0]])
def test_pad_statistics_of_bools_are_cast_not_rounded(mode: str, data: list[Any]) -> None:
    a = np.array(data)
    _same(np.pad(a, (1, 0), mode=mode), sl.pad(sl.asarray(a), (1, 0), mode=mode).get())


@pytest.mark.parametrize("name", ["concatenate", "stack"])
def test_joins_take_dtype_casting_and_out(name: str) -> None:
    xs = [np.ones(2, np.int8), np.full(2, 2.5)]
    join = getattr(np, name)
    _same(join(xs, dtype=np.float32), getattr(sl, name)([sl.asarray(x) for x in xs], dtype=np.float32).get())
    _same(join(xs, dtype=np.int8, casting="unsafe"),
          getattr(sl, name)([sl.asarray(x) for x in xs], dtype=np.int8, casting="unsafe").get())
    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        getattr(sl, name)([sl.asarray(x) for x in xs], dtype=np.int8)
    with pytest.raises(TypeError, match="according to the rule 'no'"):
        getattr(sl, name)([sl.asarray(x) for x in xs], casting="no")
    out = sl.zeros(join(xs).shape, dtype=np.float32)
    assert getattr(sl, name)([sl.asarray(x) for x in xs], out=out) is out
    _same(join(xs).astype(np.float32), out.get())
    with pytest.raises(TypeError, match="only takes `out` or `dtype`"):
        getattr(sl, name)([sl.asarray(x) for x in xs], out=out, dtype=np.float32)


@pytest.mark.parametrize("position", [5, -4])
def test_a_device_position_out_of_bounds_is_named_as_given(position: int) -> None:
    x = sl.asarray(np.zeros((3, 4)))
    x[sl.asarray(np.array([position]))] = 1
    with pytest.raises(IndexError, match=f"index {position} is out of bounds for axis 0 with size 3"):
        x.get()


@pytest.mark.parametrize("start, stop, step, dtype", [
    (2**63 - 5, 2**63, 1, np.uint64), (2**64 - 3, 2**64 - 1, 1, np.uint64), (2**63 + 10, 2**63, -3, np.uint64),
    (2**63 - 5, 2**63, 1, np.int64), (5, 0, -1, np.uint64), (2**63 - 5, 2**63, 1, None), (0, 10, 3, np.int8),
])
def test_arange_of_integers_past_int64_is_numpys(start: int, stop: int, step: int, dtype: Any) -> None:
    """int64 and uint64 bounds promote to float64, but with an integer dtype NumPy counts exactly."""
    _same(np.arange(start, stop, step, dtype=dtype), sl.arange(start, stop, step, dtype=dtype).get())


@pytest.mark.parametrize("data, obj, values, axis", [
    (np.arange(5.0), slice(4, 5), [7.0, 8.0, 9.0], None),  # a slice of one position: all the values there
    (np.arange(5), [1, 3], [[7, 8]], None),                # leading 1s of the values dropped
    (np.zeros((5, 4)), slice(-2, 0, -6), [], 1),           # nothing inserted
    (np.arange(6.0).reshape(2, 3), [1], [[7], [8]], 1),
    (np.arange(6.0).reshape(2, 3), [0, 2], [[1, 2], [3, 4]], 1),
    (np.zeros((3, 4)), [], np.ones((3, 0)), None),  # no position: NumPy's advanced assignment of an empty value
    (np.zeros((3, 4)), slice(1, 1), np.ones((2, 0, 4)), 0),
    (np.zeros(2), np.array([], int), [[], [], []], 0),
])
def test_insert_places_values_as_numpys(data: np.ndarray, obj: Any, values: Any, axis: Any) -> None:
    _same(np.insert(data, obj, values, axis=axis), sl.insert(sl.asarray(data), obj, values, axis=axis).get())


@pytest.mark.parametrize("key, value", [
    ((slice(None), True), 9), ((slice(None), True), np.array([7.0, 8.0, 9.0])), ((Ellipsis, False), 9),
    ((True, slice(None)), np.array([7.0, 8.0, 9.0])), ((None, Ellipsis, True), 9), ((None, False, Ellipsis), 9),
])
def test_assignment_through_a_0_d_boolean_beside_slices(key: tuple[Any, ...], value: Any) -> None:
    expected, x = np.arange(6.0).reshape(2, 3), sl.asarray(np.arange(6.0).reshape(2, 3))
    expected[key] = value
    x[key] = value
    _same(expected, x.get())
