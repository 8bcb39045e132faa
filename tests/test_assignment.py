"""Assignment into stitchlab arrays (``stitchlab/frontend/assign.py``): ``x[key] = value`` with
every kind of NumPy index, ``x.fill``, ``x.sort()``, ``out=`` a stitchlab array, and NumPy's
functions that write into an argument, each against NumPy doing the same to a NumPy array; the
rebinding semantics (arrays built before keep the old value, wrapped data is not written), the
kernels a chain of assignments takes, and the errors.
"""

from __future__ import annotations

import re
import warnings
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

RNG = np.random.default_rng(2026)


def _same(a: np.ndarray, key: Any, value: Any, lazy_value: bool = False) -> None:
    """``x[key] = value`` on a stitchlab copy of ``a`` gives NumPy's result (or NumPy's error type)."""
    want = a.copy()
    x = sl.asarray(a.copy())
    try:
        want[key] = value
    except Exception as e:  # noqa: BLE001 - the same type of error, whatever it is
        with pytest.raises(type(e)):
            x[key] = sl.asarray(value) if lazy_value else value
        return
    x[key] = sl.asarray(value) if lazy_value and np.ndim(value) else value
    got = x.get()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want, err_msg=f"key {key!r}")


def _random_slice(n: int) -> slice:
    pick = lambda: None if RNG.random() < 0.3 else int(RNG.integers(-n - 2, n + 3))  # noqa: E731
    step = None if RNG.random() < 0.3 else int(RNG.choice([-3, -2, -1, 1, 2, 3, 5]))
    return slice(pick(), pick(), step)


def _random_key(shape: tuple[int, ...]) -> tuple[Any, ...]:
    key: list[Any] = []
    for n in shape:
        r = RNG.random()
        if r < 0.2:
            key.append(int(RNG.integers(-n, n)))
        elif r < 0.3:
            key.append(None)
            key.append(_random_slice(n))
        else:
            key.append(_random_slice(n))
    if RNG.random() < 0.3:  # an Ellipsis in place of the trailing axes
        key = key[: int(RNG.integers(0, len(key) + 1))] + [Ellipsis]
    return tuple(key)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_, np.float16])
def test_basic_keys_match_numpy(dtype: Any) -> None:
    for trial in range(150):
        shape = tuple(int(n) for n in RNG.integers(1, 7, size=int(RNG.integers(1, 4))))
        a = (RNG.standard_normal(shape) * 10).astype(dtype)
        key = _random_key(shape)
        view = np.empty(shape)[key].shape
        kind = trial % 4
        if kind == 0:  # a scalar
            value: Any = np.asarray(RNG.standard_normal() * 10).astype(dtype).item()
        elif kind == 1:  # the view's shape
            value = (RNG.standard_normal(view) * 10).astype(dtype)
        elif kind == 2:  # broadcast along the view's leading axes, with a leading axis of 1 to drop
            value = (RNG.standard_normal((1, 1) + view[-1:]) * 10).astype(np.float64)
        else:  # a shape that does not fit (an error, unless the view is empty or broadcasts)
            value = np.ones((3,) + view, dtype)
        _same(a, key, value, lazy_value=trial % 3 == 0)


def test_basic_assignment_is_one_fused_kernel_and_keeps_earlier_arrays() -> None:
    a = RNG.standard_normal((64, 256)).astype(np.float32)
    x = sl.asarray(a)
    before = x * 1  # built from x's old value
    x[:, :3] = 0
    x[5:60:7, 1::3] = x[5:60:7, 1::3] * 2
    x[::-2, 7] = sl.arange(32, dtype=np.float32)
    x[x < 0.1] = 1
    assert len(sl.explain(x).kernels) == 1
    want = a.copy()
    want[:, :3] = 0
    want[5:60:7, 1::3] *= 2
    want[::-2, 7] = np.arange(32)
    want[want < 0.1] = 1
    np.testing.assert_array_equal(x.get(), want)
    np.testing.assert_array_equal(before.get(), a)  # (NumPy's views would see the change)
    np.testing.assert_array_equal(a, sl.asarray(a).get())  # the wrapped array is not written


def test_whole_array_assignments() -> None:
    a = np.arange(6.0).reshape(2, 3)
    for key in [Ellipsis, (), slice(None), (slice(None), slice(None))]:
        _same(a, key, 7.5)
        _same(a, key, np.array([1.0, 2.0, 3.0]))
    x = sl.asarray(a)
    x.put([0, -1], [8.0, 9.0])
    np.testing.assert_array_equal(x.get(), [[8.0, 1.0, 2.0], [3.0, 4.0, 9.0]])
    x.fill(2)
    np.testing.assert_array_equal(x.get(), np.full((2, 3), 2.0))
    z = sl.asarray(np.float32(3.0))
    z[...] = 4
    assert z.get() == np.float32(4.0) and z.shape == ()


