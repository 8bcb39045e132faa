"""stitchlab's elementwise functions as ufuncs (``stitchlab/frontend/ufunc.py``): NumPy's keywords
(``out=``, ``where=``, ``dtype=``, ``signature=``, ``casting=``) and methods (``reduce``,
``accumulate``, ``outer``, ``reduceat``, ``at``), each checked against NumPy on the same values."""

from __future__ import annotations

import pickle
import re
import warnings
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal(5).astype(np.float32)
I8 = RNG.integers(-100, 100, (4, 5)).astype(np.int8)
MASK = RNG.random((4, 5)) > 0.4
NUMPY_UFUNCS = [n for n in dir(np) if isinstance(getattr(np, n), np.ufunc) and hasattr(sl, n)]


def _same(got: Any, want: Any) -> None:
    got = got.get() if isinstance(got, sl.ndarray) else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", NUMPY_UFUNCS)
def test_every_ufunc_is_a_ufunc_with_numpys_attributes(name: str) -> None:
    f, g = getattr(sl, name), getattr(np, name)
    assert isinstance(f, sl.ufunc)
    assert (f.nin, f.nout, f.nargs, f.identity, f.signature) == (g.nin, g.nout, g.nargs, g.identity, g.signature)
    assert f.types == g.types and f.ntypes == g.ntypes
    assert repr(f) == f"<stitchlab ufunc '{name}'>" and f.__name__ == name
    assert pickle.loads(pickle.dumps(f)) is f


def test_functions_without_a_numpy_ufunc_are_ufuncs_too() -> None:
    for name in ("sigmoid", "expit", "rsqrt", "erf", "erfc"):
        f = getattr(sl, name)
        assert isinstance(f, sl.ufunc) and (f.nin, f.nout) == (1, 1) and f.identity is None
    assert sl.sigmoid(sl.asarray(A), dtype=np.float64).dtype == np.float64
    with pytest.raises(TypeError, match="Cannot cast ufunc 'erf' input 0 .* 'same_kind'"):
        sl.erf(sl.asarray(A), dtype=np.int32)


# --- out= -------------------------------------------------------------------------------------------
def test_out_a_stitchlab_array_then_stands_for_the_value() -> None:
    x, y = sl.asarray(A), sl.zeros((4, 5), dtype=np.float32)
    before = y * 1
    assert sl.exp(x, out=y) is y
    _same(y, np.exp(A))
    _same(before, np.zeros((4, 5), np.float32))  # (arrays built from y before keep the old value)
    assert sl.add(x, 1, y) is y  # positionally, as NumPy allows
    _same(y, A + 1)
    assert sl.add(x, 1, out=(y,)) is y
    _same(y, A + 1)


def test_out_numpy_arrays_and_casting() -> None:
    x = sl.asarray(A)
    buf = np.zeros((4, 5), np.float64)
    assert sl.multiply(x, 2, out=buf) is buf  # float32 into float64: same_kind
    np.testing.assert_array_equal(buf, (A * 2).astype(np.float64))
    ints = np.zeros((4, 5), np.int32)
    with pytest.raises(TypeError, match="same_kind"):
        sl.multiply(x, 2, out=ints)
    assert sl.multiply(x, 2, out=ints, casting="unsafe") is ints
    np.testing.assert_array_equal(ints, np.multiply(A, 2, out=np.zeros((4, 5), np.int32), casting="unsafe"))


def test_out_broadcasts_the_value_never_itself() -> None:
    wide = sl.zeros((4, 5), dtype=np.float32)
    assert sl.negative(sl.asarray(B), out=wide) is wide
    _same(wide, np.negative(B, out=np.zeros((4, 5), np.float32)))
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape \(5,\) doesn't match the "
                                         r"broadcast shape \(4, 5\)"):
        sl.add(sl.asarray(A), 1, out=sl.zeros(5, dtype=np.float32))


