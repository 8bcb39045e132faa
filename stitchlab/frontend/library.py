"""NumPy functions that become plan steps of their own, run by the array library (CuPy on the
GPU, NumPy on the CPU) and never fused: gathers (``take``, ``take_along_axis``, integer-array
indexing), scans (``cumsum``, ``cumprod``), sorts (``sort``, ``argsort``), searches
(``searchsorted``, ``digitize``, ``interp``), ``einsum``, the order statistics built on a sort (``median``,
``quantile``, ``percentile`` and their NaN-skipping versions), and the products built on
``matmul`` (``dot``, ``tensordot``, ``inner``, ``vdot``). The work before and after them fuses as
usual, and ``sl.jit`` traces and replays them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..ir.dtypes import as_dtype, is_float
from ..runtime.interpreter import merged_offset_limit
from . import build
from .api import clip, floor, isnan, matmul, mean, multiply, nanmean, ravel, rint, where  # type: ignore[attr-defined]
from .array import LazyArray
from .creation import _leaf_on, asarray, full
from .ufunc import dot_stored, outputs, stored

__all__ = [
    "take", "take_along_axis", "cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod", "isin", "sort", "argsort", "dot", "tensordot", "inner",
    "vdot", "einsum", "einsum_path", "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile",
    "searchsorted", "digitize", "interp", "partition", "argpartition", "lexsort",
]

_SORT_KIND_LETTERS = "qhms"  # NumPy reads a sort kind by its first letter, either case: quick, heap, merge, stable


def on_device(a: Any) -> bool:
    """Whether ``a`` is a stitchlab or CuPy array (data whose values are not on the host)."""
    return isinstance(a, LazyArray) or hasattr(a, "__cuda_array_interface__")


def _host_positions(indices: Any) -> np.ndarray | None:
    """``indices`` as a NumPy array when they are host data (a NumPy array, a list, an int), else
    None (a stitchlab or CuPy array: positions computed on the device)."""
    if on_device(indices):
        return None
    arr = np.asarray(indices)
    if arr.dtype == object:
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type, got {indices!r}")
    if arr.size == 0 and not isinstance(indices, np.ndarray):  # [] is float64 to NumPy, but no position
        arr = arr.astype(np.int64)
    return arr


def _checked_leaf(x: LazyArray, host: np.ndarray, axis: int, indexing: bool, named: int | None = None) -> build.Node:
    """Host positions along ``x``'s ``axis``, checked (NumPy's errors, those of ``x[...]`` with
    ``indexing``, naming the axis ``named``, default ``axis``) and made non-negative, as an input on
    ``x``'s device. As NumPy's ``take`` (not its indexing), nothing is checked when the axes before
    ``axis`` hold no element: the result is empty whatever the positions."""
    if not indexing and not math.prod(x.shape[:axis]):
        build.check_index_dtype(host.dtype)
        return _leaf_on(x, np.zeros(host.shape, np.int64))._node
    return _leaf_on(x, build.check_indices(host, x.shape[axis], axis if named is None else named, indexing))._node


def _take(x: LazyArray, indices: Any, axis: int, mode: str = "raise", indexing: bool = False,
          named: int | None = None) -> LazyArray:
    """``take`` along ``axis``; an error for a position out of bounds names the axis ``named``
    (default ``axis``; NumPy's indexing names the axis of the array indexed, before new axes)."""
    n = x.shape[axis]
    host = _host_positions(indices)
    if host is not None:
        if mode == "wrap" and n:
            host = np.mod(host.astype(np.int64), n)
        elif mode == "clip" and n:
            host = np.clip(host.astype(np.int64), 0, n - 1)
        return LazyArray(build.take(x._node, _checked_leaf(x, host, axis, indexing, named), axis, checked=True))
    i = asarray(indices)
    build.check_index_dtype(i.dtype)  # before a wrap or clip casts it
    if mode == "wrap":
        i = i.astype(np.int64) % n
    elif mode == "clip":
        i = i.astype(np.int64).clip(0, n - 1)
    return LazyArray(build.take(x._node, i._node, axis, checked=False, named=named))


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> LazyArray:
    """The elements of ``a`` at ``indices`` along ``axis`` (``None``: of the flattened array), as
    NumPy's ``take``: the result has shape ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``.

    ``indices`` from the host (a list, a NumPy array) are checked when the call is made: a
    position out of bounds raises ``IndexError`` as in NumPy (``mode="raise"``), negative ones
    count from the end; ``mode="wrap"`` and ``"clip"`` are NumPy's. Indices that are a stitchlab
    or CuPy array are checked when the step runs (one device-to-host read of a flag). A plan step
    of its own (``cupy.take``/``numpy.take``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(12.0).reshape(3, 4))
        >>> sl.take(x, [2, -1], axis=1).get()
        array([[ 2.,  3.],
               [ 6.,  7.],
               [10., 11.]])
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    x = asarray(a)
    if build.zero_d_axis(axis, x.ndim, None) is None:  # (axis 0 or -1 of 0-d data: as NumPy, its one element)
        x, axis = ravel(x), 0
    return stored(_take(x, indices, build.normalize_axis(axis, x.ndim), mode), out, "take")


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> LazyArray:
    """``arr``'s elements at ``indices`` along ``axis`` (NumPy's ``take_along_axis``: ``indices``
    has ``arr``'s number of dimensions, the other axes broadcast; ``axis=None`` gathers from the
    flattened array with 1-d ``indices``), e.g. the logits of the targets,
    ``sl.take_along_axis(logits, t[:, None], axis=1)``. Positions are checked as in :func:`take`.
    A plan step of its own (``cupy.take_along_axis``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([[10, 30, 20], [60, 40, 50]]))
        >>> sl.take_along_axis(x, sl.argsort(x, axis=1), axis=1).get()
        array([[10, 20, 30],
               [40, 50, 60]])
    """
    x = asarray(arr)
    host = _host_positions(indices)
    ind = host if host is not None else asarray(indices)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        x, axis = ravel(x), 0
    axis = build.normalize_axis(axis, x.ndim)  # (NumPy's order of checks: axis, the positions' type, ndim)
    build.check_index_dtype(ind.dtype, along_axis=True)
    if ind.ndim != x.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if host is not None:
        return LazyArray(build.take_along_axis(x._node, _checked_leaf(x, host, axis, indexing=True), axis, checked=True))
    return LazyArray(build.take_along_axis(x._node, asarray(indices)._node, axis, checked=False))


def _is_array(k: Any) -> bool:
    return isinstance(k, (list, np.ndarray, LazyArray)) or hasattr(k, "__cuda_array_interface__")


def _is_mask(k: Any) -> bool:
    if isinstance(k, list):  # (NumPy's rule: a list, nested or not, of bools only; [True, 1] is integers)
        return len(k) > 0 and all(_is_mask(v) if isinstance(v, list) else isinstance(v, (bool, np.bool_)) for v in k)
    return k.dtype == np.bool_


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def integer_key(items: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``items`` with its 0-d integer NumPy arrays as integers, where those are its only arrays
    (else None): NumPy reads such a key as it reads integers (the result's shape, ``None`` beside
    them, the values an assignment takes), but gives a copy where integers give a view."""
    zero_d = [isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu" for k in items]
    if not any(zero_d) or any(_is_array(k) and not z for k, z in zip(items, zero_d, strict=True)):
        return None
    return tuple(int(k) if z else k for k, z in zip(items, zero_d, strict=True))


def advanced_index(x: LazyArray, key: Any) -> LazyArray | None:
    """``x[key]`` with integer arrays (or lists) in ``key``, NumPy's advanced indexing: the arrays
    (and integers beside them) broadcast together and pick elements along their axes; the slices
    and ``...`` keep theirs. The picked axes' result goes where they were when they are adjacent,
    first otherwise. One array among full slices is a gather along its axis; several are one
    gather along their axes merged, at host positions checked here (NumPy's ``IndexError``) or
    device positions checked when the step runs. ``None`` and boolean scalars beside them are read
    as :func:`unit_axes` says. A boolean mask must be the only index (one computed on the device is
    evaluated first: :func:`stitchlab.frontend.selection.mask_index`). None if ``key`` has no
    array in it and no boolean scalar that is one (basic indexing)."""
    items = key if isinstance(key, tuple) else (key,)
    if not any(_is_array(k) for k in items) and not bool_scalar_advanced(items):
        return None
    basic_key = integer_key(items)
    if basic_key is not None:
        return LazyArray(x[basic_key]._node)  # (a copy, as NumPy's)
    hint = "index with integer arrays, integers, slices and '...' (a boolean mask alone), or materialize first: x.get()[...]"
    if any(_is_array(k) and _is_mask(k) and not is_bool_scalar(k) for k in items):
        if len(items) != 1:
            raise IndexError(f"a boolean mask must be the only index; {hint}")
        k = items[0]
        if on_device(k):
            from .selection import mask_index

            return mask_index(x, k)  # evaluates the mask: the result's shape depends on it
        m = np.asarray(k, dtype=bool)
        build.check_mask_shape(x.shape, m.shape)
        flat = x.reshape((math.prod(m.shape),) + x.shape[m.ndim:])
        return _take(flat, np.flatnonzero(m), 0, indexing=True)
    x, items, names = unit_axes(x, items)
    items, adv, basic, at, perm = index_parts(x, items, hint)
    y = x[basic] if any(k != slice(None) for k in basic) else x  # the slices: a lazy view
    if len(adv) == 1:  # (NumPy's error names the axis of x, not of the new axes)
        return _take(y, items[adv[0]], adv[0], indexing=True, named=names[adv[0]])
    check_key_items(x, items, names)
    sizes = [y.shape[ax] for ax in adv]
    y = y.transpose(perm)
    merged = y.reshape(y.shape[:at] + (math.prod(sizes),) + y.shape[at + len(adv):])
    named = [names[ax] for ax in adv]
    pos = _flat_positions(x, [items[ax] for ax in adv], sizes, named)
    if isinstance(pos, np.ndarray):
        return _take(merged, pos, at, indexing=True)
    return LazyArray(build.take(merged._node, pos._node, at, checked=False, merged=tuple(sizes), named=tuple(named)))


def is_bool_scalar(k: Any) -> bool:
    """Whether the key item ``k`` is a boolean scalar to NumPy: ``True``, ``np.False_`` or a 0-d
    boolean NumPy array."""
    return isinstance(k, (bool, np.bool_)) or (isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype == np.bool_)


def bool_scalar_advanced(items: tuple[Any, ...]) -> bool:
    """Whether a key's boolean scalars are read as the advanced index they are to NumPy (a gather or
    a scatter): more than one, or one beside integers or arrays. One among ``None``, slices and
    ``...`` only is a new axis of 1 (True) or 0 (False) where it stands, which indexing reads as a
    view (copied) and assignment fuses."""
    bools = sum(is_bool_scalar(k) for k in items)
    return bools > 1 or (bools == 1 and not all(
        k is None or k is Ellipsis or isinstance(k, slice) or is_bool_scalar(k) for k in items))


def unit_axes(x: LazyArray, items: tuple[Any, ...]) -> tuple[LazyArray, tuple[Any, ...], list[int]]:
    """A key with integer arrays (no mask of one or more dimensions) into ``x`` with ``None`` or
    boolean scalars in it, read as NumPy reads it: ``x`` with an axis of extent 1 where each of
    them stands, and the key with ``:`` on that axis for a ``None`` (the new axis basic indexing
    gives) and positions for a boolean, ``[0]`` for True and ``[]`` for False (NumPy's boolean
    scalar is an advanced index of shape (1,) or (0,): it broadcasts with the arrays and counts for
    where their result goes; a ``None`` between arrays keeps them apart, as a slice does). Also, per
    axis of the new ``x``, the axis of ``x`` it is (-1 for a new one), which NumPy's errors name.
    ``x`` and the key unchanged where neither stands in it."""
    new = [k is None or is_bool_scalar(k) for k in items]
    if not any(new) or any(_is_array(k) and _is_mask(k) and not is_bool_scalar(k) for k in items):
        return x, items, list(range(x.ndim))
    layout = tuple(None if n else k if k is Ellipsis else slice(None) for k, n in zip(items, new, strict=True))
    unit = LazyArray(build.getitem(x._node, layout))  # (NumPy's errors: '...' twice, too many indices)
    n_real = sum(not n and k is not Ellipsis for k, n in zip(items, new, strict=True))
    names: list[int] = []
    ax = 0
    for k, n in zip(items, new, strict=True):
        if n:
            names.append(-1)
        else:
            count = x.ndim - n_real if k is Ellipsis else 1
            names += range(ax, ax + count)
            ax += count
    names += range(ax, x.ndim)
    key = tuple(slice(None) if k is None else np.zeros(int(k), np.intp) if n else k for k, n in zip(items, new, strict=True))
    return unit, key, names


def check_key_items(x: LazyArray, items: tuple[Any, ...], names: list[int]) -> None:
    """NumPy's first checks of a key laid out by :func:`index_parts` (``items``), before its arrays
    are broadcast: its integers' (and 0-d arrays') bounds and its arrays' dtypes (``names``: the
    axes as NumPy's errors name them, :func:`unit_axes`)."""
    for ax, k in enumerate(items):
        if _is_int(k) or (isinstance(k, np.ndarray) and k.ndim == 0):  # (a 0-d array counts as an integer)
            build.check_indices(np.asarray(k), x.shape[ax], names[ax], indexing=True)
        elif _is_array(k):
            host = _host_positions(k)
            build.check_index_dtype(host.dtype if host is not None else asarray(k).dtype)


def index_parts(x: LazyArray, items: tuple[Any, ...], hint: str) -> tuple[tuple[Any, ...], list[int], tuple[Any, ...], int, list[int]]:
    """A key with integer arrays (no mask, no ``None``: :func:`unit_axes`) into ``x``, laid out as
    NumPy does (its errors, ``hint`` naming what is accepted): the items with ``...`` filled in;
    the axes the arrays (and integers beside them) index; the key with full slices on those axes
    (the block they pick from); where the picked axes go in the result (where they are when
    adjacent, first otherwise); and the permutation of the block's axes that brings them there."""
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    # NumPy keeps the picked axes in place only when nothing stands between the arrays in the key as
    # written: a '...' there separates them even where it stands for no axis
    written = [i for i, k in enumerate(items) if _is_array(k) or _is_int(k)]
    apart = written != list(range(written[0], written[-1] + 1))
    n_real = sum(k is not Ellipsis for k in items)
    if n_real > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {n_real} were indexed")
    e = next((i for i, k in enumerate(items) if k is Ellipsis), None)
    fill = (slice(None),) * (x.ndim - n_real)
    items = items[:e] + fill + items[e + 1:] if e is not None else items + fill
    for k in items:
        if not (_is_array(k) or _is_int(k) or isinstance(k, slice)):
            raise IndexError(f"only integers, slices, '...', None and integer or boolean arrays are valid indices, got {k!r}")
    adv = [ax for ax, k in enumerate(items) if _is_array(k) or _is_int(k)]
    basic = tuple(slice(None) if ax in adv else k for ax, k in enumerate(items))
    if not apart and adv == list(range(adv[0], adv[-1] + 1)):
        return items, adv, basic, adv[0], list(range(x.ndim))
    return items, adv, basic, 0, adv + [ax for ax in range(x.ndim) if ax not in adv]


def _flat_positions(x: LazyArray, indices: list[Any], sizes: list[int], axes: list[int],
                    shaped: Callable[[tuple[int, ...]], None] | None = None) -> Any:
    """The positions in the merged axes of ``sizes`` of the broadcast ``indices`` (one per axis
    of ``axes``): a NumPy array, checked with NumPy's errors, when all are host data; else a lazy
    int64 array whose out-of-bounds entries are the merged extent (the gather's check raises).
    As NumPy's, an empty broadcast checks the positions of its integers (and 0-d arrays) only.
    ``shaped``: called with the broadcast shape before any position is checked (an assignment
    checks its value's shape there, as NumPy does)."""
    hosts = [_host_positions(i) for i in indices]
    shapes = [np.shape(h) if h is not None else asarray(i).shape for h, i in zip(hosts, indices, strict=True)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        listed = [s for s in shapes if s]  # (as NumPy's message: the arrays', not the integers' or 0-d arrays')
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes {build.shapes_text(listed)}") from None
    if shaped is not None:
        shaped(shape)
    if not math.prod(shape):
        for h, i, n, ax in zip(hosts, indices, sizes, axes, strict=True):
            build.check_index_dtype(h.dtype if h is not None else asarray(i).dtype)
            if h is not None and not h.ndim:
                build.check_indices(h, n, ax, indexing=True)
        return np.zeros(shape, np.int64)
    if all(h is not None for h in hosts):
        pos = [build.check_indices(h, n, ax, indexing=True) for h, n, ax in zip(hosts, sizes, axes, strict=True)]
        return np.asarray(np.ravel_multi_index(np.broadcast_arrays(*pos), sizes))  # (a scalar when all are 0-d)
    if len(indices) == 1:  # (one array: its own positions, which the step checks and names as they are)
        a = asarray(indices[0])
        build.check_index_dtype(a.dtype)
        return a.astype(np.int64)
    total = math.prod(sizes)
    flat: Any = 0
    stride = total
    arrays = []
    for h, i, n in zip(hosts, indices, sizes, strict=True):
        stride //= max(n, 1)
        a = _leaf_on(x, h) if h is not None else asarray(i)
        build.check_index_dtype(a.dtype)
        a = a.astype(np.int64)
        arrays.append(a)
        flat = flat + where(a < 0, a + n, a) * stride
    # an entry out of bounds: a code past ``total`` telling the first array out of bounds there and
    # its value, from which the step names NumPy's axis and index (runtime.interpreter.merged_position_error)
    limit = merged_offset_limit(sizes)
    for i in reversed(range(len(arrays))):
        a, n = arrays[i], sizes[i]
        past = where(a >= n, (a - n).clip(0, limit) * 2, (-n - 1 - a).clip(0, limit) * 2 + 1)
        flat = where((a < -n) | (a >= n), total + i + len(sizes) * past, flat)
    return flat



def _scan(opname: str, a: Any, axis: Any, dtype: Any) -> LazyArray:
    return LazyArray(build.scan(opname, asarray(a)._node, axis, dtype))


def scan_into(opname: str, a: Any, axis: Any, dtype: Any, out: Any, name: str) -> LazyArray:
    """A scan written into ``out=``: with no ``dtype``, NumPy's accumulate runs in the promotion
    of the input's dtype and ``out``'s (int16 data into a float64 ``out`` multiplies in float64,
    float16 into float32 adds in float32), as its reductions into ``out`` do."""
    x = asarray(a)
    target = outputs(out, 1, name)[0] if out is not None else None
    if dtype is None and target is not None:
        dtype = np.result_type(x.dtype, target.dtype)
    return stored(_scan(opname, x, axis, dtype), out, name)


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
    """Running sum along ``axis`` (``None``: of the flattened array), NumPy's ``cumsum``: bool and
    integers narrower than 64 bits give int64 (uint64 for unsigned) unless ``dtype`` says
    otherwise. A plan step of its own (``cupy.cumsum``); float16 and bfloat16 are summed in float32
    and each result rounded once (NumPy rounds every partial sum of a float16 scan, so long
    float16 scans differ from NumPy's, which drift); a float16 scan that leaves float16's range
    stays inf (a product also a signed zero), as NumPy's does.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.cumsum(sl.asarray(np.array([[1, 2], [3, 4]], np.int32)), axis=0).get()
        array([[1, 2],
               [4, 6]])
    """
    return scan_into("cumsum", a, axis, dtype, out, "cumsum")


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
    """Running product along ``axis`` (NumPy's ``cumprod``; dtypes as :func:`cumsum`).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.cumprod(sl.asarray(np.array([1.0, 2.0, 3.0]))).get()
        array([1., 2., 6.])
    """
    return scan_into("cumprod", a, axis, dtype, out, "cumprod")


def _nan_scan(opname: str, a: Any, axis: Any, dtype: Any, fill: int, out: Any, name: str) -> LazyArray:
    x = asarray(a)
    if is_float(x.dtype):
        x = where(isnan(x), fill, x)
    return scan_into(opname, x, axis, dtype, out, name)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
    """Running sum along ``axis`` treating NaN as zero (NumPy's ``nancumsum``; dtypes as
    :func:`cumsum`): the NaNs are replaced in the fused work before the scan step.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nancumsum(sl.asarray(np.array([1.0, np.nan, 2.0]))).get()
        array([1., 1., 3.])
    """
    return _nan_scan("cumsum", a, axis, dtype, 0, out, "nancumsum")


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
    """Running product along ``axis`` treating NaN as one (NumPy's ``nancumprod``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nancumprod(sl.asarray(np.array([2.0, np.nan, 3.0]))).get()
        array([2., 2., 6.])
    """
    return _nan_scan("cumprod", a, axis, dtype, 1, out, "nancumprod")


def _cumulative(opname: str, x: Any, axis: Any, dtype: Any, include_initial: bool) -> LazyArray:
    v = asarray(x)
    if v.ndim == 0:  # NumPy scans a 0-d array as one element
        v = v.reshape(1)
    if axis is None:
        if v.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
        axis = 0
    axis = build.normalize_axis(axis, v.ndim)
    out = _scan("cumsum" if opname == "cumulative_sum" else "cumprod", v, axis, dtype)
    if not include_initial:
        return out
    from .api import concatenate
    from .creation import full

    first = full(out.shape[:axis] + (1,) + out.shape[axis + 1:], 0 if opname == "cumulative_sum" else 1, out.dtype)
    return concatenate([first, out], axis)


def cumulative_sum(x: Any, *, axis: Any = None, dtype: Any = None, include_initial: bool = False) -> LazyArray:
    """Running sum along ``axis`` (the array API's ``cumulative_sum``, NumPy 2's
    ``np.cumulative_sum``): as :func:`cumsum`, but ``axis`` is required above one dimension, and
    ``include_initial`` puts the sum of nothing (0) first.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.cumulative_sum(sl.asarray(np.array([1, 2, 3])), include_initial=True).get()
        array([0, 1, 3, 6])
    """
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x: Any, *, axis: Any = None, dtype: Any = None, include_initial: bool = False) -> LazyArray:
    """Running product along ``axis`` (NumPy 2's ``np.cumulative_prod``; ``include_initial``: 1
    first).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.cumulative_prod(sl.asarray(np.array([1.0, 2.0, 3.0]))).get()
        array([1., 2., 6.])
    """
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         kind: Any = None) -> LazyArray:
    """True where an element of ``element`` is among ``test_elements`` (NumPy's ``isin``; NaN is
    never found): ``test_elements`` sorted (a sort step), each element's place found by a binary
    search (a searchsorted step) and compared with the value there. ``kind`` is accepted as NumPy
    takes it; every kind searches the sorted values.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.isin(sl.asarray(np.array([1, 5, 3, 7])), [3, 7, 9]).get()
        array([False, False,  True,  True])
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    e, t = asarray(element), asarray(test_elements).reshape(-1)
    if kind == "table" and not all(v.dtype.kind in "biu" for v in (e, t)):
        raise ValueError("The 'table' method is only supported for boolean or integer arrays. "
                         "Please select 'sort' or None for kind.")
    if t.size == 0:
        from .creation import full

        return full(e.shape, bool(invert), np.bool_)
    dt = build.result_type(e._node, t._node)
    e, ts = e.astype(dt), sort(t.astype(dt))
    pos = clip(searchsorted(ts, e), 0, t.size - 1)
    found = take(ts, pos) == e
    return ~found if invert else found


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> LazyArray:
    """``a`` partitioned along ``axis`` around each position of ``kth`` (NumPy's ``partition``):
    the element at each such position is the one a sort puts there, smaller ones before it and
    larger ones after. stitchlab returns the whole sort (:func:`sort`), which is one such
    partition; NumPy's order within the parts differs (it is unspecified). NumPy's errors for
    ``kth`` and ``kind``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.partition(sl.asarray(np.array([3, 4, 2, 1])), 2).get()[2]
        np.int64(3)
    """
    x = _partitioned("partition", a, kth, axis, kind, order)
    return sort(x, axis)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> LazyArray:
    """The positions that :func:`partition` puts along ``axis`` (NumPy's ``argpartition``): the
    whole stable :func:`argsort`, which is one valid answer."""
    axis = build.zero_d_axis(axis, np.ndim(a), None)  # (NumPy's: the one element of 0-d data)
    x = _partitioned("argpartition", a, kth, axis, kind, order)
    return argsort(x, axis, kind="stable")


def _partitioned(name: str, a: Any, kth: Any, axis: Any, kind: str, order: Any) -> LazyArray:
    """``a`` as a lazy array after NumPy's checks of ``kth`` (integers within the axis) and ``kind``."""
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    if order is not None:
        raise ValueError(f"{name}: order= applies to structured arrays, which stitchlab does not have")
    x = asarray(a)
    n = x.size if axis is None else x.shape[build.normalize_axis(axis, x.ndim)] if x.ndim else None
    if n is None:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    ks = np.asarray(kth)
    if ks.dtype.kind == "b":
        raise ValueError("Booleans unacceptable as partition index")
    if ks.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    for k in ks.reshape(-1).tolist():
        if x.size and not -n <= k < n:  # (an empty array has nothing to partition: NumPy takes any kth)
            raise ValueError(f"kth(={k if k >= 0 else k + n}) out of bounds ({n})")
    return x


def _check_sort_kind(kind: Any, stable: Any) -> None:
    """NumPy's checks of ``sort``'s ``kind`` and ``stable``: ``kind`` None or a string (or bytes)
    whose first letter, either case, is that of quicksort, heapsort, mergesort or stable (NumPy
    takes ``"q"`` and ``"Quick"`` as it takes ``"quicksort"``); not both ``kind`` and ``stable``."""
    if kind is not None:
        if isinstance(kind, bytes):
            kind = kind.decode("latin-1")
        if not isinstance(kind, str):
            raise TypeError(f"sort kind must be str, not {type(kind).__name__} (got {kind!r}); give 'quicksort', "
                            f"'mergesort', 'heapsort' or 'stable'")
        if not kind or kind[0].lower() not in _SORT_KIND_LETTERS:
            raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")
        if stable is not None:
            raise ValueError("`kind` and keyword parameters can't be provided at the same time. Use only one of them.")
    if stable not in (None, True, False):
        raise ValueError(f"stable must be None, True or False (got {stable!r})")


def _sort(opname: str, a: Any, axis: Any, kind: Any, order: Any, stable: Any) -> LazyArray:
    _check_sort_kind(kind, stable)
    if order is not None:
        raise ValueError(f"{opname}: order= applies to structured arrays, which stitchlab does not have")
    x = asarray(a)
    if opname == "argsort":  # (NumPy's argsort of 0-d data along 0 or -1: its one position; sort raises)
        axis = build.zero_d_axis(axis, x.ndim, None)
    return LazyArray(build.sort(opname, x._node, axis))


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> LazyArray:
    """A sorted copy along ``axis`` (``None``: of the flattened array), NaN last, as NumPy's
    ``sort``. Every ``kind`` sorts the same way (CuPy's sort is stable). A plan step of its own.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.sort(sl.asarray(np.array([3.0, np.nan, -1.0, 2.0]))).get()
        array([-1.,  2.,  3., nan])
    """
    return _sort("sort", a, axis, kind, order, stable)


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> LazyArray:
    """The int64 positions that sort ``a`` along ``axis``, ties in index order (NumPy's
    ``argsort(kind="stable")``, whatever ``kind``: NumPy's default quicksort may order ties
    otherwise). A plan step of its own.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.argsort(sl.asarray(np.array([3.0, 1.0, 2.0, 1.0]))).get()
        array([1, 3, 2, 0])
    """
    return _sort("argsort", a, axis, kind, order, stable)


def lexsort(keys: Any, axis: int = -1) -> LazyArray:
    """The int64 positions that sort by several keys along ``axis``, the last key first (NumPy's
    ``lexsort``: ``keys`` a sequence of arrays of one shape, or the rows of an array; ties in
    index order, NaNs last). One stable :func:`argsort` step per key, from the first key to the
    last, each reading its key through the positions so far (a gather at positions in range by
    construction: nothing is read back).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> surnames = sl.asarray(np.array([2, 1, 2, 1]))
        >>> first = sl.asarray(np.array([0, 5, 3, 4]))
        >>> sl.lexsort((first, surnames)).get()
        array([3, 1, 0, 2])
    """
    if on_device(keys) or isinstance(keys, np.ndarray):
        stacked = asarray(keys)
        if stacked.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        seq = [stacked[i] for i in range(stacked.shape[0])]
    else:
        seq = [asarray(k) for k in keys]
    if not seq:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if any(k.shape != seq[0].shape for k in seq):
        raise ValueError("all keys need to be the same shape")
    if seq[0].ndim == 0:  # (NumPy's: the one position, along axis 0 or -1 only)
        if build.zero_d_axis(operator.index(axis), 0, None) is not None:
            raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
        return asarray(np.int64(0))
    ax = build.normalize_axis(operator.index(axis), seq[0].ndim)
    order = argsort(seq[0], axis=ax)
    for k in seq[1:]:
        along = LazyArray(build.take_along_axis(k._node, order._node, ax, checked=True))
        order = LazyArray(build.take_along_axis(order._node, argsort(along, axis=ax)._node, ax, checked=True))
    return order


def tensordot(a: Any, b: Any, axes: Any = 2) -> LazyArray:
    """Sum of products over the axes ``axes`` of ``a`` and ``b`` (NumPy's ``tensordot``: an int N
    is the last N axes of ``a`` with the first N of ``b``; a pair of sequences names them). Built as
    transposes and reshapes around one :func:`matmul` step.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> a = sl.asarray(np.ones((2, 3, 4))); b = sl.asarray(np.ones((3, 4, 5)))
        >>> sl.tensordot(a, b).shape
        (2, 5)
    """
    x, y = asarray(a), asarray(b)
    try:
        n = operator.index(axes)
        if n < 0:
            raise ValueError("negative axes are not supported by tensordot; name the axes with two sequences")
        if n > x.ndim or n > y.ndim:
            raise ValueError(f"tensordot: axes={n} is more than the dimensions of a ({x.ndim}) or b ({y.ndim})")
        ax, bx = list(range(x.ndim - n, x.ndim)), list(range(n))
    except TypeError:
        try:
            ax, bx = (list(v) if isinstance(v, (list, tuple)) else [v] for v in axes)
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}") from None
    if len(ax) != len(bx):
        raise ValueError("shape-mismatch for sum")
    ax = [build.normalize_axis(i, x.ndim) for i in ax]
    bx = [build.normalize_axis(i, y.ndim) for i in bx]
    if any(x.shape[i] != y.shape[j] for i, j in zip(ax, bx, strict=True)):
        raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(x.ndim) if i not in ax]
    free_b = [j for j in range(y.ndim) if j not in bx]
    k = math.prod(x.shape[i] for i in ax)
    xa = x.transpose(free_a + ax).reshape(math.prod(x.shape[i] for i in free_a), k)
    yb = y.transpose(bx + free_b).reshape(k, math.prod(y.shape[j] for j in free_b))
    return matmul(xa, yb).reshape(tuple(x.shape[i] for i in free_a) + tuple(y.shape[j] for j in free_b))