@pytest.mark.parametrize("value", [5, np.array([1, 2, 3]), np.array([[9]]), np.array([[1, 2, 3]]), "per-element"])
@pytest.mark.parametrize("where", ["host", "device"])
def test_boolean_masks(value: Any, where: str) -> None:
    a = RNG.integers(-5, 5, size=(6, 3)).astype(np.int32)
    for mask in (a > 0, (a > 0).any(axis=1), np.zeros((6, 3), bool), a[:, 0] > 100, np.array(True)):
        v = value if not isinstance(value, str) else np.arange(a[mask].size).reshape(a[mask].shape)
        want = a.copy()
        x = sl.asarray(a)
        key = mask if where == "host" else sl.asarray(mask)
        try:
            want[mask] = v
        except Exception as e:  # noqa: BLE001 - the same type of error
            with pytest.raises(type(e)):
                x[key] = v
            continue
        x[key] = v
        np.testing.assert_array_equal(x.get(), want)
    x = sl.asarray(a)
    x[[True, False, True, False, False, False]] = -1
    np.testing.assert_array_equal(x.get()[[0, 2]], -np.ones((2, 3)))


def test_boolean_mask_errors() -> None:
    a = np.arange(6.0)
    x = sl.asarray(a)
    with pytest.raises(ValueError, match="cannot assign 2 input values to the 3 output values"):
        x[a > 2] = [1.0, 2.0]
    with pytest.raises(ValueError, match="cannot assign 2 input values to the 3 output values"):
        x[sl.asarray(a > 2)] = [1.0, 2.0]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.ones(5, bool)] = 1.0
    with pytest.raises(IndexError, match="boolean mask must be the only index"):
        x[a > 2, 0] = 1.0
    np.testing.assert_array_equal(x.get(), a)


@pytest.mark.parametrize("key", [
    [0, 2, 0],  # a repeated position: the last value stays
    np.array([-1, 1]),
    (slice(None), [2, 0, 2]),
    ([0, 1, 1], [2, 0, 0]),
    (slice(1, 3), [0, 2]),
    ([1, 0], slice(None), [3, 0]),  # separated by a slice: the picked axes first
    (1, slice(None), [0, 3]),
    ([[0, 1], [1, 0]], 0),
    (Ellipsis, [3, 3, 1]),
    [],
], ids=repr)
@pytest.mark.parametrize("where", ["host", "device"])
def test_integer_array_keys_match_numpy(key: Any, where: str) -> None:
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    view = a[key].shape
    values = RNG.standard_normal(view).astype(np.float32)
    want = a.copy()
    want[key] = values
    if where == "device":
        items = key if isinstance(key, tuple) else (key,)
        key = tuple(sl.asarray(np.asarray(k, np.int64)) if isinstance(k, list) and k else k for k in items)
        key = key if len(key) > 1 else key[0]
    for value in (values, values[..., :1] if view and view[-1] else values, 2.5):
        x = sl.asarray(a)
        x[key] = value
        w = a.copy()
        w[key if where == "host" else _host_key(key)] = value
        np.testing.assert_array_equal(x.get(), w)
    x = sl.asarray(a)
    x[key] = values
    np.testing.assert_array_equal(x.get(), want)


def _host_key(key: Any) -> Any:
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(k.get() if isinstance(k, sl.ndarray) else k for k in items)
    return out if isinstance(key, tuple) else out[0]


def test_integer_array_errors() -> None:
    a = np.arange(10.0)
    x = sl.asarray(a)
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 10"):
        x[[1, 10]] = 0.0
    x[sl.asarray(np.array([1, 10]))] = 0.0  # positions on the device: checked when the step runs
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        x.get()
    y = sl.asarray(a)
    with pytest.raises(ValueError, match=r"shape mismatch: value array of shape \(3,\) could not be broadcast to indexing result of shape \(2,\)"):
        y[[1, 2]] = [1.0, 2.0, 3.0]
    with pytest.raises(IndexError, match="arrays used as indices must be of integer"):
        y[np.array([0.5])] = 1.0
    np.testing.assert_array_equal(y.get(), a)
    z = sl.asarray(a.reshape(2, 5))  # shapes written as NumPy writes them: (2,2), not (2, 2)
    with pytest.raises(ValueError, match=r"value array of shape \(2,2\) could not be broadcast to indexing result of shape \(3,\)$"):
        z[[0, 1, 1], [0, 1, 2]] = np.ones((2, 2))
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(2,2\) into shape \(2,5\)$"):
        z[...] = np.ones((1, 1, 2, 2))  # (named without its leading axes of 1, as NumPy names it)


