"""``stitchlab.linalg``: NumPy's ``linalg.norm``, built from lazy elementwise ops and reductions so
that a norm fuses with the work around it (``x / sl.linalg.norm(x, axis=-1, keepdims=True)`` is
one row kernel), and NumPy's solvers and decompositions (``solve``, ``inv``, ``det``, ``slogdet``,
``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``pinv``, ``lstsq``,
``matrix_rank``), which evaluate their inputs when called and run the array library's own
(``cupy.linalg``, cuSOLVER, on the GPU; ``numpy.linalg`` on the numpy backend); their results
are arrays on the same device. ``matrix_power`` stays lazy (matrix products).
"""

from __future__ import annotations

import math
import operator
from collections import namedtuple
from typing import Any

import numpy as np

from ..ir.dtypes import is_float
from .api import absolute, sqrt  # type: ignore[attr-defined]
from .array import LazyArray
from .creation import _leaf_on, asarray, full
from .library import matmul  # type: ignore[attr-defined]
from .manipulation import moveaxis
from .selection import _evaluated

__all__ = ["norm", "solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv",
           "lstsq", "matrix_rank", "matrix_power"]

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
    ``numpy.linalg.LinAlgError``."""
    low = _run("cholesky", [_matrices(a, square=True)])
    return moveaxis(low, -1, -2).copy() if upper else low


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
    singular values alone for ``compute_uv=False``, in descending order. ``hermitian`` is
    accepted and ignored (the general method gives the same values)."""
    a = _matrices(a)
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
    (default ``max(M, N) * eps``) times the largest count as zero). ``hermitian`` is accepted and
    ignored."""
    a = _matrices(a)
    if rcond is None:
        rcond = rtol if rtol is not None else max(a.shape[-2:]) * float(np.finfo(a.dtype).eps)
    return _run("pinv", [a], rcond=rcond)


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[LazyArray, LazyArray, int, LazyArray]:
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
    return x, residuals, int(rank), s


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> LazyArray:  # noqa: N803
    """The rank: how many singular values exceed ``tol`` (default ``S.max() * max(M, N) * eps``,
    NumPy's ``linalg.matrix_rank``; ``rtol`` times the largest instead). ``hermitian`` is accepted
    and ignored."""
    a = asarray(A)
    if a.ndim < 2:
        return (a != 0).any().astype(np.int64)
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
            result = x if result is None else matmul(result, x)
        n >>= 1
        if n:
            x = matmul(x, x)
    return result