def test_two_outputs() -> None:
    x = sl.asarray(A)
    q, r = sl.zeros((4, 5), dtype=np.float32), sl.zeros((4, 5), dtype=np.float32)
    assert sl.divmod(x, 0.7, out=(q, r)) == (q, r)
    want = np.divmod(A, 0.7)
    _same(q, want[0])
    _same(r, want[1])
    frac, whole = sl.modf(x, sl.zeros((4, 5), dtype=np.float32), None)  # one output given positionally
    _same(frac, np.modf(A)[0])
    _same(whole, np.modf(A)[1])


@pytest.mark.parametrize("call, error, match", [
    (lambda x: sl.add(x, 1, x, out=x), TypeError, "cannot specify 'out' as both a positional and keyword argument"),
    (lambda x: sl.add(x, out=x), TypeError, r"add\(\) takes from 2 to 3 positional arguments but 1 was given"),
    (lambda x: sl.divmod(x, 2, out=x), ValueError, "exactly one entry per ufunc output"),
    (lambda x: sl.exp(x, out=[0.0] * 5), TypeError, "out= must be a stitchlab, NumPy or CuPy array, not list"),
    (lambda x: sl.exp(x, casting="bad"), ValueError, "casting must be one of"),
    (lambda x: sl.exp(x, order="F"), TypeError, "C-ordered"),
    (lambda x: sl.add(x, 1, dtype=np.float64, signature="dd->d"), TypeError, "cannot specify both 'signature' and 'dtype'"),
    (lambda x: sl.exp(x[0], out=x.reshape(4, 5)[1]), TypeError, "view of another"),  # (a view of a view)
])
def test_bad_calls_raise_numpys_errors(call: Any, error: type, match: str) -> None:
    x = sl.asarray(A)
    with pytest.raises(error, match=match):
        call(x)
    _same(x, A)  # nothing written


# --- where= -----------------------------------------------------------------------------------------
def test_where_with_out_keeps_outs_values() -> None:
    y = sl.asarray(B * 10)
    sl.exp(sl.asarray(A), out=sl.asarray(np.zeros((4, 5), np.float32)))  # (unrelated out: y untouched)
    out = sl.full((4, 5), -1.0, dtype=np.float32)
    sl.add(sl.asarray(A), sl.asarray(B), out=out, where=sl.asarray(MASK))
    want = np.full((4, 5), -1.0, np.float32)
    np.add(A, B, out=want, where=MASK)
    _same(out, want)
    _same(y, B * 10)
    host = np.full((4, 5), 7.0)
    sl.sqrt(sl.asarray(np.abs(A)), out=host, where=MASK)
    want = np.full((4, 5), 7.0)
    np.sqrt(np.abs(A), out=want, where=MASK)
    np.testing.assert_allclose(host, want, rtol=1e-6)


def test_where_without_out_gives_zeros_and_broadcasts_with_the_mask() -> None:
    got = sl.multiply(sl.asarray(B), 3, where=sl.asarray(MASK))  # the mask widens the result, as in NumPy
    _same(got, np.where(MASK, B * 3, np.float32(0)))