@pytest.mark.parametrize("key", [
    lambda d: (d([7]), slice(5, None)),  # an empty block: NumPy checks the positions all the same
    lambda d: (d([0]), d([9]), slice(0, 0)),
    lambda d: (slice(0, 0), d([-6])),
    lambda d: (d([1]), d([4]), slice(2, 2), Ellipsis),
], ids=["array, empty slice", "two arrays, empty slice", "empty slice, array", "two arrays, empty slice, ..."])
def test_device_positions_into_an_empty_block_are_checked_as_numpy_checks_them(key: Any) -> None:
    a = np.arange(60.0).reshape(3, 4, 5)
    with pytest.raises(IndexError, match="out of bounds"):
        a.copy()[key(np.array)] = 0.0
    x = sl.asarray(a)
    x[key(lambda p: sl.asarray(np.array(p)))] = 0.0  # checked when the step runs, as for a non-empty block
    with pytest.raises(IndexError, match="out of bounds"):
        x.get()
    y = sl.asarray(a)
    np.add.at(y, key(lambda p: sl.asarray(np.array(p))), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        y.get()
    ok = sl.asarray(a)  # positions in bounds (negative ones too): nothing written
    ok[sl.asarray(np.array([-1, 2])), 5:] = 0.0
    np.testing.assert_array_equal(ok.get(), a)


def test_values_convert_as_numpy_assignment_does() -> None:
    x = sl.asarray(np.zeros(4, np.int8))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        x[0] = 300
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        x[0] = float("nan")
    x[1] = 2.9  # unsafe, as NumPy's assignment: truncated
    x[2:] = sl.asarray(np.array([-1.5, 300.0]))  # a device value: cast as astype casts
    want = np.zeros(4, np.int8)
    want[1] = 2.9
    want[2:] = np.array([-1.5, 300.0]).astype(np.int8)
    np.testing.assert_array_equal(x.get(), want)
    b = sl.asarray(np.zeros(3, sl.bfloat16))
    b[1] = 1 + 2**-8 + 2**-30  # rounded once to bfloat16 (up; through float32 it would tie to 1)
    assert float(b.get()[1]) == 1 + 2**-7
    with pytest.raises(TypeError, match="cannot assign"):
        x[0] = object()


@pytest.mark.parametrize("key, value", [
    ([0, 7], "abc"),  # the value's conversion before the positions' bounds
    (([7], slice(None)), object()),
    (([0, 1], [0, 1, 2]), [[1, 2], [3]]),  # ... and before the arrays' broadcast
    ([9], 2**70),
    (np.array([0.5]), "abc"),  # an index array's dtype before the value
    ((0, 0, [0]), "abc"),  # too many indices before the value
    ([0, 7], np.ones(5)),  # the value's shape before the positions' bounds
    (([0, 9], slice(None)), [[1, 2, 3]]),
    ((7, [0]), "abc"),  # an integer's bounds (a 0-d array's too) before the value
    ((np.array(5), [0]), np.ones(5)),
])
def test_two_problems_raise_numpys_error_first(key: Any, value: Any) -> None:
    _same(np.zeros((3, 4), np.int32), key, value)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_none_converts_as_numpy_converts_it(dtype: Any) -> None:
    """NumPy writes None as NaN into a float array and False into a bool one (an integer array
    raises TypeError)."""
    for key, value in ((slice(0, 2), None), ([0, 2], [1, None]), (1, None)):
        _same(np.ones(3, dtype), key, value)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16, np.uint8])
@pytest.mark.parametrize("value", [
    [sl.bfloat16(1.5), None], [np.float16(1), 2**70], [np.int64(2), None], [sl.bfloat16(2), 3], [np.float32(1.5), None],
    [np.complex64(1), None], [np.int64(300), None],
], ids=repr)
def test_a_list_of_numpy_scalars_beside_none_or_big_ints_converts_as_numpy(dtype: Any, value: Any) -> None:
    """Such a list is an object array to NumPy, converted element by element (None: NaN or False,
    an integer's TypeError; 2**70: a float, or an integer's OverflowError)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        _same(np.zeros(3, dtype), slice(0, 2), value)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint8, np.bool_])
@pytest.mark.parametrize("value", [
    ["1", None], ["", None], [None, "0"], [b"2", None], ["1.5", None], ["x", None], ["1e400", None], ["300", None],
    [np.str_("3"), None], ["1", 2**70],
], ids=repr)
@pytest.mark.parametrize("key", [slice(0, 2), [0, 1], np.array([True, False, True])], ids=repr)
def test_a_list_of_strings_beside_none_or_big_ints_converts_as_numpy(dtype: Any, value: Any, key: Any) -> None:
    """Strings in an object list are parsed for a numeric dtype (their truth for bool), None beside
    them is NaN or False, as NumPy converts them element by element (its errors: ValueError for a
    string that is no number, TypeError for None into an integer, OverflowError out of range)."""
    with np.errstate(all="ignore"):
        _same(np.zeros(3, dtype), key, value)


def _named(v: Any) -> str:
    """A test id without an object's address (the same in every pytest-xdist worker)."""
    return re.sub(r" (object )?at 0x[0-9a-f]+", "", repr(v))


class _Floaty:
    """An object NumPy converts through ``__float__`` (and ``int()`` through ``__index__``)."""

    def __float__(self) -> float:
        return 2.5

    def __index__(self) -> int:
        return 2


