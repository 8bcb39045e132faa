"""NumPy's index tricks (mgrid, ogrid, r_, c_, s_...), constants, printing helpers and
get_array_module on the stitchlab namespace, against NumPy (numpy backend)."""

import numpy as np
import pytest

import stitchlab as sl

GRIDS = [
    np.s_[0:5],
    np.s_[2:-3:-1],
    np.s_[0.5:2.0:0.25],
    np.s_[0:1:5j],
    np.s_[-1:1:1j],
    np.s_[0:3, 0:4],
    np.s_[0:1:3j, 2:8:2],
    np.s_[1:2:0.5, 0:3, -2:2:5j],
    (np.s_[0:3],),
    np.s_[np.float32(0):np.float32(1):np.float32(0.25), 0:2],
]


@pytest.mark.parametrize("key", GRIDS, ids=repr)
@pytest.mark.parametrize("name", ["mgrid", "ogrid"])
def test_grids_are_numpys(name, key):
    want = getattr(np, name)[key]
    got = getattr(sl, name)[key]
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        pairs = list(zip(got, want, strict=True))
    else:
        pairs = [(got, want)]
    for g, w in pairs:
        assert isinstance(g, sl.LazyArray)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g.get(), w)


def test_an_empty_axis_is_numpys():
    with pytest.raises(ValueError):
        np.mgrid[0:3, 5:0]  # NumPy's mgrid refuses it (above: so does stitchlab's, naming the slice)
    got, want = sl.ogrid[0:3, 5:0], np.ogrid[0:3, 5:0]
    assert [g.shape for g in got] == [w.shape for w in want] == [(3, 1), (1, 0)]
    assert sl.mgrid[5:0].shape == np.mgrid[5:0].shape == (0,)


def test_a_grid_is_lazy_and_fuses_into_its_use():
    yy, xx = sl.mgrid[0:64, 0:1:32j]
    r = sl.sqrt(yy * yy + xx * xx)
    assert len(sl.explain(r).kernels) == 1
    want = np.mgrid[0:64, 0:1:32j]
    np.testing.assert_allclose(r.get(), np.sqrt(want[0] ** 2 + want[1] ** 2))


JOINS = [
    ("r_", lambda m: m.r_[1:4, 7, np.array([0.5, 1.5])]),
    ("r_", lambda m: m.r_[np.array([1, 2], np.int8), 3]),  # a Python scalar does not widen int8
    ("r_", lambda m: m.r_[np.array([1, 2], np.int8), np.int16(3)]),
    ("r_", lambda m: m.r_[np.array([1.0, 2.0], np.float32), 2.5]),
    ("r_", lambda m: m.r_[0:1:4j, [9, 9]]),
    ("r_", lambda m: m.r_["0,2", [1, 2], [3, 4]]),
    ("r_", lambda m: m.r_["0,2,0", [1, 2], [3, 4]]),
    ("r_", lambda m: m.r_["1,2,0", [1, 2], [3, 4]]),
    ("r_", lambda m: m.r_["-1", np.ones((2, 2)), np.zeros((2, 1))]),
    ("r_", lambda m: m.r_["0,3,-1", np.arange(3), np.arange(3)]),
    ("r_", lambda m: m.r_["0,3,1", np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)]),
    ("r_", lambda m: m.r_["0,4,-2", np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)]),
    ("r_", lambda m: m.r_["0,2", 0:3, 3:6]),
    ("r_", lambda m: m.r_["0,2,0", 0:3, 3:6]),
    ("c_", lambda m: m.c_[np.array([1, 2, 3]), np.array([4, 5, 6])]),
    ("c_", lambda m: m.c_[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])]),
    ("c_", lambda m: m.c_[np.ones((2, 2)), [7, 8]]),
    ("c_", lambda m: m.c_[0:2, 5:7]),
]


@pytest.mark.parametrize("case", range(len(JOINS)), ids=lambda k: f"{JOINS[k][0]}-{k}")
def test_joins_are_numpys(case):
    _, build = JOINS[case]
    want = build(np)
    got = build(sl)
    assert isinstance(got, sl.LazyArray)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


