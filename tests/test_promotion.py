"""NumPy 2 type promotion (NEP 50), checked against NumPy itself for every dtype pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import stitchlab as sl

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "maximum", "less", "power", "arctan2"]
SCALARS = [True, 3, -2, 2.5]


def sample(dtype: str) -> np.ndarray:
    values = np.array([1, 0, 1, 3], dtype=np.float64)
    return values.astype(dtype)


def numpy_result(fn, *args):
    try:
        with np.errstate(all="ignore"):
            return getattr(np, fn)(*args)
    except Exception as exc:  # NumPy refuses the combination
        return exc


@pytest.mark.parametrize("fn", BINARY)
@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
def test_array_array_promotion_matches_numpy(fn, a, b):
    x, y = sample(a), sample(b)
    expected = numpy_result(fn, x, y)
    if isinstance(expected, Exception):
        with pytest.raises(TypeError):
            getattr(sl, fn)(sl.asarray(x), sl.asarray(y))
        return
    got = getattr(sl, fn)(sl.asarray(x), sl.asarray(y))
    assert got.dtype == expected.dtype, (fn, a, b)
    np.testing.assert_allclose(got.get().astype(np.float64), expected.astype(np.float64), rtol=1e-3)


@pytest.mark.parametrize("fn", ["add", "multiply", "divide", "maximum", "less", "subtract"])
@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_python_scalars_are_weak(fn, a, scalar):
    x = sample(a)
    for args, lazy in (((x, scalar), (sl.asarray(x), scalar)), ((scalar, x), (scalar, sl.asarray(x)))):
        expected = numpy_result(fn, *args)
        if isinstance(expected, Exception):
            with pytest.raises((TypeError, OverflowError)):
                getattr(sl, fn)(*lazy)
            continue
        got = getattr(sl, fn)(*lazy)
        assert got.dtype == expected.dtype, (fn, a, scalar)
        np.testing.assert_allclose(got.get().astype(np.float64), expected.astype(np.float64), rtol=1e-3)


def test_out_of_range_python_integer_raises_at_the_call():
    x = sl.asarray(np.array([1, 2], np.uint8))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        x + 300


def test_out_of_range_comparison_is_exact_as_in_numpy():
    a = np.array([-5, 0, 100], np.int8)
    np.testing.assert_array_equal((sl.asarray(a) < 1000).get(), a < 1000)
    np.testing.assert_array_equal((sl.asarray(a) > -1000).get(), a > -1000)


BIG_INTS = [300, -300, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1, -2**63, -2**63 - 1, 2**64, -2**64, 10**30, 10**400]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool",
                                   "float16", "float32", "float64", "bfloat16"])
def test_comparisons_with_python_integers_of_any_size_are_numpys(dtype: str) -> None:
    """Every element against an integer outside the array's range (NumPy's exact comparison: a
    uint64 array is never equal to -1, an int64 one always below 2**63), or NumPy's error."""
    if dtype == "bfloat16":
        a = np.array([0, 1, -1, 3e38, np.inf, np.nan], sl.bfloat16)
    elif dtype.startswith("float"):
        a = np.array([0, 1, -1, np.finfo(dtype).max, np.inf, np.nan, 2.0**63, 2.0**64], dtype)
    elif dtype == "bool":
        a = np.array([False, True])
    else:
        info = np.iinfo(dtype)
        a = np.array([0, 1, info.max, info.min, info.max - 1, info.min + 1], dtype)
    x = sl.asarray(a)
    for v, fn, swap in itertools.product(BIG_INTS, ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"], (0, 1)):
        want = numpy_result(fn, *((v, a) if swap else (a, v)))
        if isinstance(want, Exception):
            with pytest.raises(type(want)):
                getattr(sl, fn)(*((v, x) if swap else (x, v)))
        else:
            np.testing.assert_array_equal(getattr(sl, fn)(*((v, x) if swap else (x, v))).get(), want, err_msg=f"{fn} {v} {swap}")


@pytest.mark.parametrize("name, a, b", [("ldexp", 0, 2**40), ("ldexp", 1.0, 2**40), ("ldexp", 2**63, 1), ("ldexp", True, 3),
                                        ("add", 2**63, 1), ("left_shift", 1, 2**40), ("power", 2, -1), ("gcd", 2**62, 6),
                                        ("heaviside", 2**63, 0.5), ("multiply", 2**40, 2.5), ("subtract", True, 3)], ids=str)
def test_python_scalars_only_take_numpys_default_dtype_loop(name, a, b):
    """With no array among the operands NumPy resolves the loop for int64/float64/bool and
    converts each number to its loop dtype (OverflowError where it does not fit)."""
    try:
        want = np.asarray(getattr(np, name)(a, b))
    except (OverflowError, ValueError, TypeError) as e:
        with pytest.raises(type(e)):
            getattr(sl, name)(a, b).get()
        return
    got = getattr(sl, name)(a, b).get()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)

@pytest.mark.parametrize("fn", ["sqrt", "exp", "sin", "negative", "absolute", "square", "sign", "floor", "isnan"])
@pytest.mark.parametrize("a", DTYPES)
def test_unary_result_dtype_matches_numpy(fn, a):
    x = sample(a)
    expected = numpy_result(fn, x)
    if isinstance(expected, Exception):
        with pytest.raises(TypeError):
            getattr(sl, fn)(sl.asarray(x))
        return
    assert getattr(sl, fn)(sl.asarray(x)).dtype == expected.dtype


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("fn", ["sum", "prod", "mean", "max", "var", "std", "any", "argmax"])
def test_reduction_dtype_matches_numpy(fn, a):
    x = sample(a)
    expected = getattr(np, fn)(x, axis=0)
    got = getattr(sl, fn)(sl.asarray(x), axis=0)
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(np.float64(got.get()), np.float64(expected), rtol=2e-3)


def test_unsupported_dtype_is_named():
    with pytest.raises(TypeError, match="complex128"):
        sl.asarray(np.ones(3, np.complex128))
    with pytest.raises(TypeError, match="does not support dtype"):
        sl.zeros(3, dtype=np.complex64)
