"""NumPy's array construction, manipulation and comparison functions, built from stitchlab's lazy
ops so that they fuse with the work around them: reversed slices (``flip``), index compares and
selects (``tril``, ``triu``, ``eye``, ``diag``), strided views of a flattened axis (``diagonal``,
``trace``), broadcasts and reshapes (``outer``, ``tile``, ``repeat``, ``meshgrid``), slices
(``split``, ``diff``), and positions computed per axis (``pad``, ``roll``). ``repeat`` with
counts, ``insert`` and ``delete`` gather (:func:`~stitchlab.take`), plan steps of their own.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from ..ir.dtypes import as_dtype, check_python_ints, is_bfloat16, is_float
from . import build
from .api import (  # type: ignore[attr-defined]
    amax,
    amin,
    atleast_1d,
    atleast_2d,
    concatenate,
    cos,
    expand_dims,
    i0,
    isnan,
    joined,
    log10,
    matmul,
    mean,
    moveaxis,
    not_equal,
    power,
    rint,
    sign,
    sqrt,
    stack,
    subtract,
    where,
)
from .array import LazyArray, c_order
from .assign import _fitted
from .creation import _leaf_on, _ones_in_front, arange, asarray, broadcast_to, full, linspace
from .library import cumprod, cumsum, median, on_device, take
from .selection import _evaluated, nonzero

__all__ = [
    "flip", "fliplr", "flipud", "tril", "triu", "eye", "identity", "diagonal", "diag", "trace",
    "outer", "split", "array_split", "hsplit", "vsplit", "dsplit", "tile", "repeat", "meshgrid",
    "diff", "roll", "pad", "array_equal", "array_equiv", "average", "atleast_3d", "vstack", "hstack",
    "dstack", "column_stack", "kron", "cross", "cov", "corrcoef", "rot90", "append", "ediff1d", "trapezoid",
    "unstack", "tri", "indices", "logspace", "diagflat", "gradient", "convolve", "correlate",
    "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv", "polyfit", "vander", "unwrap", "ix_", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
    "diag_indices", "diag_indices_from", "delete", "insert", "geomspace", "bartlett", "blackman", "hamming",
    "hanning", "ndim", "shape", "size", "broadcast_shapes", "rollaxis", "block", "resize", "kaiser", "fromfunction",
    "packbits", "unpackbits", "apply_along_axis", "apply_over_axes", "asarray_chkfinite", "require", "isfortran",
    "iterable", "real_if_close", "mask_indices", "poly",
]


def _zero(dtype: np.dtype) -> LazyArray:
    return LazyArray(build.const(0, dtype))


def flip(m: Any, axis: Any = None) -> LazyArray:
    """``m`` with the order of elements along ``axis`` reversed (all axes for ``None``): a lazy
    reversed slice, as NumPy's ``flip`` view.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.flip(sl.asarray(np.array([[1, 2], [3, 4]])), 1).get()
        array([[2, 1],
               [4, 3]])
    """
    x = asarray(m)
    axes = range(x.ndim) if axis is None else np.lib.array_utils.normalize_axis_tuple(axis, x.ndim)
    if x.ndim == 0:
        return x[()]  # (a view, as NumPy's)
    return x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]


def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> LazyArray:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second (NumPy's ``rot90``): flips and a transpose, all lazy views.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.rot90(sl.asarray(np.array([[1, 2], [3, 4]]))).get()
        array([[2, 4],
               [1, 3]])
    """
    x = asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"len(axes) must be 2 (got axes={axes!r})")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError(f"Axes must be different (got axes={axes!r} for an array of dimension {x.ndim})")
    if not (-x.ndim <= axes[0] < x.ndim and -x.ndim <= axes[1] < x.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={x.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return x[...]  # (a view, as NumPy's)
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    perm = list(range(x.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return flip(x, axes[1]).transpose(perm)
    return flip(x.transpose(perm), axes[1])


def unstack(x: Any, *, axis: int = 0) -> tuple[LazyArray, ...]:
    """The subarrays along ``axis``, as a tuple of lazy views (NumPy 2's ``unstack``: the inverse of
    :func:`stack`).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> parts = sl.unstack(sl.asarray(np.zeros((2, 3))), axis=1)
        >>> len(parts), parts[0].shape
        (3, (2,))
    """
    v = asarray(x)
    if v.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = build.normalize_axis(axis, v.ndim)
    return tuple(v[(slice(None),) * axis + (i,)] for i in range(v.shape[axis]))


def fliplr(m: Any) -> LazyArray:
    """``m`` with its columns (axis 1) reversed; ``m`` must be at least 2-d."""
    x = asarray(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(x, 1)


def flipud(m: Any) -> LazyArray:
    """``m`` with its rows (axis 0) reversed; ``m`` must be at least 1-d."""
    x = asarray(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(x, 0)


def _tri_mask(m: LazyArray, k: int, lower: bool) -> tuple[LazyArray, LazyArray]:
    if m.ndim == 0:
        raise ValueError("tril/triu need an array of at least one dimension")
    rows, cols = (m.shape[-2:] if m.ndim >= 2 else (m.shape[0], m.shape[0]))
    d = arange(cols, dtype=np.int64)[None, :] - arange(rows, dtype=np.int64)[:, None]
    return m, (d <= k) if lower else (d >= k)


def tril(m: Any, k: int = 0) -> LazyArray:
    """The lower triangle of the last two axes of ``m`` (elements above the ``k``-th diagonal set to
    zero, in ``m``'s dtype); a 1-d ``m`` is broadcast to a square first, as in NumPy.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.tril(sl.asarray(np.ones((2, 3), np.int32))).get()
        array([[1, 0, 0],
               [1, 1, 0]], dtype=int32)
    """
    x, mask = _tri_mask(asarray(m), operator.index(k), lower=True)
    return where(mask, x, _zero(x.dtype))


def triu(m: Any, k: int = 0) -> LazyArray:
    """The upper triangle of the last two axes of ``m`` (elements below the ``k``-th diagonal set to
    zero), as :func:`tril`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.triu(sl.asarray(np.ones((2, 3))), 1).get()
        array([[0., 1., 1.],
               [0., 0., 1.]])
    """
    x, mask = _tri_mask(asarray(m), operator.index(k), lower=False)
    return where(mask, x, _zero(x.dtype))


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float, order: str = "C") -> LazyArray:  # noqa: N803
    """An ``N`` × ``M`` array with ones on the ``k``-th diagonal and zeros elsewhere (NumPy's
    ``eye``), computed where it is used: nothing is allocated for it.

    Example:
        >>> import stitchlab as sl
        >>> sl.eye(2, 3, k=1, dtype=int).get()
        array([[0, 1, 0],
               [0, 0, 1]])
    """
    c_order("eye", order, ("C",))
    return (_offsets(N, M) == operator.index(k)).astype(as_dtype(dtype))


def _offsets(N: int, M: int | None) -> LazyArray:  # noqa: N803
    """``j - i`` at each position ``(i, j)`` of an ``N`` × ``M`` array (``M`` None: ``N``), lazily."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed (N={n}, M={m})")
    return arange(m, dtype=np.int64)[None, :] - arange(n, dtype=np.int64)[:, None]


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> LazyArray:  # noqa: N803 (NumPy's names)
    """Ones at and below the ``k``-th diagonal of an ``N`` × ``M`` array, zeros above (NumPy's
    ``tri``), computed where it is used, as :func:`eye`.

    Example:
        >>> import stitchlab as sl
        >>> sl.tri(2, 3, k=1, dtype=int).get()
        array([[1, 1, 0],
               [1, 1, 1]])

    A negative ``N`` or ``M`` is 0 rows or columns, as NumPy's (``tri(-1)`` is empty).
    """
    n = max(operator.index(N), 0)
    m = n if M is None else max(operator.index(M), 0)
    return (_offsets(n, m) <= operator.index(k)).astype(as_dtype(dtype))


def indices(dimensions: Any, dtype: Any = int, sparse: bool = False) -> Any:
    """The index of every position of a grid of shape ``dimensions``, one array per axis stacked
    first (NumPy's ``indices``); ``sparse=True``: a tuple of aranges shaped to broadcast.

    Example:
        >>> import stitchlab as sl
        >>> sl.indices((2, 3))[1].get()
        array([[0, 1, 2],
               [0, 1, 2]])
    """
    dims = tuple(operator.index(d) for d in dimensions)
    dt = as_dtype(dtype)
    axes = [arange(d, dtype=dt).reshape((1,) * i + (d,) + (1,) * (len(dims) - i - 1)) for i, d in enumerate(dims)]
    if sparse:
        return tuple(axes)
    if not dims:
        return arange(0, dtype=dt)
    return stack([broadcast_to(a, dims) for a in axes])


def fromfunction(function: Any, shape: Any, *, dtype: Any = float, like: Any = None, **kwargs: Any) -> Any:
    """``function`` called with one coordinate array per axis of a grid of ``shape`` (NumPy's
    ``fromfunction``): ``function(i, j, ...)`` on lazy broadcasts of aranges of ``dtype``, so
    an elementwise function becomes one fused kernel that reads nothing.

    Example:
        >>> import stitchlab as sl
        >>> sl.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int).get()
        array([[ 0,  1,  2],
               [10, 11, 12]])
    """
    if like is not None:
        raise TypeError("fromfunction(like=...): stitchlab arrays need no like=; leave it out")
    dims = tuple(operator.index(d) for d in shape) if np.iterable(shape) else (operator.index(shape),)
    return function(*(broadcast_to(a, dims) for a in indices(dims, dtype, sparse=True)), **kwargs)


def _bit_order(bitorder: Any, by_first_letter: bool = False) -> bool:
    """Whether ``bitorder`` is ``"big"``: NumPy's ``TypeError`` for a non-string and ``ValueError``
    for anything but ``"big"`` or ``"little"`` (``by_first_letter``, as NumPy's ``unpackbits``
    reads it: any string starting with ``"b"`` or ``"l"``)."""
    if not isinstance(bitorder, str):
        raise TypeError(f"bitorder must be str, not {type(bitorder).__name__} (got {bitorder!r}); give 'big' or 'little'")
    if by_first_letter:
        if bitorder[:1] not in ("b", "l"):
            raise ValueError(f"'order' must begin with 'l' or 'b' (got {bitorder!r}); give 'big' or 'little'")
        return bitorder[0] == "b"
    if bitorder not in ("big", "little"):
        raise ValueError(f"'order' must be either 'little' or 'big' (got {bitorder!r})")
    return bitorder == "big"


def _bit_axis(x: LazyArray, axis: Any) -> tuple[LazyArray, int]:
    """``x`` flattened for ``axis=None`` (0-d data: as one element along axis 0 or -1, as NumPy),
    and the axis to work along."""
    if axis is None or x.ndim == 0:
        x = x.reshape(-1)
    return x, 0 if axis is None else build.normalize_axis(axis, x.ndim)


def packbits(a: Any, axis: Any = None, bitorder: str = "big") -> LazyArray:
    """The truth of ``a``'s elements packed eight to a uint8 along ``axis`` (flattened for
    ``None``), the first in the highest bit (``bitorder="little"``: the lowest), the last byte
    padded with zeros (NumPy's ``packbits``). One fused reduction kernel.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.packbits(sl.asarray(np.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))).get()
        array([176, 128], dtype=uint8)
    """
    big = _bit_order(bitorder)
    x = asarray(a)
    if x.dtype.kind not in "iub":
        raise TypeError(f"Expected an input array of integer or boolean data type (got {x.dtype}); "
                        f"compare first, e.g. sl.packbits(x > 0)")
    x, axis = _bit_axis(x, axis)
    bits = moveaxis(not_equal(x, 0).astype(np.uint8), axis, -1)
    n = bits.shape[-1]
    if n % 8:
        bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, 8 - n % 8)])
    weights = asarray(np.array([1 << (7 - j if big else j) for j in range(8)], np.uint8))
    packed = (bits.reshape(bits.shape[:-1] + (-(-n // 8), 8)) * weights).sum(-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a: Any, axis: Any = None, count: Any = None, bitorder: str = "big") -> LazyArray:
    """The bits of the uint8 array ``a`` along ``axis`` (flattened for ``None``), eight per byte,
    the highest first (``bitorder="little"``: the lowest), as uint8 0s and 1s (NumPy's
    ``unpackbits``); ``count`` keeps that many bits (zeros past the end), a negative one drops as
    many from the end. One fused kernel.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.unpackbits(sl.asarray(np.array([176], np.uint8))).get()
        array([1, 0, 1, 1, 0, 0, 0, 0], dtype=uint8)
    """
    big = _bit_order(bitorder, by_first_letter=True)  # (NumPy's order of checks: bitorder, dtype, axis, count)
    x = asarray(a)
    if x.dtype != np.uint8:
        raise TypeError(f"Expected an input array of unsigned byte data type (got {x.dtype}); "
                        f"view or convert it first, e.g. x.astype(np.uint8)")
    x, axis = _bit_axis(x, axis)
    x = moveaxis(x, axis, -1)
    shifts = asarray(np.array([7 - j if big else j for j in range(8)], np.uint8))
    bits = ((x[..., None] >> shifts) & 1).astype(np.uint8)
    bits = bits.reshape(x.shape[:-1] + (8 * x.shape[-1],))
    total = bits.shape[-1]
    if count is not None:
        count = operator.index(count)
        if count < 0 and -count > total:
            raise ValueError("-count larger than number of elements")
        keep = count if count >= 0 else total + count
        bits = bits[..., :keep] if keep <= total else pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - total)])
    return moveaxis(bits, -1, axis)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0, dtype: Any = None,
             axis: int = 0) -> LazyArray:
    """``base ** linspace(start, stop, num, endpoint, axis=axis)`` (NumPy's ``logspace``): array
    ends or an array ``base`` give one sequence per element along ``axis``; the dtype is
    ``power``'s (a Python ``base`` is weak: float32 ends stay float32) unless ``dtype`` says
    otherwise.

    Example:
        >>> import stitchlab as sl
        >>> sl.logspace(0, 3, 4).get()
        array([   1.,   10.,  100., 1000.])
    """
    if not isinstance(base, float | int) and np.ndim(base):
        # an array base broadcasts with the ends (NumPy: all three become arrays of that rank)
        ndmax = len(np.broadcast_shapes(np.shape(start), np.shape(stop), np.shape(base)))
        start, stop, base = (_ones_in_front(asarray(a), ndmax) for a in (start, stop, base))
        base = expand_dims(base, axis)
    y = power(base, linspace(start, stop, num, endpoint, axis=axis))
    return y if dtype is None else y.astype(as_dtype(dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> LazyArray:
    """``num`` values from ``start`` to ``stop`` evenly spaced on a log scale (NumPy's
    ``geomspace`` of real ends, scalars or arrays): :func:`logspace` of their magnitudes'
    ``log10`` in float64 (or ``dtype`` where that is wider), the ends exactly ``start`` and
    ``stop``, the sign of ``start`` (ends of opposite signs give NaN between them, as NumPy's do);
    array ends give one sequence per element along ``axis``.

    Raises:
        ValueError: an end of 0 (``Geometric sequence cannot include zero``; lazy ends are
            evaluated for this check).
        TypeError: complex ends.

    Example:
        >>> import stitchlab as sl
        >>> sl.geomspace(1, 1000, 4).get()
        array([   1.,   10.,  100., 1000.])
    """
    for end in (start, stop):
        if isinstance(end, complex | np.complexfloating) or np.asarray(end).dtype.kind == "c":
            raise TypeError(f"geomspace: start and stop must be real (got {end!r}); stitchlab has no complex dtype")
    first, last = asarray(start) * 1.0, asarray(stop) * 1.0
    if bool((first == 0).any()) or bool((last == 0).any()):
        raise ValueError("Geometric sequence cannot include zero")
    num = operator.index(num)
    dt = np.result_type(np.zeros((), first.dtype), np.zeros((), last.dtype), float(num), np.zeros((), dtype))
    first, last = first.astype(dt), last.astype(dt)
    start_sign = sign(first)
    first, last = first / start_sign, last / start_sign
    y = logspace(log10(first), log10(last), num, endpoint, base=10.0, dtype=dt)
    i = arange(num).reshape((-1,) + (1,) * (y.ndim - 1))
    if num > 1 and endpoint:
        y = where(i == num - 1, last, y)
    y = where(i == 0, first, y) * start_sign
    if axis != 0:
        y = moveaxis(y, 0, axis)
    return y.astype(as_dtype(dtype) if dtype is not None else np.dtype(np.float64))


def _window(m: Any, f: Any) -> LazyArray:
    """A window of ``m`` points, NumPy's way: ``f(n, m)`` of ``n = arange(1 - m, m, 2)`` in float64
    (no point: empty; one: ``[1.0]``)."""
    m = operator.index(m)
    if m < 1:
        return full((0,), 0.0)
    if m == 1:
        return full((1,), 1.0)
    return f(arange(1 - m, m, 2), m)


def bartlett(M: int) -> LazyArray:  # noqa: N803 - NumPy's name
    """The triangular window of ``M`` points (NumPy's ``bartlett``).

    Example:
        >>> import stitchlab as sl
        >>> sl.bartlett(5).get()
        array([0. , 0.5, 1. , 0.5, 0. ])
    """
    return _window(M, lambda n, m: where(n <= 0, 1 + n / (m - 1), 1 - n / (m - 1)))


def blackman(M: int) -> LazyArray:  # noqa: N803
    """The Blackman window of ``M`` points (NumPy's ``blackman``)."""
    return _window(M, lambda n, m: 0.42 + 0.5 * cos(np.pi * n / (m - 1)) + 0.08 * cos(2.0 * np.pi * n / (m - 1)))


def hamming(M: int) -> LazyArray:  # noqa: N803
    """The Hamming window of ``M`` points (NumPy's ``hamming``)."""
    return _window(M, lambda n, m: 0.54 + 0.46 * cos(np.pi * n / (m - 1)))


def hanning(M: int) -> LazyArray:  # noqa: N803
    """The Hann window of ``M`` points (NumPy's ``hanning``)."""
    return _window(M, lambda n, m: 0.5 + 0.5 * cos(np.pi * n / (m - 1)))


def kaiser(M: int, beta: float) -> LazyArray:  # noqa: N803
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (NumPy's ``kaiser``:
    ``i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)``, float64, one fused kernel).

    Example:
        >>> import stitchlab as sl
        >>> sl.kaiser(4, 5.0).get()
        array([0.03671089, 0.7753221 , 0.7753221 , 0.03671089])
    """
    m = float(operator.index(M))
    if m == 1:
        return full((1,), 1.0)
    alpha = (m - 1) / 2.0
    n = arange(0, m)
    return i0(float(beta) * sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / i0(np.float64(beta))


def identity(n: int, dtype: Any = float) -> LazyArray:
    """The ``n`` × ``n`` identity (NumPy's ``identity``): :func:`eye`."""
    return eye(n, dtype=dtype)


def diagflat(v: Any, k: int = 0) -> LazyArray:
    """The square array with the flattened ``v`` on its ``k``-th diagonal (NumPy's ``diagflat``):
    :func:`diag` of ``v`` flattened.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.diagflat(sl.asarray(np.array([[1, 2]]))).get()
        array([[1, 0],
               [0, 2]])
    """
    return diag(asarray(v).reshape(-1), k)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
    """The ``offset``-th diagonal of the 2-d subarrays over ``axis1`` and ``axis2``, as a new last
    axis (NumPy's ``diagonal``): a strided slice of those two axes flattened, fused with its use.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.diagonal(sl.asarray(np.arange(9).reshape(3, 3)), 1).get()
        array([1, 5])
    """
    x = asarray(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i = np.lib.array_utils.normalize_axis_index(axis1, x.ndim, "axis1")
    j = np.lib.array_utils.normalize_axis_index(axis2, x.ndim, "axis2")
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    k = operator.index(offset)
    y = x.transpose([d for d in range(x.ndim) if d not in (i, j)] + [i, j])
    n, m = y.shape[-2:]
    length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    batch = y.shape[:-2]
    if length == 0:
        return full(batch + (0,), 0, x.dtype)
    start = k if k >= 0 else -k * m
    flat = y.reshape(batch + (n * m,))
    return flat[(Ellipsis, slice(start, start + (length - 1) * (m + 1) + 1, m + 1))]


def diag(v: Any, k: int = 0) -> LazyArray:
    """NumPy's ``diag``: of a 1-d ``v``, the square array with ``v`` on the ``k``-th diagonal and
    zeros elsewhere; of a 2-d ``v``, its ``k``-th diagonal (:func:`diagonal`).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.diag(sl.asarray(np.array([1.0, 2.0])), -1).get()
        array([[0., 0., 0.],
               [1., 0., 0.],
               [0., 2., 0.]])
    """
    x = asarray(v)
    k = operator.index(k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = x.shape[0] + abs(k)
    if k:  # v padded to n so that row i (column j for k < 0) of the result may read v[i]
        x = concatenate([x, full((abs(k),), 0, x.dtype)])
    d = arange(n, dtype=np.int64)[None, :] - arange(n, dtype=np.int64)[:, None]
    values = x[:, None] if k >= 0 else x[None, :]
    return where(d == k, values, _zero(x.dtype))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> LazyArray:
    """Sum along the ``offset``-th diagonal (NumPy's ``trace``; ``dtype`` and ``out`` as in ``sum``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.trace(sl.asarray(np.arange(9).reshape(3, 3))).get()
        array(12)
    """
    return diagonal(a, offset, axis1, axis2).sum(-1, dtype, out)


def outer(a: Any, b: Any, out: Any = None) -> LazyArray:
    """``out[i, j] = a[i] * b[j]`` over the flattened operands (NumPy's ``outer``), a broadcast
    product that fuses with its use; ``out`` as a ufunc's (``multiply``'s: broadcast to, cast
    ``same_kind``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.outer(sl.asarray(np.array([1, 2])), np.array([1, 10, 100])).get()
        array([[  1,  10, 100],
               [  2,  20, 200]])
    """
    from .api import multiply  # type: ignore[attr-defined]

    return multiply(asarray(a).ravel()[:, None], asarray(b).ravel()[None, :], out=out)


def _split_at(x: LazyArray, bounds: list[int], axis: int) -> list[LazyArray]:
    out = []
    pre = (slice(None),) * axis
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        out.append(x[pre + (slice(lo, max(lo, hi)),)])
    return out


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[LazyArray]:
    """``ary`` split into sub-arrays along ``axis`` (lazy slices), NumPy's ``array_split``: an int
    N gives N pieces, the first ``len % N`` one longer; a sequence gives the split points.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> tuple(p.shape for p in sl.array_split(sl.asarray(np.arange(7)), 3))
        ((3,), (2,), (2,))
    """
    x = asarray(ary)
    axis = build.normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        points = [operator.index(i) for i in indices_or_sections]
        points = [min(max(p + n if p < 0 else p, 0), n) for p in points]
        return _split_at(x, [0, *points, n], axis)
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    each, extra = divmod(n, sections)
    sizes = [each + 1] * extra + [each] * (sections - extra)
    return _split_at(x, [0, *np.cumsum(sizes).tolist()], axis)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[LazyArray]:
    """Like :func:`array_split`, but an int N must divide the axis evenly (NumPy's ``split``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> tuple(p.shape for p in sl.split(sl.asarray(np.arange(6)), [2, 5]))
        ((2,), (3,), (1,))
    """
    x = asarray(ary)
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        return array_split(x, indices_or_sections, axis)
    if sections > 0 and x.shape[build.normalize_axis(axis, x.ndim)] % sections:
        raise ValueError("array split does not result in an equal division")
    return array_split(x, sections, axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """:func:`split` along axis 1 (axis 0 for 1-d arrays)."""
    x = asarray(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """:func:`split` along axis 0 of an array of at least 2 dimensions."""
    x = asarray(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """:func:`split` along axis 2 of an array of at least 3 dimensions."""
    x = asarray(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def tile(A: Any, reps: Any) -> LazyArray:  # noqa: N803 (NumPy's name)
    """``A`` repeated ``reps`` times along each axis (NumPy's ``tile``): a broadcast and a reshape,
    fused with its use; nothing is copied, and the result is a new array (not a view of ``A``:
    assignments into it are its own), as NumPy's.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.tile(sl.asarray(np.array([1, 2])), (2, 2)).get()
        array([[1, 2, 1, 2],
               [1, 2, 1, 2]])
    """
    x = asarray(A)
    try:
        r = (operator.index(reps),)
    except TypeError:
        r = tuple(operator.index(v) for v in reps)
    if any(v < 0 for v in r):
        raise ValueError(f"negative dimensions are not allowed (reps={reps!r})")
    nd = max(len(r), x.ndim)
    r = (1,) * (nd - len(r)) + r
    shape = (1,) * (nd - x.ndim) + x.shape
    inter = tuple(v for pair in zip([1] * nd, shape, strict=True) for v in pair)
    wide = tuple(v for pair in zip(r, shape, strict=True) for v in pair)
    return broadcast_to(x.reshape(inter), wide).reshape(tuple(a * b for a, b in zip(r, shape, strict=True))).copy()


def repeat(a: Any, repeats: Any, axis: Any = None) -> LazyArray:
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (``None``: of the flattened
    array), NumPy's ``repeat``. An int is a broadcast and a reshape, fused with its use; a
    sequence of counts (one per element along the axis, known on the host) is a gather
    (:func:`~stitchlab.take`). The result is a new array, not a view of ``a``, as NumPy's.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.repeat(sl.asarray(np.array([[1, 2], [3, 4]])), [1, 2], axis=0).get()
        array([[1, 2],
               [3, 4],
               [3, 4]])
    """
    x = asarray(a)
    if build.zero_d_axis(axis, x.ndim, None) is None:  # (axis 0 or -1 of 0-d data: as NumPy, its one element)
        x, axis = x.ravel(), 0
    axis = build.normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    counts = np.asarray(repeats)
    if counts.size == 0:
        counts = counts.astype(np.int64)  # (NumPy reads an empty list of counts as integers)
    if counts.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {counts.dtype} to int64 according to the rule 'safe'")
    if counts.ndim > 1:
        raise ValueError(f"object too deep for desired array (repeats has shape {counts.shape}; give an int or a "
                         "1-d sequence of counts)")
    if n == 0 and counts.size <= 1:
        return x  # (nothing to repeat: NumPy does not check the count then)
    if (counts < 0).any():
        raise ValueError("repeats may not contain negative values.")
    if counts.ndim == 0 or counts.size == 1:
        c = int(counts.reshape(-1)[0]) if counts.size else 0
        shape = x.shape[: axis + 1] + (1,) + x.shape[axis + 1:]
        wide = x.shape[: axis + 1] + (c,) + x.shape[axis + 1:]
        return broadcast_to(x.reshape(shape), wide).reshape(x.shape[:axis] + (n * c,) + x.shape[axis + 1:]).copy()
    if counts.shape != (n,):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({counts.size},)")
    return take(x, np.repeat(np.arange(n), counts), axis)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple[LazyArray, ...]:
    """Coordinate arrays from coordinate vectors (NumPy's ``meshgrid``): broadcasts of the
    flattened inputs (``indexing="xy"``: the first two axes swapped); ``sparse=True`` leaves them
    unbroadcast. Nothing is copied; with ``copy=True`` (the default) they are new arrays, as
    NumPy's copies are (assignments into them are their own), with ``copy=False`` views of the
    inputs (assigning into one raises ``TypeError`` while its input lives).

    Example:
        >>> import stitchlab as sl
        >>> tuple(g.shape for g in sl.meshgrid(sl.arange(3), sl.arange(2)))
        ((2, 3), (2, 3))
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    out = []
    for i, v in enumerate(xi):
        shape = [1] * nd
        shape[i] = -1
        if indexing == "xy" and nd > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(asarray(v).reshape(tuple(shape)))
    if not sparse:
        full_shape = build.broadcast_shapes(*(o.shape for o in out))
        out = [broadcast_to(o, full_shape) for o in out]
    return tuple(o.copy() if copy else o for o in out)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> LazyArray:
    """The ``n``-th discrete difference along ``axis`` (NumPy's ``diff``): ``a[1:] - a[:-1]``
    (``!=`` for bool), ``n`` times; ``prepend``/``append`` are joined first (a scalar is broadcast
    along the axis). ``n=0`` gives ``a`` as it is (0-d too, ``prepend``/``append`` ignored).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.diff(sl.asarray(np.array([1, 4, 9, 16])), 2).get()
        array([2, 2])
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    x = asarray(a)
    if n == 0:  # NumPy returns the input before it checks its dimensions and axis
        return x
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = build.normalize_axis(axis, x.ndim)
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        e = asarray(extra)
        if e.ndim == 0:
            e = broadcast_to(e, x.shape[:axis] + (1,) + x.shape[axis + 1:])
        parts.append(e)
    if len(parts) > 1:
        x = concatenate(parts, axis)
    op = not_equal if x.dtype == np.bool_ else subtract
    pre = (slice(None),) * axis
    for _ in range(n):
        x = op(x[pre + (slice(1, None),)], x[pre + (slice(None, -1),)])
    return x


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> LazyArray:
    """Differences of consecutive elements of the flattened ``ary`` (NumPy's ``ediff1d``), with
    ``to_begin`` and ``to_end`` (flattened) joined before and after, in ``ary``'s dtype; they
    must cast to it under the ``same_kind`` rule.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.ediff1d(sl.asarray(np.array([1, 2, 4, 7])), to_begin=-99).get()
        array([-99,   1,   2,   3])
    """
    x = asarray(ary).reshape(-1)
    parts = []
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            parts.append(None)
            continue
        e = asarray(extra)
        if not np.can_cast(e.dtype, x.dtype, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule "
                            f"(got {e.dtype} for {x.dtype}); convert it first, e.g. {name}=np.asarray(v).astype({str(x.dtype)!r})")
        parts.append(e.reshape(-1).astype(x.dtype))
    if x.dtype == np.bool_:
        raise TypeError("ediff1d: numpy boolean subtract, the `-` operator, is not supported; "
                        "convert the input first, e.g. ary.astype(np.int8)")
    d = subtract(x[1:], x[:-1]).astype(x.dtype)
    joined = [p for p in (parts[0], d, parts[1]) if p is not None]
    return concatenate(joined) if len(joined) > 1 else d


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> LazyArray:
    """The integral of ``y`` along ``axis`` by the composite trapezoidal rule (NumPy's
    ``trapezoid``): sample points ``x`` (1-d along the axis, or ``y``'s shape), else spacing ``dx``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> float(sl.trapezoid(sl.asarray(np.array([1.0, 2.0, 3.0])), dx=0.5))
        2.0
    """
    v = asarray(y)
    axis = build.normalize_axis(axis, v.ndim)
    if x is None:
        d: Any = dx
    else:
        xs = asarray(x)
        if xs.ndim == 1:
            d = diff(xs)
            d = d.reshape((1,) * axis + (d.shape[0],) + (1,) * (v.ndim - axis - 1))
        else:
            d = diff(xs, axis=axis)
    hi = tuple(slice(1, None) if i == axis else slice(None) for i in range(v.ndim))
    lo = tuple(slice(None, -1) if i == axis else slice(None) for i in range(v.ndim))
    return (d * (v[hi] + v[lo]) / 2.0).sum(axis)


def append(arr: Any, values: Any, axis: Any = None) -> LazyArray:
    """``values`` joined after ``arr`` along ``axis`` (NumPy's ``append``; ``None``: both
    flattened first): a concatenate step.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.append(sl.asarray(np.array([1, 2])), [[3, 4]]).get()
        array([1, 2, 3, 4])
    """
    a, v = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([a.reshape(-1), v.reshape(-1)], 0)
    return concatenate([a, v], axis)


def _spacings(f: LazyArray, axes: tuple[int, ...], varargs: tuple[Any, ...]) -> list[Any]:
    """``gradient``'s spacing per axis: a scalar, or the float64 differences of 1-d coordinates
    (read on the host; one scalar where they are all equal, as NumPy decides)."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return list(varargs) * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"invalid number of arguments: {len(varargs)} spacings for {len(axes)} axes; give none, "
                        f"one scalar, or one per axis")
    out: list[Any] = []
    for i, d in enumerate(varargs):
        dist = np.asarray(d)
        if dist.ndim == 0:
            out.append(d)
            continue
        if dist.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if len(dist) != f.shape[axes[i]]:
            raise ValueError("when 1d, distances must match the length of the corresponding dimension")
        if dist.dtype.kind in "iu":
            dist = dist.astype(np.float64)
        diffx = np.diff(dist)
        out.append(diffx[0] if diffx.size and (diffx == diffx[0]).all() else diffx)
    return out


def _weights(shape: tuple[int, ...], *ws: np.ndarray) -> tuple[LazyArray, ...]:
    """Host coefficient arrays of a non-uniform ``gradient``, shaped to broadcast along its axis."""
    return tuple(asarray(w.reshape(shape)) for w in ws)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """The gradient of ``f`` by second-order central differences inside and one-sided first- or
    second-order (``edge_order``) differences at the ends (NumPy's ``gradient``; spacings: none (1),
    one scalar for every axis, or one scalar or 1-d coordinate array per axis). One array per
    axis (a tuple for several); integers in float64. Each is the central part and the two edges
    joined along the axis (a concatenate step); the differences fuse.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.gradient(sl.asarray(np.array([1.0, 2.0, 4.0, 7.0, 11.0])), 2.0).get()
        array([0.5 , 0.75, 1.25, 1.75, 2.  ])
    """
    v = asarray(f)
    axes = np.lib.array_utils.normalize_axis_tuple(range(v.ndim) if axis is None else axis, v.ndim)
    spacings = _spacings(v, axes, varargs)
    edge_order = operator.index(edge_order)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    # NumPy keeps its own inexact dtypes; ml_dtypes' bfloat16 is not one of them: float64 out
    otype = v.dtype if is_float(v.dtype) and not is_bfloat16(v.dtype) else np.dtype(np.float64)
    if v.dtype.kind in "iu":
        v = v.astype(np.float64)
    outs = []
    for ax, dx in zip(axes, spacings, strict=True):
        if v.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
                             "elements are required.")

        def part(start: int | None, stop: int | None, ax: int = ax) -> LazyArray:
            return v[tuple(slice(start, stop) if i == ax else slice(None) for i in range(v.ndim))]

        shape = tuple(-1 if i == ax else 1 for i in range(v.ndim))
        uniform = np.ndim(dx) == 0
        if uniform:
            inner = (part(2, None) - part(None, -2)) / (2.0 * dx)
        else:
            dx1, dx2 = dx[:-1], dx[1:]
            a, b, c = _weights(shape, -dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2), dx1 / (dx2 * (dx1 + dx2)))
            inner = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / (dx if uniform else dx[0])
            last = (part(-1, None) - part(-2, -1)) / (dx if uniform else dx[-1])
        else:
            if uniform:
                a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
            else:
                d1, d2 = dx[0], dx[1]
                a, b, c = -(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2), -d1 / (d2 * (d1 + d2))
            first = a * part(0, 1) + b * part(1, 2) + c * part(2, 3)
            if uniform:
                a, b, c = 0.5 / dx, -2.0 / dx, 1.5 / dx
            else:
                d1, d2 = dx[-2], dx[-1]
                a, b, c = d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2.0 * d2 + d1) / (d2 * (d1 + d2))
            last = a * part(-3, -2) + b * part(-2, -1) + c * part(-1, None)
        outs.append(concatenate([first.astype(otype), inner.astype(otype), last.astype(otype)], ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


def roll(a: Any, shift: Any, axis: Any = None) -> LazyArray:
    """Elements shifted by ``shift`` along ``axis`` (of the flattened array for ``None``), those
    that fall off one end coming back at the other (NumPy's ``roll``): lazy and fused, the first
    ``n`` elements of a ``"wrap"`` :func:`pad` by the shift.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.roll(sl.asarray(np.arange(5)), 2).get()
        array([3, 4, 0, 1, 2])
    """
    x = asarray(a)
    if axis is None:
        return roll(x.ravel(), shift, 0).reshape(x.shape)
    axes = np.atleast_1d(np.asarray(axis))
    shifts = np.atleast_1d(np.asarray(shift))
    if axes.ndim > 1 or shifts.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total: dict[int, int] = {}
    for ax, sh in zip(*np.broadcast_arrays(axes, shifts), strict=True):
        d = build.normalize_axis(int(ax), x.ndim)
        total[d] = total.get(d, 0) + int(sh)
    for d, sh in total.items():
        n = x.shape[d]
        s = sh % n if n else 0
        # the shorter way round: a right shift by s is a left one by n - s; neighbouring taps
        # (rolls by +1 and -1) then read at c - 1 and c + 1, not c + n - 1 (docs/compiler.md §1)
        if 0 < s <= n - s:
            x = LazyArray(build.pad(x._node, d, s, 0, "wrap"))[(slice(None),) * d + (slice(0, n),)]
        elif s:
            x = LazyArray(build.pad(x._node, d, 0, n - s, "wrap"))[(slice(None),) * d + (slice(n - s, 2 * n - s),)]
    return x.copy() if x is a else x  # (a new array object, as NumPy's)


#: ``pad`` modes whose values are a statistic of the edge region (NumPy's ``stat_length`` long)
_PAD_STATS = ("maximum", "minimum", "mean", "median")


def _pad_with_stats(x: LazyArray, d: int, widths: tuple[int, int], lengths: Any, mode: str) -> LazyArray:
    """``x`` padded along axis ``d`` with NumPy's ``maximum``/``minimum``/``mean``/``median`` of the
    first and last ``lengths`` elements (all of them for None or more than the axis); a mean or
    median of integers is rounded half to even, as NumPy's ``pad``."""
    n = x.shape[d]
    lo, hi = (n if v is None or int(v) > n else int(v) for v in lengths)
    if 0 in (lo, hi) and (mode in ("maximum", "minimum") or not is_float(x.dtype)):
        raise ValueError("stat_length of 0 yields no value for padding")
    stat = {"maximum": amax, "minimum": amin, "mean": mean, "median": median}[mode]
    pre = (slice(None),) * d

    def value(part: LazyArray, width: int) -> LazyArray:
        v = stat(part, axis=d, keepdims=True)
        if mode in ("mean", "median") and x.dtype.kind in "iu":  # (bool is cast: 0.5 is True, as NumPy's)
            v = rint(v)
        return broadcast_to(v.astype(x.dtype), x.shape[:d] + (width,) + x.shape[d + 1:])

    first = x[pre + (slice(0, lo),)]
    last = first if lo == hi == n else x[pre + (slice(n - hi, n),)]
    pieces = [value(first, widths[0])] if widths[0] else []
    pieces += [x] + ([value(last, widths[1])] if widths[1] else [])
    return concatenate(pieces, d)


def _pad_odd(x: LazyArray, d: int, widths: tuple[int, int], symmetric: bool) -> LazyArray:
    """``x`` padded along axis ``d`` with ``reflect_type="odd"``: each new value is twice the edge
    minus its mirror image, in NumPy's steps (a chunk of at most the length filled so far, whole
    periods of the input, mirrored about the current edge), so the values wider than one
    reflection take NumPy's roundings and integer wraps too. A few lazy slices and joins: fused."""
    n, off = x.shape[d], int(symmetric)
    (left, right), pre = widths, (slice(None),) * d

    def mirrored(part: LazyArray, edge: LazyArray) -> LazyArray:
        return (2 * edge - flip(part, d)).astype(x.dtype)  # (bool: 2·e − c is nonzero unless both are False)

    while left or right:
        m = x.shape[d]
        filled = m // n * n if symmetric else (m - 1) // (n - 1) * (n - 1)
        if left:
            c = min(filled, left)
            x = concatenate([mirrored(x[pre + (slice(1 - off, c + 1 - off),)], x[pre + (slice(0, 1),)]), x], d)
            left -= c
        if right:
            m, c = x.shape[d], min(filled, right)
            x = concatenate([x, mirrored(x[pre + (slice(m - 1 - c + off, m - 1 + off),)], x[pre + (slice(m - 1, m),)])], d)
            right -= c
    return x


def _pad_ramps(x: LazyArray, d: int, widths: tuple[int, int], ends: tuple[Any, Any]) -> LazyArray:
    """``x`` padded along axis ``d`` with ``mode="linear_ramp"``, NumPy's way: ``linspace`` from
    each end value to the edge, without the edge, in ``x``'s dtype (integers floored), the right
    one reversed."""
    n, pre = x.shape[d], (slice(None),) * d
    pieces = [x]
    for side, (width, end) in enumerate(zip(widths, ends, strict=True)):
        if width:
            ramp = linspace(end, x[pre + ((n - 1) * side,)], width, endpoint=False, dtype=x.dtype, axis=d)
            pieces.insert(side * len(pieces), flip(ramp, d) if side else ramp)
    return concatenate(pieces, d)


def _ramp_ends(value: Any, ndim: int) -> Any:
    """``end_values`` as (before, after) per axis, each value typed as NumPy's ``pad`` passes it
    to ``linspace``: a NumPy scalar where one value or one pair is given (``end_values=0`` makes a
    float32 ramp in float64, then rounds), a Python number where pairs per axis are given (weak)."""
    ends = _pairs(value, ndim, "end_values", integral=False)
    arr = np.asarray(value)
    if arr.ndim < 3 and (arr.size == 1 or (arr.size == 2 and arr.shape != (2, 1))):
        return [tuple(ends[0])] * ndim
    return ends.tolist()


def _pairs(value: Any, ndim: int, name: str, integral: bool) -> np.ndarray:
    arr = np.asarray(value)
    if integral:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"`{name}` must be of integral type.")
        if (arr < 0).any():
            raise ValueError("index can't contain negative values")
    try:
        return np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"{name}: could not broadcast {arr.shape} to ({ndim}, 2); give one value, one (before, after) "
            f"pair, or one pair per axis"
        ) from None


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> LazyArray:
    """``array`` padded along each axis (NumPy's ``pad``) with ``mode`` ``"constant"``
    (``constant_values``, default 0), ``"edge"``, ``"wrap"``, ``"reflect"`` or ``"symmetric"``
    (``reflect_type="even"`` or ``"odd"``), ``"maximum"``, ``"minimum"``, ``"mean"`` or ``"median"``
    (``stat_length``) and ``"empty"`` (zeros). Lazy and fused, as a slice is:
    each output element reads the input at the position NumPy's ``pad`` gives it, computed in the
    kernel; a constant pad selects its value where that position lies outside the input. A padded
    stencil (``x_pad[:-2] + x_pad[2:]``) is one kernel. The statistics modes reduce the edge
    regions (a reduction kernel) and join the results on (a fused :func:`~stitchlab.concatenate`).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.pad(sl.asarray(np.array([1, 2, 3])), (2, 1), mode="reflect").get()
        array([3, 2, 1, 2, 3, 2])
    """
    x = asarray(array)
    widths = _pairs(pad_width, x.ndim, "pad_width", integral=True)
    odd = False
    if mode == "empty":  # (NumPy leaves the values undefined; a lazy array has no uninitialized memory)
        if kwargs:
            raise ValueError(f"unsupported keyword arguments for mode 'empty': {sorted(kwargs)}")
        mode = "constant"
    if mode == "constant":
        unknown = set(kwargs) - {"constant_values"}
        values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values", integral=False)
    elif mode == "linear_ramp":
        unknown = set(kwargs) - {"end_values"}
        ends = _ramp_ends(kwargs.get("end_values", 0), x.ndim)
    elif mode in _PAD_STATS:
        unknown = set(kwargs) - {"stat_length"}
        length = kwargs.get("stat_length")
        lengths = [(None, None)] * x.ndim
        if length is not None:  # (rounded to integers, as NumPy's)
            lengths = np.round(_pairs(length, x.ndim, "stat_length", integral=False)).astype(np.intp)
            if (lengths < 0).any():
                raise ValueError("index can't contain negative values")
    elif mode in build.PAD_INDEX_MODES:
        unknown = set(kwargs) - ({"reflect_type"} if mode in ("reflect", "symmetric") else set())
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type={reflect_type!r} is neither 'even' nor 'odd'")
        odd = reflect_type == "odd"
    else:
        raise ValueError(
            f"mode {mode!r} is not supported by sl.pad (constant, edge, linear_ramp, wrap, reflect, symmetric, "
            f"maximum, minimum, mean, median, empty); "
            f"pad x.get() with NumPy instead"
        )
    if unknown:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(unknown)}")
    for d in range(x.ndim):
        before, after = (int(v) for v in widths[d])
        if not before and not after:
            continue
        n = x.shape[d]
        if mode != "constant" and n == 0:
            raise ValueError(f"can't extend empty axis {d} using modes other than 'constant' or 'empty'")
        if mode in _PAD_STATS:
            x = _pad_with_stats(x, d, (before, after), lengths[d], mode)
        elif mode == "linear_ramp":
            x = _pad_ramps(x, d, (before, after), ends[d])
        elif mode != "constant" and odd and n > 1:
            x = _pad_odd(x, d, (before, after), mode == "symmetric")
        elif mode != "constant":
            x = LazyArray(build.pad(x._node, d, before, after, mode))
        elif n == 0 or x.size == 0:  # (nothing to read: the values alone)
            pieces = [full(x.shape[:d] + (w,) + x.shape[d + 1:], v, x.dtype) for w, v in zip((before, after), values[d], strict=True) if w]
            x = concatenate(pieces[:1] + [x] + pieces[1:], d)
        else:  # the edge's value inside, the constant outside (a corner takes the last axis's, as NumPy's)
            edge = LazyArray(build.pad(x._node, d, before, after, "edge", masked=True))
            at = arange(n + before + after, dtype=np.int32 if n + before + after < 2**31 else np.int64)
            at = at.reshape((-1,) + (1,) * (x.ndim - d - 1))
            x = edge
            if after:
                x = where(at >= before + n, full((), values[d][1], x.dtype), x)
            if before:
                x = where(at < before, full((), values[d][0], x.dtype), x)
    return x.copy() if x is array else x  # (a new array object, as NumPy's)


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """True if the two arrays have the same shape and elements (NumPy's ``array_equal``;
    ``equal_nan`` counts NaNs in the same places as equal). Evaluates.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.array_equal(sl.asarray(np.array([1.0, np.nan])), np.array([1.0, np.nan]), equal_nan=True)
        True
    """
    x, y = asarray(a1), asarray(a2)
    if x.shape != y.shape:
        return False
    eq = x == y
    if equal_nan and (is_float(x.dtype) or is_float(y.dtype)):
        eq = eq | (isnan(x) & isnan(y))
    return bool(eq.all())


def array_equiv(a1: Any, a2: Any) -> bool:
    """True if the arrays broadcast to one shape and are equal elementwise (NumPy's
    ``array_equiv``). Evaluates.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.array_equiv(sl.asarray(np.array([[1, 2], [1, 2]])), [1, 2])
        True
    """
    x, y = asarray(a1), asarray(a2)
    try:
        build.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return bool((x == y).all())


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Any:
    """The (weighted) average along ``axis`` (NumPy's ``average``): ``sum(a * w) / sum(w)`` in
    NumPy's result dtype (float64 for integer ``a``), the mean without ``weights``; 1-d weights
    along one ``axis`` are broadcast. ``returned=True`` also gives the sum of the weights. Weights
    that sum to zero give NaN or inf where NumPy raises ``ZeroDivisionError`` (that check would need
    the values).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.average(sl.asarray(np.array([1.0, 2.0, 4.0])), weights=[1, 1, 2]).get()
        array(2.75)
    """
    x = asarray(a)
    if weights is None:
        avg = x.mean(axis, keepdims=keepdims)
        scl = full(avg.shape, x.size // max(avg.size, 1) if avg.size else 0, avg.dtype)
        return (avg, scl) if returned else avg
    w = asarray(weights)
    build.normalize_axes(axis, x.ndim)  # (NumPy's AxisError first, 0-d data included)
    if x.dtype.kind in "iub":
        dt = np.result_type(x.dtype, w.dtype, np.float64)
    else:
        dt = np.result_type(x.dtype, w.dtype)
    if x.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        ax = build.normalize_axis(axis, x.ndim)
        if w.shape[0] != x.shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = w.reshape((1,) * ax + (-1,) + (1,) * (x.ndim - ax - 1))
        w = broadcast_to(w, x.shape)
    x, w = x.astype(dt), w.astype(dt)
    scl = w.sum(axis, keepdims=keepdims)
    avg = (x * w).sum(axis, keepdims=keepdims) / scl
    return (avg, broadcast_to(scl, avg.shape)) if returned else avg



# --- stacking ------------------------------------------------------------------------------------
def _join(name: str, arrays: Any, axis: int, dtype: Any, casting: str) -> LazyArray:
    """:func:`~stitchlab.concatenate` of ``arrays`` (already of the joined rank) with NumPy's
    ``dtype`` and ``casting`` arguments."""
    return concatenate(joined(name, arrays, dtype, casting), axis)


def _sequence(name: str, tup: Any) -> list[LazyArray]:
    if isinstance(tup, LazyArray) or not isinstance(tup, (list, tuple)):
        raise TypeError(f"{name}: arrays to stack must be passed as a sequence (list or tuple), got {type(tup).__name__}")
    if not tup:
        raise ValueError("need at least one array to concatenate")
    return [asarray(a) for a in tup]


def atleast_3d(*arys: Any) -> LazyArray | tuple[LazyArray, ...]:
    """Each argument as an array of at least three dimensions (NumPy's ``atleast_3d``): a scalar
    becomes ``(1, 1, 1)``, a 1-d array of length n ``(1, n, 1)``, an ``(m, n)`` array ``(m, n, 1)``.

    Returns:
        One lazy array for one argument, else a tuple of them.

    Example:
        >>> import stitchlab as sl
        >>> sl.atleast_3d(sl.zeros(3)).shape, sl.atleast_3d(sl.zeros((2, 3))).shape
        ((1, 3, 1), (2, 3, 1))
    """
    out = []
    for ary in arys:
        x = asarray(ary)
        if x.ndim < 3:
            x = x.reshape({0: (1, 1, 1), 1: (1, x.size, 1), 2: (*x.shape, 1)}[x.ndim])
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> LazyArray:
    """Stack arrays row-wise (NumPy's ``vstack``): 1-d arrays become rows, then a
    :func:`~stitchlab.concatenate` along the first axis.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.vstack([sl.asarray(np.array([1, 2])), np.array([3, 4])]).get()
        array([[1, 2],
               [3, 4]])
    """
    arrays = _sequence("vstack", tup)
    return _join("vstack", [atleast_2d(x) for x in arrays], 0, dtype, casting)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> LazyArray:
    """Stack arrays column-wise (NumPy's ``hstack``): 1-d arrays end to end, others along the
    second axis.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.hstack([sl.asarray(np.array([1, 2])), np.array([3])]).get()
        array([1, 2, 3])
    """
    arrays = [atleast_1d(x) for x in _sequence("hstack", tup)]
    return _join("hstack", arrays, 0 if arrays[0].ndim == 1 else 1, dtype, casting)


def dstack(tup: Any) -> LazyArray:
    """Stack arrays depth-wise, along a third axis (NumPy's ``dstack``; see :func:`atleast_3d`).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.dstack([sl.asarray(np.array([1, 2])), np.array([3, 4])]).shape
        (1, 2, 2)
    """
    return concatenate([atleast_3d(x) for x in _sequence("dstack", tup)], 2)


def column_stack(tup: Any) -> LazyArray:
    """Stack 1-d arrays as the columns of a 2-d array (NumPy's ``column_stack``); 2-d arrays are
    joined along their second axis as they are.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.column_stack([sl.asarray(np.array([1, 2])), np.array([3, 4])]).get()
        array([[1, 3],
               [2, 4]])
    """
    arrays = []
    for x in _sequence("column_stack", tup):
        arrays.append(x.reshape(-1, 1) if x.ndim == 1 else x.reshape(1, 1) if x.ndim == 0 else x)
    return concatenate(arrays, 1)


# --- products --------------------------------------------------------------------------------
def kron(a: Any, b: Any) -> LazyArray:
    """Kronecker product (NumPy's ``kron``): blocks of ``b`` scaled by the elements of ``a``, a
    broadcast product and a reshape that fuse with their use.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.kron(sl.asarray(np.array([1, 10])), np.array([1, 2, 3])).get()
        array([ 1,  2,  3, 10, 20, 30])
    """
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    nd = max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    # a on the even axes, b on the odd ones of a 2*nd-axis product, then pairs merged
    xe = x.reshape(tuple(d for s in xs for d in (s, 1)))
    ye = y.reshape(tuple(d for s in ys for d in (1, s)))
    return (xe * ye).reshape(tuple(p * q for p, q in zip(xs, ys, strict=True)))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> LazyArray:
    """Cross product of vectors of 3 (or 2) components along ``axisa`` and ``axisb`` (NumPy's
    ``cross``), broadcast over the other axes; the result's vectors lie along ``axisc``. ``axis``,
    if given, sets all three. Two 2-vectors give the z component alone (NumPy 2 deprecates that);
    a 2-vector with a 3-vector takes its z as 0.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.cross(sl.asarray(np.array([1.0, 0.0, 0.0])), np.array([0.0, 1.0, 0.0])).get()
        array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = moveaxis(asarray(a), axisa, -1), moveaxis(asarray(b), axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        warnings.warn(
            "Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors instead. (deprecated in NumPy 2.0)",
            DeprecationWarning, stacklevel=2,
        )
    x0, x1, y0, y1 = x[..., 0], x[..., 1], y[..., 0], y[..., 1]
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x0 * y1 - x1 * y0
    shape = build.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    if x.shape[-1] == 3 and y.shape[-1] == 3:
        x2, y2 = x[..., 2], y[..., 2]
        parts = [x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0]
    elif x.shape[-1] == 2:  # x's z is 0
        y2 = y[..., 2]
        parts = [x1 * y2, -(x0 * y2), x0 * y1 - x1 * y0]
    else:  # y's z is 0
        x2 = x[..., 2]
        parts = [-(x2 * y1), x2 * y0, x0 * y1 - x1 * y0]
    return moveaxis(stack([broadcast_to(p, shape) for p in parts], -1), -1, axisc)


# --- statistics ------------------------------------------------------------------------------
def _host_weights(name: str, w: Any, n: int) -> np.ndarray:
    """Frequency or analytic weights as host floats, checked as NumPy's ``cov`` checks them, in
    its order (the normalization needs their sum as a value)."""
    w = np.asarray(w, dtype=float)
    if name == "fweights" and not np.all(w == np.around(w)):
        raise TypeError("fweights must be integer")
    if w.ndim == 0:  # (NumPy's IndexError, from reading the length of a 0-d array)
        raise IndexError(f"cov: {name}={w.item()!r} is a single number; give one weight per observation ({n})")
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if np.any(w < 0):
        raise ValueError(f"{name} cannot be negative")
    return w


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None, fweights: Any = None,
        aweights: Any = None, *, dtype: Any = None) -> LazyArray:
    """Covariance matrix of the variables in the rows of ``m`` (columns with ``rowvar=False``),
    NumPy's ``cov``: in float64 unless ``dtype`` says otherwise, normalized by ``N - 1`` (``N``
    with ``bias=True``, ``N - ddof`` given ``ddof``); ``fweights`` and ``aweights`` weight the
    observations (read as host values: the normalization needs their sum). The centred
    observations' product is one matrix product (cuBLAS through CuPy on the GPU).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.cov(sl.asarray(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))).get()
        array([[ 1., -1.],
               [-1.,  1.]])
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = asarray(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    other = None if y is None else asarray(y)
    if other is not None and other.ndim > 2:
        raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dt = np.result_type(x.dtype, np.float64) if other is None else np.result_type(x.dtype, other.dtype, np.float64)
    else:
        dt = as_dtype(dtype)
    if dt.kind != "f":  # NumPy fails the same way, centring in place
        raise TypeError(f"cov: cannot hold the covariance in dtype {dt} (the centred values are floats); pass a float dtype")
    X = atleast_2d(x).astype(dt)  # noqa: N806 (NumPy's names)
    if not rowvar and x.ndim != 1:
        X = X.T  # noqa: N806
    if X.shape[0] == 0:
        return full((0, 0), np.nan, np.float64)
    if other is not None:
        Y = atleast_2d(other).astype(dt)  # noqa: N806
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T  # noqa: N806
        X = concatenate([X, Y], 0)  # noqa: N806
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = _host_weights("fweights", fweights, X.shape[1])
    aw = None if aweights is None else _host_weights("aweights", aweights, X.shape[1])
    if aw is not None:
        w = aw if w is None else w * aw
    if w is None:
        fact = X.shape[1] - ddof
        centred = X - X.mean(1, keepdims=True)
        other_factor = centred
    else:  # float64 weights: NumPy's average and product take their dtype
        w_sum = float(w.sum())
        if w_sum == 0:  # NumPy's average refuses them, for fweights and aweights alike
            raise ZeroDivisionError("Weights sum to zero, can't be normalized (cov: the fweights and aweights "
                                    "products must not all be 0)")
        fact = w_sum if ddof == 0 else w_sum - ddof if aw is None else w_sum - ddof * float((w * aw).sum()) / w_sum
        wl = asarray(w)
        centred = (X - average(X, 1, wl)[:, None]).astype(dt)
        other_factor = centred * wl
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    with np.errstate(divide="ignore"):
        scale = np.true_divide(1, fact)  # a float64 scalar, as NumPy scales in place
    c = matmul(centred, other_factor.T)
    return (c * scale).astype(c.dtype).squeeze()


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> LazyArray:
    """Pearson correlation coefficients (NumPy's ``corrcoef``): :func:`cov` divided by the outer
    product of the standard deviations, clipped to [-1, 1].

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.corrcoef(sl.asarray(np.array([[0.0, 1.0, 2.0], [4.0, 2.0, 0.0]]))).get()
        array([[ 1., -1.],
               [-1.,  1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:  # one variable: NaN where its variance is NaN, inf or 0, else 1
        return c / c
    stddev = sqrt(diagonal(c))
    c = c / stddev[:, None] / stddev[None, :]
    return c.clip(-1, 1)


#: the longest filter ``convolve``/``correlate`` write as shifted views summed in one kernel; a
#: longer shorter operand runs the array library's convolution on the evaluated arrays
LAZY_FILTER = 32


def convolve(a: Any, v: Any, mode: str = "full") -> LazyArray:
    """The discrete linear convolution of two 1-d arrays (NumPy's ``convolve``, its modes
    ``"full"``, ``"same"``, ``"valid"`` or their codes 2, 1, 0, and its dtypes). Where the shorter
    one has at most ``LAZY_FILTER`` (32) elements the result is lazy: that many shifted views of the longer one,
    weighted and summed, fused into one kernel with the work around them (``"same"`` and
    ``"full"`` pad each weighted view with zeros, :func:`pad`, so that a NaN or inf weight meets
    only the elements NumPy multiplies it by); a 0-d operand is one element, as NumPy's. A float16
    result is summed in float32 and rounded once, as NumPy's float16 loop does. The sum runs in
    another order than NumPy's, so float results can differ in the last bits. Longer filters
    evaluate both arrays and run the array library's ``convolve``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.convolve(sl.asarray(np.array([1.0, 2.0, 3.0])), sl.asarray(np.array([0.0, 1.0, 0.5]))).get()
        array([0. , 1. , 2.5, 4. , 1.5])
    """
    mode = _conv_mode(mode)
    x, w = _conv_inputs(a, v, mode, ndmin=1)
    if build.result_type(x._node, w._node) == np.float16:  # NumPy's float16 loop sums in float32
        return convolve(x.astype(np.float32), w.astype(np.float32), mode).astype(np.float16)
    if w.shape[0] > x.shape[0]:  # NumPy swaps them too: the longer one is slid over
        x, w = w, x
    n, m = x.shape[0], w.shape[0]
    if m > LAZY_FILTER:
        (bx, bw), xp = _evaluated("convolve", x, w, why="its filter is longer than LAZY_FILTER")
        return _leaf_on(x, xp.convolve(bx, bw, mode))
    # output j of the full convolution is sum_k w[k] * x[j - k] over the k with 0 <= j - k < n, as
    # NumPy sums it from +0.0: each term is w[k] times the view of x it meets, padded with zeros
    # to the mode's range after the multiply (a NaN or inf in w never meets a padded zero: NaN
    # where NumPy has a number); "valid" pads nothing. The terms are views, fused into one kernel
    start, length = {"full": (0, n + m - 1), "same": ((m - 1) // 2, n), "valid": (m - 1, n - m + 1)}[mode]
    out = None
    for k in range(m):
        lo, hi = max(start, k), min(start + length, k + n)
        if lo >= hi:
            continue
        term = w[k] * x[lo - k: hi - k]
        if lo > start or hi < start + length:
            term = pad(term, (lo - start, start + length - hi))
        out = term if out is None else out + term
    return out + 0.0 if is_float(out.dtype) else out  # (-0.0 + 0.0 is +0.0, as NumPy's sum from +0.0)


def correlate(a: Any, v: Any, mode: str = "valid") -> LazyArray:
    """The cross-correlation of two 1-d arrays, ``c[k] = sum_n a[n + k] * v[n]`` (NumPy's
    ``correlate``, its modes, ``"valid"`` by default); lazy or evaluated as :func:`convolve`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.correlate(sl.asarray(np.array([1.0, 2.0, 3.0])), sl.asarray(np.array([0.0, 1.0, 0.5])), "full").get()
        array([0.5, 2. , 3.5, 3. , 0. ])
    """
    mode = _conv_mode(mode)
    x, w = _conv_inputs(a, v, mode)
    if w.shape[0] > x.shape[0]:  # NumPy: the reversed correlation of the swapped pair
        return flip(correlate(w, x, mode), 0)
    return convolve(x, flip(w, 0), mode)


#: convolve's and correlate's modes by NumPy's integer code (0, 1, 2)
_CONV_MODES = ("valid", "same", "full")


def _conv_mode(mode: Any) -> str:
    """``mode`` by name, NumPy's way: ``"valid"``, ``"same"``, ``"full"`` or their integer codes
    0, 1, 2 (a bool or a float is no code: TypeError)."""
    if isinstance(mode, str):
        if mode not in _CONV_MODES:
            raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
        return mode
    if isinstance(mode, int | np.integer) and not isinstance(mode, bool):
        if not 0 <= mode <= 2:
            raise ValueError(f"integer convolve/correlate mode must be 0, 1, or 2 (got {mode}: 0 'valid', 1 'same', 2 'full')")
        return _CONV_MODES[int(mode)]
    raise TypeError(f"convolve/correlate mode not understood (got {mode!r}); give 'valid', 'same' or 'full'")


def _conv_inputs(a: Any, v: Any, mode: str, ndmin: int = 0) -> tuple[LazyArray, LazyArray]:
    """``a`` and ``v`` with NumPy's checks: 1-d, not empty (and a known ``mode``, :func:`_conv_mode`).
    ``ndmin=1`` takes a 0-d operand as one element (NumPy's ``convolve`` does; its ``correlate``
    refuses it)."""
    _conv_mode(mode)
    x, w = asarray(a), asarray(v)
    if ndmin:
        x, w = (arr.reshape(1) if arr.ndim == 0 else arr for arr in (x, w))
    for arr, name in ((x, "a"), (w, "v")):
        if arr.ndim != 1:
            raise ValueError(f"object too deep for desired array ({name} has {arr.ndim} dimensions; convolve and "
                             "correlate take 1-d arrays)" if arr.ndim > 1 else "object of too small depth for desired array")
        if arr.shape[0] == 0:
            raise ValueError(f"{name} cannot be empty")
    return x, w


def polyval(p: Any, x: Any) -> LazyArray:
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` (NumPy's
    ``polyval``): Horner's rule, ``y = y * x + p[i]`` from ``y = zeros_like(x)``, in NumPy's order
    and dtypes. Lazy: one kernel with the work around it.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.polyval([3, 0, 1], sl.asarray(np.array([1.0, 2.0]))).get()
        array([ 4., 13.])
    """
    c, v = asarray(p), asarray(x)
    if c.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    y = full(v.shape, 0, v.dtype)
    for i in range(c.shape[0]):
        y = y * v + c[i]
    return y


def _coefficients(*ps: Any) -> list[LazyArray]:
    """Polynomial coefficients as NumPy's ``atleast_1d`` makes them."""
    out = [asarray(p) for p in ps]
    return [c.reshape((1,)) if c.ndim == 0 else c for c in out]


def _aligned(a1: Any, a2: Any) -> tuple[LazyArray, LazyArray]:
    """Two coefficient arrays, the shorter one with zeros in front (its highest powers)."""
    a, b = _coefficients(a1, a2)
    diff = b.shape[0] - a.shape[0]
    if diff > 0:
        a = concatenate([full((diff,) + a.shape[1:], 0, a.dtype), a])
    elif diff < 0:
        b = concatenate([full((-diff,) + b.shape[1:], 0, b.dtype), b])
    return a, b


def polyadd(a1: Any, a2: Any) -> LazyArray:
    """The sum of two polynomials, coefficients highest power first (NumPy's ``polyadd``: the
    shorter one padded in front with zeros). Lazy.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.polyadd(sl.asarray(np.array([1, 2])), [9, 5, 4]).get()
        array([9, 6, 6])
    """
    a, b = _aligned(a1, a2)
    return a + b


def polysub(a1: Any, a2: Any) -> LazyArray:
    """``a1 - a2`` of two polynomials (NumPy's ``polysub``). Lazy."""
    a, b = _aligned(a1, a2)
    return a - b


def polymul(a1: Any, a2: Any) -> LazyArray:
    """The product of two polynomials: the convolution of their coefficients (NumPy's
    ``polymul``; :func:`convolve`) after NumPy's ``poly1d`` drops their leading zeros (none left:
    the polynomial ``[0]``). Where the zeros end depends on the values, so the coefficients are
    evaluated to find it; the product is lazy.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.polymul(sl.asarray(np.array([0, 0, 1, 2])), [3, 1]).get()
        array([3, 7, 2])
    """
    a, b = _coefficients(a1, a2)
    for c in (a, b):
        if c.ndim > 1:
            raise ValueError(f"Polynomial must be 1d only (got coefficients of shape {c.shape}); give a 1-d array")
    nonzeros, _ = _evaluated("polymul", a != 0, b != 0, why="NumPy's polymul drops the leading zero coefficients, "
                             "so the length of its result depends on the values")
    a, b = (c[int(nz.argmax()):] if bool(nz.any()) else full((1,), 0, c.dtype) for c, nz in zip((a, b), nonzeros, strict=True))
    return convolve(a, b)


def _one_d_coefficients(p: Any, name: str) -> LazyArray:
    """``p`` as an array of coefficients that has a length: a 0-d one raises NumPy's TypeError."""
    c = asarray(p)
    if c.ndim == 0:
        raise TypeError(f"{name}: len() of unsized object (got 0-d coefficients {p!r}); give a 1-d array, "
                        "highest power first")
    return c


def polyder(p: Any, m: int = 1) -> LazyArray:
    """The ``m``-th derivative of a polynomial (NumPy's ``polyder``): each coefficient times its
    power, ``m`` times. Lazy."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    c = _one_d_coefficients(p, "polyder")
    # each step drops a coefficient; past the last one the result stays NumPy's empty array (whose
    # dtype the first step set), so at most len(p) + 1 steps are built (m=10**20 in no time; NumPy's
    # recursion stops at its depth limit there)
    for _ in range(min(m, c.shape[0] + 1)):
        n = c.shape[0] - 1
        c = c[:-1] * arange(n, 0, -1)
    return c.copy() if m == 0 else c  # (a new array, as every function's result: assignment rebinds arrays)


def polyint(p: Any, m: int = 1, k: Any = None) -> LazyArray:
    """The ``m``-th antiderivative of a polynomial with integration constants ``k`` (one number
    for all, or ``m`` of them, the first integration's first; NumPy's ``polyint``): each
    coefficient divided by its power plus one, the constant appended. Lazy."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = np.zeros(m, float) if k is None else np.atleast_1d(np.asarray(k))
    if len(ks) == 1 and m > 1:
        ks = ks[0] * np.ones(m, float)
    if len(ks) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    c = _one_d_coefficients(p, "polyint") if m else asarray(p)  # (NumPy returns p for m=0 before it takes a length)
    for j in range(m):
        c = concatenate([c / arange(c.shape[0], 0, -1), asarray(np.asarray([ks[j]]))])
    return c.copy() if m == 0 else c


def polydiv(u: Any, v: Any) -> tuple[LazyArray, LazyArray]:
    """The quotient and remainder of polynomial division (NumPy's ``polydiv``). Its long division
    steps on each coefficient and drops leading remainder terms within ``1e-14`` of zero, so it
    evaluates both and runs NumPy on host copies (coefficient arrays are short); the results are
    arrays on ``u``'s device."""
    a, b = _coefficients(u, v)
    q, r = np.polydiv(np.asarray(a), np.asarray(b))
    return _leaf_on(a, q), _leaf_on(a, r)


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None, cov: Any = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through the points ``(x, y)`` (NumPy's
    ``polyfit``: ``y`` one set of values or a column per set, weights ``w``, ``full`` for the
    residuals, rank, singular values and ``rcond``, ``cov`` for the coefficients' covariance,
    ``"unscaled"`` without the residual factor): the Vandermonde matrix, its columns scaled to unit
    norm and :func:`stitchlab.linalg.lstsq` (evaluated). A rank below ``deg + 1`` warns NumPy's
    ``RankWarning``."""
    from .linalg import inv, lstsq

    order = int(deg) + 1
    xs, ys = asarray(x) + 0.0, asarray(y) + 0.0  # (NumPy's: integers to float64)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xs.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xs.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ys.ndim < 1 or ys.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xs.shape[0] != ys.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = xs.shape[0] * np.finfo(xs.dtype).eps  # (a NumPy scalar of x's float dtype, as NumPy's)
    lhs, rhs = vander(xs, order), ys
    if w is not None:
        ws = asarray(w) + 0.0
        if ws.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if ws.shape[0] != ys.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * ws[:, None]
        rhs = rhs * ws if rhs.ndim == 1 else rhs * ws[:, None]
    scale = ((lhs * lhs).sum(axis=0)) ** 0.5
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = inv(lhs.T @ lhs) / outer(scale, scale)
    if cov == "unscaled":
        fac = 1
    else:
        if xs.shape[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the covariance matrix")
        fac = resids / (xs.shape[0] - order)
    if ys.ndim == 1:
        return c, base * fac
    return c, base[:, :, None] * fac


def vander(x: Any, N: int | None = None, increasing: bool = False) -> LazyArray:  # noqa: N803 (NumPy's name)
    """The Vandermonde matrix of the 1-d ``x``: columns ``x**(N-1) ... x**0`` (``increasing``:
    the other way round), NumPy's ``vander`` with its dtype (``x``'s promoted with int64) and its
    products (each power the previous one times ``x``, a cumulative product).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.vander(sl.asarray(np.array([1, 2, 3])), 3).get()
        array([[1, 1, 1],
               [4, 2, 1],
               [9, 3, 1]])
    """
    v = asarray(x)
    if v.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = v.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError(f"negative dimensions are not allowed (N={n})")
    dt, rows = np.promote_types(v.dtype, np.int64), v.shape[0]
    if n == 0:
        return full((rows, 0), 0, dt)
    out = full((rows, 1), 1, dt)
    if n > 1:
        powers = cumprod(broadcast_to(v.astype(dt).reshape(-1, 1), (rows, n - 1)), axis=1)
        out = concatenate([out, powers], axis=1)
    return out if increasing else flip(out, 1)


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * math.pi) -> LazyArray:
    """``p`` with every jump between neighbours along ``axis`` larger than ``discont`` (default
    ``period / 2``) taken back by a multiple of ``period`` (NumPy's ``unwrap``, integer periods
    too): the wrapped differences, their cumulative sum (a scan step) and NumPy's dtypes.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.unwrap(sl.asarray(np.array([0.0, 3.0, 6.5, 0.5]))).round(3).get()
        array([0.   , 3.   , 0.217, 0.5  ])
    """
    x = asarray(p)
    ax = build.normalize_axis(axis, x.ndim)
    dd = diff(x, axis=ax)
    if discont is None:
        discont = period / 2
    dt = np.result_type(dd.dtype, period)
    if dt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = ((dd - low) % period + low).astype(dt)
    if ambiguous:
        ddmod = where((ddmod == low) & (dd > 0), high, ddmod).astype(dt)
    correct = where(abs(dd) < discont, 0, ddmod - dd).astype(np.result_type(ddmod.dtype, dd.dtype))
    first = tuple(slice(0, 1) if i == ax else slice(None) for i in range(x.ndim))
    rest = tuple(slice(1, None) if i == ax else slice(None) for i in range(x.ndim))
    return concatenate([x[first].astype(dt), (x[rest] + cumsum(correct, axis=ax)).astype(dt)], axis=ax)


def ix_(*args: Any) -> tuple[LazyArray, ...]:
    """Open-mesh index arrays from 1-d sequences (NumPy's ``ix_``): the ``k``-th shaped to run
    along axis ``k``; a boolean sequence stands for its true positions (evaluated, as
    :func:`nonzero`).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> rows, cols = sl.ix_([0, 1], [2, 4])
        >>> rows.shape, cols.shape
        ((2, 1), (1, 2))
    """
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        v = asarray(a)
        if v.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if v.size == 0 and not isinstance(a, (np.ndarray, LazyArray)):
            v = v.astype(np.intp)  # (NumPy's: an empty list is no positions, not float64; an array keeps its dtype)
        if v.dtype == np.bool_:
            (v,) = nonzero(v)
        out.append(v.reshape((1,) * k + (v.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)


def _index_arrays(arrays: tuple[np.ndarray, ...]) -> tuple[LazyArray, ...]:
    return tuple(asarray(np.asarray(a, dtype=np.int64)) for a in arrays)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[LazyArray, LazyArray]:
    """The (row, column) positions at and below the ``k``-th diagonal of an ``n`` × ``m`` array
    (NumPy's ``tril_indices``; int64 arrays, made on the host: their length depends on ``n``,
    ``m`` and ``k`` only).

    Example:
        >>> import stitchlab as sl
        >>> rows, cols = sl.tril_indices(2)
        >>> rows.get(), cols.get()
        (array([0, 1, 1]), array([0, 0, 1]))
    """
    return _index_arrays(np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[LazyArray, LazyArray]:
    """The (row, column) positions at and above the ``k``-th diagonal (NumPy's ``triu_indices``)."""
    return _index_arrays(np.triu_indices(n, k, m))


def _matrix_shape(arr: Any) -> tuple[int, ...]:
    shape = asarray(arr).shape
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[LazyArray, LazyArray]:
    """:func:`tril_indices` for ``arr``'s 2-d shape (NumPy's ``tril_indices_from``)."""
    rows, cols = _matrix_shape(arr)
    return tril_indices(rows, k, cols)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[LazyArray, LazyArray]:
    """:func:`triu_indices` for ``arr``'s 2-d shape (NumPy's ``triu_indices_from``)."""
    rows, cols = _matrix_shape(arr)
    return triu_indices(rows, k, cols)


def diag_indices(n: int, ndim: int = 2) -> tuple[LazyArray, ...]:
    """``ndim`` copies of ``arange(n)``: the positions of the main diagonal of an ``n``-wide
    array of ``ndim`` axes (NumPy's ``diag_indices``)."""
    idx = arange(operator.index(n), dtype=np.int64)
    return (idx,) * ndim


def diag_indices_from(arr: Any) -> tuple[LazyArray, ...]:
    """:func:`diag_indices` for ``arr``, whose axes must all have one length (NumPy's ``diag_indices_from``)."""
    shape = asarray(arr).shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def _along(arr: Any, obj: Any, axis: Any) -> tuple[LazyArray, int, Any]:
    """``delete``'s and ``insert``'s operands: the array (flattened for ``axis=None``), the axis,
    and ``obj`` on the host (a device array read back)."""
    x = asarray(arr)
    if axis is None:
        x, ax = x.reshape(-1), 0
    else:
        ax = build.normalize_axis(axis, x.ndim)
    if on_device(obj):
        obj = obj.get()
    return x, ax, obj


def delete(arr: Any, obj: Any, axis: Any = None) -> LazyArray:
    """``arr`` without the entries ``obj`` along ``axis`` (None: of the flattened array), NumPy's
    ``delete``: ``obj`` an int, a slice, a sequence of ints or a boolean mask, with NumPy's errors.
    The kept positions are worked out on the host (NumPy's own ``delete`` of the positions: a
    device ``obj`` is read back first); the result is a gather step (:func:`take`).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.delete(sl.asarray(np.arange(6.0).reshape(2, 3)), [0, 2], axis=1).get()
        array([[1.],
               [4.]])
    """
    x, ax, obj = _along(arr, obj, axis)
    positions = np.arange(x.shape[ax]).reshape((1,) * ax + (-1,) + (1,) * (x.ndim - ax - 1))
    kept = np.delete(positions, obj, axis=ax).reshape(-1)  # NumPy's checks and errors, on positions only
    return take(x, kept, axis=ax)


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> LazyArray:
    """``arr`` with ``values`` inserted before the positions ``obj`` along ``axis`` (None: of the
    flattened array), NumPy's ``insert``: ``obj`` an int (``values`` then adds as many entries as
    its extent along ``axis``), a slice or a sequence of ints (one entry each, ``values``
    broadcast to them as NumPy's assignment through an index array broadcasts: an empty
    ``values`` may have leading axes of any extent); ``values`` are cast to ``arr``'s dtype as
    NumPy casts them, after the positions are checked. The order of the result is worked out on
    the host (NumPy's ``insert`` of the positions: a device ``obj`` is read back first); the
    result is one gather step (:func:`take`) from ``arr`` and the values.

    Raises:
        IndexError: a position outside ``[-n, n]`` for an axis of ``n`` entries.
        ValueError: ``obj`` of more than one dimension, a list of booleans, or a boolean NumPy
            array (a mask: an entry before each True position, as NumPy 2's) of other than one.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.insert(sl.asarray(np.arange(6.0).reshape(2, 3)), 1, [7, 8], axis=1).get()
        array([[0., 7., 1., 2.],
               [3., 8., 4., 5.]])
    """
    x, ax, obj = _along(arr, obj, axis)
    n = x.shape[ax]
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n))
    else:
        indices = np.asarray(obj)
        if indices.dtype == bool and not isinstance(obj, np.ndarray):  # (NumPy 2.4 raises AttributeError)
            raise ValueError("insert: obj is a list of booleans; give a NumPy boolean array (a mask) or the "
                             "positions to insert before (np.flatnonzero(mask))")
        if indices.dtype == bool:  # (NumPy 2's mask: one entry before each True position)
            if indices.ndim != 1:
                raise ValueError(f"boolean array argument obj to insert must be one dimensional (got shape "
                                 f"{indices.shape})")
            indices = np.flatnonzero(indices)
        if indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or scalar")
        if indices.size == 0:
            indices = indices.astype(np.intp)
        bad = indices[(indices < -n) | (indices > n)]
        if bad.size:
            raise IndexError(f"index {bad.reshape(-1)[0]} is out of bounds for axis {ax} with size {n}")
        if indices.size != 1:  # (one position is checked after the values, as NumPy slices there)
            build.check_index_dtype(indices.dtype)
    # (the values after the positions, as NumPy's order of errors)
    if isinstance(values, LazyArray):
        v = values.astype(x.dtype)
    else:  # (NumPy's cast of the values, with its errors: 300 into uint8 raises OverflowError)
        host = values.get() if hasattr(values, "__cuda_array_interface__") else values
        try:
            v = _leaf_on(x, np.array(host, dtype=x.dtype))
        except OverflowError:
            check_python_ints(host, x.dtype)  # (names a Python int past 64 bits, which NumPy's message does not)
            raise
    if indices.dtype.kind not in "iu":
        raise TypeError(f"insert: obj {obj!r} is not a position; give an integer (int({obj!r}))")
    if indices.size == 1:  # one position (a slice of one too): as many entries as values has
        shape = (1,) * (x.ndim - v.ndim) + v.shape  # (NumPy's ndmin)
        v = v.reshape(shape)
        if indices.ndim == 0:
            v = moveaxis(v, 0, ax)
        count = v.shape[ax]
    else:
        count = indices.size
    block = x.shape[:ax] + (count,) + x.shape[ax + 1:]
    try:  # (NumPy assigns the values into a slice for one position, with an index array for others)
        v = _fitted(v, block, advanced=indices.size != 1)
    except ValueError:
        raise ValueError(f"insert: values of shape {v.shape} do not broadcast to the {block} entries "
                         f"inserted") from None
    order = np.insert(np.arange(n), obj if isinstance(obj, slice) else indices, np.arange(n, n + count))
    return take(concatenate([x, v], axis=ax), order, axis=ax)


def ndim(a: Any) -> int:
    """The number of dimensions of ``a`` (NumPy's ``ndim``; a list or scalar is not copied).

    Example:
        >>> import stitchlab as sl
        >>> sl.ndim(sl.zeros((2, 3))), sl.ndim([[1, 2]]), sl.ndim(5)
        (2, 2, 0)
    """
    return a.ndim if isinstance(a, LazyArray) else int(np.ndim(a))


def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a`` (NumPy's ``shape``; a list or scalar is not copied).

    Example:
        >>> import stitchlab as sl
        >>> sl.shape(sl.zeros((2, 3))), sl.shape([[1, 2]])
        ((2, 3), (1, 2))
    """
    return a.shape if isinstance(a, LazyArray) else tuple(np.shape(a))


def size(a: Any, axis: Any = None) -> int:
    """The number of elements of ``a``, or its extent along ``axis`` (NumPy's ``size``; a tuple of
    axes gives the product of their extents).

    Example:
        >>> import stitchlab as sl
        >>> sl.size(sl.zeros((2, 3))), sl.size(sl.zeros((2, 3)), 1), sl.size(sl.zeros((2, 3, 4)), (0, 2))
        (6, 3, 8)
    """
    s = shape(a)
    if axis is None:
        return math.prod(s)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return math.prod(s[build.normalize_axis(int(ax), len(s))] for ax in axes)


def broadcast_shapes(*args: Any) -> tuple[int, ...]:
    """The shape that arrays of ``args``' shapes broadcast to (NumPy's ``broadcast_shapes``, whose
    ``ValueError`` names the shapes that do not broadcast).

    Example:
        >>> import stitchlab as sl
        >>> sl.broadcast_shapes((5, 1, 3), (4, 3), 1)
        (5, 4, 3)
    """
    return tuple(np.broadcast_shapes(*args))


def rollaxis(a: Any, axis: int, start: int = 0) -> LazyArray:
    """``a`` with ``axis`` moved to lie before position ``start`` (NumPy's ``rollaxis``, which
    :func:`moveaxis` supersedes): a view, fused with its use.

    Example:
        >>> import stitchlab as sl
        >>> sl.rollaxis(sl.zeros((3, 4, 5, 6)), 3, 1).shape
        (3, 6, 4, 5)
    """
    x = asarray(a)
    n = x.ndim
    axis = build.normalize_axis(operator.index(axis), n)
    start = operator.index(start)
    start += n if start < 0 else 0
    if not 0 <= start <= n:  # (NumPy's message names the start after adding n to a negative one)
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    return x[...] if axis == start else moveaxis(x, axis, start)  # (a view, as NumPy's)


def block(arrays: Any) -> LazyArray:
    """An array assembled from nested lists of blocks (NumPy's ``block``): the innermost lists are
    joined along the last axis, the lists that hold them along the one before, and so on; arrays
    with fewer dimensions than the nesting depth (or than the deepest array) gain leading axes of
    1 first. A join of a few blocks is fused into the kernel that reads it (:func:`concatenate`).

    Raises:
        TypeError: ``arrays`` holds a tuple (NumPy's message: lists only).
        ValueError: the lists are nested to different depths, or one is empty.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> a, b = sl.ones((2, 2)), sl.zeros((2, 1))
        >>> sl.block([[a, b], [sl.full((1, 3), 7.0)]]).get()
        array([[1., 1., 0.],
               [1., 1., 0.],
               [7., 7., 7.]])
    """
    def depth(x: Any, where: str) -> int:
        if isinstance(x, tuple):
            raise TypeError(f"{where} is a tuple. Only lists can be used to arrange blocks, and np.block does not "
                            "allow implicit conversion from tuple to ndarray.")
        if not isinstance(x, list):
            return 0
        if not x:
            raise ValueError(f"List at {where} cannot be empty")
        depths = [depth(v, f"{where}[{k}]") for k, v in enumerate(x)]
        if len(set(depths)) > 1:
            k = next(k for k, d in enumerate(depths) if d != depths[0])
            raise ValueError(f"List depths are mismatched. First element was at depth {depths[0] + 1}, but there is "
                             f"an element at depth {depths[k] + 1} ({where}[{k}])")
        return depths[0] + 1

    d = depth(arrays, "arrays")
    if d == 0:
        return asarray(arrays).copy()  # (NumPy copies)

    def leaves(x: Any) -> list[LazyArray]:
        return [v for item in x for v in leaves(item)] if isinstance(x, list) else [asarray(x)]

    nd = max(d, *(v.ndim for v in leaves(arrays)))

    def assemble(x: Any, level: int) -> LazyArray:
        if not isinstance(x, list):
            v = asarray(x)
            return v.reshape((1,) * (nd - v.ndim) + v.shape)
        return concatenate([assemble(v, level + 1) for v in x], axis=level - d)

    return assemble(arrays, 0)


def resize(a: Any, new_shape: Any) -> LazyArray:
    """``a`` flattened and repeated to fill ``new_shape`` (NumPy's ``resize``; an empty ``a`` gives
    zeros): a broadcast, a slice and a reshape, fused with its use.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.resize(sl.asarray(np.array([[0, 1], [2, 3]])), (2, 3)).get()
        array([[0, 1, 2],
               [3, 0, 1]])
    """
    x = asarray(a)
    shape_ = (operator.index(new_shape),) if isinstance(new_shape, (int, np.integer)) else tuple(operator.index(v) for v in new_shape)
    if any(v < 0 for v in shape_):
        raise ValueError("all elements of `new_shape` must be non-negative")
    total = math.prod(shape_)
    if x.size == 0 or total == 0:
        return full(shape_, 0, dtype=x.dtype)
    return tile(x.ravel(), -(-total // x.size))[:total].reshape(shape_).copy()  # (a new array, as NumPy's)


def apply_along_axis(func1d: Any, axis: int, arr: Any, *args: Any, **kwargs: Any) -> LazyArray:
    """``func1d(slice, *args, **kwargs)`` of every 1-D slice of ``arr`` along ``axis``, stacked
    where that axis was (NumPy's ``apply_along_axis``). ``arr`` is evaluated and the array library
    that holds it loops over the slices (CuPy's ``apply_along_axis`` on the GPU, NumPy's on the
    CPU), so ``func1d`` gets that library's arrays, as ``np.apply_along_axis`` on a stitchlab
    array gives it; the result is a stitchlab array on ``arr``'s device. (Slices built lazily
    would make one expression of every call, whose planning grows with the slice count: 18 s for
    100 row sums.) It cannot run inside ``sl.jit``; where the operation has an ``axis=`` form,
    that is one fused kernel instead of a loop.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.apply_along_axis(lambda r: r[0] + r[-1], 1, sl.asarray(np.arange(6).reshape(2, 3))).get()
        array([2, 8])
    """
    from .protocols import run_natively

    x = asarray(arr)
    return _leaf_on(x, run_natively(np.apply_along_axis, "apply_along_axis", (func1d, axis, x, *args), kwargs))


def apply_over_axes(func: Any, a: Any, axes: Any) -> LazyArray:
    """``func(a, axis)`` applied for each axis of ``axes`` in turn, each result the next ``a``
    (NumPy's ``apply_over_axes``): a result with one dimension fewer gets it back as length 1, so
    the dimension count stays ``a``'s.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.apply_over_axes(sl.sum, sl.asarray(np.arange(24).reshape(2, 3, 4)), [0, 2]).get()
        array([[[ 60],
                [ 92],
                [124]]])
    """
    from .api import expand_dims  # type: ignore[attr-defined]

    val = asarray(a)
    n = val.ndim
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = axis + n if axis < 0 else axis
        res = asarray(func(val, axis))
        if res.ndim == val.ndim - 1:
            res = expand_dims(res, axis)
        if res.ndim != val.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> LazyArray:
    """:func:`asarray`, after checking that a float array holds no infinity or NaN (NumPy's
    ``asarray_chkfinite``: ``ValueError`` otherwise). The check evaluates the array (one
    reduction, its answer read on the host), so it cannot run inside ``sl.jit``."""
    if order not in (None, "C", "A", "K"):
        raise ValueError(f"asarray_chkfinite(order={order!r}): stitchlab arrays are C-contiguous; use order='C', 'A', 'K' or None")
    from .api import isfinite  # type: ignore[attr-defined]

    x = asarray(a, dtype)
    if is_float(x.dtype) and not bool(isfinite(x).all()):
        raise ValueError("array must not contain infs or NaNs")
    return x


#: NumPy's ``require`` flags and their long names
_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F", "FORTRAN": "F",
                 "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O", "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a: Any, dtype: Any = None, requirements: Any = None) -> LazyArray:
    """``a`` as a stitchlab array of ``dtype`` that meets ``requirements`` (NumPy's ``require``):
    a stitchlab array is C-contiguous, aligned, writeable and an array, so these hold as they
    are; ``"O"`` (owns its data) gives a copy; ``"F"`` (Fortran order) cannot be met and raises."""
    x = asarray(a, dtype)
    if requirements is None:
        return x
    flags = set()
    for name in requirements:  # (a string is its letters, as in NumPy: "CW")
        if str(name).upper() not in _REQUIREMENTS:
            raise KeyError(f"require: unknown requirement {name!r}; NumPy's are {sorted(_REQUIREMENTS)}")
        flags.add(_REQUIREMENTS[str(name).upper()])
    if "F" in flags:
        raise ValueError("Cannot specify both C and F" if "C" in flags else
                         "require(requirements='F'): stitchlab arrays are C-contiguous; no Fortran-ordered array can be made")
    return x.copy() if "O" in flags else x


def isfortran(a: Any) -> bool:
    """Whether ``a`` is Fortran-contiguous and not C-contiguous (NumPy's ``isfortran``): never for
    a stitchlab array, which is written C-contiguous."""
    return False if isinstance(a, LazyArray) else bool(np.isfortran(a))


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works (NumPy's ``iterable``): a stitchlab array of at least one
    dimension, not a 0-d one."""
    return bool(np.iterable(y))


def real_if_close(a: Any, tol: Any = 100) -> LazyArray:
    """``a`` as it is (NumPy's ``real_if_close`` drops imaginary parts within ``tol`` machine
    epsilons of zero; stitchlab arrays are real)."""
    del tol
    return asarray(a)


def mask_indices(n: int, mask_func: Any, k: Any = 0) -> tuple[LazyArray, ...]:
    """The positions of the nonzero entries of ``mask_func(ones((n, n)), k)`` (NumPy's
    ``mask_indices``; ``mask_func`` such as :func:`triu` or :func:`tril`): int64 row and column
    arrays, evaluated (their length depends on the mask).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> rows, cols = sl.mask_indices(3, sl.triu, 1)
        >>> rows.get(), cols.get()
        (array([0, 0, 1]), array([1, 2, 2]))
    """
    m = full((n, n), 1, np.dtype(np.int64))
    return nonzero(not_equal(asarray(mask_func(m, k)), 0))


def poly(seq_of_zeros: Any) -> LazyArray:
    """The coefficients of the monic polynomial with the given roots, highest power first (NumPy's
    ``poly``); of a square matrix, its characteristic polynomial. Computed by NumPy on a host copy
    (the roots of a matrix are eigenvalues; no roots give a 0-d array of 1.0, where NumPy gives
    the float). Coefficients NumPy leaves complex (roots without their conjugates) raise
    ``TypeError``, stitchlab arrays being real."""
    x = asarray(seq_of_zeros)
    coefficients = np.poly(np.asarray(x))
    if np.iscomplexobj(coefficients):
        raise TypeError("poly: the roots give complex coefficients (a root without its conjugate); stitchlab arrays are real: "
                        "call numpy.poly on the host values")
    return _leaf_on(x, coefficients)