def test_joins_take_stitchlab_arrays_lazily():
    a = np.random.default_rng(0).standard_normal((5,)).astype(np.float32)
    x = sl.asarray(a)
    got = sl.c_[x, x * 2, sl.exp(x)]
    np.testing.assert_allclose(got.get(), np.c_[a, a * 2, np.exp(a)], rtol=1e-6)
    assert sl.r_[x, 0].dtype == np.float32


@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: sl.r_["r", [1, 2]], TypeError, "numpy.matrix"),
        (lambda: sl.r_["x,y", [1, 2]], ValueError, "unknown special directive 'x,y'"),
        (lambda: sl.r_[[1, 2], "0"], ValueError, "must be the first entry"),
        (lambda: sl.r_[()], ValueError, "at least one item"),
        (lambda: sl.mgrid[0:3, 4], TypeError, r"takes slices .* not 4"),
        (lambda: sl.ogrid[0:], TypeError, "has no stop"),
        (lambda: sl.r_[2:], TypeError, "has no stop"),
        (lambda: sl.mgrid[0:3, 5:0], ValueError, r"slice\(5, 0, None\) has a negative length"),
    ],
)
def test_bad_keys_name_the_problem(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_numpys_helpers_and_constants():
    assert sl.s_[1:3, ::2] == np.s_[1:3, ::2] and sl.index_exp[1] == (1,)
    assert list(sl.ndindex(2, 2)) == list(np.ndindex(2, 2))
    assert list(sl.ndenumerate(sl.arange(4).reshape(2, 2) * 3)) == list(np.ndenumerate(np.arange(4).reshape(2, 2) * 3))
    for name in ("e", "euler_gamma", "inf", "pi"):
        assert getattr(sl, name) == getattr(np, name) and type(getattr(sl, name)) is float
    assert np.isnan(sl.nan) and sl.newaxis is None
    assert sl.arange(6).reshape(2, 3)[:, sl.newaxis].shape == (2, 1, 3)
    assert sl.binary_repr(-5, width=8) == np.binary_repr(-5, width=8) and sl.base_repr(35, 36) == "Z"


def test_printing_follows_numpys_options():
    a = np.arange(5) / 3
    x = sl.asarray(a)
    assert sl.array_repr(x, precision=2) == np.array_repr(a, precision=2)
    assert sl.array_str(x, precision=3) == np.array_str(a, precision=3)
    assert sl.array2string(x, separator=";") == np.array2string(a, separator=";")
    with sl.printoptions(precision=1):
        assert repr(x) == "array([0. , 0.3, 0.7, 1. , 1.3])"
    assert sl.get_printoptions() == np.get_printoptions()


def test_get_array_module():
    assert sl.get_array_module(np.ones(2), sl.ones(2)) is sl
    assert sl.get_array_module(np.ones(2), 3) is np
    assert sl.get_array_module() is np

    def norm(x):
        xp = sl.get_array_module(x)
        return xp.sqrt((x * x).sum())

    assert isinstance(norm(sl.ones(4)), sl.LazyArray) and float(norm(sl.ones(4))) == 2.0
    assert norm(np.ones(4)) == 2.0


def test_errstate_is_numpys_and_kernels_report_no_floating_point_errors() -> None:
    x = sl.asarray(np.array([1.0, 0.0, -1.0]))
    with sl.errstate(divide="raise", invalid="raise"):
        assert np.geterr()["divide"] == "raise" and sl.geterr()["invalid"] == "raise"
        np.testing.assert_array_equal((1 / x).get(), [1.0, np.inf, -1.0])  # as CuPy's kernels: no error
        with pytest.raises(FloatingPointError):
            np.float64(1.0) / np.float64(0.0)  # NumPy's own code follows the state
    old = sl.seterr(over="ignore")
    try:
        assert np.geterr()["over"] == "ignore"
    finally:
        sl.seterr(**old)
    assert sl.geterr() == old
    with pytest.raises(ValueError, match=r"errstate\(over='loud'\).*'ignore'"):
        sl.errstate(over="loud")
