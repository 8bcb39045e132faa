"""``i0``, ``kaiser``, ``piecewise``, ``choose``, ``trim_zeros``, ``histogram_bin_edges``,
``packbits``/``unpackbits``, ``fromfunction``, ``from_dlpack``, ``ascontiguousarray``/``asanyarray``
and the dtype predicates (``isdtype``, ``issubdtype``, ``promote_types``, ``common_type``,
``min_scalar_type``, ``isscalar``, ``isreal``/``iscomplex``/``isrealobj``/``iscomplexobj``) against
NumPy on the numpy backend: values (bit for bit where NumPy's arithmetic is followed), dtypes,
shapes, NumPy's error messages, ``np.<name>`` dispatch, and the kernels they fuse into. On the
GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(31)


def _same_error(call_numpy: Any, call_sl: Any, error: type[Exception]) -> None:
    with pytest.raises(error) as want:
        call_numpy()
    with pytest.raises(error) as got:
        call_sl()
    assert str(got.value).startswith(str(want.value)), (str(got.value), str(want.value))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8", "bool"])
def test_i0_is_numpys_bits(dtype: str) -> None:
    x = np.concatenate([RNG.uniform(-30, 30, 500), [0.0, -0.0, 8.0, -8.0, 7.999, 8.001, 700.0, np.inf, -np.inf, np.nan]])
    if dtype == "bool":
        x = x > 0
    elif dtype[0] in "iu":
        x = np.clip(np.nan_to_num(x), 0 if dtype[0] == "u" else -100, 100)
    x = x.astype(dtype)
    with np.errstate(all="ignore"):
        want = np.i0(x)
    got = sl.i0(sl.asarray(x)).get()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert isinstance(np.i0(sl.asarray(x)), sl.LazyArray)
    assert len(sl.explain(sl.i0(sl.asarray(x))).kernels) == 1


def test_i0_bfloat16_stays_bfloat16_within_its_rounding() -> None:
    x = np.linspace(-20, 20, 801)
    got = sl.i0(sl.asarray(x.astype(ml_dtypes.bfloat16))).get()
    assert got.dtype == ml_dtypes.bfloat16
    want = np.i0(x.astype(ml_dtypes.bfloat16).astype(np.float64))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0.025)


@pytest.mark.parametrize(("m", "beta"), [(0, 5.0), (1, 3.0), (2, 0.0), (4, 5.0), (17, 8.6), (51, 14.0), (-3, 1.0)])
def test_kaiser_is_numpys_bits(m: int, beta: float) -> None:
    got, want = sl.kaiser(m, beta).get(), np.kaiser(m, beta)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_piecewise_is_numpys() -> None:
    a = np.linspace(-3.0, 3.0, 13)
    x = sl.asarray(a)
    cases = [
        ([a < 0, a >= 0], [lambda v: -v, lambda v: v ** 2]),
        ([a < -1, a > 1], [lambda v: v * 10, 7.5, lambda v: v + 0.5]),  # the last: where neither holds
        ([a < 1, a > -1], [1, 2]),  # both hold in the middle: the later wins
        (a < 0, [-1, 1]),  # one condition as an array
        ([a < 0], [lambda v, k, add=0: v * k + add]),
    ]
    for conds, funcs in cases:
        kw = {"add": 2} if len(funcs) == 1 else {}
        args = (3,) if len(funcs) == 1 else ()
        want = np.piecewise(a, conds, funcs, *args, **kw)
        for got in (sl.piecewise(x, [sl.asarray(c) for c in conds] if isinstance(conds, list) else conds, funcs, *args, **kw),
                    np.piecewise(x, conds, funcs, *args, **kw)):
            assert isinstance(got, sl.LazyArray) and got.dtype == want.dtype
            np.testing.assert_array_equal(got.get(), want)
    ints = np.arange(6)
    np.testing.assert_array_equal(sl.piecewise(sl.asarray(ints), [ints < 2, ints < 4], [0.5, 2.7]).get(),
                                  np.piecewise(ints, [ints < 2, ints < 4], [0.5, 2.7]))  # cast to x's dtype
    stacked = np.stack([a < -1, a > 1])  # one array holding a condition per row
    for conds in (stacked, sl.asarray(stacked)):
        np.testing.assert_array_equal(sl.piecewise(x, conds, [1.0, 2.0, 3.0]).get(), np.piecewise(a, stacked, [1.0, 2.0, 3.0]))
    assert float(sl.piecewise(sl.asarray(3.0), [True], [1]).get()) == float(np.piecewise(3.0, [True], [1]))
    np.testing.assert_array_equal(sl.piecewise(x, [True] * 13, [4.0]).get(), np.piecewise(a, [True] * 13, [4.0]))
    assert len(sl.explain(sl.piecewise(x, [x < 0], [lambda v: sl.exp(v), lambda v: v])).kernels) == 1
    _same_error(lambda: np.piecewise(a, [a < 0], [1, 2, 3]), lambda: sl.piecewise(x, [x < 0], [1, 2, 3]), ValueError)


@pytest.mark.parametrize("value", [2**40, 300, -1, np.nan, 1e10, 0.5], ids=str)
@pytest.mark.parametrize("dtype", [np.int16, np.uint8])
def test_piecewise_values_go_into_xs_dtype_as_numpys_assignment(value: Any, dtype: Any) -> None:
    """A number that does not fit x's integer dtype raises NumPy's error (it wrapped silently)."""
    a = np.arange(6, dtype=dtype)
    try:
        want = np.piecewise(a, [a > 1], [value])
    except (OverflowError, ValueError) as e:
        with pytest.raises(type(e)):
            sl.piecewise(sl.asarray(a), [sl.asarray(a) > 1], [value]).get()
        return
    got = sl.piecewise(sl.asarray(a), [sl.asarray(a) > 1], [value]).get()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_piecewise_runs_inside_jit() -> None:
    f = sl.jit(lambda v: sl.piecewise(v, [v < 0], [lambda u: -u, lambda u: u * 2]))
    a = RNG.standard_normal(50)
    np.testing.assert_array_equal(f(sl.asarray(a)).get(), np.piecewise(a, [a < 0], [lambda u: -u, lambda u: u * 2]))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_is_numpys(mode: str) -> None:
    choices = [RNG.standard_normal((4, 5)), RNG.integers(-9, 9, (1, 5)), 2.5]
    index = RNG.integers(0, 3, (4, 5)) if mode == "raise" else RNG.integers(-7, 9, (4, 5))
    want = np.choose(index, choices, mode=mode)
    for a in (index, sl.asarray(index)):
        for got in (sl.choose(a, [sl.asarray(c) if np.ndim(c) else c for c in choices], mode=mode),
                    np.choose(sl.asarray(a), choices, mode=mode)):
            assert isinstance(got, sl.LazyArray) and got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.get(), want)
    stacked = RNG.integers(0, 100, (3, 4, 5))
    np.testing.assert_array_equal(sl.choose(sl.asarray(index), sl.asarray(stacked), mode=mode).get(),
                                  np.choose(index, stacked, mode=mode))
    flags = np.array([True, False, True])
    np.testing.assert_array_equal(sl.choose(flags, [[1, 2, 3], [3.5, 4, 5]]).get(), np.choose(flags, [[1, 2, 3], [3.5, 4, 5]]))


def test_choose_errors_are_numpys() -> None:
    ch = [[1, 2], [3, 4]]
    for a in (np.array([0, 2]), np.array([-1, 0])):
        _same_error(lambda a=a: np.choose(a, ch), lambda a=a: sl.choose(a, ch), ValueError)
        _same_error(lambda a=a: np.choose(a, ch), lambda a=a: sl.choose(sl.asarray(a), ch), ValueError)
    _same_error(lambda: np.choose(np.array([0.0, 1.0]), ch), lambda: sl.choose(np.array([0.0, 1.0]), ch), TypeError)
    _same_error(lambda: np.choose([0, 1], []), lambda: sl.choose([0, 1], []), ValueError)
    _same_error(lambda: np.choose([0, 1], ch, mode="x"), lambda: sl.choose([0, 1], ch, mode="x"), ValueError)
    with pytest.raises(ValueError):
        sl.choose(np.zeros((2, 3), int), [np.zeros(2), np.zeros(3)])
    _same_error(lambda: np.choose([0, 1], ch, out=np.zeros(3)), lambda: sl.choose([0, 1], ch, out=sl.zeros(3)), TypeError)


@pytest.mark.parametrize("dtype", ["int8", "float64", "float32"])
def test_choose_into_out_is_numpys(dtype: str) -> None:
    """``out=`` of the result's shape receives it cast as NumPy casts it (``unsafe``) and is
    returned: a stitchlab ``out`` then stands for it, a NumPy one is written."""
    a = np.array([0, 1, 0, 1, 1])
    ch = [np.array([1.7, 2, 3, 4, 5]), np.array([5, 100.5, 7, 8, -9.25])]
    want = np.zeros(5, dtype)
    np.choose(a, ch, out=want)
    x = sl.asarray(np.zeros(5, dtype))
    assert np.choose(sl.asarray(a), [sl.asarray(c) for c in ch], out=x) is x
    np.testing.assert_array_equal(x.get(), want)
    host = np.zeros(5, dtype)
    assert sl.choose(a, ch, out=host) is host
    np.testing.assert_array_equal(host, want)


def test_choose_in_jit_wraps_and_clips_and_refuses_to_check() -> None:
    a = RNG.integers(-5, 8, 40)
    ch = [RNG.standard_normal(40) for _ in range(3)]
    for mode in ("wrap", "clip"):
        f = sl.jit(lambda i, x, y, z, mode=mode: sl.choose(i, [x, y, z], mode=mode))
        np.testing.assert_array_equal(f(*(sl.asarray(v) for v in (a, *ch))).get(), np.choose(a, ch, mode=mode))
    g = sl.jit(lambda i, x, y, z: sl.choose(i, [x, y, z]))
    with pytest.raises(RuntimeError, match="sl.jit"):
        g(*(sl.asarray(v) for v in (np.abs(a) % 3, *ch)))


@pytest.mark.parametrize("trim", ["f", "b", "fb", "bf", "FB"])
def test_trim_zeros_is_numpys(trim: str) -> None:
    x = np.zeros((5, 6, 4))
    x[1, 2:4, 1] = RNG.standard_normal(2)
    x[3, 5, 2] = -0.5
    for axis in (None, 0, 1, -1, (0, 2)):
        want = np.trim_zeros(x, trim, axis=axis)
        got = sl.trim_zeros(sl.asarray(x), trim, axis=axis)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.get(), want)
    one = np.array([0.0, -0.0, 3.0, 0.0, np.nan, 0.0, 0.0])
    np.testing.assert_array_equal(sl.trim_zeros(sl.asarray(one), trim).get(), np.trim_zeros(one, trim))
    assert sl.trim_zeros(sl.asarray(np.zeros((2, 3))), trim).shape == np.trim_zeros(np.zeros((2, 3)), trim).shape
    assert isinstance(np.trim_zeros(sl.asarray(one), trim), sl.LazyArray)


def test_trim_zeros_edge_cases_and_errors() -> None:
    assert int(sl.trim_zeros(sl.asarray(np.array(0))).get()) == 0
    assert sl.trim_zeros(sl.asarray(np.zeros(0))).shape == (0,)
    np.testing.assert_array_equal(sl.trim_zeros(sl.asarray(np.array([0, 1, 0], np.int8))).get(), [1])
    for trim in ("", "x", "ff", "fbx"):
        _same_error(lambda t=trim: np.trim_zeros(np.array([0, 1]), t), lambda t=trim: sl.trim_zeros(sl.asarray(np.array([0, 1])), t),
                    ValueError)
    with pytest.raises(np.exceptions.AxisError):
        sl.trim_zeros(sl.asarray(np.zeros((2, 2))), axis=2)
    with pytest.raises(RuntimeError, match="sl.jit"):
        sl.jit(lambda v: sl.trim_zeros(v))(sl.asarray(np.array([0.0, 1.0])))


def test_histogram_bin_edges_is_numpys() -> None:
    a = RNG.standard_normal(1000)
    for bins, rng in [(10, None), (7, (-1.0, 2.0)), ("auto", None), ("fd", None), ("sturges", (-3, 3)),
                      (np.array([-1.0, 0.0, 0.5, 3.0]), None)]:
        want = np.histogram_bin_edges(a, bins, rng)
        got = sl.histogram_bin_edges(sl.asarray(a), bins if not isinstance(bins, np.ndarray) else sl.asarray(bins), rng)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(sl.histogram_bin_edges(sl.asarray(a), [-1.0, 0.0, 2.0]).get(), [-1.0, 0.0, 2.0])
    w = RNG.random(1000)
    np.testing.assert_array_equal(sl.histogram_bin_edges(sl.asarray(a), 5, weights=sl.asarray(w)).get(),
                                  np.histogram_bin_edges(a, 5, weights=w))
    _same_error(lambda: np.histogram_bin_edges(a, "auto", weights=w),
                lambda: sl.histogram_bin_edges(sl.asarray(a), "auto", weights=sl.asarray(w)), TypeError)
    ints = RNG.integers(0, 50, 200)
    np.testing.assert_array_equal(sl.histogram_bin_edges(sl.asarray(ints), 5).get(), np.histogram_bin_edges(ints, 5))
    assert isinstance(np.histogram_bin_edges(sl.asarray(a), 3), sl.LazyArray)
    with pytest.raises(ValueError):
        sl.histogram_bin_edges(sl.asarray(np.array([np.nan, 1.0])), 3)


@pytest.mark.parametrize("bitorder", ["big", "little"])
@pytest.mark.parametrize(("shape", "axis"), [((3, 13), None), ((3, 13), 1), ((3, 13), 0), ((), None), ((2, 0), 1),
                                            ((5, 16), -1), ((2, 3, 9), 1), ((8,), 0)])
def test_packbits_and_unpackbits_are_numpys(shape: tuple[int, ...], axis: Any, bitorder: str) -> None:
    for x in (RNG.integers(-2, 3, shape), RNG.random(shape) < 0.5, RNG.integers(0, 256, shape).astype(np.uint8)):
        want = np.packbits(x, axis=axis, bitorder=bitorder)
        got = sl.packbits(sl.asarray(x), axis=axis, bitorder=bitorder)
        assert got.dtype == want.dtype == np.uint8 and got.shape == want.shape
        np.testing.assert_array_equal(got.get(), want)
        for count in (None, 0, 5, -3, 40):
            if count and not want.size:
                continue  # (NumPy leaves the padding of an empty input uninitialized)
            if count is not None and count < 0 and -count > 8 * (want.size if axis is None else want.shape[axis]):
                continue
            back = np.unpackbits(want, axis=axis, count=count, bitorder=bitorder)
            got_back = sl.unpackbits(sl.asarray(want), axis=axis, count=count, bitorder=bitorder)
            assert got_back.dtype == np.uint8 and got_back.shape == back.shape
            np.testing.assert_array_equal(got_back.get(), back)


def test_packbits_errors_dispatch_and_one_kernel() -> None:
    _same_error(lambda: np.packbits(np.float32([1])), lambda: sl.packbits(sl.asarray(np.float32([1]))), TypeError)
    _same_error(lambda: np.unpackbits(np.int8([1])), lambda: sl.unpackbits(sl.asarray(np.int8([1]))), TypeError)
    _same_error(lambda: np.packbits(np.array([1]), bitorder="x"), lambda: sl.packbits(sl.asarray(np.array([1])), bitorder="x"),
                ValueError)
    u = np.array([3, 200], np.uint8)
    _same_error(lambda: np.unpackbits(u, count=-17), lambda: sl.unpackbits(sl.asarray(u), count=-17), ValueError)
    x = sl.asarray(RNG.standard_normal((64, 100)))
    assert isinstance(np.packbits(x > 0, axis=1), sl.LazyArray)
    assert len(sl.explain(sl.packbits(x > 0, axis=1)).kernels) == 1


def test_fromfunction_and_array_wrappers() -> None:
    want = np.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int)
    got = sl.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(sl.fromfunction(lambda i, k=2.0: i * k, 5, k=0.5).get(), np.fromfunction(lambda i, k=2.0: i * k, (5,), k=0.5))
    assert len(sl.explain(sl.fromfunction(lambda i, j: sl.sin(i) * j, (30, 40))).kernels) == 1
    assert sl.ascontiguousarray(5.0).shape == np.ascontiguousarray(5.0).shape == (1,)
    np.testing.assert_array_equal(sl.ascontiguousarray(np.arange(6).reshape(2, 3).T, np.float32).get(),
                                  np.ascontiguousarray(np.arange(6).reshape(2, 3).T, np.float32))
    x = sl.asarray(np.arange(3))
    assert sl.asanyarray(x) is x


def test_from_dlpack_shares_host_memory_and_takes_bfloat16() -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    got = sl.from_dlpack(t)
    t[0, 0] = 7.0  # shared: read when the computation runs, as sl.asarray
    np.testing.assert_array_equal(got.get(), t.numpy())
    copied = sl.from_dlpack(t, copy=True)
    t[0, 1] = 9.0
    assert copied.get()[0, 1] == 1.0
    b = torch.tensor([1.5, -2.25, 3.0], dtype=torch.bfloat16)
    bf = sl.from_dlpack(b)
    assert bf.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(bf.get().astype(np.float32), b.float().numpy())
    n = np.arange(4.0)
    np.testing.assert_array_equal(sl.from_dlpack(n).get(), n)
    with pytest.raises(TypeError, match="__dlpack__"):
        sl.from_dlpack([1, 2])


def test_dtype_predicates() -> None:
    bf = sl.bfloat16
    for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric",
                 ("bool", "integral"), np.float32):
        for dt in (np.bool_, np.int8, np.uint16, np.float16, np.float64):
            assert sl.isdtype(dt, kind) == np.isdtype(np.dtype(dt), kind), (dt, kind)
    assert sl.isdtype(bf, "real floating") and sl.isdtype(bf, "numeric") and not sl.isdtype(bf, "integral")
    assert sl.isdtype(sl.zeros(2, bf), bf)
    with pytest.raises(ValueError, match="not a known kind"):
        sl.isdtype(np.float32, "floating")
    for a, b in [(np.int8, np.floating), (np.float16, np.floating), (np.uint8, np.signedinteger), (np.float32, np.float32)]:
        assert sl.issubdtype(a, b) == np.issubdtype(a, b)
    assert sl.issubdtype(bf, np.floating) and sl.issubdtype(bf, np.number) and not sl.issubdtype(bf, np.integer)
    assert sl.issubdtype(sl.zeros(2, np.int16), np.integer)
    assert sl.promote_types(bf, np.float16) == np.float32 and sl.promote_types(np.int8, np.uint8) == np.int16
    assert sl.promote_types(sl.zeros(2, np.float16), np.float32) == np.float32
    for arrays in [(np.zeros(2, np.float16),), (np.zeros(2, np.int8), np.zeros(2, np.float32)), (np.zeros(2, np.float32),)]:
        assert sl.common_type(*(sl.asarray(a) for a in arrays)) is np.common_type(*arrays)
    assert sl.common_type(sl.zeros(2, bf)) is bf and sl.common_type(sl.zeros(2, bf), sl.zeros(2, np.float16)) is np.float32
    for dt in (np.complex64, np.complex128):  # (questions about dtypes: NumPy's answers for those stitchlab does not hold)
        assert sl.isdtype(dt, "complex floating") and sl.issubdtype(dt, np.complexfloating)
        assert sl.promote_types(dt, np.float64) == np.promote_types(dt, np.float64)
    assert sl.common_type(np.zeros(2, np.complex64), np.zeros(2, np.float16)) is np.common_type(np.zeros(2, np.complex64), np.zeros(2, np.float16))
    with pytest.raises(TypeError, match="non-numeric"):
        sl.common_type(np.array(["a"]))
    assert sl.min_scalar_type(300) == np.min_scalar_type(300) and sl.min_scalar_type(sl.zeros(2, np.int8)) == np.int8
    x = sl.asarray(np.arange(3.0))
    assert sl.isscalar(3.0) and sl.isscalar(np.int8(1)) and not sl.isscalar(x) and not sl.isscalar(sl.asarray(1.0))
    assert not sl.iscomplexobj(x) and sl.isrealobj(x) and not np.iscomplexobj(x) and sl.iscomplexobj(np.zeros(2, complex))
    np.testing.assert_array_equal(sl.isreal(x).get(), [True] * 3)
    np.testing.assert_array_equal(sl.iscomplex(x).get(), [False] * 3)
    assert sl.isreal(x).dtype == np.bool_ and isinstance(np.isreal(x), sl.LazyArray)