_OBJECT_VALUES = [
    [Fraction(1, 2), 3], [Decimal("1.25"), None], [np.array(2.5), Fraction(1, 4)], [_Floaty(), 1],
    [Fraction(1, 2), "1"], [Decimal("nan"), 1], [Fraction(300), 1], [Fraction(-1), 2], [object(), 1],
    [np.float32(1.5), Decimal("2.5")],
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint8, np.bool_, sl.bfloat16])
@pytest.mark.parametrize("value", _OBJECT_VALUES, ids=_named)
@pytest.mark.parametrize("key", [slice(0, 2), [0, 1], np.array([True, False, True])], ids=repr)
def test_objects_in_a_list_convert_as_numpy_converts_them(dtype: Any, value: Any, key: Any) -> None:
    """A Fraction, a Decimal, a 0-d array or any object with ``__float__``/``__index__`` in a list
    is NumPy's to convert, element by element (they raised TypeError); NumPy's errors for the
    others (an object() is TypeError, Decimal NaN into an integer ValueError, 300 into uint8
    OverflowError)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _same(np.zeros(3, dtype), key, value)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint8, np.bool_, sl.bfloat16])
@pytest.mark.parametrize("value", [Fraction(3, 2), Decimal("2.5"), _Floaty(), Decimal("nan"), Fraction(-1), object()],
                         ids=_named)
def test_one_object_converts_as_numpy_in_fill_assignment_and_full(dtype: Any, value: Any) -> None:
    """``x[1] = v``, ``x[...] = v``, ``x.fill(v)`` and ``sl.full(3, v, dtype)`` with such an object:
    NumPy's value or NumPy's type of error."""
    _same(np.zeros(3, dtype), 1, value)
    _same(np.zeros(3, dtype), Ellipsis, value)
    want: Any = np.zeros(3, dtype)
    x = sl.asarray(np.zeros(3, dtype))
    try:
        want.fill(value)
    except Exception as e:  # noqa: BLE001 - the same type of error, whatever it is
        with pytest.raises(type(e)):
            x.fill(value)
    else:
        x.fill(value)
        np.testing.assert_array_equal(x.get(), want)
    try:
        want = np.full(3, value, dtype)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            sl.full(3, value, dtype)
    else:
        got = sl.full(3, value, dtype).get()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src", [Decimal("2.5"), Fraction(1, 2), np.array(2.5), np.float64(2.5), 2.5, [2.5],
                                 [Decimal("1.5"), None], [_Floaty(), 1], [[Fraction(1, 2)]]], ids=_named)
@pytest.mark.parametrize("casting", ["same_kind", "unsafe"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_copyto_and_full_read_objects_as_numpy(src: Any, casting: str, dtype: Any) -> None:
    """NumPy's copyto: a 0-d source is a "scalar" in its casting error (a Decimal, a 0-d array), a
    list's shape is checked before its elements are converted ([Decimal, None] into 3 elements: the
    broadcast's ValueError), leading axes of 1 are dropped ([[x]] fills a 1-d array); full is
    copyto(casting="unsafe") into a new array."""
    want = np.zeros(3, dtype)
    x = sl.zeros(3, dtype)
    try:
        np.copyto(want, src, casting=casting)
    except Exception as e:  # noqa: BLE001 - the same error, whatever it is
        with pytest.raises(type(e), match=re.escape(str(e)) if isinstance(e, TypeError) else None):
            sl.copyto(x, src, casting=casting)
    else:
        sl.copyto(x, src, casting=casting)
        np.testing.assert_array_equal(x.get(), want)
    try:
        want = np.full(3, src, dtype)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            sl.full(3, src, dtype)
    else:
        np.testing.assert_array_equal(sl.full(3, src, dtype).get(), want)


def test_an_object_numpy_cannot_convert_is_named_with_the_dtype() -> None:
    x = sl.asarray(np.zeros(3, np.int8))
    with pytest.raises(TypeError, match=r"cannot assign \[None, 1\] to a stitchlab array of dtype int8: int\(\) argument"):
        x[:2] = [None, 1]


_BF = sl.bfloat16


@pytest.mark.parametrize("value", [
    [_BF(1.5), 2.0], (_BF(1), _BF(2)), [np.float32(1.5), _BF(3)], [np.float16(1), 2**70], [np.int64(2), 2**70],
    [2**1000, 1], np.array([_BF(1), _BF(2)], dtype=object), [_BF(1)], [[_BF(1), 2]], 2**70, _BF(2.5), np.array(1.5),
    np.array([1.5]), np.complex64(1), np.array([1 + 2j]),
    None, [None, 1.0], [_BF(1.5), None], np.array(None, dtype=object), 1 + 2j, [1 + 1j, 2], "1.5", ["1", 2.0],
    np.array(["1.5"]), [float("nan"), None],
], ids=repr)
@pytest.mark.parametrize("key", [0, slice(0, 1), slice(0, 2), [0, 1], np.array([True, True, False]), Ellipsis])
def test_values_into_bfloat16_convert_as_numpy_with_ml_dtypes(value: Any, key: Any) -> None:
    """ml_dtypes converts numbers of any kind (bfloat16 scalars in a list, NumPy scalars beside
    Python ints past 64 bits) and raises ``TypeError`` for None, a Python complex or a string,
    where NumPy writes NaN into a float array; one element takes a number only, not a list."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        _same(np.zeros(3, sl.bfloat16), key, value)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.put(x, [0.5, 2.7], 7),  # a list of floats: truncated, as int() does
    lambda xp, x: xp.put(x, 1.9, 7),
    lambda xp, x: xp.put(x, np.array([1.0]), 7),  # a float array: NumPy's TypeError (no safe cast)
    lambda xp, x: xp.put(x, np.array([0.5]), "abc"),
    lambda xp, x: xp.insert(x, 7, "abc"),  # the position's bounds before the values' conversion
    lambda xp, x: xp.insert(x, [0, 9], object()),
    lambda xp, x: xp.insert(x, [0.5, 1], "abc"),  # positions' dtype before the values
    lambda xp, x: xp.insert(x, 1.5, "abc"),  # one float position: the values first (NumPy slices there)
    lambda xp, x: xp.insert(x, [[1]], 2**70),
], ids=["put floats", "put a float", "put a float array", "put a float array and a string", "insert out of bounds",
        "insert out of bounds and an object", "insert floats", "insert a float", "insert 2-d"])
