"""NumPy's dispatch protocols on stitchlab arrays (``stitchlab/frontend/protocols.py``):
``np.exp(x)``, ``np.mean(x, axis=0)``, ``np.add.reduce(x)``, ``ndarray + x``... build the lazy
graph stitchlab's own functions build (so NumPy-written code fuses: one kernel for a softmax
written with ``np.*``); what stitchlab has no lazy version of runs in NumPy on the values; ``out=``
NumPy arrays are written; ``out=`` stitchlab arrays and arguments without a lazy meaning raise
``TypeError`` naming them. Values are checked against NumPy on the numpy backend.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.frontend import protocols

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(7)
A = (RNG.standard_normal((5, 6)) * 2).astype(np.float32)
B = (RNG.random((5, 6)) + 0.5).astype(np.float32)
I = RNG.integers(-20, 20, (5, 6)).astype(np.int32)  # noqa: E741
J = RNG.integers(1, 7, (5, 6)).astype(np.int32)


def _same(got: Any, want: Any) -> None:
    """A lazy result with NumPy's dtype, shape and values (NaN where NumPy has NaN)."""
    assert isinstance(got, sl.LazyArray), type(got)
    value = got.get()
    want = np.asarray(want)
    assert value.dtype == want.dtype and value.shape == want.shape
    np.testing.assert_allclose(value.astype(np.float64), want.astype(np.float64), rtol=2e-6, atol=1e-6, equal_nan=True)


def _ufunc_inputs(ufunc: np.ufunc) -> tuple[np.ndarray, ...]:
    """Operands in the ufunc's domain: integers for the bitwise ops and shifts, positive floats
    below 1 for the inverse trigonometric ones, else floats (B, positive, where a second operand
    divides or is an exponent)."""
    if ufunc.__name__ in ("bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift", "gcd", "lcm",
                          "bitwise_count"):
        return (I, J)[: ufunc.nin]
    if ufunc.__name__ in ("arcsin", "arccos", "arctanh"):
        return (B / 2,)
    if ufunc.__name__ == "ldexp":
        return (A, I)
    if ufunc.__name__ == "vecmat":  # (n),(n,m)->(m)
        return (A, B.T)
    return (A, B)[: ufunc.nin]


UFUNCS = sorted((u for u in protocols._lazy_tables()[0] if u is not np.matmul), key=lambda u: u.__name__)  # matmul: test_matmul.py


def test_the_common_ufuncs_are_lazy() -> None:
    names = {u.__name__ for u in UFUNCS}
    for name in ("exp", "log", "sqrt", "tanh", "add", "subtract", "multiply", "divide", "power", "maximum",
                 "minimum", "greater", "equal", "logical_and", "isnan", "absolute", "fabs", "square", "sign"):
        assert name in names, name


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
def test_ufunc_call_builds_the_stitchlab_op(ufunc: np.ufunc) -> None:
    args = _ufunc_inputs(ufunc)
    with np.errstate(all="ignore"):
        want = ufunc(*args)
        got = ufunc(*(sl.asarray(a) for a in args))
        mixed = ufunc(args[0], *(sl.asarray(a) for a in args[1:])) if ufunc.nin == 2 else got
    if ufunc.nout == 2:  # divmod, modf: a tuple of lazy arrays
        for g, m, w in zip(got, mixed, want, strict=True):
            _same(g, w)
            _same(m, w)
        return
    _same(got, want)
    _same(mixed, want)  # ndarray first: NumPy hands the call to the stitchlab operand


def test_operators_with_numpy_operands_stay_lazy_and_promote_as_numpy() -> None:
    x = sl.asarray(A)
    for got, want in [
        (A + x, A + A), (B - x, B - A), (B * x, B * A), (np.float64(2.0) * x, np.float64(2.0) * A),
        (np.float32(2.0) * x, np.float32(2.0) * A), (2.0 * x, 2.0 * A), (B > x, B > A), (B**x, B**A),
    ]:
        _same(got, want)


REDUCED = [np.add, np.multiply, np.maximum, np.minimum, np.logical_and, np.logical_or]


@pytest.mark.parametrize("ufunc", REDUCED, ids=lambda u: u.__name__)
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
def test_ufunc_reduce(ufunc: np.ufunc, axis: Any) -> None:
    a = A > 0 if ufunc in (np.logical_and, np.logical_or) else A
    _same(ufunc.reduce(sl.asarray(a), axis=axis), ufunc.reduce(a, axis=axis))
    _same(ufunc.reduce(sl.asarray(a), axis, keepdims=True), ufunc.reduce(a, axis, keepdims=True))


