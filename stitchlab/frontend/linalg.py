"""``stitchlab.linalg``: NumPy's ``linalg.norm``, built from lazy elementwise ops and reductions so
that a norm fuses with the work around it (``x / sl.linalg.norm(x, axis=-1, keepdims=True)`` is
one row kernel). Norms that need singular values (matrix ``ord`` 2, -2, ``"nuc"``) are not
provided.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ir.dtypes import is_float
from .api import absolute, sqrt  # type: ignore[attr-defined]
from .array import LazyArray
from .creation import asarray, full

__all__ = ["norm"]


def _max_or_zero(x: LazyArray, axis: tuple[int, ...], keepdims: bool) -> LazyArray:
    """NumPy's ``max(..., initial=0)`` of non-negative ``x``: zeros where ``axis`` is empty."""
    if all(x.shape[d] for d in axis):
        return x.max(axis, keepdims)
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
        return absolute(a).min(axes, keepdims)
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
    if ord in (2, -2, "nuc"):
        raise ValueError(
            f"linalg.norm: matrix ord={ord!r} needs singular values, which stitchlab does not compute; "
            f"use np.linalg.norm(x.get(), ...)"
        )
    if ord in (None, "fro", "f"):
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
