"""``stitchlab.linalg``: NumPy's ``linalg.norm``, built from lazy elementwise ops and reductions so
that a norm fuses with the work around it (``x / sl.linalg.norm(x, axis=-1, keepdims=True)`` is
one row kernel), and NumPy's solvers and decompositions (``solve``, ``inv``, ``det``, ``slogdet``,
``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``pinv``, ``lstsq``,
``matrix_rank``), which evaluate their inputs when called and run the array library's own
(``cupy.linalg``, cuSOLVER, on the GPU; ``numpy.linalg`` on the numpy backend); their results
are arrays on the same device. ``matrix_power`` stays lazy (matrix products), as do NumPy 2's
array-API names in ``linalg`` (``vector_norm``, ``matrix_norm``, ``trace``, ``diagonal``,
``outer``, ``cross``, ``vecdot``, ``matmul``, ``tensordot``, ``matrix_transpose``) and
``multi_dot``; ``cond``, ``tensorinv`` and ``tensorsolve`` are built on the evaluated ones.
"""

from __future__ import annotations

import math
import operator
from collections import namedtuple
from typing import Any

import numpy as np

from ..ir.dtypes import is_float
from .api import absolute, isnan, matrix_transpose, sqrt, where  # type: ignore[attr-defined]
from .api import vecdot as _vecdot  # type: ignore[attr-defined]
from .array import LazyArray
from .creation import _leaf_on, asarray, full
from .library import dot  # type: ignore[attr-defined]
from .library import matmul as _matmul  # type: ignore[attr-defined]
from .library import tensordot as _tensordot
from .manipulation import cross as _cross
from .manipulation import diagonal as _diagonal
from .manipulation import moveaxis
from .manipulation import outer as _outer
from .manipulation import trace as _trace
from .selection import _evaluated
from .ufunc import dot_stored

__all__ = ["norm", "solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv",
           "lstsq", "matrix_rank", "matrix_power", "vector_norm", "matrix_norm", "trace", "diagonal", "outer", "cross",
           "vecdot", "matmul", "tensordot", "matrix_transpose", "multi_dot", "cond", "tensorinv", "tensorsolve",
           "LinAlgError"]