def _check_aligned(x: LazyArray, y: LazyArray, dim: int) -> None:
    """NumPy's error where the last axis of ``x`` and axis ``dim`` of ``y`` differ in length."""
    if x.shape[-1] != y.shape[dim]:
        raise ValueError(
            f"shapes {build.shapes_text([x.shape])} and {build.shapes_text([y.shape])} not aligned: {x.shape[-1]} "
            f"(dim {x.ndim - 1}) != {y.shape[dim]} (dim {dim})"
        )


def dot(a: Any, b: Any, out: Any = None) -> LazyArray:
    """NumPy's ``dot``: a product with a scalar for 0-d operands, :func:`matmul` for 1-D and 2-D
    ones and a 1-D second operand, and otherwise the sum over the last axis of ``a`` and the
    second-to-last of ``b`` (:func:`tensordot`). ``out`` takes the result under NumPy's rule for
    it: exactly the result's dtype and shape, C-contiguous, nothing cast (``ValueError``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.dot(sl.asarray(np.array([1.0, 2.0])), np.array([3.0, 4.0])).get()
        array(11.)
    """
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        product = multiply(x, y)
    elif y.ndim == 1 or (x.ndim <= 2 and y.ndim <= 2):
        _check_aligned(x, y, max(y.ndim - 2, 0))
        product = matmul(x, y)
    else:
        _check_aligned(x, y, y.ndim - 2)
        product = tensordot(x, y, axes=([-1], [-2]))
    return dot_stored(product, out, "dot")


