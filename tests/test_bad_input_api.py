"""Bad arguments to the public array API: NumPy's answer or NumPy's exception type, with a
message that names the value, never a wrong result or an internal error (found by a fuzzer that
calls each public function with one bad argument at a time and compares with NumPy)."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import stitchlab as sl

A = np.random.default_rng(0).random((3, 4))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "nansum", "nanprod", "nanmax", "nanmin"])
def test_initial_none_is_no_initial_value(name):
    # NumPy reads initial=None as "not given"; stitchlab took it as NaN
    got = getattr(sl, name)(sl.asarray(A), initial=None).get()
    np.testing.assert_allclose(got, getattr(np, name)(A, initial=None))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "nansum", "nanmax"])
def test_initial_sequence_raises_valueerror_naming_it(name):
    with pytest.raises(ValueError):
        getattr(np, name)(A, initial=np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"initial=\[1\.0, 2\.0\].*scalar"):  # (it was broadcast: a result of shape (2,))
        getattr(sl, name)(sl.asarray(A), initial=[1.0, 2.0])


@pytest.mark.parametrize("name", ["sum", "max", "nanmin"])
def test_initial_complex_raises_typeerror(name):
    with pytest.raises(TypeError):
        getattr(np, name)(A, initial=1 + 2j)
    with pytest.raises(TypeError, match=r"initial=\(1\+2j\)"):  # (its real part was taken)
        getattr(sl, name)(sl.asarray(A), initial=1 + 2j)


@pytest.mark.parametrize("reshape", [lambda x, s: x.reshape(s), lambda x, s: sl.reshape(x, s)])
def test_reshape_takes_an_array_of_sizes(reshape):
    # NumPy reads a 1-d integer array as the shape; stitchlab leaked StopIteration
    assert reshape(sl.asarray(A), np.array([2, 6])).shape == A.reshape(np.array([2, 6])).shape == (2, 6)


@pytest.mark.parametrize("shape", [np.array([2.0, 6.0]), np.array([[2, 6]]), (np.array([2]), 6)])
def test_reshape_to_non_integer_sizes_raises_typeerror_naming_them(shape):
    with pytest.raises(TypeError):
        A.reshape(shape)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer: reshape to"):
        sl.asarray(A).reshape(shape)


@pytest.mark.parametrize("weights", [{"fweights": 2.5}, {"fweights": np.array([1, None], dtype=object)},
                                     {"fweights": 2}, {"aweights": 0.5}])
def test_cov_weights_checked_in_numpys_order(weights):
    # a float or 0-d weight leaked 'tuple index out of range'; a NaN weight was counted before its integrality
    with pytest.raises(Exception) as expected:
        np.cov(A, **weights)
    with pytest.raises(expected.type, match="weight|integer"):
        sl.cov(sl.asarray(A), **weights)


def _where_calls():
    x = sl.asarray(A)
    return {
        "add": (lambda w: np.add(A, A, where=w, out=None), lambda w: sl.add(x, x, where=w)),
        "sum": (lambda w: np.sum(A, where=w), lambda w: sl.sum(x, where=w)),
        "max": (lambda w: np.max(A, where=w, initial=0), lambda w: sl.max(x, where=w, initial=0)),
        "mean": (lambda w: np.mean(A, where=w), lambda w: sl.mean(x, where=w)),
    }


@pytest.mark.parametrize("name", ["add", "sum", "max", "mean"])
def test_where_array_of_integers_raises_typeerror(name):
    # NumPy casts where= to bool by the 'safe' rule; stitchlab read the integers as truth values
    np_call, sl_call = _where_calls()[name]
    with pytest.raises(TypeError):
        np_call(np.array([0, 1, 2, 3]))
    with pytest.raises(TypeError, match=r"where= takes a bool mask.*int64"):
        sl_call(np.array([0, 1, 2, 3]))


def test_where_list_of_numbers_is_a_mask_with_out():
    # NumPy reads a Python list as bools; with out= stitchlab refused it (an int64 array)
    expected, got = np.zeros((3, 4)), sl.zeros((3, 4))
    np.add(A, A, where=[1, 0, 1, 0], out=expected)
    sl.add(sl.asarray(A), sl.asarray(A), where=[1, 0, 1, 0], out=got)
    np.testing.assert_array_equal(got.get(), expected)
    dst = sl.zeros(4)
    sl.copyto(dst, sl.ones(4), where=[1, 0, 1, 0])
    np.testing.assert_array_equal(dst.get(), [1, 0, 1, 0])


def test_einsum_path_sublist_as_a_stitchlab_array():
    # the sublist went to np.einsum_path as a stitchlab array, which dispatched back: RecursionError
    x = sl.asarray(A)
    assert sl.einsum_path(x, sl.asarray(np.array([0, 1])))[0] == np.einsum_path(A, [0, 1])[0]
    with pytest.raises(ValueError, match="subscript"):
        sl.einsum_path(x, sl.asarray(np.array([0, 1, 2])))


def _casting_calls():
    x = sl.asarray(A)
    return {
        "add": (lambda c: np.add(A, A, casting=c), lambda c: sl.add(x, x, casting=c)),
        "concatenate": (lambda c: np.concatenate([A, A], casting=c), lambda c: sl.concatenate([x, x], casting=c)),
        "copyto": (lambda c: np.copyto(A.copy(), A, casting=c), lambda c: sl.copyto(sl.zeros((3, 4)), x, casting=c)),
        "einsum": (lambda c: np.einsum("ij", A, casting=c), lambda c: sl.einsum("ij", x, casting=c)),
    }


@pytest.mark.parametrize("name", ["add", "concatenate", "copyto", "einsum"])
@pytest.mark.parametrize("casting", [None, 1, np.array(["safe", "no"])])
def test_casting_of_another_type_raises_typeerror_naming_it(name, casting):
    # NumPy: 'casting must be str'; stitchlab raised ValueError (for an array: 'truth value ... ambiguous')
    np_call, sl_call = _casting_calls()[name]
    with pytest.raises(TypeError):
        np_call(casting)
    with pytest.raises(TypeError, match=f"casting must be str, not {type(casting).__name__}"):
        sl_call(casting)


@pytest.mark.parametrize("name", ["add", "concatenate", "copyto", "einsum"])
def test_casting_as_bytes_is_read_as_numpy_reads_it(name):
    np_call, sl_call = _casting_calls()[name]
    np_call(b"same_kind")
    sl_call(b"same_kind")


@pytest.mark.parametrize("name", ["svd", "pinv", "matrix_rank"])
def test_hermitian_of_a_non_square_matrix_raises_linalgerror(name):
    # stitchlab ignored hermitian=True and answered for the 3x4 matrix
    with pytest.raises(np.linalg.LinAlgError):
        getattr(np.linalg, name)(A, hermitian=True)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        result = getattr(sl.linalg, name)(sl.asarray(A), hermitian=True)
        sl.compute(*(result if isinstance(result, tuple) else (result,)))



@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int8])
def test_a_python_int_past_64_bits_into_an_integer_array_is_named(dtype):
    # NumPy: "Python int too large to convert to C long", naming neither the value nor the dtype
    with pytest.raises(OverflowError, match="too large"):
        np.asarray([1, 2**70], dtype=dtype)
    with pytest.raises(OverflowError, match=rf"Python integer 1180591620717411303424 out of bounds for {np.dtype(dtype)}"):
        sl.asarray([1, 2**70], dtype=dtype)
    np.testing.assert_array_equal(sl.asarray([1, 2**70], dtype=np.float64).get(), [1.0, 2.0**70])


@pytest.mark.parametrize("make", [
    lambda m, v: m.asarray(v), lambda m, v: m.array(v), lambda m, v: m.full((2, 2), v),
])
@pytest.mark.parametrize("value, named", [
    ([Fraction(1, 2), 3], r"Fraction\(1, 2\)"), ([3, Decimal("1.5")], r"Decimal\('1\.5'\)"),
    ([[1], [None]], "None"), (Fraction(1, 2), r"Fraction\(1, 2\)"),
])
def test_objects_numpy_keeps_as_objects_are_named_with_the_dtype_that_converts_them(make, value, named):
    """Without a dtype NumPy keeps a Fraction, a Decimal or None as an object array, which stitchlab
    cannot hold: the error names the element and the fix (a dtype), and with it the values are
    NumPy's."""
    assert make(np, value).dtype == object
    with pytest.raises(TypeError, match=rf"dtype object \(NumPy's for {named}\).*give a dtype.*dtype=float"):
        make(sl, value)
    if named != "None":
        np.testing.assert_array_equal(sl.asarray(make(np, value), dtype=float).get(), make(np, value).astype(float))
        np.testing.assert_array_equal(sl.asarray(value, dtype=np.float32).get(), np.asarray(value, dtype=np.float32))


def test_a_generator_is_refused_naming_fromiter():
    """NumPy keeps a generator as one object (a 0-d object array): the fix is fromiter or a list,
    not a dtype (the message advised dtype=float, with which NumPy raises TypeError too)."""
    assert np.asarray(i for i in range(3)).dtype == object
    with pytest.raises(TypeError, match=r"generator with dtype object.*sl\.fromiter\(values, dtype\)"):
        sl.asarray(i for i in range(3))
    np.testing.assert_array_equal(sl.fromiter((i for i in range(3)), float).get(), np.arange(3.0))