def test_ufunc_reduce_defaults_to_axis_0_and_takes_dtype() -> None:
    _same(np.add.reduce(sl.asarray(A)), np.add.reduce(A))
    assert np.add.reduce(sl.asarray(A)).shape == (6,)
    _same(np.add.reduce(sl.asarray(I), dtype=np.int64), np.add.reduce(I, dtype=np.int64))
    _same(np.multiply.reduce(sl.asarray(B), 1, np.float64), np.multiply.reduce(B, 1, np.float64))


FUNCTION_CASES: list[tuple[str, Any]] = [
    ("sum", lambda m, x: m.sum(x, axis=0)),
    ("sum-positional", lambda m, x: m.sum(x, 1, np.float64, None, True)),
    ("prod", lambda m, x: m.prod(x, axis=1)),
    ("max", lambda m, x: m.max(x, axis=-1, keepdims=True)),
    ("min", lambda m, x: m.min(x)),
    ("amax", lambda m, x: m.amax(x, 0)),
    ("amin", lambda m, x: m.amin(x, 1)),
    ("any", lambda m, x: m.any(x > 1, axis=0)),
    ("all", lambda m, x: m.all(x > -5)),
    ("mean", lambda m, x: m.mean(x, axis=0)),
    ("var", lambda m, x: m.var(x, axis=1, ddof=1)),
    ("var-correction", lambda m, x: m.var(x, axis=1, correction=1)),
    ("nanstd-correction", lambda m, x: m.nanstd(x, axis=0, ddof=0, correction=2)),
    ("std", lambda m, x: m.std(x, 0, keepdims=True)),
    ("argmax", lambda m, x: m.argmax(x, axis=1)),
    ("argmin", lambda m, x: m.argmin(x)),
    ("where", lambda m, x: m.where(x > 0, x, 0.5)),
    ("clip", lambda m, x: m.clip(x, -1, 1)),
    ("clip-min-max", lambda m, x: m.clip(x, min=-0.5, max=0.5)),
    ("reshape", lambda m, x: m.reshape(x, (3, 10))),
    ("transpose", lambda m, x: m.transpose(x)),
    ("ravel", lambda m, x: m.ravel(x)),
    ("expand_dims", lambda m, x: m.expand_dims(x, 1)),
    ("squeeze", lambda m, x: m.squeeze(m.expand_dims(x, 0))),
    ("isclose", lambda m, x: m.isclose(x, x + 1e-6)),
    ("nan_to_num", lambda m, x: m.nan_to_num(m.log(x), nan=-1.0)),
    ("nansum", lambda m, x: m.nansum(m.log(x), axis=0)),
    ("nanmax", lambda m, x: m.nanmax(m.log(x), axis=1)),
    ("nanmin", lambda m, x: m.nanmin(m.log(x), axis=1)),
    ("nanmean", lambda m, x: m.nanmean(m.log(x), axis=0)),
    ("nanvar", lambda m, x: m.nanvar(m.log(x), axis=0, ddof=1)),
    ("nanstd", lambda m, x: m.nanstd(m.log(x), axis=1)),
    ("count_nonzero", lambda m, x: m.count_nonzero(x > 0, axis=0)),
    ("ptp", lambda m, x: m.ptp(x, axis=1)),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, 1)),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1)),
    ("broadcast_to", lambda m, x: m.broadcast_to(x[0], (3, 6))),
    ("zeros_like", lambda m, x: m.zeros_like(x, dtype=np.float16)),
    ("ones_like", lambda m, x: m.ones_like(x)),
    ("full_like", lambda m, x: m.full_like(x, 3)),
    ("astype", lambda m, x: m.astype(x, np.int16)),
]


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_numpy_function_builds_the_stitchlab_function(case: tuple[str, Any]) -> None:
    _, fn = case
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN slices (stitchlab warns not)
        _same(fn(np, sl.asarray(A)), fn(np, A))


def test_functions_returning_tuples_or_bools() -> None:
    x = sl.asarray(A)
    for got, want in [(np.atleast_2d(x[0], x), np.atleast_2d(A[0], A)),
                      (np.broadcast_arrays(x, x[0]), np.broadcast_arrays(A, A[0]))]:
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    assert np.allclose(x, A * (1 + 1e-6)) is True and np.allclose(x, A + 1) is False
    empty = np.empty_like(x)
    assert isinstance(empty, sl.LazyArray) and empty.shape == A.shape and empty.dtype == A.dtype