#: NumPy's own exception class, raised for singular or non-square matrices
LinAlgError = np.linalg.LinAlgError

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def _max_or_zero(x: LazyArray, axis: tuple[int, ...], keepdims: bool) -> LazyArray:
    """NumPy's ``max(..., initial=0)`` of non-negative ``x``: zeros where ``axis`` is empty."""
    if all(x.shape[d] for d in axis):
        return x.max(axis, keepdims=keepdims)
    shape = tuple(1 if d in axis else n for d, n in enumerate(x.shape) if keepdims or d not in axis)
    return full(shape, 0, x.dtype)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> LazyArray:  # noqa: A002 (NumPy's name)
    """A vector or matrix norm, NumPy's ``linalg.norm``: over ``axis`` (an int: vector norms; a
    pair: matrix norms; ``None``: the whole array as a vector for ``ord=None``, else a 1-d or 2-d
    array's own norm). Vector ``ord``: ``None``/2 (Euclidean), ``inf``, ``-inf``, 0 (nonzero
    count), 1, any other number ``p`` (``sum(|x|**p)**(1/p)``); matrix ``ord``: ``None``/``"fro"``,
    1, -1, ``inf``, ``-inf``. Integers are converted to float64, as in NumPy; the Euclidean norms
    sum the squares where NumPy calls a BLAS dot for ``axis=None``, so they can differ in the
    last bit.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.linalg.norm(sl.asarray(np.array([[3.0, 4.0], [6.0, 8.0]])), axis=1).get()
        array([ 5., 10.])
    """
    a = asarray(x)
    if not is_float(a.dtype):
        a = a.astype(np.float64)
    nd = a.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            r = sqrt((a * a).sum())
            return r.reshape((1,) * nd) if keepdims else r
        axes = tuple(range(nd))
    elif isinstance(axis, tuple):
        axes = tuple(np.lib.array_utils.normalize_axis_index(d, nd) for d in axis)
    else:
        try:
            axes = (np.lib.array_utils.normalize_axis_index(int(axis), nd),)
        except TypeError as exc:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from exc
    if len(axes) == 1:
        return _vector_norm(a, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(a, ord, axes, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def _vector_norm(a: LazyArray, ord: Any, axes: tuple[int, ...], keepdims: bool) -> LazyArray:  # noqa: A002
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == math.inf:
        return _max_or_zero(absolute(a), axes, keepdims)
    if ord == -math.inf:
        return absolute(a).min(axes, keepdims=keepdims)
    if ord == 0:
        return (a != 0).astype(a.dtype).sum(axes, keepdims=keepdims)
    if ord == 1:
        return absolute(a).sum(axes, keepdims=keepdims)
    if ord is None or ord == 2:
        return sqrt((a * a).sum(axes, keepdims=keepdims))
    p = float(ord)
    return (absolute(a) ** p).sum(axes, keepdims=keepdims) ** (1.0 / p)


def _matrix_norm(a: LazyArray, ord: Any, axes: tuple[int, ...], keepdims: bool) -> LazyArray:  # noqa: A002
    row, col = axes
    if row == col:
        raise ValueError("Duplicate axes given.")
    if ord in (2, -2, "nuc"):  # of the singular values (evaluated: the array library's SVD)
        s = svdvals(moveaxis(a, (row, col), (-2, -1)))
        r = _max_or_zero(s, (s.ndim - 1,), False) if ord == 2 else s.min(-1) if ord == -2 else s.sum(-1)
    elif ord in (None, "fro", "f"):
        r = sqrt((a * a).sum(axes))
    elif ord in (1, -1, math.inf, -math.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        s = absolute(a).sum(summed)
        other -= other > summed
        if ord in (1, math.inf):
            r = _max_or_zero(s, (other,), False)
        else:
            r = s.min(other)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(a.shape)
        shape[row] = shape[col] = 1
        r = r.reshape(tuple(shape))
    return r


# --- solvers and decompositions: evaluated, run by the array library ----------------------------

_WHY = "it runs the array library's solver on evaluated arrays"


def _inputs(*arrays: Any) -> list[LazyArray]:
    """``arrays`` as NumPy's ``linalg`` takes them: float32 and float64 as they are (mixed: both
    float64), bool, integers and bfloat16 as float64 (NumPy with ml_dtypes does the same); float16
    raises NumPy's ``TypeError``."""
    out = [asarray(x) for x in arrays]
    for a in out:
        if a.dtype == np.float16:
            raise TypeError("array type float16 is unsupported in linalg; convert it with .astype(np.float32)")
    dtype = np.float32 if all(a.dtype == np.float32 for a in out) else np.float64
    return [a if a.dtype == dtype else a.astype(dtype) for a in out]


def _check_matrices(a: LazyArray, square: bool) -> LazyArray:
    """``a`` itself if it is a matrix or a stack of them (``square``: of square ones), else NumPy's
    ``LinAlgError``."""
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if square and a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return a


def _matrices(x: Any, square: bool = False) -> LazyArray:
    """``x`` as a matrix or a stack of them, in :func:`_inputs`' dtypes."""
    return _check_matrices(_inputs(x)[0], square)


def _run(name: str, arrays: list[LazyArray], **kwargs: Any) -> Any:
    """``xp.linalg.<name>`` of the evaluated ``arrays`` (CuPy: with its LinAlgError raised, as
    NumPy raises it, for a singular matrix or one that is not positive definite); array results
    come back as arrays on the inputs' device, tuples of them as tuples."""
    bufs, xp = _evaluated(f"linalg.{name}", *arrays, why=_WHY)
    if xp is np:
        out = getattr(np.linalg, name)(*bufs, **kwargs)
    else:
        import cupyx

        with cupyx.errstate(linalg="raise"):
            out = getattr(xp.linalg, name)(*bufs, **kwargs)

    def wrap(r: Any) -> Any:
        return _leaf_on(arrays[0], xp.asarray(r, dtype=arrays[0].dtype)) if hasattr(r, "shape") else r

    return tuple(wrap(r) for r in out) if isinstance(out, tuple) else wrap(out)


def solve(a: Any, b: Any) -> LazyArray:
    """The solution ``x`` of ``a @ x = b`` (NumPy's ``linalg.solve``; ``b`` a vector or a stack of
    matrices). A singular ``a`` raises ``numpy.linalg.LinAlgError``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.linalg.solve(sl.asarray(np.array([[2.0, 0.0], [0.0, 4.0]])), sl.asarray(np.array([2.0, 2.0]))).get()
        array([1. , 0.5])
    """
    a, b = _inputs(a, b)
    return _run("solve", [_matrices(a, square=True), b])


def inv(a: Any) -> LazyArray:
    """The inverse of a square matrix or of each in a stack (NumPy's ``linalg.inv``); a singular
    one raises ``numpy.linalg.LinAlgError``."""
    return _run("inv", [_matrices(a, square=True)])


def det(a: Any) -> LazyArray:
    """The determinant of a square matrix or of each in a stack (NumPy's ``linalg.det``)."""
    return _run("det", [_matrices(a, square=True)])


def slogdet(a: Any) -> SlogdetResult:
    """``(sign, logabsdet)`` of the determinant (NumPy's ``linalg.slogdet``), without overflow."""
    return SlogdetResult(*_run("slogdet", [_matrices(a, square=True)]))


def cholesky(a: Any, *, upper: bool = False) -> LazyArray:
    """The lower (``upper=True``: upper) Cholesky factor of a symmetric positive-definite matrix
    (NumPy's ``linalg.cholesky``); a matrix that is not positive definite raises
    ``numpy.linalg.LinAlgError``. As NumPy's, it reads one triangle: the lower, or with ``upper``
    the upper (the lower factor of the transpose, transposed)."""
    m = _matrices(a, square=True)
    if not upper:
        return _run("cholesky", [m])
    return moveaxis(_run("cholesky", [moveaxis(m, -1, -2)]), -1, -2).copy()


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR decomposition (NumPy's ``linalg.qr``): ``mode`` ``"reduced"`` or ``"complete"`` give
    ``QRResult(Q, R)``, ``"r"`` gives ``R``."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    a = _matrices(a)
    out = _run("qr", [a], mode=mode)
    return out if mode == "r" else QRResult(*out)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """The singular value decomposition (NumPy's ``linalg.svd``): ``SVDResult(U, S, Vh)``, or the
    singular values alone for ``compute_uv=False``, in descending order. With ``hermitian`` the
    matrices must be square, as NumPy requires (the general method then gives the same values)."""
    a = _matrices(a, square=bool(hermitian))
    if not compute_uv:
        return _run("svd", [a], compute_uv=False)
    return SVDResult(*_run("svd", [a], full_matrices=full_matrices, compute_uv=True))


def svdvals(x: Any) -> LazyArray:
    """The singular values, descending (NumPy's ``linalg.svdvals``)."""
    return svd(x, compute_uv=False)


def eigh(a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803 (NumPy's name)
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, from its lower (``UPLO="L"``)
    or upper triangle (NumPy's ``linalg.eigh``)."""
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return EighResult(*_run("eigh", [_matrices(a, square=True)], UPLO=UPLO))


def eigvalsh(a: Any, UPLO: str = "L") -> LazyArray:  # noqa: N803 (NumPy's name)
    """The eigenvalues (ascending) of a symmetric matrix (NumPy's ``linalg.eigvalsh``)."""
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return _run("eigvalsh", [_matrices(a, square=True)], UPLO=UPLO)


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> LazyArray:
    """The Moore-Penrose pseudo-inverse (NumPy's ``linalg.pinv``; singular values below ``rcond``
    (default ``max(M, N) * eps``) times the largest count as zero). With ``hermitian`` the
    matrices must be square, as NumPy requires (the general method then gives the same values)."""
    a = _matrices(a, square=bool(hermitian))
    if rcond is None:
        rcond = rtol if rtol is not None else max(a.shape[-2:]) * float(np.finfo(a.dtype).eps)
    return _run("pinv", [a], rcond=rcond)


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[LazyArray, LazyArray, np.int32, LazyArray]:
    """The least-squares solution of ``a @ x = b`` (NumPy's ``linalg.lstsq``): ``(x, residuals,
    rank, s)``; ``rcond`` as NumPy's (default: machine precision times ``max(M, N)``)."""
    a, b = _inputs(a, b)
    if a.ndim != 2:
        raise np.linalg.LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise np.linalg.LinAlgError("Incompatible dimensions")
    if rcond is None:
        rcond = max(a.shape) * float(np.finfo(a.dtype).eps)
    x, residuals, rank, s = _run("lstsq", [a, b], rcond=rcond)
    return x, residuals, np.int32(int(rank)), s  # (NumPy gives the rank as an int32 scalar)


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> LazyArray:  # noqa: N803
    """The rank: how many singular values exceed ``tol`` (default ``S.max() * max(M, N) * eps``,
    NumPy's ``linalg.matrix_rank``; ``rtol`` times the largest instead). With ``hermitian`` the
    matrices must be square, as NumPy requires (the general method then gives the same rank)."""
    a = asarray(A)
    if a.ndim < 2:
        return (a != 0).any().astype(np.int64)
    _check_matrices(a, square=bool(hermitian))
    s = svdvals(a)
    if tol is None:
        eps = float(np.finfo(s.dtype).eps)
        tol = _max_or_zero(s, (s.ndim - 1,), True) * (max(a.shape[-2:]) * eps if rtol is None else rtol)
    elif not isinstance(tol, LazyArray):
        tol = np.asarray(tol)[..., None] if np.ndim(tol) else tol
    else:
        tol = tol[..., None]
    return (s > tol).sum(-1)


def matrix_power(a: Any, n: int) -> LazyArray:
    """``a`` raised to the integer power ``n`` by repeated squaring (NumPy's ``linalg.matrix_power``;
    lazy matrix products; ``n < 0`` inverts first, ``n = 0`` gives the identity)."""
    x = _check_matrices(asarray(a), square=True)
    try:
        n = operator.index(n)
    except TypeError as exc:
        raise TypeError("exponent must be an integer") from exc
    if n < 0:
        x, n = inv(x), -n
    if n == 0:
        return _leaf_on(x, np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape).copy())
    result = None
    while n:
        if n & 1:
            result = x if result is None else _matmul(result, x)
        n >>= 1
        if n:
            x = _matmul(x, x)
    return result


# --- NumPy 2's array-API functions in linalg, and multi_dot: lazy -------------------------------


def vector_norm(x: Any, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> LazyArray:  # noqa: A002
    """A vector norm over ``axis`` (NumPy 2's ``linalg.vector_norm``): ``None`` takes the whole
    array as one vector, a tuple of axes the elements over all of them; ``ord`` as in :func:`norm`'s
    vector norms. Lazy: it fuses with the work around it.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.linalg.vector_norm(sl.asarray(np.array([[3.0, 0.0], [0.0, 4.0]]))).get()
        array(5.)
    """
    a = asarray(x)
    if not is_float(a.dtype):
        a = a.astype(np.float64)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)
    if not axes:  # a 0-d array: the norm of a vector of one
        return _vector_norm(a.reshape((1,)), ord, (0,), False).reshape(())
    return _vector_norm(a, ord, axes, bool(keepdims))  # (read by its truth, as NumPy's)


def matrix_norm(x: Any, *, keepdims: bool = False, ord: Any = "fro") -> LazyArray:  # noqa: A002
    """A matrix norm of each matrix over the last two axes (NumPy 2's ``linalg.matrix_norm``; ``ord``
    as in :func:`norm`'s matrix norms)."""
    return norm(x, ord, (-2, -1), bool(keepdims))  # (read by its truth, as NumPy's)


def trace(x: Any, *, offset: int = 0, dtype: Any = None) -> LazyArray:
    """The sum along the ``offset``-th diagonal of each matrix over the last two axes (NumPy 2's
    ``linalg.trace``; ``sl.trace`` takes the first two)."""
    return _trace(x, offset, -2, -1, dtype)


def diagonal(x: Any, *, offset: int = 0) -> LazyArray:
    """The ``offset``-th diagonal of each matrix over the last two axes (NumPy 2's
    ``linalg.diagonal``; ``sl.diagonal`` takes the first two)."""
    return _diagonal(x, offset, -2, -1)


def outer(x1: Any, x2: Any) -> LazyArray:
    """The outer product of two 1-d arrays (NumPy 2's ``linalg.outer``, which refuses other
    dimensions; ``sl.outer`` flattens them)."""
    a, b = asarray(x1), asarray(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={a.ndim} and x2.ndim={b.ndim}.")
    return _outer(a, b)


def cross(x1: Any, x2: Any, *, axis: int = -1) -> LazyArray:
    """The cross product of 3-vectors along ``axis`` (NumPy 2's ``linalg.cross``, which refuses
    2-vectors; ``sl.cross`` takes them)."""
    a, b = asarray(x1), asarray(x2)
    n1, n2 = a.shape[axis], b.shape[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they are {n1} and {n2} "
                         "dimensional instead.")
    return _cross(a, b, axis=axis)


def matmul(x1: Any, x2: Any) -> LazyArray:
    """NumPy 2's ``linalg.matmul``: :func:`stitchlab.matmul`."""
    return _matmul(x1, x2)


def tensordot(x1: Any, x2: Any, *, axes: Any = 2) -> LazyArray:
    """NumPy 2's ``linalg.tensordot``: :func:`stitchlab.tensordot` with ``axes`` a keyword."""
    return _tensordot(x1, x2, axes)


def vecdot(x1: Any, x2: Any, *, axis: int = -1) -> LazyArray:
    """NumPy 2's ``linalg.vecdot``: :func:`stitchlab.vecdot`."""
    return _vecdot(x1, x2, axis=axis)


def multi_dot(arrays: Any, *, out: Any = None) -> LazyArray:
    """The product of two or more matrices in the order of fewest multiplications (NumPy's
    ``linalg.multi_dot``): the first may be a 1-d row vector and the last a 1-d column vector,
    the others 2-d. Lazy matrix products (``sl.matmul`` steps); the order is the classic
    matrix-chain dynamic program over the shapes. ``out`` takes the last product as
    :func:`stitchlab.dot`'s does (its dtype and shape exactly; of three or more arrays, the 2-d
    shape with the 1-d ends as rows and columns of 1, as NumPy's).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> a, b, c = (sl.asarray(np.ones(s)) for s in [(10, 100), (100, 5), (5, 50)])
        >>> sl.linalg.multi_dot([a, b, c]).shape  # as (a @ b) @ c: 7,500 products, not 75,000
        (10, 50)
    """
    ms = [asarray(a) for a in arrays]
    n = len(ms)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    if n == 2:
        return dot(ms[0], ms[1], out)
    first, last = ms[0].ndim, ms[-1].ndim
    if first == 1:
        ms[0] = ms[0].reshape((1, -1))
    if last == 1:
        ms[-1] = ms[-1].reshape((-1, 1))
    for m in ms:
        if m.ndim != 2:
            raise LinAlgError(f"{m.ndim}-dimensional array given. Array must be two-dimensional")
    dims = [m.shape[0] for m in ms] + [ms[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k) for k in range(i, j))

    def product(i: int, j: int) -> LazyArray:
        return ms[i] if i == j else _matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    result = dot_stored(product(0, n - 1), out, "multi_dot")
    if first == 1 and last == 1:
        return result[0, 0]
    return result.ravel() if first == 1 or last == 1 else result


def cond(x: Any, p: Any = None) -> LazyArray:
    """The condition number of a matrix or of each in a stack (NumPy's ``linalg.cond``): for
    ``p`` ``None``, 2 or -2 the ratio of extreme singular values (the array library's SVD), for
    ``"fro"``, ``"nuc"``, 1, -1, ``inf``, ``-inf`` that norm of the matrix times that of its
    inverse. A singular matrix gives ``inf`` (unless it holds NaNs: then NaN), as in NumPy."""
    a = asarray(x)
    if a.size == 0 and math.prod(a.shape[-2:]) == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p in (2, -2):
        s = svdvals(a)
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        a = _matrices(a, square=True)
        try:
            ainv = inv(a)
        except LinAlgError:
            if a.ndim == 2:
                return full((), math.inf, a.dtype) if not bool(isnan(a).any()) else full((), math.nan, a.dtype)
            stack = a.reshape((-1,) + a.shape[-2:])
            parts = [cond(stack[i], p).reshape((1,)) for i in range(stack.shape[0])]
            from .api import concatenate  # type: ignore[attr-defined]

            return concatenate(parts).reshape(a.shape[:-2])
        r = norm(a, p, (-2, -1)) * norm(ainv, p, (-2, -1))
    return where(isnan(r) & ~isnan(a).any((-2, -1)), math.inf, r).astype(r.dtype)


def tensorinv(a: Any, ind: int = 2) -> LazyArray:
    """The inverse of ``a`` as a map from its first ``ind`` axes to the rest (NumPy's
    ``linalg.tensorinv``): ``tensordot(tensorinv(a), a, ind)`` is the identity."""
    x = asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    rows = math.prod(x.shape[ind:])
    return inv(x.reshape((rows, -1))).reshape(x.shape[ind:] + x.shape[:ind])


def tensorsolve(a: Any, b: Any, axes: Any = None) -> LazyArray:
    """The ``x`` of ``tensordot(a, x, x.ndim) = b`` (NumPy's ``linalg.tensorsolve``); ``axes``:
    axes of ``a`` moved to the end first."""
    x, y = asarray(a), asarray(b)
    an = x.ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        x = x.transpose(order)
    shape = x.shape[-(an - y.ndim):]
    n = math.prod(shape)
    if x.size != n * n:
        raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(x.reshape((n, n)), y.ravel()).reshape(shape)