def test_put_and_insert_take_positions_as_numpy_does(call: Any) -> None:
    want = np.zeros(4, np.int32)
    try:
        got_np = call(np, want)
    except Exception as e:  # noqa: BLE001 - the same type of error, whatever it is
        with pytest.raises(type(e)):
            call(sl, sl.zeros(4, np.int32))
        return
    x = sl.zeros(4, np.int32)
    got = call(sl, x)
    np.testing.assert_array_equal((x if got is None else got).get(), want if got_np is None else got_np)


def _set(x: Any, key: Any, value: Any) -> Any:
    x[key] = value
    return x


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float32, np.bool_, sl.bfloat16])
@pytest.mark.parametrize("write", [
    lambda xp, x: _set(x, 0, 2**70),
    lambda xp, x: _set(x, slice(0, 2), [1, -2**70]),
    lambda xp, x: xp.insert(x, 0, 2**70),
    lambda xp, x: xp.insert(x, [0, 1], [2**70, 1]),
], ids=["element", "slice", "insert", "insert at two"])
def test_a_python_int_past_64_bits_is_named_or_converted_as_numpy(dtype: Any, write: Any) -> None:
    """NumPy converts 2**70 into a float or bool array and raises ``OverflowError`` for an integer
    one, naming neither value nor dtype ("Python int too large to convert to C long"); stitchlab
    names both."""
    if np.dtype(dtype).kind in "iu":
        with pytest.raises(OverflowError, match="too large"):
            write(np, np.zeros(3, dtype))
        with pytest.raises(OverflowError, match=rf"Python integer -?1180591620717411303424 out of bounds for "
                                                rf"{np.dtype(dtype)}; give a value within its range, or a float"):
            write(sl, sl.zeros(3, dtype))
        return
    with np.errstate(over="ignore"):
        want = write(np, np.zeros(3, dtype))
    np.testing.assert_array_equal(write(sl, sl.zeros(3, dtype)).get(), want)


@pytest.mark.parametrize("key, value", [
    (slice(0, 1), [[6.0]]),
    (slice(None), [[1.0, 2.0, 3.0, 4.0]]),
    ((0, slice(None)), [[[1.0, 2.0]]]),
    (Ellipsis, ([1.0, 2.0, 3.0, 4.0],)),
])
def test_a_list_deeper_than_the_view_is_refused_as_numpy_refuses_it(key: Any, value: Any) -> None:
    """NumPy reads a list into at most the view's dimensions (an array of shape (1, 1) drops its
    leading axis instead): ``x[0:1] = [[6]]`` raises, and nothing is written."""
    a = np.arange(4.0) if key != (0, slice(None)) else np.arange(4.0).reshape(2, 2)
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        a.copy()[key] = value
    x = sl.asarray(a)
    with pytest.raises(ValueError, match="exceed the maximum number of dimension"):
        x[key] = value
    np.testing.assert_array_equal(x.get(), a)
    x[key] = np.asarray(value)  # an array of leading axes of extent 1: as NumPy, written
    want = a.copy()
    want[key] = np.asarray(value)
    np.testing.assert_array_equal(x.get(), want)