def test_every_mapped_function_exists_in_stitchlab() -> None:
    functions = dict(protocols._lazy_tables()[1])
    for name in sl.linalg.__all__:
        if hasattr(np.linalg, name):
            assert functions.pop(getattr(np.linalg, name)) is getattr(sl.linalg, name), name
    assert len(functions) == len(protocols._FUNCTIONS)
    for np_func, lazy in functions.items():
        assert lazy is getattr(sl, np_func.__name__), np_func.__name__


def test_numpy_written_softmax_and_layernorm_fuse_into_one_kernel() -> None:
    def softmax(x: Any) -> Any:
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)

    def layernorm(x: Any, w: Any, b: Any) -> Any:
        return (x - np.mean(x, -1, keepdims=True)) / np.sqrt(np.var(x, -1, keepdims=True) + 1e-5) * w + b

    x = sl.asarray(A)
    assert len(sl.explain(softmax(x)).kernels) == 1
    assert len(sl.explain(layernorm(x, B[0], A[0])).kernels) == 1
    _same(softmax(x), softmax(A))
    _same(layernorm(x, B[0], A[0]), layernorm(A, B[0], A[0]))
    jitted = sl.jit(softmax)
    np.testing.assert_allclose(np.asarray(jitted(A)), softmax(A), rtol=1e-6)


def test_what_stitchlab_lacks_runs_in_numpy_on_the_values() -> None:
    """(On the GPU it runs in CuPy: tests/gpu/test_numpy_protocols_gpu.py.)"""
    x = sl.asarray(A)
    for got, want in [
        (np.apply_along_axis(np.sort, 1, x), np.apply_along_axis(np.sort, 1, A)),
        (np.fmax.accumulate(x), np.fmax.accumulate(A)), (np.add.reduceat(x, [0, 2]), np.add.reduceat(A, [0, 2])),
        (np.roots(x[0]), np.roots(A[0])),
    ]:
        assert type(got) is np.ndarray
        np.testing.assert_array_equal(got, want)


def test_out_numpy_arrays_are_written_and_returned() -> None:
    x = sl.asarray(A)
    buf = np.zeros_like(A)
    assert np.exp(x, out=buf) is buf
    np.testing.assert_allclose(buf, np.exp(A), rtol=1e-6)
    col = np.zeros(6, np.float64)
    assert np.sum(x, axis=0, out=col) is col
    np.testing.assert_allclose(col, A.sum(0), rtol=1e-6)
    row = np.zeros((5, 1), np.float32)
    assert np.maximum.reduce(x, axis=1, keepdims=True, out=row) is row
    np.testing.assert_array_equal(row, A.max(1, keepdims=True))
    prod = np.zeros((5, 5), np.float32)
    assert np.matmul(x, A.T, out=prod) is prod
    np.testing.assert_allclose(prod, A @ A.T, rtol=1e-5)
    q, r = np.zeros_like(A), np.zeros_like(A)
    assert np.divmod(x, 0.7, out=(q, r)) == (q, r)
    np.testing.assert_array_equal(q, np.divmod(A, 0.7)[0])
    acc = np.ones((5, 6))
    same = acc
    acc += x  # in place, as for any NumPy operand
    assert acc is same and type(acc) is np.ndarray
    np.testing.assert_allclose(acc, 1 + A.astype(np.float64), rtol=1e-6)


def test_out_follows_numpy_casting() -> None:
    with pytest.raises(TypeError, match="same_kind"):
        np.add(sl.asarray(A), 1.0, out=np.zeros((5, 6), np.int32))


@pytest.mark.parametrize("call", [
    lambda x: np.exp(x, out=x),
    lambda x: np.cumsum(x, axis=0, out=x),
    lambda x: np.nancumsum(x, axis=1, out=x),
    lambda x: np.add.accumulate(x, out=x),
    lambda x: np.maximum.accumulate(x, axis=1, out=x),
    lambda x: np.fmax.accumulate(x, axis=1, out=x),
], ids=["ufunc", "library-step", "nan-scan", "accumulate", "running-maximum", "numpy-function"])
def test_out_stitchlab_array_is_written(call: Any) -> None:
    x = sl.asarray(A)
    want = A.copy()
    assert call(x) is x
    call(want)
    np.testing.assert_allclose(x.get(), want, rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda x: np.sum(x, axis=0, out=x[0]),
    lambda x: np.nansum(x, axis=0, out=x[0]),
    lambda x: np.add.reduce(x, out=x[0]),
    lambda x: np.exp(x, out=x[:]),
], ids=["function", "numpy-function", "reduce", "slice"])
def test_out_a_view_writes_through_as_numpys(call: Any) -> None:
    x = sl.asarray(A)
    want = A.copy()
    call(x)
    call(want)
    np.testing.assert_allclose(x.get(), want, rtol=1e-6)
    y = sl.asarray(A)
    with pytest.raises(TypeError, match="view of another"):  # (a view of a transpose cannot write through)
        call(y.T)


