"""NumPy's index tricks with stitchlab arrays: ``sl.mgrid``, ``sl.ogrid``, ``sl.r_``, ``sl.c_``
(and NumPy's own ``s_``, ``index_exp``, ``ndindex``).

``sl.mgrid[0:4, 0:1:5j]`` builds its grids from positions, lazily, so they fuse into the kernel
that reads them; ``sl.r_[x, 0, 1:4]`` and ``sl.c_[x, y]`` join stitchlab, NumPy or CuPy arrays,
slices and scalars with ``sl.concatenate``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .api import concatenate, result_type, stack
from .array import LazyArray
from .creation import arange, asarray, broadcast_to, linspace

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "ndindex", "ndenumerate"]

s_ = type(np.s_)(maketuple=False)
"""NumPy's ``s_``: ``sl.s_[1:3, ::2]`` is the index ``(slice(1, 3), slice(None, None, 2))``."""
index_exp = type(np.index_exp)(maketuple=True)
"""NumPy's ``index_exp``: as :data:`s_`, always a tuple."""


def ndindex(*shape: Any) -> Any:
    """The positions of an array of ``shape`` in C order (NumPy's ``ndindex``; it reads no values).

    Example:
        >>> import stitchlab as sl
        >>> list(sl.ndindex(2, 1))
        [(0, 0), (1, 0)]
    """
    return np.ndindex(*shape)


def ndenumerate(arr: Any) -> Any:
    """``(position, value)`` pairs of the evaluated array, as NumPy's ``ndenumerate`` gives them
    (the values are read to the host once).

    Example:
        >>> import stitchlab as sl
        >>> list(sl.ndenumerate(sl.arange(2) * 3))
        [((0,), np.int64(0)), ((1,), np.int64(3))]
    """
    return np.ndenumerate(asarray(arr).get())


def _is_count(step: Any) -> bool:
    return isinstance(step, (complex, np.complexfloating))


def _bounds(key: slice, where: str) -> tuple[Any, Any, Any]:
    if key.stop is None:
        raise TypeError(f"{where}: the slice {key!r} has no stop; give one, e.g. 0:10 or 0:1:5j")
    return (0 if key.start is None else key.start), key.stop, (1 if key.step is None else key.step)


def _counted(start: Any, stop: Any, step: complex) -> tuple[int, Any]:
    """(points, spacing) of a count step (``0:1:5j``: 5 points, both ends included), as NumPy."""
    n = int(abs(step))
    return n, ((stop - start) / float(n - 1) if n != 1 else 1)


class _Grid:
    """``mgrid`` (``sparse=False``) and ``ogrid`` (``sparse=True``), as NumPy's ``nd_grid``."""

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __repr__(self) -> str:
        return "ogrid" if self.sparse else "mgrid"

    def __getitem__(self, key: Any) -> Any:
        where = repr(self)
        if isinstance(key, slice):
            start, stop, step = _bounds(key, where)
            if not _is_count(step):
                return arange(start, stop, step)
            n, spacing = _counted(start, stop, step)
            return arange(0, n, 1, dtype=np.result_type(start, stop, abs(step))) * spacing + start
        keys = key if isinstance(key, tuple) else (key,)
        bad = [k for k in keys if not isinstance(k, slice)]
        if bad:
            raise TypeError(f"{where}[...] takes slices (0:10, 0:1:5j), not {bad[0]!r}")
        sizes, scales, starts, numbers = [], [], [], [0]
        for k in keys:
            start, stop, step = _bounds(k, where)
            if _is_count(step):
                numbers += [start, stop, abs(step)]
                n, step = _counted(start, stop, step)
            else:
                n = int(math.ceil((stop - start) / step))
                numbers += [start, stop, step]
                if n < 0 and not self.sparse:  # NumPy's mgrid raises here (its ogrid gives an empty axis)
                    raise ValueError(f"mgrid: the slice {k!r} has a negative length ({n}); "
                                     "swap start and stop or give a negative step")
            sizes.append(max(n, 0))
            scales.append(step)
            starts.append(start)
        dtype = np.result_type(*numbers)
        nd = len(keys)
        axes = []
        for i, (n, step, start) in enumerate(zip(sizes, scales, starts, strict=True)):
            v = arange(0, n, 1, dtype=dtype) * step + start
            axes.append(v.reshape((1,) * i + (n,) + (1,) * (nd - i - 1)))
        if self.sparse:
            return tuple(axes)
        shape = tuple(sizes)
        return stack([broadcast_to(a, shape) for a in axes])