@pytest.mark.parametrize("shape, dtype, key, value", [
    ((), np.bool_, (), [1, 0]),  # one bool element takes a sequence's truth, as NumPy's scalar conversion
    ((), np.bool_, (), []),
    ((3,), np.bool_, 1, [0]),
    ((3,), np.bool_, 1, (0,)),
    ((3,), np.int32, 1, [1]),  # an integer element refuses a sequence with TypeError
    ((), np.uint8, (), (2,)),
    ((), np.float32, (np.True_, Ellipsis), [[1.0]]),  # a boolean scalar beside others: no limit on a list's depth
    ((3,), np.int32, (Ellipsis, True), [[[4]]]),
    ((3,), np.float32, (np.False_, Ellipsis), [1.0, 2.0]),  # a False selects nothing, yet the value is checked
    ((3,), np.float32, (False, Ellipsis), np.ones((5, 0, 3))),
    ((2, 3), np.float32, (np.array(True), slice(1, None)), [[7.0]]),  # a 0-d boolean array: a boolean scalar
    ((2, 3), np.float32, (np.array(False), Ellipsis), [1.0, 2.0]),
    ((), np.float32, np.True_, [[1.0]]),  # a mask of a 0-d array's shape: NumPy's mask assignment (0-d or 1-d values)
    ((3, 4), np.float32, ([], []), np.ones((3, 0))),  # advanced: an empty value's leading axes dropped
    ((3, 4), np.float32, (slice(None), []), np.ones((2, 3, 0))),
    ((3, 4), np.float32, [0, 2], [[1.0], [2.0], [3.0]]),
], ids=repr)
def test_sequences_and_boolean_scalar_keys_are_read_as_numpy_reads_them(shape: Any, dtype: Any, key: Any, value: Any) -> None:
    _same(np.zeros(shape, dtype), key, value)


@pytest.mark.parametrize("key, value", [
    ((np.array(1), None), 5.0), ((np.array(-1), None, slice(None)), [7.0, 8.0]), ((np.array(1), 0), np.ones(1)),
    ((np.array(1), 0), [2.0]), ((np.array(-1), slice(None)), [[[1.0, 2.0]]]), ((0, np.array(1, np.uint8)), 3.0),
])
def test_0d_integer_arrays_in_a_key_are_read_as_integers_as_numpy(key: Any, value: Any) -> None:
    """A key whose only arrays are 0-d integer arrays is NumPy's key of integers: ``None`` may
    stand beside them, and a sequence into one element raises. Reading it gives a copy."""
    a = np.arange(6.0).reshape(3, 2)
    _same(a, key, value)
    x = sl.asarray(a)
    np.testing.assert_array_equal(x[key].get(), a[key])
    r = x[key]
    r[...] = -1
    np.testing.assert_array_equal(x.get(), a)


def test_jit_assigns_into_locals_not_arguments() -> None:
    @sl.jit
    def clipped(x: Any) -> Any:
        y = x.copy()
        y[y < 0] = 0
        y[:, 0] = y.sum(axis=1)
        return y

    a = RNG.standard_normal((8, 16)).astype(np.float32)
    for _ in range(2):
        want = np.where(a < 0, 0, a)
        want[:, 0] = want.sum(axis=1)
        np.testing.assert_allclose(clipped(a), want, rtol=1e-6)

    @sl.jit
    def writes(x: Any) -> Any:
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match="assigns into its argument 0"):
        writes(a)

    @sl.jit
    def adds(x: Any) -> Any:
        x += 1.0
        return x

    with pytest.raises(TypeError, match="assigns into its argument 0"):
        adds(a)

    outer = sl.asarray(np.zeros(3))
    stash = sl.asarray(np.zeros(3))

    @sl.jit
    def captures(x: Any) -> Any:
        outer[0] = x.sum()  # an array of the enclosing scope
        return x * 2

    with pytest.raises(TypeError, match="assigns into an array from outside the function"):
        captures(np.ones(3))
    np.testing.assert_array_equal(outer.get(), np.zeros(3))  # its value is back

    @sl.jit
    def copies(x: Any) -> Any:
        y = stash.copy()  # a copy made inside: assigned into, returned
        y[0] = x.sum()
        z = x * 1  # a local assigned into and dropped
        z += 1
        return y

    for k in (1.0, 2.0):
        np.testing.assert_array_equal(copies(np.full(3, k)), [3 * k, 0, 0])
    np.testing.assert_array_equal(stash.get(), np.zeros(3))


def test_sort_shuffle_nan_to_num_in_place() -> None:
    a = RNG.standard_normal((4, 5))
    x = sl.asarray(a)
    x.sort(axis=0)
    np.testing.assert_array_equal(x.get(), np.sort(a, axis=0))
    y = sl.asarray(np.arange(10))
    sl.random.default_rng(1).shuffle(y)
    assert sorted(y.get().tolist()) == list(range(10))
    assert y.get().tolist() == sl.random.default_rng(1).permutation(10).get().tolist()
    with pytest.raises(TypeError, match="reorders stitchlab arrays"):
        sl.random.shuffle(np.arange(3))
    z = sl.asarray(np.array([np.nan, 1.0]))
    assert sl.nan_to_num(z, copy=False) is z
    np.testing.assert_array_equal(z.get(), [0.0, 1.0])