@pytest.mark.parametrize("call", [
    lambda x: np.copyto(x, A * 2), lambda x: np.put(x, [0], 1.0), lambda x: np.place(x, A > 0, 1.0),
    lambda x: np.putmask(x, A > 0, 1.0), lambda x: np.fill_diagonal(x, 1.0), lambda x: np.add.at(x, [0, 0], 1.0),
], ids=["copyto", "put", "place", "putmask", "fill_diagonal", "add.at"])
def test_numpy_functions_that_write_into_a_stitchlab_array_are_stitchlabs(call: Any) -> None:
    x = sl.asarray(A.copy())
    want = A.copy()
    call(x)
    call(want)
    np.testing.assert_array_equal(x.get(), want)


def test_functions_without_a_lazy_version_get_read_only_values() -> None:
    # the numpy backend hands NumPy the array's own buffer: read-only, so nothing can change it
    seen: list[bool] = []
    sums = np.apply_along_axis(lambda r: seen.append(r.flags.writeable) or r.sum(), 1, sl.asarray(A))
    assert seen and not any(seen)
    np.testing.assert_allclose(sums, A.sum(1), rtol=1e-6)
    b = np.zeros(3, np.float32)
    np.copyto(b, sl.asarray(A[0, :3]))  # into a NumPy array: fine
    np.testing.assert_array_equal(b, A[0, :3])


def test_traced_arrays_cannot_be_materialized_by_numpy_functions() -> None:
    @sl.jit
    def f(x: Any) -> Any:
        return sl.asarray(np.apply_along_axis(np.sort, 1, x))

    with pytest.raises(RuntimeError, match="cannot materialize a traced array inside sl.jit"):
        f(A)


@pytest.mark.parametrize("call, way", [
    (lambda x: np.reshape(x, (6, 5), order="F"), r"x\.T\.reshape\(shape\[::-1\]\)\.T"),
    (lambda x: sl.reshape(x, (6, 5), order="F"), r"x\.T\.reshape\(shape\[::-1\]\)\.T"),
    (lambda x: x.reshape(6, 5, order="F"), r"x\.T\.reshape\(shape\[::-1\]\)\.T"),
    (lambda x: np.ravel(x, order="F"), r"x\.T\.ravel\(\)"),
    (lambda x: x.ravel("F"), r"x\.T\.ravel\(\)"),
    (lambda x: x.flatten("F"), r"x\.T\.flatten\(\)"),
    (lambda x: x.copy(order="F"), "leave order out"),
    (lambda x: np.zeros_like(x, order="F"), "leave order out"),
    (lambda x: sl.zeros(3, order="F"), "leave order out"),
    (lambda x: sl.ones(3, order="F"), "leave order out"),
    (lambda x: sl.empty(3, order="F"), "leave order out"),
    (lambda x: sl.full(3, 1, order="F"), "leave order out"),
    (lambda x: sl.eye(3, order="F"), "leave order out"),
    (lambda x: sl.asarray(A, order="F"), "leave order out"),
    (lambda x: sl.array(A, order="F"), "leave order out"),
])
def test_order_f_raises_naming_it_and_the_way_round(call: Any, way: str) -> None:
    with pytest.raises(TypeError, match=rf"\(order='F'\): stitchlab arrays are C-ordered; {way}"):
        call(sl.asarray(A))


