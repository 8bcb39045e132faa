"""``sl.linalg.norm`` (``stitchlab/frontend/linalg.py``): NumPy's vector and matrix norms, dtypes,
``keepdims`` and errors, fused with the work around them, and ``np.linalg.norm`` on a stitchlab
array lazy too. GPU: ``tests/gpu/test_library_steps_gpu.py``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from lazycheck import families

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(47)
ARRAYS = {
    "float64-2d": RNG.standard_normal((3, 4)), "float32-3d": RNG.standard_normal((2, 3, 4)).astype(np.float32),
    "int-2d": np.arange(12).reshape(3, 4) - 5, "float16-1d": RNG.standard_normal(7).astype(np.float16),
    "empty-rows": np.zeros((0, 3)), "empty-columns": np.zeros((3, 0)),
}


@pytest.mark.parametrize("name", list(ARRAYS))
@pytest.mark.parametrize("ord", [None, 2, 1, -1, math.inf, -math.inf, 0, 3, 0.5, "fro"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1), (-1, 0)])
def test_norm_is_numpys(name: str, ord: Any, axis: Any) -> None:  # noqa: A002
    a = ARRAYS[name]
    for keepdims in (False, True):
        try:
            with np.errstate(all="ignore"):
                want = np.asarray(np.linalg.norm(a, ord, axis, keepdims))
        except (ValueError, TypeError) as exc:
            with pytest.raises(type(exc)):
                sl.linalg.norm(sl.asarray(a), ord, axis, keepdims).get()
            continue
        got = sl.linalg.norm(sl.asarray(a), ord, axis, keepdims)
        assert isinstance(got, sl.LazyArray)
        value = got.get()
        assert value.shape == want.shape and value.dtype == want.dtype
        rtol = 2e-3 if a.dtype == np.float16 else 1e-6  # sums of squares in another order than NumPy's dot
        np.testing.assert_allclose(value, want, rtol=rtol)
        np.testing.assert_allclose(np.linalg.norm(sl.asarray(a), ord, axis, keepdims).get(), want, rtol=rtol)


def test_matrix_norms_of_singular_values_and_norm_errors_are_numpys() -> None:
    a = RNG.standard_normal((2, 3, 4))
    for ord in (2, -2, "nuc"):  # noqa: A001
        for axis in ((1, 2), (2, 0)):
            got = sl.linalg.norm(sl.asarray(a), ord, axis, keepdims=True)
            np.testing.assert_allclose(got.get(), np.linalg.norm(a, ord, axis, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match="Invalid norm order 'nuc' for vectors"):
        sl.linalg.norm(sl.asarray(np.ones(3)), "nuc")
    with pytest.raises(ValueError, match="Improper number of dimensions to norm"):
        sl.linalg.norm(sl.asarray(np.ones((2, 2, 2))), 1)
    with pytest.raises(ValueError, match="Duplicate axes given"):
        sl.linalg.norm(sl.asarray(np.ones((2, 2))), None, (1, -1))


def test_a_normalization_by_the_norm_is_one_kernel() -> None:
    x = sl.asarray(RNG.standard_normal((64, 128)).astype(np.float32))
    y = x / sl.linalg.norm(x, axis=-1, keepdims=True)
    assert len(families(y)) == 1
    np.testing.assert_allclose(y.get(), x.get() / np.linalg.norm(x.get(), axis=-1, keepdims=True), rtol=1e-6)


SQUARE = RNG.standard_normal((3, 4, 4))
SPD = SQUARE @ np.swapaxes(SQUARE, -1, -2) + 4 * np.eye(4)
TALL = RNG.standard_normal((6, 3))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("solve", (SQUARE, RNG.standard_normal((3, 4, 2))), {}), ("inv", (SQUARE,), {}), ("det", (SQUARE,), {}),
    ("slogdet", (SQUARE,), {}), ("cholesky", (SPD,), {}), ("cholesky", (SPD,), {"upper": True}),
    ("qr", (TALL,), {}), ("qr", (TALL,), {"mode": "complete"}), ("qr", (TALL,), {"mode": "r"}),
    ("svd", (TALL,), {"full_matrices": False}), ("svd", (SQUARE,), {"compute_uv": False}), ("svdvals", (TALL,), {}),
    ("eigh", (SPD,), {}), ("eigvalsh", (SPD,), {"UPLO": "U"}), ("pinv", (TALL,), {}),
    ("lstsq", (TALL, RNG.standard_normal(6)), {}), ("matrix_rank", (TALL,), {}), ("matrix_power", (SQUARE, 3), {}),
    ("matrix_power", (SQUARE, -2), {}), ("matrix_power", (SQUARE, 0), {}),
])
def test_solvers_and_decompositions_are_numpys(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], dtype: str) -> None:
    """Each function against NumPy's on the same arrays (integers are solved in float64, float32
    stays float32), also called as ``np.linalg.<name>`` on stitchlab arrays; results are arrays,
    tuples of arrays keep NumPy's field names."""
    ins = [(a * 3).astype(dtype) if isinstance(a, np.ndarray) else a for a in args]
    if name == "cholesky" and dtype == "int32":
        ins[0] = ins[0] + 20 * np.eye(4, dtype=np.int32)  # rounded down: keep it positive definite
    want = getattr(np.linalg, name)(*ins, **kwargs)
    lazy = [sl.asarray(a) if isinstance(a, np.ndarray) else a for a in ins]
    for got in (getattr(sl.linalg, name)(*lazy, **kwargs), getattr(np.linalg, name)(*lazy, **kwargs)):
        pairs = list(zip(got, want, strict=True)) if isinstance(want, tuple) else [(got, want)]
        if hasattr(want, "_fields"):
            assert got._fields == want._fields
        for g, w in pairs:
            if not isinstance(w, np.ndarray):
                assert g == w and (name != "lstsq" or type(g) is type(w)), (g, w)  # (lstsq's rank: NumPy's int32)
                continue
            assert isinstance(g, sl.LazyArray)
            v = g.get()
            assert v.shape == w.shape and v.dtype == w.dtype, (v.shape, w.shape, v.dtype, w.dtype)
            rtol = 1e-4 if w.dtype == np.float32 else 1e-10
            if name in ("qr", "svd", "eigh") and v.ndim >= 2:
                v, w = np.abs(v), np.abs(w)  # a factor's signs are the solver's choice
            np.testing.assert_allclose(v, w, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_reads_the_triangle_numpy_reads(upper: bool) -> None:
    """NumPy's ``cholesky`` reads only the lower triangle, or the upper one with ``upper=True``;
    the upper factor was the transpose of the lower one, read from the other triangle."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4, 4))
    m = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    m[..., 0, 3] += 1.0  # not symmetric: the two triangles differ
    m[..., 2, 1] -= 0.7
    got = sl.linalg.cholesky(sl.asarray(m), upper=upper).get()
    np.testing.assert_allclose(got, np.linalg.cholesky(m, upper=upper), rtol=1e-12, atol=1e-12)


def test_solver_errors_are_numpys() -> None:
    L = sl.linalg
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        L.inv(sl.asarray(np.zeros((3, 3))))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        L.solve(sl.asarray(np.ones((2, 2))), sl.asarray(np.ones(2)))
    with pytest.raises(np.linalg.LinAlgError):
        L.cholesky(sl.asarray(-np.eye(2)))  # not positive definite
    with pytest.raises(np.linalg.LinAlgError, match="Last 2 dimensions of the array must be square"):
        L.det(sl.asarray(np.ones((2, 3))))
    with pytest.raises(np.linalg.LinAlgError, match="1-dimensional array given"):
        L.inv(sl.asarray(np.ones(3)))
    with pytest.raises(TypeError, match=r"float16 is unsupported in linalg; convert it with \.astype\(np\.float32\)"):
        L.svd(sl.asarray(np.ones((2, 2), np.float16)))
    with pytest.raises(ValueError, match="Unrecognized mode 'full'"):
        L.qr(sl.asarray(np.ones((2, 2))), "full")
    with pytest.raises(ValueError, match="UPLO argument must be 'L' or 'U'"):
        L.eigh(sl.asarray(np.eye(2)), "X")
    with pytest.raises(TypeError, match="exponent must be an integer"):
        L.matrix_power(sl.asarray(np.eye(2)), 1.5)
    assert L.det(sl.asarray(np.ones((2, 2)))).get() == 0.0  # singular: a determinant of 0, no error
    bf = np.eye(3).astype(sl.bfloat16) * 2  # bfloat16 is solved in float64, as NumPy with ml_dtypes solves it
    for name in ("inv", "det", "svdvals"):
        got, want = getattr(L, name)(sl.asarray(bf)).get(), getattr(np.linalg, name)(bf)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want)
    for empty in (np.zeros((0, 3)), np.zeros((2, 0, 0))):
        np.testing.assert_array_equal(L.matrix_rank(sl.asarray(empty)).get(), np.linalg.matrix_rank(empty))


def test_solvers_evaluate_when_called_and_refuse_tracing() -> None:
    x = sl.asarray(SPD[0])
    y = sl.linalg.inv(x * 2)
    assert y._node.op == "input"  # evaluated: a new array, not a node of a graph
    np.testing.assert_allclose(y.get(), np.linalg.inv(SPD[0] * 2), rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"linalg\.inv cannot be traced by sl\.jit: it runs the array library's solver"):
        sl.jit(lambda a: sl.linalg.inv(a))(x)
    p = sl.linalg.matrix_power(x, 5)  # lazy: products in one plan
    assert p._node.op != "input"
    np.testing.assert_allclose(p.get(), np.linalg.matrix_power(SPD[0], 5), rtol=1e-10)


def _same(got: Any, want: Any, rtol: float = 1e-10) -> None:
    assert isinstance(got, sl.LazyArray)
    v = got.get()
    w = np.asarray(want)
    assert v.shape == w.shape and v.dtype == w.dtype, (v.shape, w.shape, v.dtype, w.dtype)
    np.testing.assert_allclose(v, w, rtol=rtol, atol=rtol)


@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("vector_norm", (SQUARE,), {}), ("vector_norm", (SQUARE,), {"axis": (0, 2), "keepdims": True, "ord": math.inf}),
    ("vector_norm", (SQUARE,), {"axis": -1, "ord": 0}), ("vector_norm", (SQUARE,), {"axis": 1, "ord": -math.inf}),
    ("vector_norm", (SQUARE,), {"axis": None, "keepdims": True, "ord": 3.5}), ("vector_norm", (np.float64(-3.0),), {}),
    ("vector_norm", (np.arange(12).reshape(3, 4) - 5,), {"axis": 0, "ord": 1}),
    ("matrix_norm", (SQUARE,), {}), ("matrix_norm", (SQUARE,), {"ord": 1, "keepdims": True}),
    ("matrix_norm", (SQUARE,), {"ord": "nuc"}), ("matrix_norm", (SQUARE,), {"ord": -2}),
    ("matrix_norm", (SQUARE.astype(np.float32),), {"ord": -math.inf}),
    ("trace", (SQUARE,), {}), ("trace", (SQUARE,), {"offset": 1}), ("trace", (np.arange(24).reshape(2, 3, 4),), {"offset": -1}),
    ("diagonal", (SQUARE,), {"offset": 2}), ("diagonal", (TALL,), {"offset": -1}),
    ("outer", (TALL[:, 0], SQUARE[0, 0]), {}), ("cross", (TALL, TALL[::-1]), {}),
    ("cross", (TALL.T, TALL[::-1].T), {"axis": 0}), ("vecdot", (SQUARE, SQUARE[0]), {"axis": 1}),
    ("matmul", (SQUARE, TALL[:4]), {}), ("tensordot", (SQUARE, TALL[:4]), {"axes": 1}),
    ("matrix_transpose", (SQUARE,), {}),
    ("cond", (SQUARE,), {}), ("cond", (SQUARE,), {"p": -2}), ("cond", (SQUARE,), {"p": "fro"}), ("cond", (SQUARE[0],), {"p": "nuc"}),
    ("cond", (SQUARE,), {"p": 1}), ("cond", (SQUARE,), {"p": -math.inf}), ("cond", (TALL,), {}),
    ("cond", (SQUARE.astype(np.float32),), {"p": math.inf}), ("cond", (np.zeros((2, 2)),), {}),
    ("cond", (np.zeros((2, 2)),), {"p": 1}),
    ("tensorinv", (RNG.standard_normal((4, 6, 8, 3)),), {}), ("tensorinv", (RNG.standard_normal((24, 4, 6)),), {"ind": 1}),
    ("tensorsolve", (RNG.standard_normal((6, 4, 2, 3, 4)), RNG.standard_normal((6, 4))), {}),
    ("tensorsolve", (RNG.standard_normal((3, 6, 2)), RNG.standard_normal(6)), {"axes": (0,)}),
])
def test_numpy2_linalg_names_are_numpys(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """NumPy 2's array-API functions in ``linalg`` (and ``cond``, ``tensorinv``, ``tensorsolve``)
    against NumPy's on the same arrays, called as ``sl.linalg.<name>`` and as
    ``np.linalg.<name>`` on stitchlab arrays: values, shapes and dtypes."""
    want = getattr(np.linalg, name)(*args, **kwargs)
    lazy = [sl.asarray(a) for a in args]
    rtol = 1e-4 if np.asarray(want).dtype == np.float32 else 1e-10
    _same(getattr(sl.linalg, name)(*lazy, **kwargs), want, rtol)
    _same(getattr(np.linalg, name)(*lazy, **kwargs), want, rtol)


@pytest.mark.parametrize("shapes", [
    [(7,), (7, 30), (30, 2), (2, 40), (40, 3)], [(7, 30), (30, 2), (2, 40), (40,)], [(7,), (7, 30), (30,)],
    [(5, 6), (6, 2)], [(9, 1), (1, 9), (9, 1)], [(3,), (3,)],
])
def test_multi_dot_is_numpys_in_the_cheapest_order(shapes: list[tuple[int, ...]]) -> None:
    ms = [RNG.standard_normal(s) for s in shapes]
    want = np.linalg.multi_dot(ms)
    _same(sl.linalg.multi_dot([sl.asarray(m) for m in ms]), want)
    _same(np.linalg.multi_dot([sl.asarray(m) for m in ms]), want)
    # out: of three or more arrays NumPy's is the 2-d product (1-d ends as a row and a column), returned raveled
    shape = np.shape(want) if len(ms) == 2 else (ms[0].shape[0] if ms[0].ndim == 2 else 1,
                                                  ms[-1].shape[1] if ms[-1].ndim == 2 else 1)
    out, np_out = sl.asarray(np.zeros(shape)), np.zeros(shape)
    np.testing.assert_allclose(np.linalg.multi_dot(ms, out=np_out), want, rtol=1e-10)  # (a scalar of two 1-d ends)
    got = np.linalg.multi_dot([sl.asarray(m) for m in ms], out=out)
    assert got is out or len(shape) != np.ndim(want)
    _same(got, want)
    np.testing.assert_allclose(out.get(), np_out, rtol=1e-10)


def test_multi_dot_multiplies_in_the_cheapest_order() -> None:
    """(10x100)(100x5)(5x50): (ab)c costs 7,500 products, a(bc) 75,000; the plan's first
    product is a @ b."""
    a, b, c = (sl.asarray(RNG.standard_normal(s)) for s in [(10, 100), (100, 5), (5, 50)])
    r = sl.linalg.multi_dot([a, b, c])
    assert r._node.op == "matmul"
    left, right = r._node.inputs
    assert left.op == "matmul" and right is c._node
    r = sl.linalg.multi_dot([c.T, b.T, a.T])  # (50x5)(5x100)(100x10): c.T @ (b.T @ a.T)
    assert r._node.inputs[1].op == "matmul"


def test_numpy2_linalg_errors_are_numpys() -> None:
    L = sl.linalg
    assert L.LinAlgError is np.linalg.LinAlgError
    with pytest.raises(ValueError, match=r"Input arrays must be one-dimensional, but they are x1.ndim=2 and x2.ndim=1"):
        L.outer(sl.asarray(TALL), sl.asarray(TALL[0]))
    with pytest.raises(ValueError, match="must be .arrays of. 3-dimensional vectors, but they are 2 and 3 dimensional"):
        L.cross(sl.asarray(np.ones(2)), sl.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="Expecting at least two arrays"):
        L.multi_dot([sl.asarray(TALL)])
    with pytest.raises(np.linalg.LinAlgError, match="3-dimensional array given. Array must be two-dimensional"):
        L.multi_dot([sl.asarray(TALL.T), sl.asarray(SQUARE), sl.asarray(TALL)])
    with pytest.raises(np.linalg.LinAlgError, match="cond is not defined on empty arrays"):
        L.cond(sl.asarray(np.zeros((0, 0))))
    with pytest.raises(np.linalg.LinAlgError, match="Last 2 dimensions of the array must be square"):
        L.cond(sl.asarray(TALL), 1)
    with pytest.raises(ValueError, match="Invalid ind argument"):
        L.tensorinv(sl.asarray(SQUARE), 0)
    with pytest.raises(np.linalg.LinAlgError, match=r"prod\(a.shape\[b.ndim:\]\) == prod\(a.shape\[:b.ndim\]\)"):
        L.tensorsolve(sl.asarray(SQUARE), sl.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        L.vector_norm(sl.asarray(TALL), ord="fro")
    with pytest.raises(np.exceptions.AxisError):
        L.matrix_norm(sl.asarray(TALL[0]))


def test_cond_of_a_stack_with_a_singular_matrix_is_inf_there() -> None:
    """NumPy gives ``inf`` for the singular matrix of a stack (its inverse is NaN), the others'
    numbers as they are; the array library's inverse raises, so each matrix is taken alone."""
    stack = SQUARE.copy()
    stack[1] = 0.0
    for p in (1, "fro", math.inf):
        _same(sl.linalg.cond(sl.asarray(stack), p), np.linalg.cond(stack, p))


def test_numpy2_norms_fuse_with_their_use() -> None:
    x = sl.asarray(RNG.standard_normal((64, 128)).astype(np.float32))
    y = x / sl.linalg.vector_norm(x, axis=-1, keepdims=True)
    assert len(families(y)) == 1
    np.testing.assert_allclose(y.get(), x.get() / np.linalg.vector_norm(x.get(), axis=-1, keepdims=True), rtol=1e-6)


_HERMITIAN_BASE = np.random.default_rng(0).random((3, 3))


@pytest.mark.parametrize("name", ["svdvals", "pinv", "matrix_rank"])
def test_hermitian_of_a_symmetric_matrix_is_numpys_answer(name):
    s = _HERMITIAN_BASE @ _HERMITIAN_BASE.T
    np_name, kwargs = ("svd", {"compute_uv": False}) if name == "svdvals" else (name, {})
    expected = getattr(np.linalg, np_name)(s, hermitian=True, **kwargs)
    got = (sl.linalg.svd(sl.asarray(s), hermitian=True, compute_uv=False) if name == "svdvals"
           else getattr(sl.linalg, name)(sl.asarray(s), hermitian=True))
    np.testing.assert_allclose(got.get(), expected, atol=1e-9)