def inner(a: Any, b: Any) -> LazyArray:
    """NumPy's ``inner``: the sum of products over the last axes of ``a`` and ``b`` (a product with
    a scalar for 0-d operands); the result has shape ``a.shape[:-1] + b.shape[:-1]``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.inner(sl.asarray(np.eye(2)), np.array([[1.0, 2.0]])).get()
        array([[1.],
               [2.]])
    """
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    _check_aligned(x, y, y.ndim - 1)
    return tensordot(x, y, axes=([-1], [-1]))


def vdot(a: Any, b: Any) -> LazyArray:
    """NumPy's ``vdot`` for real arrays: the dot product of the flattened operands (a 0-d array).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.vdot(sl.asarray(np.ones((2, 2))), np.full((2, 2), 2.0)).get()
        array(8.)
    """
    x, y = ravel(asarray(a)), ravel(asarray(b))
    if x.size != y.size:
        raise ValueError(f"vdot: the operands have {x.size} and {y.size} elements; they need as many")
    return matmul(x, y)


def einsum(*operands: Any, out: Any = None, optimize: Any = False, dtype: Any = None, order: str = "K",
           casting: str = "safe") -> LazyArray:
    """NumPy's ``einsum``: ``"ij,jk->ik"``, the implicit output (``"ij,jk"``: the letters that
    appear once, in alphabetical order), ``...`` for broadcast axes, repeated letters for
    diagonals and sums, and NumPy's other form, each operand followed by a list of integers for
    its axes (``einsum(a, [0, 1], b, [1, 2], [0, 2])``, the output's list optional). The result
    dtype is ``dtype``, or the operands' (and ``out``'s) ``result_type``; every operand is cast to
    it, and the result into ``out``, under ``casting`` (``"safe"`` by default), with NumPy's
    ``TypeError``; ``out`` has the result's shape. bfloat16 operands raise ``TypeError``, as
    NumPy has no bfloat16 loop (give ``dtype=np.float32``). A plan step of its own, run by
    ``cupy.einsum`` (``numpy.einsum`` on the CPU), which picks its own contraction order
    (``optimize`` is accepted for NumPy's signature; ``order`` may be ``"K"``, ``"A"`` or ``"C"``:
    stitchlab arrays are C-ordered).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> a = sl.asarray(np.arange(6.0).reshape(2, 3))
        >>> sl.einsum("ij,kj->ik", a, a).get()
        array([[ 5., 14.],
               [14., 50.]])
        >>> sl.einsum(a, [0, 1], a, [2, 1], [0, 2]).get()  # the same, with lists of axes
        array([[ 5., 14.],
               [14., 50.]])
    """
    from .array import c_order

    del optimize
    c_order("einsum", order, ("C", "A", "K"))
    casting = build.casting_arg(casting, "einsum")
    if not operands:
        raise TypeError("einsum: give the subscripts and at least one operand, e.g. sl.einsum('ij->ji', a)")
    subscripts, arrays = _einsum_subscripts(operands)
    arrays = [asarray(o) for o in arrays]
    # NumPy's loop: dtype, or the result type of the operands and out; the operands cast to it under casting
    kinds = [a.dtype for a in arrays] + ([np.dtype(out.dtype)] if getattr(out, "dtype", None) is not None else [])
    loop = as_dtype(dtype) if dtype is not None else np.result_type(*kinds)
    for k, a in enumerate(arrays):
        if a.dtype != loop and not np.can_cast(a.dtype, loop, casting):
            raise TypeError(f"Iterator operand {k} dtype could not be cast from dtype('{a.dtype}') to dtype('{loop}') "
                            f"according to the rule '{casting}' (einsum: give casting= or a dtype= they cast to)")
    arrays = [a if a.dtype == loop else a.astype(loop) for a in arrays]
    result = LazyArray(build.einsum(subscripts, [a._node for a in arrays]))
    return stored(result, out, "einsum", casting=casting)