# --- NumPy's functions that write into an argument ---------------------------------------------
def _both(fn: str, a: np.ndarray, *args: Any, lazy_args: bool = False, **kwargs: Any) -> None:
    want = a.copy()
    x = sl.asarray(a.copy())
    try:
        getattr(np, fn)(want, *args, **kwargs)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            getattr(sl, fn)(x, *args, **kwargs)
        return
    lazy = [sl.asarray(v) if lazy_args and isinstance(v, np.ndarray) else v for v in args]
    assert getattr(sl, fn)(x, *lazy, **kwargs) is None
    got = x.get()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want, err_msg=f"{fn}{args}{kwargs}")
    y = sl.asarray(a.copy())  # np.<fn> on a stitchlab array is stitchlab's
    getattr(np, fn)(y, *args, **kwargs)
    np.testing.assert_array_equal(y.get(), want)


@pytest.mark.parametrize("lazy_args", [False, True])
def test_copyto(lazy_args: bool) -> None:
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    _both("copyto", a, np.arange(4.0, dtype=np.float32), lazy_args=lazy_args)
    _both("copyto", a, 7, where=a > 0)
    _both("copyto", a, np.arange(12.0).reshape(3, 4), casting="unsafe", where=np.array([True, False, True, False]))
    _both("copyto", a, np.arange(12.0).reshape(3, 4), lazy_args=lazy_args)  # float64 to float32: same_kind
    _both("copyto", np.zeros(4, np.int32), np.arange(4.0), lazy_args=lazy_args)  # TypeError (same_kind)
    _both("copyto", a, np.arange(3.0))  # ValueError: does not broadcast
    with pytest.raises(TypeError, match="to dtype\\('bool'\\)"):
        sl.copyto(sl.asarray(a), 1.0, where=np.arange(4))
    h = np.zeros(4)  # a NumPy destination is written, the stitchlab source evaluated
    np.copyto(h, sl.arange(4.0) * 2)
    np.testing.assert_array_equal(h, [0, 2, 4, 6])


def test_place_putmask_put() -> None:
    a = np.arange(12).reshape(3, 4)
    m = a % 3 == 0
    for vals in ([40, 50], [7], np.arange(10, 20), []):
        _both("place", a, m, vals)
        _both("putmask", a, m, vals)
    _both("place", a, m, [40, 50], lazy_args=True)
    _both("place", a, np.zeros((3, 4), bool), [])
    _both("place", a, m[:2], [1])  # ValueError: not the same size
    _both("putmask", a, m[:2], [1])
    _both("putmask", a, m.reshape(4, 3), [1, 2])  # another shape of the same size: flat positions
    _both("putmask", a, m.ravel(), [1, 2])
    _both("putmask", a, m, np.array([1.5, 2.5]))
    for ind, mode in [([0, 5, -1], "raise"), ([0, 0, 3], "raise"), ([13, -20], "wrap"), ([13, -20], "clip"),
                      ([12], "raise"), (np.array([[1, 2], [3, 1]]), "raise")]:
        for v in ([9, 8], [-1], np.arange(100, 104)):
            _both("put", a, ind, v, mode=mode)
    x = sl.asarray(a)  # device positions: checked, and the last of a repeated one kept
    sl.put(x, sl.asarray(np.array([1, 5, 1])), [7, 8, 9])
    want = a.copy()
    np.put(want, [1, 5, 1], [7, 8, 9])
    np.testing.assert_array_equal(x.get(), want)
    x = sl.asarray(a)
    sl.put(x, sl.asarray(np.array([1, 12])), 0)
    with pytest.raises(IndexError, match="index 12 is out of bounds"):
        x.get()
    with pytest.raises(TypeError, match="writes into a stitchlab array"):
        sl.put(a.copy(), [0], 1)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_put_along_axis(axis: Any) -> None:
    a = RNG.standard_normal((4, 5))
    if axis is None:
        idx = np.array([3, 0, 3, 19])
    else:
        idx = np.argsort(a, axis=axis)[:2] if axis == 0 else np.argsort(a, axis=axis)[:, :2]
    for values in (0.0, RNG.standard_normal(idx.shape)):
        _both("put_along_axis", a, idx, values, axis=axis)
        _both("put_along_axis", a, idx, values, axis=axis, lazy_args=True)
    _both("put_along_axis", a, np.zeros((4,), int), 1.0, axis=0)  # ValueError: dimensions


def test_fill_diagonal() -> None:
    for shape in [(3, 3), (5, 3), (3, 5), (4, 4, 4), (7, 2)]:
        for val in (5, [1, 2], np.arange(1, 8)):
            for wrap in (False, True):
                _both("fill_diagonal", np.zeros(shape, np.int32), val, wrap=wrap)
    _both("fill_diagonal", np.zeros((3, 4, 4)), 1)  # ValueError: unequal axes
    _both("fill_diagonal", np.zeros(3), 1)  # ValueError: 1-d


def test_out_a_stitchlab_array() -> None:
    a = RNG.standard_normal((3, 4))
    x = sl.asarray(a.copy())
    assert np.exp(x, out=x) is x
    np.testing.assert_allclose(x.get(), np.exp(a))
    y = sl.zeros(4)
    np.add.accumulate(sl.asarray(a[0]), out=y)  # a function stitchlab runs on the values
    np.testing.assert_allclose(y.get(), np.add.accumulate(a[0]))
    z = sl.zeros((3, 4), dtype=np.int32)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype\\('float64'\\) to dtype\\('int32'\\) "
                                        "with casting rule 'same_kind'"):  # (NumPy's text)
        np.add(x, 1.0, out=z)