mgrid = _Grid(sparse=False)
"""Dense coordinate grids (NumPy's ``mgrid``), lazy: ``sl.mgrid[0:2, 0:3]`` has shape (2, 2, 3). A
complex step is a count (``0:1:5j``: 5 values, both ends included). They are built from positions,
so they fuse into the kernel that reads them."""
ogrid = _Grid(sparse=True)
"""Open coordinate grids (NumPy's ``ogrid``): a tuple of arrays, the ``k``-th along axis ``k``,
that broadcast against each other."""


class _Concatenator:
    """``r_`` and ``c_`` (NumPy's ``AxisConcatenator``): join along ``axis`` the items of the index,
    each made at least ``ndmin``-dimensional (a 1-d item's axis placed at ``trans1d``)."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int) -> None:
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def __repr__(self) -> str:
        return self.name

    def _directive(self, item: str) -> tuple[int, int, int]:
        if item in ("r", "c"):
            raise TypeError(f"{self.name}[{item!r}, ...] builds a numpy.matrix, which stitchlab does not have; "
                            f"use {self.name}[...] for an array (or numpy.{self.name} on the host)")
        try:
            parts = [int(p) for p in item.split(",")]
        except ValueError:
            parts = []
        if not 1 <= len(parts) <= 3:
            raise ValueError(f"unknown special directive {item!r} for {self.name}: give 'axis', "
                             "'axis,ndmin' or 'axis,ndmin,trans1d' (integers)")
        axis, ndmin, trans1d = parts + [self.ndmin, self.trans1d][len(parts) - 1:]
        return axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> LazyArray:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d = self._directive(items[0])
            items = items[1:]
        pieces, kinds = [], []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"{self.name}: a special directive ({item!r}) must be the first entry")
            if isinstance(item, slice):
                start, stop, step = _bounds(item, self.name)
                v = linspace(start, stop, int(abs(step))) if _is_count(step) else arange(start, stop, step)
                v = _at_least(v, ndmin)
                if ndmin > 1 and trans1d != -1:
                    v = v.swapaxes(-1, trans1d)
                kinds.append(v.dtype)
            elif isinstance(item, (bool, int, float, np.generic)):
                v = _at_least(asarray(item), ndmin)
                kinds.append(item)  # a Python scalar is weak in the promotion, as in NumPy
            else:
                v = asarray(item)
                nd = v.ndim
                v = _at_least(v, ndmin)
                if trans1d != -1 and nd < ndmin:
                    k2 = ndmin - nd
                    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                    order = list(range(ndmin))
                    v = v.transpose(order[:k1] + order[k2:] + order[k1:k2])
                kinds.append(v.dtype)
            pieces.append(v)
        if not pieces:
            raise ValueError(f"{self.name}[...] needs at least one item to join")
        dtype = result_type(*kinds)
        return concatenate([p.astype(dtype) for p in pieces], axis=axis)


def _at_least(v: LazyArray, ndmin: int) -> LazyArray:
    return v.reshape((1,) * (ndmin - v.ndim) + v.shape) if v.ndim < ndmin else v


r_ = _Concatenator("r_", 0, 1, -1)
"""Join along the first axis (NumPy's ``r_``): ``sl.r_[x, 0, 1:4]`` (a slice is an ``arange``, or a
``linspace`` for a complex step; a scalar one element). A leading string ``'axis,ndmin,trans1d'``
sets the join as in NumPy (``sl.r_['-1,2,0', a, b]``)."""
c_ = _Concatenator("c_", -1, 2, 0)
"""Join along the last axis with 1-d items as columns (NumPy's ``c_``): ``sl.c_[x, y]`` of two
length-``n`` vectors has shape ``(n, 2)``."""