@pytest.mark.parametrize("args, kwargs", [
    ((None, None), {}), ((), {}), ((1,), {}), ((), {"min": 1}), ((), {"max": 0.5}), ((-1, None), {}),
    ((None,), {"a_max": 2}), ((0, 1), {"min": 0.5}), ((0, 1), {"max": 0.5}),
], ids=["both-none", "nothing", "a_min-only", "min", "max", "a_min-none", "a_max-keyword", "a_min-and-min", "a_max-and-max"])
def test_clip_takes_numpys_bounds_and_errors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """NumPy 2's ``clip``: ``min``/``max`` keywords, open sides, both open a copy, its errors; the
    same through ``np.clip``, ``sl.clip`` and (without ``a_min``) the method."""
    try:
        want = np.clip(A, *args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the same error, whatever it is
        for f in (np.clip, sl.clip):
            with pytest.raises(type(e), match=re.escape(str(e))):
                f(sl.asarray(A), *args, **kwargs)
        return
    for f in (np.clip, sl.clip):
        _same(f(sl.asarray(A), *args, **kwargs), want)
    if not args and set(kwargs) <= {"min", "max"}:
        _same(sl.asarray(A).clip(**kwargs), A.clip(**kwargs))


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_ddof_and_correction_together_are_refused_as_numpy(name: str) -> None:
    for f in (getattr(np, name), getattr(sl, name)):
        with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously"):
            f(sl.asarray(A), ddof=1, correction=1)


def test_defaults_passed_explicitly_are_accepted() -> None:
    x = sl.asarray(A)
    _same(np.reshape(x, (6, 5), order="C"), A.reshape(6, 5))
    _same(np.sum(x, axis=0, out=None, where=True), A.sum(0))
    _same(np.exp(x, casting="same_kind", order="K", where=True, out=None), np.exp(A))
    _same(np.astype(x, np.float16, copy=False), A.astype(np.float16))
    _same(np.zeros_like(x, order="K", subok=True), np.zeros_like(A))
    _same(x.reshape(5, 6, order="C"), A.reshape(5, 6, order="C"))
    _same(x.reshape((5, 6), order="A", copy=True), A.reshape((5, 6), order="A", copy=True))
    _same(sl.reshape(x, (5, 6), order="C"), np.reshape(A, (5, 6), order="C"))
    _same(np.reshape(x, shape=(5, 6), copy=False), np.reshape(A, shape=(5, 6), copy=False))
    for method, args in [("ravel", ("C",)), ("ravel", ("K",)), ("flatten", ("C",)), ("copy", ("C",))]:
        _same(getattr(x, method)(*args), getattr(A, method)(*args))
    _same(x.ravel(order="C"), A.ravel(order="C"))
    _same(x.copy(order="C"), A.copy(order="C"))
    _same(sl.ravel(x, order="C"), np.ravel(A, order="C"))
    for name in ("zeros", "ones", "empty"):
        assert getattr(sl, name)(3, order="C").shape == getattr(np, name)(3, order="C").shape
    _same(sl.full(2, 7, order="C"), np.full(2, 7, order="C"))
    _same(sl.eye(3, order="C"), np.eye(3, order="C"))
    _same(sl.asarray(A, order="C"), np.asarray(A, order="C"))
    _same(sl.array(A, order="K", subok=False), np.array(A, order="K", subok=False))


@pytest.mark.parametrize("ndmin", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("data", [A, np.float32(2.5), [1, 2], sl.asarray(np.arange(3.0))])
def test_array_ndmin_puts_axes_in_front_as_numpy(ndmin: int, data: Any) -> None:
    host = data.get() if isinstance(data, sl.LazyArray) else data
    _same(sl.array(data, ndmin=ndmin), np.array(host, ndmin=ndmin))


def test_asarray_copy_is_numpy_2s() -> None:
    a = np.arange(3.0)
    copied, shared, default = sl.asarray(a, copy=True), sl.asarray(a, copy=False), sl.asarray(a, copy=None)
    a[0] = 9
    assert copied.get()[0] == 0 and shared.get()[0] == 9 and default.get()[0] == 9
    x = sl.asarray(a)
    assert sl.asarray(x, copy=True) is not x and sl.asarray(x, copy=False) is x
    _same(sl.asarray(x, copy=True), a)
    for data, dtype in [([1, 2], None), (a, np.float32), (x, np.float32)]:
        with pytest.raises(ValueError, match="Unable to avoid copy"):
            np.asarray(data.get() if isinstance(data, sl.LazyArray) else data, dtype=dtype, copy=False)
        with pytest.raises(ValueError, match="Unable to avoid copy while creating an array as requested; .*copy=None"):
            sl.asarray(data, dtype=dtype, copy=False)
        with pytest.raises(ValueError, match="Unable to avoid copy"):
            sl.array(data, dtype=dtype, copy=False)
    _same(sl.array([1, 2], copy=None), np.array([1, 2], copy=None))


def test_cupy_sees_no_array_ufunc_and_defers_to_the_reflected_operator() -> None:
    # CuPy's operators read ``y.__array_ufunc__`` from the instance and defer to ``y.__radd__``
    # only when it is None (else CuPy's own add would evaluate x through its CUDA array
    # interface); NumPy reads it from the type. The GPU test checks ``cupy_array + x`` itself.
    x = sl.asarray(A)
    assert x.__array_ufunc__ is None
    assert callable(type(x).__array_ufunc__)