# --- dtype=, signature=, casting= -------------------------------------------------------------------
@pytest.mark.parametrize("name, args, kwargs", [
    ("add", (I8, 1), {"dtype": np.float64}),
    ("add", (I8, I8), {"dtype": np.int16}),
    ("multiply", (A, 3), {"dtype": np.float64}),
    ("add", (A, 1.5), {"signature": "dd->d"}),
    ("add", (I8, 100), {"signature": (np.int64, np.int64, None)}),
    ("true_divide", (I8, 3), {"dtype": np.float32}),
    ("exp", (A,), {"dtype": np.float64}),
    ("maximum", (I8, A), {"dtype": np.float64}),
    ("add", (A, 1), {"dtype": np.int32, "casting": "unsafe"}),
    ("add", (1, 2), {"dtype": np.float32}),
    ("divmod", (A, 0.3), {"dtype": np.float64}),
    ("add", (A, A), {"casting": "no"}),
])
def test_loop_dtypes_as_numpy(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    want = getattr(np, name)(*args, **kwargs)
    got = getattr(sl, name)(*[sl.asarray(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    else:
        _same(got, want)


@pytest.mark.parametrize("name, args, kwargs", [
    ("add", (A, 1), {"dtype": np.int32}),  # float32 input into the int32 loop: not same_kind
    ("add", (I8, A), {"casting": "no"}),
    ("less", (A, 1), {"dtype": np.float64}),  # no such loop
    ("add", (A, 1), {"signature": "ii->i"}),
])
def test_loop_dtype_errors_are_numpys(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError) as numpys:
        getattr(np, name)(*args, **kwargs)
    with pytest.raises(type(numpys.value), match=re.escape(str(numpys.value)[:40])):
        getattr(sl, name)(*[sl.asarray(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)


def test_a_python_integer_out_of_the_loops_range_raises_as_in_numpy() -> None:
    with pytest.raises(OverflowError, match="300"):
        sl.add(sl.asarray(I8), 300, dtype=np.int8)


# --- reduce -----------------------------------------------------------------------------------------
REDUCED = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or"]


def _operand(name: str) -> np.ndarray:
    return A > 0 if name.startswith("logical") else A


@pytest.mark.parametrize("name", REDUCED)
@pytest.mark.parametrize("axis", [0, 1, -1, None, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_as_numpy(name: str, axis: Any, keepdims: bool) -> None:
    a = _operand(name)
    _same(getattr(sl, name).reduce(sl.asarray(a), axis=axis, keepdims=keepdims),
          getattr(np, name).reduce(a, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", REDUCED)
def test_reduce_with_initial_and_where(name: str) -> None:
    a, f, g = _operand(name), getattr(sl, name), getattr(np, name)
    initial = True if name.startswith("logical") else 0.5
    _same(f.reduce(sl.asarray(a), axis=1, initial=initial), g.reduce(a, axis=1, initial=initial))
    _same(f.reduce(sl.asarray(a), axis=0, where=sl.asarray(MASK), initial=initial),
          g.reduce(a, axis=0, where=MASK, initial=initial))
    if g.identity is not None:
        _same(f.reduce(sl.asarray(a), axis=None, where=MASK), g.reduce(a, axis=None, where=MASK))


def test_reduce_of_empty_axes() -> None:
    empty = np.zeros((0, 3), np.float32)
    _same(sl.maximum.reduce(sl.asarray(empty), axis=0, initial=-1.0), np.maximum.reduce(empty, axis=0, initial=-1.0))
    _same(sl.add.reduce(sl.asarray(empty), axis=0), np.add.reduce(empty, axis=0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity; give initial="):
        sl.maximum.reduce(sl.asarray(empty), axis=0)
    with pytest.raises(ValueError, match="'maximum' does not have an identity, so to use a where mask one has to specify 'initial'"):
        sl.maximum.reduce(sl.asarray(A), where=MASK)


def test_reduce_dtype_and_out() -> None:
    _same(sl.add.reduce(sl.asarray(I8), axis=1, dtype=np.int8), np.add.reduce(I8, axis=1, dtype=np.int8))
    _same(sl.add.reduce(sl.asarray(I8)), np.add.reduce(I8))  # (int8 sums in int64, as NumPy 2's)
    _same(sl.maximum.reduce(sl.asarray(I8), dtype=np.float64), np.maximum.reduce(I8, dtype=np.float64))
    out = sl.zeros(5, dtype=np.float64)
    assert sl.add.reduce(sl.asarray(A), out=out) is out
    _same(out, np.add.reduce(A).astype(np.float64))


@pytest.mark.parametrize("name", ["subtract", "bitwise_or", "logaddexp", "true_divide"])
def test_reduce_of_the_other_ufuncs_runs_on_the_values(name: str) -> None:
    a = np.abs(I8).astype(np.int32) + 1 if name == "bitwise_or" else A
    got = getattr(sl, name).reduce(sl.asarray(a), axis=1)
    assert isinstance(got, sl.ndarray)
    _same(got, getattr(np, name).reduce(a, axis=1))


def test_methods_of_ufuncs_that_are_not_binary_raise() -> None:
    with pytest.raises(ValueError, match="sin.reduce: only supported for binary functions"):
        sl.sin.reduce(sl.asarray(A))
    with pytest.raises(ValueError, match="divmod.outer: only supported for binary functions"):
        sl.divmod.outer(sl.asarray(A), sl.asarray(A))
    with pytest.raises(ValueError, match=r"matmul.reduce: not defined on a ufunc with a signature \(\(n\?,k\),\(k,m\?\)->\(n\?,m\?\)\)"):
        sl.matmul.reduce(sl.asarray(A))


# --- accumulate, outer, reduceat ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_or", "subtract"])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.bool_, np.float16])
def test_accumulate_as_numpy(name: str, dtype: Any) -> None:
    a = (A * 3).astype(dtype) if dtype != np.bool_ else A > 0
    if name == "subtract" and dtype == np.bool_:
        return  # (NumPy has no boolean subtract)
    for axis in (0, 1, -1):
        got = getattr(sl, name).accumulate(sl.asarray(a), axis=axis)
        assert isinstance(got, sl.ndarray)
        want = getattr(np, name).accumulate(a, axis=axis)
        if dtype == np.float16 and name in ("add", "multiply"):  # (scan order: float16 rounds each step)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got.get().astype(np.float64), want.astype(np.float64), rtol=1e-2, atol=1e-2)
        else:
            _same(got, want)


def test_accumulate_dtype_out_and_axis() -> None:
    _same(sl.add.accumulate(sl.asarray(I8), axis=1, dtype=np.int8), np.add.accumulate(I8, axis=1, dtype=np.int8))
    out = sl.zeros((4, 5), dtype=np.float32)
    assert sl.multiply.accumulate(sl.asarray(A), out=out) is out
    _same(out, np.multiply.accumulate(A))
    with pytest.raises(TypeError, match="add.accumulate: axis must be an integer"):
        sl.add.accumulate(sl.asarray(A), axis=None)


def test_outer_is_a_broadcast() -> None:
    a, b = A[0], A[:2]
    _same(sl.subtract.outer(sl.asarray(a), sl.asarray(b)), np.subtract.outer(a, b))
    _same(sl.add.outer([1, 2, 3], [10, 20]), np.add.outer([1, 2, 3], [10, 20]))
    _same(sl.multiply.outer(sl.asarray(I8[0]), 2, dtype=np.float32), np.multiply.outer(I8[0], 2, dtype=np.float32))
    q, r = sl.divmod(sl.asarray(a), 2)
    assert q.shape == (5,)


def test_reduceat() -> None:
    got = sl.add.reduceat(sl.asarray(A), [0, 2, 3], axis=1)
    assert isinstance(got, sl.ndarray)
    _same(got, np.add.reduceat(A, [0, 2, 3], axis=1))


# --- through NumPy's protocol, and traced ---------------------------------------------------------------
def test_numpys_calls_on_stitchlab_arrays_take_the_same_path() -> None:
    x = sl.asarray(A)
    got = np.add(x, 1, dtype=np.float64)
    assert isinstance(got, sl.ndarray)
    _same(got, np.add(A, 1, dtype=np.float64))
    out = sl.full((4, 5), 2.0, dtype=np.float32)
    np.exp(x, out=out, where=MASK)
    want = np.full((4, 5), 2.0, np.float32)
    np.exp(A, out=want, where=MASK)
    _same(out, want)
    _same(np.maximum.reduce(x, axis=1, initial=0.5), np.maximum.reduce(A, axis=1, initial=0.5))
    _same(np.add.accumulate(x, axis=1), np.add.accumulate(A, axis=1))
    assert isinstance(np.add.outer(x[0], x[1]), sl.ndarray)


def test_keywords_and_methods_under_jit() -> None:
    @sl.jit
    def f(x: Any, m: Any) -> Any:
        y = sl.zeros_like(x)
        sl.multiply(x, 2, out=y, where=m)
        return sl.add.reduce(y, axis=1, initial=1.0), sl.maximum.outer(x[0], x[1]), sl.add(x, 1, dtype=np.float64)

    s, o, d = f(A, MASK)
    y = np.zeros_like(A)
    np.multiply(A, 2, out=y, where=MASK)
    _same(s, np.add.reduce(y, axis=1, initial=1.0))
    _same(o, np.maximum.outer(A[0], A[1]))
    _same(d, np.add(A, 1, dtype=np.float64))


# --- the reductions' and scans' out=, initial=, where=, in NumPy's positional order ---------------------
@pytest.mark.parametrize("call", [
    lambda m, x, o: m.sum(x, 1, None, o),
    lambda m, x, o: m.sum(x, axis=1, out=o, initial=2.0, where=MASK),
    lambda m, x, o: m.prod(x, 1, np.float32, o, False, 0.5),
    lambda m, x, o: m.max(x, 1, o),
    lambda m, x, o: m.amax(x, axis=1, out=o, initial=0.25),
    lambda m, x, o: m.min(x, 1, o, False, 0.0, MASK),
    lambda m, x, o: m.mean(x, 1, None, o),
    lambda m, x, o: m.var(x, 1, None, o, 1),
    lambda m, x, o: m.std(x, axis=1, out=o),
    lambda m, x, o: x.sum(1, None, o),
    lambda m, x, o: x.max(1, o, False, -0.5, MASK),
    lambda m, x, o: x.mean(1, None, o),
])
def test_reductions_take_numpys_out_initial_and_where(call: Any) -> None:
    o, want_o = sl.zeros(4, dtype=np.float32), np.zeros(4, np.float32)
    assert call(sl, sl.asarray(A), o) is o
    want = call(np, A, want_o)
    assert want is want_o
    _same(o, want)


def test_any_all_arg_and_counted_reductions_with_out() -> None:
    x = sl.asarray(A)
    b = sl.zeros(5, dtype=np.bool_)
    assert sl.any(x > 1, 0, b) is b
    _same(b, np.any(A > 1, 0))
    assert (x > -1).all(0, out=b, where=MASK) is b
    _same(b, (A > -1).all(0, where=MASK))
    i = sl.zeros(4, dtype=np.int64)
    assert sl.argmax(x, 1, i) is i and x.argmin(1, out=i) is i
    _same(i, A.argmin(1))
    host = np.zeros(5, np.float64)
    assert sl.sum(x, axis=0, out=host) is host
    np.testing.assert_allclose(host, A.sum(0), rtol=1e-6)
    with pytest.raises(ValueError, match=r"add.reduce: the output parameter has shape \(1, 5\), the result \(5,\)"):
        x.sum(0, out=sl.zeros((1, 5), dtype=np.float32))
    with pytest.raises(TypeError, match="out= must be a stitchlab, NumPy or CuPy array, not bool"):
        sl.sum(x, 0, None, True)  # (NumPy's order: the fourth argument is out, not keepdims)


def test_clip_round_and_scans_with_out() -> None:
    x = sl.asarray(A)
    o = sl.zeros((4, 5), dtype=np.float32)
    assert sl.clip(x, -0.5, 0.5, o) is o
    _same(o, np.clip(A, -0.5, 0.5))
    assert sl.round(x, 2, o) is o and sl.around(x, 1, out=o) is o
    _same(o, np.round(A, 1))
    assert sl.cumsum(x, 1, None, o) is o
    _same(o, np.cumsum(A, 1))
    assert sl.cumprod(x, axis=0, out=o) is o
    _same(o, np.cumprod(A, axis=0))
    wide = sl.zeros((2, 4, 5), dtype=np.float32)
    assert sl.clip(x, 0, None, out=wide) is wide  # (elementwise: the value broadcasts to out)
    _same(wide, np.clip(A, 0, None, out=np.zeros((2, 4, 5), np.float32)))


# --- NumPy's positional order everywhere ---------------------------------------------------------------
def _positional(f: Any) -> list[str]:
    import inspect

    return [p.name for p in inspect.signature(f).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


#: where stitchlab's parameters differ from NumPy's (none now: einsum takes NumPy's ``*operands``)
_ORDER_EXCEPTIONS: set[str] = set()


def test_functions_take_numpys_positional_parameters_in_numpys_order() -> None:
    from stitchlab.frontend import protocols

    differ = []
    for name in protocols._FUNCTIONS:
        f, g = getattr(np, name, None), getattr(sl, name, None)
        if f is None or g is None or name in _ORDER_EXCEPTIONS:
            continue
        try:
            want, got = _positional(f), _positional(g)
        except (TypeError, ValueError):  # (no signature: a C function)
            continue
        if got[:len(want)] != want[:len(got)] or len(got) > len(want):
            differ.append(f"{name}: NumPy {want}, stitchlab {got}")
    assert not differ, differ


NAN_A = np.where(MASK, A, np.nan).astype(np.float32)[:, :4]


@pytest.mark.parametrize("a, shape, call", [
    (NAN_A, 4, lambda m, x, o: m.nansum(x, 1, None, o)),
    (NAN_A, 4, lambda m, x, o: m.nanprod(x, 1, None, o)),
    (NAN_A, 4, lambda m, x, o: m.nanmax(x, 1, o)),
    (NAN_A, 4, lambda m, x, o: m.nanmin(x, axis=1, out=o)),
    (NAN_A, 4, lambda m, x, o: m.nanmean(x, 1, None, o)),
    (NAN_A, 4, lambda m, x, o: m.nanvar(x, 1, None, o, 0)),
    (NAN_A, 4, lambda m, x, o: m.nanstd(x, 1, None, o)),
    (A, 4, lambda m, x, o: m.ptp(x, 1, o)),
    (A, (4, 4), lambda m, x, o: m.take(x, [0, 2, 1, 3], 1, o)),
    (A, (4, 4), lambda m, x, o: x.take([3, 3, 0, 1], 1, o)),
], ids=["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "ptp", "take", "take-method"])
def test_nan_reductions_ptp_and_take_with_out(a: np.ndarray, shape: Any, call: Any) -> None:
    o, want_o = sl.zeros(shape, dtype=np.float32), np.zeros(shape, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's all-NaN warnings)
        assert call(np, a, want_o) is want_o
    assert call(sl, sl.asarray(a), o) is o
    _same(o, want_o)


def test_like_functions_astype_and_methods_in_numpys_order() -> None:
    x = sl.asarray(A)
    _same(sl.zeros_like(x, np.float16, "C"), np.zeros_like(A, np.float16, "C"))
    _same(sl.full_like(A, 2, None, "K", True, (2, 3)), np.full_like(A, 2, None, "K", True, (2, 3)))
    with pytest.raises(TypeError, match="order='F'\\): stitchlab arrays are C-ordered"):
        sl.ones_like(x, None, "F")
    _same(x.astype(np.float64, "K", "safe"), A.astype(np.float64, "K", "safe"))
    with pytest.raises(TypeError, match="Cannot cast array data from dtype\\('float32'\\) to dtype\\('int32'\\) according to the rule 'same_kind'"):
        x.astype(np.int32, casting="same_kind")
    s = sl.asarray(np.sort(B))
    _same(s.searchsorted(sl.asarray(B[:3]), "right"), np.sort(B).searchsorted(B[:3], "right"))
    p = sl.asarray(B)
    p.partition(2)
    want = B.copy()
    want.partition(2)
    assert p.get()[2] == want[2] and set(p.get()[:2]) == set(want[:2])
    _same(sl.asarray(B).argpartition(2)[2:3], B.argpartition(2)[2:3])
    _same(sl.asarray(np.array([0, 1, 1])).choose([[1, 2, 3], [4, 5, 6]]), np.array([0, 1, 1]).choose([[1, 2, 3], [4, 5, 6]]))
    assert x.tobytes() == A.tobytes()
    _same(x[0].dot(x[1], out=sl.zeros((), dtype=np.float32)), A[0].dot(A[1]))


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_mean_var_std_with_where(name: str, axis: Any, dtype: Any) -> None:
    a = (A * 10).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's warnings for slices with nothing selected)
        want = getattr(np, name)(a, axis=axis, where=MASK)
        got = getattr(sl, name)(sl.asarray(a), axis=axis, where=sl.asarray(MASK))
        method = getattr(sl.asarray(a), name)(axis, where=MASK[0])  # (a mask that broadcasts)
        want_method = getattr(a, name)(axis, where=MASK[0])
    got_h, want_f = got.get(), np.asarray(want)
    assert got_h.dtype == want_f.dtype and got_h.shape == want_f.shape
    rtol = 2e-3 if dtype == np.float16 else 2e-6
    np.testing.assert_allclose(got_h.astype(np.float64), want_f.astype(np.float64), rtol=rtol, equal_nan=True)
    np.testing.assert_allclose(method.get().astype(np.float64), np.asarray(want_method).astype(np.float64), rtol=rtol,
                               equal_nan=True)


def test_var_with_where_and_ddof_and_a_mask_that_does_not_broadcast() -> None:
    a = np.arange(12.0).reshape(3, 4)
    m = np.array([True, False, True, True])
    _same(sl.var(sl.asarray(a), 1, None, None, 1, where=m), np.var(a, 1, None, None, 1, where=m))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same(sl.std(sl.asarray(a), 1, None, None, 3, where=m), np.std(a, 1, None, None, 3, where=m))  # (count - ddof < 1)
    with pytest.raises(ValueError, match=r"where= of shape \(2, 3, 4\) does not broadcast to the array's shape \(3, 4\)"):
        sl.mean(sl.asarray(a), where=np.ones((2, 3, 4), bool))


def test_array_attributes_numpy_has() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    x = sl.asarray(a)
    _same(x.mT, a.mT)
    _same(x.real, a.real)
    _same(x.imag, a.imag)
    _same(x.conj(), a.conj())
    _same(x.conjugate(), a.conjugate())
    for shape in [(2, 3, 4), (0, 3), (1,), (2, 1, 3), ()]:
        assert sl.zeros(shape, dtype=np.float32).strides == np.zeros(shape, np.float32).strides
    assert x.to_device(x.device) is x
    with pytest.raises(ValueError, match="this array lives on"):
        x.to_device("elsewhere")


def test_tofile(tmp_path: Any) -> None:
    path = tmp_path / "x.bin"
    sl.asarray(A).tofile(path)
    np.testing.assert_array_equal(np.fromfile(path, np.float32).reshape(A.shape), A)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.add(x, 1, out=xp.empty(3, int)),
    lambda xp, x: xp.multiply(x > 0, 2, out=xp.empty(3, bool)),
    lambda xp, x: xp.modf(x, out=(xp.empty(3, int), xp.empty(3))),
    lambda xp, x: xp.modf(x, out=(xp.empty(3), xp.empty(3, int))),
    lambda xp, x: xp.divmod(x, 2, out=(xp.empty(3), xp.empty(3, int))),
    lambda xp, x: xp.sqrt(x, out=xp.empty(3, np.float32), casting="safe"),
    lambda xp, x: xp.clip(x, 0, 1, out=xp.empty(3, int)),
    lambda xp, x: np.add(x, 1, out=xp.empty(3, np.int8)),
], ids=["add", "multiply-bool", "modf-0", "modf-1", "divmod-1", "sqrt-safe", "clip", "np.add"])
def test_an_out_of_another_kind_raises_numpys_ufunc_casting_error(call: Any) -> None:
    """A ufunc's out= its result cannot be cast into: NumPy's text, naming the ufunc and, of several
    outputs, the output by its operand number (it said "Cannot cast array data ... according to
    the rule")."""
    with pytest.raises(TypeError) as want:
        call(np, np.arange(3.0))
    with pytest.raises(TypeError) as got:
        call(sl, sl.arange(3.0))
    assert str(got.value) == str(want.value)