def _einsum_subscripts(operands: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """The subscripts string and the operands of an ``einsum`` call, in either of NumPy's forms:
    ``(subscripts, *arrays)``, or ``(array, axes, array, axes, ..., [output axes])`` with axes
    lists of integers in [0, 52) (``A``-``Z`` then ``a``-``z``, as NumPy converts them) and
    ``...``."""
    if isinstance(operands[0], str):
        return operands[0], list(operands[1:])
    if isinstance(operands[0], (bytes, np.str_)):
        return str(operands[0]), list(operands[1:])

    def letters(axes: Any) -> str:
        out = []
        for s in axes:
            if s is Ellipsis:
                out.append("...")
                continue
            try:
                k = operator.index(s)
            except TypeError:
                raise TypeError("each subscript must be either an integer or an ellipsis") from None
            if not 0 <= k < 52:
                raise ValueError("subscript is not within the valid range [0, 52)")
            out.append(chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26))
        return "".join(out)

    arrays = list(operands[0::2][: len(operands) // 2])
    inputs = ",".join(letters(axes) for axes in operands[1::2][: len(operands) // 2])
    if len(operands) % 2:  # the output's axes
        return inputs + "->" + letters(operands[-1]), arrays
    return inputs, arrays


def einsum_path(*operands: Any, optimize: Any = "greedy", einsum_call: bool = False) -> Any:
    """NumPy's ``einsum_path`` (the subscripts, then the operands) of the operands' shapes: the
    contraction order NumPy would choose and its report (only shapes are read: nothing is
    evaluated or copied to the host)."""
    def stand_in(o: Any) -> np.ndarray:  # (a read-only zero-strided array of the shape)
        return np.broadcast_to(np.zeros((), np.float64), np.shape(o))

    if operands and isinstance(operands[0], str):
        args = [operands[0], *map(stand_in, operands[1:])]
    else:  # NumPy's other form: operand, its sublist, ..., then optionally the output's sublist
        end = len(operands) - len(operands) % 2
        # (a sublist given as a stitchlab array is read as its values: handed to NumPy as it is, it
        # dispatched np.einsum_path back here, without end)
        args = [stand_in(o) if k % 2 == 0 and k < end else o.tolist() if isinstance(o, LazyArray) else o
                for k, o in enumerate(operands)]
    return np.einsum_path(*args, optimize=optimize, einsum_call=einsum_call)


def _sorted_last(a: Any, axis: Any, empty_nan: bool = False) -> tuple[LazyArray, tuple[int, ...], int]:
    """``a`` with the axes ``axis`` (None: all) merged into a last axis and sorted along it; also
    the shape of the kept axes with the reduced ones as 1 (for ``keepdims``) and their count.
    ``empty_nan``: empty slices are one NaN each (in a float dtype), whose statistics NumPy's
    median and nan-functions give (with a RuntimeWarning)."""
    x = asarray(a)
    axes = tuple(range(x.ndim)) if axis is None else np.lib.array_utils.normalize_axis_tuple(axis, x.ndim)
    kept = [d for d in range(x.ndim) if d not in axes]
    n = math.prod(x.shape[d] for d in axes)
    y = x.transpose(kept + list(axes)).reshape(tuple(x.shape[d] for d in kept) + (n,))
    keep_shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    if n == 0 and empty_nan:
        y, n = full(y.shape[:-1] + (1,), np.nan, dtype=y.dtype if is_float(y.dtype) else np.float64), 1
    return sort(y, -1), keep_shape, n


def _nan_last(last: LazyArray, result: LazyArray) -> LazyArray:
    """NumPy's rule: a slice holding a NaN gives that NaN (``last``: the slices' last sorted values,
    where a NaN sorts)."""
    if last.dtype.kind != "f" and last.dtype.name != "bfloat16":
        return result
    return where(isnan(last), last.astype(result.dtype), result)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> LazyArray:
    """The median along ``axis`` (an int, a tuple, or ``None`` for all), NumPy's ``median``: the
    mean of the middle one or two sorted values in NumPy's dtype (float64 for integers), NaN where
    the slice holds a NaN. A sort step, then a slice and a mean fused after it.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.median(sl.asarray(np.array([[3.0, 1.0, 2.0, 10.0]])), axis=1).get()
        array([2.5])
    """
    del overwrite_input  # nothing is overwritten: the sort makes a new array
    x = asarray(a)
    s, keep_shape, n = _sorted_last(x, axis, empty_nan=True)
    h = n // 2
    middle, last = s[..., h - 1 + n % 2: h + 1], s[..., -1]
    target = outputs(out, 1, "median")[0] if out is not None else None
    into = None if target is None else np.dtype(target.dtype)
    m = mean(middle, axis=-1)
    if into is not None and (into != m.dtype or m.dtype == np.float16):  # (float16: see mean's out=)
        # NumPy's median is mean(middle, out=out): summed into out's dtype and divided there (int16 100
        # and 140 into int8: 240 wraps to -16, then -8), then NaN written where a slice holds one
        m = full(middle.shape[:-1], 0, into)
        mean(middle, axis=-1, out=m)
        if x.size:  # (NumPy checks no NaN of an empty array's: its NaNs are cast)
            _nan_into(last, into)
    m = _nan_last(last, m)
    return stored(m.reshape(keep_shape) if keepdims else m, out, "median")


def _values_checked() -> bool:
    """Whether NumPy's checks that read the values written into an integer ``out=`` (a NaN, a value
    a signed integer cannot hold) are made, evaluating when called: not while :func:`~stitchlab.jit`
    traces, where the values are not known yet and a trace stays lazy. The traced function writes
    the unsafe cast instead, as for several slices (a NaN or a value out of range: the backend's
    cast of it)."""
    from .jit import tracing

    return not tracing()


def _nan_into(last: LazyArray, into: np.dtype, name: str = "median") -> None:
    """NumPy's error for a median (or a picked quantile) into an ``out`` of ``into``, a dtype
    without NaN (an integer): its ``copyto(out, nan, where=...)`` raises ``TypeError`` where a
    slice holds a NaN (``last``: the slices' last sorted values, where NaN sorts), and only there,
    so the values are read (evaluated now, as NumPy's check reads them; not inside ``sl.jit``:
    :func:`_values_checked`)."""
    if not is_float(last.dtype) or np.can_cast(last.dtype, into, "same_kind") or not _values_checked():
        return
    from .selection import _evaluated

    (nans,), _ = _evaluated(name, isnan(last).any(), why=f"NumPy's {name} raises where a NaN meets an integer out=")
    if bool(nans):
        raise TypeError(f"Cannot cast array data from dtype('{last.dtype}') to dtype('{into}') according to the rule "
                        f"'same_kind' (NumPy's {name} writes NaN into out= for a slice that holds one); give a float "
                        f"out=, or sl.nan{name} to skip the NaNs")


def _picked_into(name: str, s: LazyArray, into: np.dtype) -> None:
    """NumPy's checks of a quantile's ``out`` of dtype ``into`` for the methods that pick one of
    the sorted values ``s`` (``take(arr, positions, out=out)``): ``out`` is taken as a buffer of
    the input's dtype, so its dtype must cast safely to it (``TypeError`` otherwise: an int32
    ``out`` for int16 data; float64 data into an int8 ``out`` is fine), and the picked values are
    cast back into it unsafely; then a slice that holds a NaN has it copied in with the
    ``same_kind`` rule, which an integer ``out`` refuses (:func:`_nan_into`)."""
    if not np.can_cast(into, s.dtype, "safe"):
        raise TypeError(f"{name}: Cannot cast array data from dtype('{into}') to dtype('{s.dtype}') according to the "
                        f"rule 'safe' (NumPy's take of the picked values into out= uses out as a {s.dtype} buffer); "
                        f"give an out= of dtype {s.dtype}")
    if s.size:
        _nan_into(s[..., -1], into, name)


#: NumPy's continuous methods besides "linear" (Hyndman and Fan's): their (alpha, beta), in the
#: position ``n * q + (alpha + q * (1 - alpha - beta)) - 1`` of the q-quantile among n sorted values
_ALPHA_BETA = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
#: the methods that take one sorted value, no interpolation
_PICKING = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_QUANTILE_METHODS = ("linear", "midpoint", "averaged_inverted_cdf", *_PICKING, *_ALPHA_BETA)


def _q_args(name: str, q_in: Any) -> tuple[np.ndarray, bool]:
    """``q`` as a host array (divided by 100 for a percentile) and whether NumPy promotes it weakly,
    after NumPy's check of its range."""
    return _q_of(name, q_in, 100.0 if name.endswith("percentile") else 1.0)


def _check_q_method(q: np.ndarray, method: str) -> None:
    """NumPy's checks of ``q``'s dimensions and of ``method``, made after those of the axes."""
    if q.ndim > 2:
        raise ValueError(f"q must be a scalar or 1d (NumPy takes at most 2 dimensions; got {q.ndim})")
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {', '.join(_QUANTILE_METHODS)}")


def _position(method: str, n: Any, q: Any, xp: Any) -> Any:
    """NumPy's (virtual) position of the ``q``-quantile among ``n`` sorted values for ``method``
    (its ``_QuantileMethods``), computed with ``xp``'s ``floor``, ``rint`` and ``where``: NumPy on the
    host, where ``n`` is an int, or stitchlab, where ``n`` is each slice's count of numbers (a float
    array of ``q``'s dtype). The picking methods give whole positions."""
    if method in ("linear", "lower", "higher", "nearest", "midpoint"):
        v = (n - 1) * q
        if method == "lower":
            return xp.floor(v)
        if method == "higher":
            return -xp.floor(-v)
        if method == "nearest":
            return xp.rint(v)
        return 0.5 * (xp.floor(v) - xp.floor(-v)) if method == "midpoint" else v
    if method in ("inverted_cdf", "closest_observation"):
        v = n * q - 1 if method == "inverted_cdf" else n * q - 1 - 0.5
        prev = xp.floor(v)
        at_prev = v - prev == 0
        if method == "closest_observation":  # the even order statistic (1-based) where v is whole
            at_prev = at_prev & (prev % 2 == 1)
        pos = xp.where(at_prev, prev, prev + 1)
        return xp.where(pos < 0, 0, pos)
    if method == "averaged_inverted_cdf":
        return n * q - 1
    alpha, beta = _ALPHA_BETA[method]
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


def _neighbours(method: str, v: Any, n: Any, xp: Any) -> tuple[Any, Any, Any]:
    """NumPy's positions of the two values around position ``v`` among ``n`` (both the last past
    ``n - 1``, both the first below 0) and its interpolation weight, in ``v``'s dtype."""
    top, below = v >= n - 1, v < 0
    prev = xp.where(top, -1, xp.where(below, 0, xp.floor(v)))  # (NumPy's -1: the last value)
    gamma = v - prev
    if method == "midpoint":
        gamma = xp.where(v % 1 == 0, 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        gamma = xp.where(gamma == 0, 0.5, 1.0)
    lo = xp.where(top, n - 1, prev)
    hi = xp.where(top | below, lo, prev + 1)
    return lo, hi, gamma.astype(v.dtype)


def _q_axes_first(result: LazyArray, q: np.ndarray, keep_shape: tuple[int, ...], keepdims: bool) -> LazyArray:
    """Results laid out (kept axes..., q values) as NumPy's: ``q``'s axes first, then the kept
    axes (with the reduced ones as 1 for ``keepdims``)."""
    kept = result.shape[:-1]
    result = result.reshape(kept + q.shape)
    result = result.transpose(tuple(range(len(kept), result.ndim)) + tuple(range(len(kept))))
    return result.reshape(q.shape + keep_shape) if keepdims else result


def _quantile(name: str, a: Any, q_in: Any, axis: Any, out: Any, method: str, keepdims: bool,
              empty_nan: bool = False) -> LazyArray:
    q, weak = _q_args(name, q_in)
    s, keep_shape, n = _sorted_last(a, axis, empty_nan)
    _check_q_method(q, method)
    if n == 0 and q.size == 0 and not is_float(s.dtype):  # no quantile of the empty slices: an empty result (NumPy
        # reads a float slice's last value for its NaN check, an IndexError there)
        s, n = full(s.shape[:-1] + (1,), 0, s.dtype), 1
    if n == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0 (a quantile of an empty slice)")
    v = _position(method, n, q.ravel(), np)
    target = outputs(out, 1, name)[0] if out is not None else None
    if method in _PICKING or (method == "linear" and v.dtype.kind in "iu"):  # one value each,
        # in the input's dtype (an integer q, 0 or 1, needs no interpolation either, in NumPy)
        result = _nan_last(s[..., -1:], take(s, v.astype(np.int64), axis=-1))
        if target is not None:  # NumPy's take(..., out=out), then its NaNs copied in: see _picked_into
            _picked_into(name, s, np.dtype(target.dtype))
            return stored(_q_axes_first(result, q, keep_shape, keepdims), out, name)
    else:
        lo, hi, gamma = _neighbours(method, v, n, np)
        lo, hi = take(s, lo.astype(np.int64), axis=-1), take(s, hi.astype(np.int64), axis=-1)
        result = _nan_last(s[..., -1:], _lerp(lo, hi, gamma, weak, None if target is None else np.dtype(target.dtype)))
    return stored(_q_axes_first(result, q, keep_shape, keepdims), out, name, casting="same_kind")  # (NumPy's lerp into out)


def _lerp(lo: LazyArray, hi: LazyArray, gamma: Any, weak: bool, into: np.dtype | None = None) -> LazyArray:
    """NumPy's interpolation between neighbours: ``lo + (hi - lo) * t``, or ``hi - (hi - lo) * (1 -
    t)`` where ``t >= 0.5``. ``gamma`` (host or lazy, in the dtype of ``q``'s positions) is ``t``;
    ``weak``: ``t`` is a Python float to NumPy, which converts it (and ``1 - t``) to the values'
    float dtype (integers: float64), else the values and ``t`` promote (int16 values, a float32 ``q``:
    float32). ``into``: the dtype of an ``out=``, where NumPy's second step, ``subtract(...,
    out=out, dtype=out's)``, subtracts in ``out``'s dtype (int16 values into a float16 ``out``: in
    float16, where ``inf - inf`` is NaN); an ``out`` the result cannot go into by ``same_kind`` is
    left to the write's error."""
    g = asarray(gamma)
    if weak:
        dt = lo.dtype if is_float(lo.dtype) else np.dtype(np.float64)
    else:
        dt = np.result_type(lo.dtype, g.dtype)
    diff = hi - lo
    if not weak:
        lo, hi, diff = lo.astype(dt), hi.astype(dt), diff.astype(dt)
    low, rest = lo + diff * g.astype(dt), diff * (1.0 - g).astype(dt)
    if into is not None and into != low.dtype and np.can_cast(low.dtype, into, "same_kind"):
        return where(g >= 0.5, hi.astype(into) - rest.astype(into), low.astype(into))
    return where(g >= 0.5, hi - rest, low)


def _q_of(name: str, q: Any, scale: float) -> tuple[np.ndarray, bool]:
    if on_device(q):
        raise TypeError(f"{name}: q must be known on the host (a float, a list or a NumPy array), not a device array")
    weak = type(q) in (int, float)  # NumPy's rule: a Python number promotes weakly
    arr = np.asarray(q)
    if scale != 1.0:  # NumPy's percentile divides in q's dtype (a float32 q stays float32; integers: float64)
        arr = np.asarray(np.true_divide(arr, scale))
    elif arr.dtype.kind not in "iuf":
        arr = arr.astype(np.float64)
    if not (np.all(arr >= 0) and np.all(arr <= 1)):
        what = "Percentiles must be in the range [0, 100]" if scale == 100 else "Quantiles must be in the range [0, 1]"
        raise ValueError(what)
    return arr, weak


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> LazyArray:
    """The ``q``-th quantiles along ``axis``, NumPy's ``quantile`` with any of its methods
    (``"linear"``, the default, ``"lower"``, ``"higher"``, ``"nearest"``, ``"midpoint"`` and
    Hyndman and Fan's ``"inverted_cdf"`` ... ``"normal_unbiased"``): ``q``'s axes come first; a
    Python float ``q`` keeps the input's float dtype, a NumPy ``q`` weights in its own float
    dtype, which promotes with the input's (a float64 ``q``: float64), as in NumPy (which returns
    the input's dtype for a NaN-holding slice reduced to a scalar: a dtype that depends on the
    values, which stitchlab's does not); NaN where the slice holds a NaN. A sort step, then
    gathers of the positions (known from ``q`` on the host) and the interpolation fused after
    them. NumPy's ``weights=`` (of ``"inverted_cdf"``) is not supported.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.quantile(sl.asarray(np.arange(10.0)), [0.25, 0.5]).get()
        array([2.25, 4.5 ])
    """
    del overwrite_input  # nothing is overwritten: the sort makes a new array
    return _quantile("quantile", a, q, axis, out, method, keepdims)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False) -> LazyArray:
    """The ``q``-th percentiles (``q`` in [0, 100]): :func:`quantile` of ``q / 100``, NumPy's
    ``percentile``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.percentile(sl.asarray(np.arange(10.0)), 90.0).get()
        array(8.1)
    """
    del overwrite_input  # nothing is overwritten: the sort makes a new array
    return _quantile("percentile", a, q, axis, out, method, keepdims)


#: the operations :func:`_position` and :func:`_neighbours` take, on lazy arrays
_LAZY_OPS = SimpleNamespace(floor=floor, rint=rint, where=where)


def _gather_last(s: LazyArray, positions: LazyArray) -> LazyArray:
    """``s`` at ``positions`` along its last axis: positions computed on the device that are in
    bounds by construction (clipped), so the step needs no check (and can be captured)."""
    n = s.shape[-1]
    pos = clip(positions, 0, n - 1).astype(np.int64)
    return LazyArray(build.take_along_axis(s._node, pos._node, s.ndim - 1, checked=True))


def _nan_stats(name: str, a: Any, axis: Any) -> tuple[LazyArray, tuple[int, ...], LazyArray]:
    s, keep_shape, _ = _sorted_last(a, axis, empty_nan=True)
    return s, keep_shape, (~isnan(s)).sum(-1, keepdims=True)  # NaN sorts last: the first c are numbers


def _one_slice(x: LazyArray, axis: Any) -> bool:
    """Whether NumPy's nan-statistics take ``axis`` of ``x`` as one slice (``None``, or every axis:
    its ``_ureduce`` flattens them), where their result is a NumPy scalar."""
    return axis is None or len(np.lib.array_utils.normalize_axis_tuple(axis, x.ndim)) == x.ndim


def _nan_stored(name: str, result: LazyArray, out: Any, scalar: bool) -> LazyArray:
    """``result`` written into ``out=`` as NumPy's nan-statistics write it, ``out[...] = result``:
    an unsafe cast, except that a ``scalar`` result (one slice, one q: a NumPy scalar there) set
    into an integer ``out`` goes through NumPy's scalar assignment, which raises ``OverflowError``
    for a value out of a signed integer's range (or inf) and ``ValueError`` for NaN. That reads the
    value: it is evaluated now, and NumPy's own assignment makes the stored value (the unsafe
    cast's, where it does not raise). Inside ``sl.jit`` the value is not read (:func:`_values_checked`)."""
    target = outputs(out, 1, name)[0] if out is not None else None
    into = None if target is None else np.dtype(target.dtype)
    if into is None or into.kind not in "iu" or not scalar or not _values_checked():
        return stored(result, out, name)
    from .selection import _evaluated

    (buf,), xp = _evaluated(name, result, why=f"NumPy's {name} of one slice checks the value it writes into an "
                                              f"integer out=")
    held = np.zeros((), into)
    try:
        held[...] = np.asarray(buf if xp is np else xp.asnumpy(buf)).reshape(())[()]
    except (OverflowError, ValueError) as err:
        raise type(err)(f"{name}: {err} (NumPy sets its one-slice result into out= of dtype {into}, which cannot hold "
                        f"it); give a float out=") from None
    return stored(full(result.shape, held[()], into), out, name)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> LazyArray:
    """The median of the values that are not NaN along ``axis``, NumPy's ``nanmedian``: NaN where a
    slice holds only NaN (without NumPy's ``RuntimeWarning``); integers are :func:`median`'s. A
    sort step, then a gather of the middle positions (computed on the device from each slice's
    count of numbers) and the mean of the middle one or two.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanmedian(sl.asarray(np.array([[3.0, np.nan, 1.0, 2.0], [np.nan, 4.0, np.nan, 6.0]])), axis=1).get()
        array([2., 5.])
    """
    x = asarray(a)
    if x.size == 0:  # NumPy's nanmedian of an empty array is its nanmean (which checks out=)
        return nanmean(x, axis, out=out, keepdims=keepdims)
    if not is_float(x.dtype):  # (NumPy's nanmedian writes the median into out=, cast as by out[...] = ...)
        return _nan_stored("nanmedian", median(x, axis, None, overwrite_input, keepdims), out, _one_slice(x, axis))
    s, keep_shape, c = _nan_stats("nanmedian", x, axis)
    lo, hi = _gather_last(s, (c - 1) // 2), _gather_last(s, c // 2)
    if not _one_slice(x, axis) and s.shape[-1] < 600:
        # NumPy's masked-array median of several short slices: the middle pair (the middle value
        # twice for an odd count) summed in the input's dtype, then halved: inf past half its
        # maximum (float16 values above 32752)
        m = where(c == 0, np.nan, (lo + hi) / 2)[..., 0]
    else:
        if x.dtype == np.float16:  # NumPy's median of one slice: a float16 mean, in float32, rounded once
            pair = ((lo.astype(np.float32) + hi.astype(np.float32)) / 2).astype(x.dtype)
        else:
            pair = (lo + hi) / 2
        m = where(c == 0, np.nan, where(c % 2 == 1, lo, pair))[..., 0]
    return _nan_stored("nanmedian", m.reshape(keep_shape) if keepdims else m, out, _one_slice(x, axis))


def _nan_quantile(name: str, a: Any, q_in: Any, axis: Any, out: Any, method: str, keepdims: bool) -> LazyArray:
    x = asarray(a)
    if x.size == 0:  # NumPy's nanquantile of an empty array is its nanmean, q checked and then left out:
        _q_args(name, q_in)  # no axes of q's in the result (NaN, or an empty result), the input's float dtype
        return nanmean(x, axis, out=out, keepdims=keepdims)
    if not is_float(x.dtype):  # no NaN to skip: NumPy's nanquantile is quantile there (NaN for empty slices)
        return _nan_stored(name, _quantile(name[3:], x, q_in, axis, None, method, keepdims, empty_nan=True), out,
                           _one_slice(x, axis) and not np.ndim(q_in))
    q, weak = _q_args(name, q_in)
    s, keep_shape, c = _nan_stats(name, x, axis)
    _check_q_method(q, method)
    # per slice and q, in q's float dtype as NumPy's positions for a Python int n
    vt = q.dtype if q.dtype.kind == "f" else np.dtype(np.float64)
    v = _position(method, c.astype(vt), asarray(q.ravel().astype(vt)), _LAZY_OPS)
    if method in _PICKING or (method == "linear" and q.dtype.kind in "iu"):
        result = _gather_last(s, v)
    else:
        lo, hi, gamma = _neighbours(method, v, c, _LAZY_OPS)
        result = _lerp(_gather_last(s, lo), _gather_last(s, hi), gamma, weak)
    return _nan_stored(name, _q_axes_first(where(c == 0, np.nan, result), q, keep_shape, keepdims), out,
                       _one_slice(x, axis) and not q.ndim)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False) -> LazyArray:
    """:func:`quantile` of the values that are not NaN in each slice, NumPy's ``nanquantile``: NaN
    where a slice holds only NaN (without NumPy's ``RuntimeWarning``), in the dtype of the
    slices with numbers (NumPy's dtype depends on the values there: an all-NaN first or only
    slice gives the input's float dtype for a NumPy or list ``q``; docs/user-guide.md). The positions come from
    each slice's count of numbers, on the device, and are gathered after the sort step. The result's
    shape is :func:`quantile`'s (``q``'s axes first), also for a 2-d ``q`` over several axes,
    where NumPy's ``nanquantile`` orders them otherwise.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanquantile(sl.asarray(np.array([1.0, np.nan, 3.0, 2.0])), 0.25).get()
        array(1.5)
    """
    del overwrite_input  # nothing is overwritten: the sort makes a new array
    return _nan_quantile("nanquantile", a, q, axis, out, method, keepdims)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False) -> LazyArray:
    """:func:`nanquantile` of ``q / 100``, NumPy's ``nanpercentile``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanpercentile(sl.asarray(np.array([1.0, np.nan, 3.0, 2.0])), 50.0).get()
        array(2.)
    """
    del overwrite_input
    return _nan_quantile("nanpercentile", a, q, axis, out, method, keepdims)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> LazyArray:
    """Where the elements of ``v`` would go in the sorted 1-d ``a`` to keep it sorted (NumPy's
    ``searchsorted``: ``side="left"`` the first such position, ``"right"`` the last; NaN sorts
    last; ``sorter`` the positions that sort ``a``). int64, ``v``'s shape; a plan step of its own
    (``cupy.searchsorted``). ``side`` and ``sorter`` are checked as NumPy checks them: ``sorter`` a
    1-d integer array of ``a``'s size, with positions in range (host sorters when called, its
    ``ValueError``; a stitchlab sorter's positions when the gather through it runs, ``IndexError``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.searchsorted(sl.asarray(np.array([1.0, 2.0, 2.0, 5.0])), [2.0, 3.0], side="right").get()
        array([3, 3])
    """
    if isinstance(side, bytes):
        side = side.decode("latin-1")
    if not isinstance(side, str):
        raise TypeError(f"search side must be str, not {type(side).__name__} (got {side!r}); give 'left' or 'right'")
    if side not in ("left", "right"):  # (before the sorter's checks, as NumPy)
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    x, values = asarray(a), asarray(v)
    if sorter is not None:
        x = _sorted_by(x, sorter, values.size)
    return LazyArray(build.searchsorted(x._node, values._node, side))


def _sorted_by(x: LazyArray, sorter: Any, searched: int) -> LazyArray:
    """``x`` (1-d) read through ``searchsorted``'s ``sorter``, after NumPy's checks: a 1-d integer
    array (``TypeError``) of ``x``'s size (``ValueError``) whose positions, when ``searched`` (the
    number of values looked for) is not 0, are in ``[0, x.size)`` (``ValueError``; host sorters
    only: a device sorter's positions are checked when the gather runs, its ``IndexError``)."""
    s = asarray(sorter) if on_device(sorter) else np.asarray(sorter)
    if s.ndim != 1:
        raise TypeError(f"could not parse sorter argument: it must be 1-d (got shape {s.shape}), "
                        f"e.g. sl.argsort(a) of the 1-d a")
    if s.dtype.kind not in "iu":
        raise TypeError(f"sorter must only contain integers (got dtype {s.dtype}), e.g. sl.argsort(a)")
    if s.shape[0] != x.size:
        raise ValueError(f"sorter.size must equal a.size (got {s.shape[0]} and {x.size})")
    if searched == 0:
        return x  # (nothing is looked up: NumPy reads no position of the sorter)
    if isinstance(s, np.ndarray) and s.size and (s.min() < 0 or s.max() >= x.size):
        bad = s[(s < 0) | (s >= x.size)][0]
        raise ValueError(f"Sorter index out of range: {bad} is not a position in a of size {x.size}")
    return take(x, s if isinstance(s, np.ndarray) else sorter)


def digitize(x: Any, bins: Any, right: bool = False) -> LazyArray:
    """The bin of each element of ``x`` (NumPy's ``digitize``): ``i`` with ``bins[i-1] <= x <
    bins[i]`` for increasing bins (``<`` and ``<=`` swapped with ``right=True``), mirrored for
    decreasing ones. A :func:`searchsorted` step. Host ``bins`` (a list, a NumPy array) are
    checked to be monotonic, as NumPy does; stitchlab or CuPy ``bins`` are not (that would read
    them back, so, as in CuPy, bins that are not monotonic give unspecified bins), and their
    direction is found on the device. Either way the direction is NumPy's: that of the first edge
    that differs from ``bins[0]`` (a NaN differs), so sorted bins with NaNs last are increasing.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.digitize(sl.asarray(np.array([0.5, 1.0, 3.0])), [1.0, 2.0, 3.0]).get()
        array([0, 1, 3])
        >>> sl.digitize(sl.asarray(np.array([0.05, 0.5, 1.0])), sl.linspace(1, 0, 5)).get()
        array([4, 2, 0])
    """
    side = "left" if right else "right"
    if on_device(bins):
        lazy = asarray(bins)
        _bins_are_1d(lazy.ndim)
        n = lazy.shape[0]
        if n < 2:
            return searchsorted(lazy, x, side=side)
        # NumPy's direction: that of the first edge that differs from bins[0] (a NaN differs;
        # all equal counts as increasing): increasing where that edge is also the first above it
        differs, above = lazy[1:] != lazy[0], lazy[1:] > lazy[0]
        increasing = ~differs.any() | (above.any() & (above.argmax() == differs.argmax()))
        found = searchsorted(where(increasing, lazy, lazy[::-1]), x, side=side)
        return where(increasing, found, n - found)
    b = np.asarray(bins)
    _bins_are_1d(b.ndim)
    direction = _monotonic_direction(b)
    if direction == 0:
        raise ValueError(f"bins must be monotonically increasing or decreasing (got {b!r})")
    if direction > 0:
        return searchsorted(b, x, side=side)
    return len(b) - searchsorted(b[::-1].copy(), x, side=side)


def _monotonic_direction(b: np.ndarray) -> int:
    """NumPy's check of ``digitize``'s host ``bins`` (its ``_monotonicity``): 1 for increasing, -1
    for decreasing, 0 for neither. As NumPy, the direction is that of the first edge that differs
    from ``b[0]`` (all equal, or none: increasing), the later edges may not turn back, and NaN
    compares false (so a NaN never turns back: sorted bins with NaNs last are increasing)."""
    if b.dtype.kind not in "biu":  # (NumPy compares as float64; whole numbers compare exactly here)
        b = b.astype(np.float64)
    differs = np.flatnonzero(b[1:] != b[0]) if b.size else b
    if differs.size == 0:
        return 1
    i = differs[0] + 1
    with np.errstate(invalid="ignore"):
        if b[0] < b[i]:
            return 0 if np.any(b[i:-1] > b[i + 1:]) else 1
        return 0 if np.any(b[i:-1] < b[i + 1:]) else -1


def _bins_are_1d(ndim: int) -> None:
    if ndim != 1:
        raise ValueError("object too deep for desired array" if ndim > 1 else "object of too small depth for desired array")


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> LazyArray:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (NumPy's ``interp``):
    float64; ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside ``[xp[0], xp[-1]]``; a
    NaN ``x`` gives NaN; ``period`` wraps ``x`` and ``xp`` (then ``left``/``right`` are ignored;
    points that tie after wrapping keep their order, where NumPy's unstable sort may swap them).
    ``xp`` must be increasing (not checked, as in NumPy). A :func:`searchsorted` step and four
    gathers, with NumPy's formula fused after them (on the GPU its multiply and add may be one
    fused rounding).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.interp(sl.asarray(np.array([0.5, 1.5, 9.0])), [0.0, 1.0, 2.0], [0.0, 10.0, 0.0]).get()
        array([5., 5., 0.])
    """
    f64 = np.dtype(np.float64)
    xs, xpa, fpa = asarray(x).astype(f64), asarray(xp).astype(f64), asarray(fp).astype(f64)
    if xpa.ndim != 1 or fpa.ndim != 1:
        raise ValueError("interp: xp and fp must be 1-D sequences")
    if xpa.shape[0] != fpa.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xpa.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period, left, right = abs(period), None, None
        xs, xpa = xs % period, xpa % period
        order = argsort(xpa)
        xpa, fpa = take(xpa, order), take(fpa, order)
        from .api import concatenate

        xpa = concatenate([xpa[-1:] - period, xpa, xpa[:1] + period])
        fpa = concatenate([fpa[-1:], fpa, fpa[:1]])
    n = xpa.shape[0]
    first, last = fpa[0], fpa[n - 1]
    lval = first if left is None else asarray(left).astype(f64)
    rval = last if right is None else asarray(right).astype(f64)
    if n == 1:  # NumPy's comparisons: a NaN x takes fp[0] here
        return where(xs < xpa[0], lval, where(xs > xpa[0], rval, first))
    j = searchsorted(xpa, xs, side="right") - 1  # xp[j] <= x < xp[j + 1]
    k = clip(j, 0, n - 2)
    x0, x1, y0, y1 = take(xpa, k), take(xpa, k + 1), take(fpa, k), take(fpa, k + 1)
    slope = (y1 - y0) / (x1 - x0)
    r = slope * (xs - x0) + y0
    r = where(isnan(r), slope * (xs - x1) + y1, r)  # NumPy tries the other end when NaN
    r = where(isnan(r) & (y0 == y1), y0, r)
    r = where(xs == x0, y0, r)
    r = where(j == n - 1, last, r)
    r = where(xs > xpa[n - 1], rval, where(j < 0, lval, r))
    return where(isnan(xs), xs, r)
