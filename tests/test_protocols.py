"""Python's protocols on a stitchlab array against NumPy's: format, divmod, ``in``, ``item``,
comparisons with what is no number, truth values, ``flags``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl

A = np.arange(4.0)
M = np.arange(6, dtype=np.int32).reshape(2, 3)


def both(make: Any) -> tuple[Any, Any]:
    """``make`` of NumPy's array and of the stitchlab array of the same values."""
    return make(A, M), make(sl.asarray(A), sl.asarray(M))


def test_a_0d_array_formats_as_its_value() -> None:
    for spec in (".2f", ">8", "", "e"):
        want, got = both(lambda a, m, spec=spec: format(a[1], spec))
        assert got == want
    assert f"{sl.asarray(np.float32(1.5)):>8}" == f"{np.asarray(np.float32(1.5)):>8}"
    assert f"{sl.asarray(M)}" == f"{M}"


def test_an_array_of_dimensions_takes_no_format_spec() -> None:
    with pytest.raises(TypeError, match="unsupported format string"):
        format(A, ".2f")
    with pytest.raises(TypeError, match=r"unsupported format string '\.2f' .* shape \(4,\).*x\[0\]:\.2f"):
        format(sl.asarray(A), ".2f")
    with pytest.raises(TypeError, match="unsupported format string"):
        format(sl.asarray(A[:1]), ".2f")  # size 1 but not 0-d, as NumPy


@pytest.mark.parametrize("other", [3, 2.5, np.arange(1, 5.0)])
def test_divmod_gives_two_lazy_arrays_both_ways(other: Any) -> None:
    for want, got in zip(divmod(A + 1, other), divmod(sl.asarray(A + 1), other), strict=True):
        assert isinstance(got, sl.LazyArray)
        np.testing.assert_array_equal(got.get(), want)
    for want, got in zip(divmod(7, A + 1), divmod(7, sl.asarray(A + 1)), strict=True):
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("value", [4.0, 4, 5, -1, 0, None, "a", np.int32(2), [0, 1, 2]])
def test_in_is_any_of_equal(value: Any) -> None:
    assert (value in sl.asarray(M)) == (value in M)


@pytest.mark.parametrize("args", [(), (2,), (-1,), ((1,),)])
def test_item_of_a_vector(args: tuple[Any, ...]) -> None:
    x = A[1:2] if not args else A
    sx = sl.asarray(x)
    assert sx.item(*args) == x.item(*args) and type(sx.item(*args)) is type(x.item(*args))


@pytest.mark.parametrize("args", [(4,), (-6,), (1, 2), ((1, 2),), (0, -1)])
def test_item_of_a_matrix_takes_a_flat_index_or_one_per_axis(args: tuple[Any, ...]) -> None:
    got = sl.asarray(M).item(*args)
    assert got == M.item(*args) and type(got) is int
    assert sl.asarray(np.array(2.5)).item(0) == 2.5 and sl.asarray(np.array(2.5)).item(()) == 2.5


@pytest.mark.parametrize(("args", "error"), [((6,), IndexError), ((9,), IndexError), ((1, 1, 1), ValueError),
                                             ((1.0,), TypeError)])
def test_item_errors_are_numpys(args: tuple[Any, ...], error: type) -> None:
    with pytest.raises(error):
        M.item(*args)
    with pytest.raises(error):
        sl.asarray(M).item(*args)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 4"):
        sl.asarray(A).item(9)


@pytest.mark.parametrize("other", [None, "a", b"a", object(), np.array(["a", "b", "c"])])
def test_equality_with_what_is_no_number_is_elementwise_false(other: Any) -> None:
    for op in ("__eq__", "__ne__"):
        want = getattr(M, op)(other)
        got = getattr(sl.asarray(M), op)(other)
        assert isinstance(got, sl.LazyArray)
        np.testing.assert_array_equal(got.get(), want)
        assert got.dtype == want.dtype
    with pytest.raises(TypeError):
        sl.asarray(M) < None  # noqa: B015 - NumPy's TypeError too
    with pytest.raises(ValueError, match="broadcast"):
        sl.asarray(A) == [1, 2]  # noqa: B015


def test_the_truth_value_of_an_empty_array_names_emptiness() -> None:
    with pytest.raises(ValueError) as want:
        bool(A[:0])
    with pytest.raises(ValueError) as got:
        bool(sl.asarray(A)[:0])
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="more than one element"):
        bool(sl.asarray(A))
    assert bool(sl.asarray(A)[1:2]) is True


@pytest.mark.parametrize("shape", [(), (0,), (4,), (2, 3), (1, 3), (3, 1), (0, 3), (2, 1, 1), (1, 1)])
def test_flags_are_numpys_for_a_c_ordered_array(shape: tuple[int, ...]) -> None:
    a = np.zeros(shape, np.float32)
    x = sl.asarray(a)
    for name in ("c_contiguous", "f_contiguous", "fnc", "forc", "aligned", "writeable", "owndata"):
        assert getattr(x.flags, name) == getattr(a.flags, name), name
    assert x.flags["C_CONTIGUOUS"] and x.flags["F"] == a.flags["F"]
    assert np.isfortran(x) == np.isfortran(a) is False
    assert repr(x.flags) == repr(a.flags)


def test_flags_of_a_view_and_their_read_only_ness() -> None:
    x = sl.asarray(M)
    view = x[0]  # (writes through into x, as NumPy's; a transpose cannot)
    assert not view.flags.owndata and view.flags.writeable and not M[0].flags.owndata and M[0].flags.writeable
    assert not x.T.flags.writeable and not x.T.flags.owndata
    assert sl.asarray(M).copy().flags.owndata
    with pytest.raises(AttributeError, match="read-only"):
        x.flags.writeable = False
    with pytest.raises(KeyError, match="Unknown flag 'Q'"):
        x.flags["Q"]