#: functions that return their argument itself, as NumPy's do (assigning into the result is
#: assigning into the argument, in NumPy too)
_RETURN_THEIR_ARGUMENT = {"asarray", "asanyarray", "ascontiguousarray", "from_dlpack", "atleast_1d", "atleast_2d",
                          "atleast_3d", "diff", "nan_to_num", "asarray_chkfinite", "require", "real_if_close",
                          "broadcast_arrays"}
# (diff with n=0; nan_to_num with copy=False; require, real_if_close, broadcast_arrays of one shape:
# NumPy's return their argument)


def test_no_other_function_returns_its_argument_object() -> None:
    """Assignment rebinds an array object, so a function whose result is its argument's object
    would pass an assignment into the result on to the argument (NumPy returns new arrays)."""
    found = set()
    for x in (sl.asarray(RNG.random((3, 3))), sl.asarray(np.arange(9).reshape(3, 3)), sl.asarray(np.float32(2.0))):
        for name in sl.__all__:
            f = getattr(sl, name)
            if not callable(f) or isinstance(f, type) or name in _RETURN_THEIR_ARGUMENT:
                continue
            for extra in [(), (0,), (None,), (((0, 0), (0, 0)),)]:
                try:
                    r = f(x, *extra)
                except Exception:  # noqa: BLE001, S112 - only the calls that work are looked at
                    continue
                if any(q is x for q in (r if isinstance(r, (tuple, list)) else [r])):
                    found.add(name)
    assert not found


#: views of x, and whether an assignment into one writes through into x (views by indexing)
_VIEWS = {
    "row": (lambda x: x[0], True), "slice": (lambda x: x[:, 1:], True), "T": (lambda x: x.T, False),
    "reshape": (lambda x: x.reshape(-1), False), "ravel": (lambda x: sl.ravel(x), False),
    "split": (lambda x: sl.split(x, 2, axis=1)[0], True), "broadcast_to": (lambda x: sl.broadcast_to(x[0], (3, 4)), False),
    "expand_dims": (lambda x: sl.expand_dims(x, 0), False), "moveaxis": (lambda x: sl.moveaxis(x, 0, 1), False),
    "diagonal": (lambda x: x.diagonal(), False), "flip": (lambda x: sl.flip(x), True),
    "rot90-0": (lambda x: sl.rot90(x, 0), True), "rollaxis-none": (lambda x: sl.rollaxis(x, 0), True),
    "real": (lambda x: sl.real(x), True),
}


@pytest.mark.parametrize("make, writes_through", _VIEWS.values(), ids=_VIEWS.keys())
def test_assigning_into_a_view_writes_through_or_raises_instead_of_writing_nowhere(make: Any, writes_through: bool) -> None:
    """NumPy writes through a view into its base (``x[0][1] = 5``). A stitchlab view by indexing
    (``x[0]``, ``x[:, 1:]``, and ``split``, ``flip``... which index) does too; other views cannot,
    so every way of assigning into one refuses, and a copy of it can be assigned into."""
    a = np.arange(12.0).reshape(4, 3).T.copy()
    positions = make(sl.asarray(np.arange(a.size).reshape(a.shape))).get()  # (of a in the view)
    for write in (lambda v: v.__setitem__(0, 5.0), lambda v: v.__iadd__(1.0), lambda v: v.fill(0.0),
                  lambda v: np.copyto(v, 1.0), lambda v: np.exp(v, out=v), lambda v: v.sort()):
        x = sl.asarray(a)
        v = make(x)
        try:
            write(v)
        except TypeError as error:
            assert "view of another" in str(error) and not writes_through
            np.testing.assert_array_equal(x.get(), a)
            continue
        assert writes_through
        seen = a.ravel()[positions]  # NumPy's view, as a copy, written and put back in place
        write(seen)
        want = a.copy()
        want.flat[positions.ravel()] = seen.ravel()
        np.testing.assert_array_equal(x.get(), want)
        np.testing.assert_array_equal(v.get(), seen)
    x = sl.asarray(a)
    y = make(x).copy()
    y[...] = 7.0
    np.testing.assert_array_equal(y.get(), np.full(y.shape, 7.0))
    z = x.flatten()  # a copy, as NumPy's
    z[0] = -1.0
    assert z.get()[0] == -1.0 and x.get()[0, 0] == a[0, 0]
    t = make(sl.asarray(a.copy()))  # a view of an array no one holds any more: nothing to write through to
    t[...] = 2.0
    np.testing.assert_array_equal(t.get(), np.full(t.shape, 2.0))
    m = sl.arange(12.0).reshape(3, 4)  # the usual way to make a matrix
    m[0] = -1.0
    m += 1
    np.testing.assert_array_equal(m.get(), np.arange(1.0, 13.0).reshape(3, 4) * (np.arange(3) > 0)[:, None])
