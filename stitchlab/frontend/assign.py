"""Assignment: ``x[key] = value``, ``x.fill(value)`` and NumPy's functions that write into an
argument (``copyto``, ``place``, ``putmask``, ``put``, ``put_along_axis``, ``fill_diagonal``).

A stitchlab array stands for an expression, so assigning into one makes it stand for a new
expression, as an in-place operator does (``x += 1``): the array object is the same, arrays built
from it earlier keep the value it had then (NumPy's views would see the change), and the arrays it
was made from are not written (a wrapped CuPy or NumPy array keeps its values).

How each kind of index is built:

* integers, slices (any step), ``None`` and ``...``: ``where(inside, value, x)``, with ``value``
  moved to its place by index maps (a pad; a reshape of a broadcast for steps other than 1) and
  ``inside`` computed from positions: fused into the kernels around it, nothing evaluated;
* a boolean mask with one value (or one row) for every selected position: ``where(mask, value,
  x)``, fused as well; with one value per selected position, a scatter step at the mask's
  positions (found on the device for a device mask, which is then evaluated);
* integer arrays (and integers beside them): a scatter step (``build.scatter``, NumPy's
  assignment into a copy, run by the array library) along their axes merged, as
  :func:`stitchlab.frontend.library.advanced_index` gathers. Of a position given more than once
  the last value is kept, as NumPy's assignment leaves it.

Values are cast to ``x``'s dtype as NumPy's assignment casts them (``unsafe``; Python scalars and
host data with NumPy's own conversion and errors, e.g. an integer out of range).
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

import numpy as np

from ..ir.dtypes import cast, check_copied_int, check_python_ints, is_bfloat16
from ..ir.ops import OPS, Kind
from ..runtime.interpreter import merged_position_error
from . import api, build
from .api import ravel, where  # type: ignore[attr-defined]
from .array import LazyArray
from .creation import _leaf_on, arange, asarray
from .library import (
    _flat_positions,
    _host_positions,
    _is_array,
    _is_int,
    _is_mask,
    bool_scalar_advanced,
    check_key_items,
    cumsum,
    index_parts,
    integer_key,
    is_bool_scalar,
    on_device,
    unit_axes,
)

__all__ = ["copyto", "place", "putmask", "put", "put_along_axis", "fill_diagonal"]


# --- values ------------------------------------------------------------------------------------
def _converted(x: LazyArray, value: Any, casting: str = "unsafe") -> LazyArray:
    """``value`` in ``x``'s dtype as NumPy's assignment converts it (not broadcast yet); an array
    (not a list or a scalar) only under ``casting``, else NumPy's ``TypeError``."""
    if casting != "unsafe" and (on_device(value) or isinstance(value, np.ndarray)):
        _check_cast(value.dtype, x.dtype, casting)
    if on_device(value):
        v = asarray(value)
        return v if v.dtype == x.dtype else v.astype(x.dtype)
    host = np.asarray(value)
    if is_bfloat16(x.dtype):
        conv = _bfloat16_values(x.dtype, value, host)
    else:
        if host.dtype == object:  # (Python ints past 64 bits named with the dtype; any other object,
            # None, a string, a Fraction, is NumPy's to convert below, with NumPy's errors)
            check_python_ints(host, x.dtype)
        conv = np.empty(host.shape, x.dtype)
        try:
            conv[...] = value  # NumPy's conversion and its errors (an integer out of range, NaN into an integer)
        except TypeError as e:  # (an object NumPy cannot convert, named with the dtype)
            raise TypeError(f"cannot assign {reprlib.repr(value)} to a stitchlab array of dtype {x.dtype}: {e}") from None
    if conv.ndim:
        return _leaf_on(x, conv)
    c = build.const(conv[()], x.dtype)
    c.device = x._node.device
    return LazyArray(c)


def _bfloat16_values(dtype: np.dtype, value: Any, host: np.ndarray) -> np.ndarray:
    """Host ``value`` (``host``: ``np.asarray(value)``) in bfloat16 as NumPy with ml_dtypes
    converts it, with its errors: ml_dtypes takes numbers of any kind (bfloat16 scalars among
    Python floats too) and arrays of numbers, and raises ``TypeError`` for ``None``, a Python
    complex, a string (where NumPy writes NaN into a float array, and parses a string). Rounded
    once, as the kernels round (:func:`stitchlab.ir.dtypes.cast`); an object array (Python ints
    past 64 bits, NumPy scalars mixed with Python ones) as ml_dtypes converts each element."""
    if isinstance(value, np.ndarray) and (value.dtype.kind in "biufc" or is_bfloat16(value.dtype)):
        return cast(host, dtype)
    ref = np.empty(host.shape, dtype)
    try:
        ref[...] = value
    except TypeError as e:
        raise TypeError(f"cannot assign {value!r} to a stitchlab array of dtype bfloat16: {e} (ml_dtypes converts "
                        f"numbers and arrays of numbers only, not None, complex or strings)") from None
    return ref if host.dtype == object else cast(host, dtype)


def _check_cast(src: Any, dst: np.dtype, casting: str, what: str = "array data") -> None:
    if not np.can_cast(src, dst, casting):
        raise TypeError(f"Cannot cast {what} from {np.dtype(src)!r} to {dst!r} according to the rule {casting!r}")


def _fitted(v: LazyArray, shape: tuple[int, ...], advanced: bool = False) -> LazyArray:
    """``v`` broadcast to ``shape`` as NumPy's assignment broadcasts it, or NumPy's ``ValueError``
    (:func:`_fitted_shape`)."""
    fit = _fitted_shape(v.shape, shape, advanced)
    v = v if fit == v.shape else v.reshape(fit)
    return LazyArray(build.broadcast_to(v._node, tuple(shape)))


def _fitted_shape(given: tuple[int, ...], shape: tuple[int, ...], advanced: bool = False) -> tuple[int, ...]:
    """The shape a value of shape ``given`` takes before it is broadcast to ``shape`` as NumPy's
    assignment broadcasts it, or NumPy's ``ValueError``. Into a view (basic indexing) leading axes
    of extent 1 beyond ``shape``'s are dropped; with ``advanced`` (integer arrays, boolean
    scalars: NumPy's advanced assignment) the value is reshaped to its trailing ``len(shape)``
    axes where that keeps its size, which also drops leading axes of any extent from an empty one
    (``x[[], []] = np.ones((3, 0))`` writes nothing and raises nothing)."""
    given, shape = tuple(given), tuple(shape)
    out = given
    if advanced and len(out) > len(shape) and math.prod(out[len(out) - len(shape):]) == math.prod(out):
        out = out[len(out) - len(shape):]
    while len(out) > len(shape) and out[0] == 1:
        out = out[1:]
    try:
        if np.broadcast_shapes(out, shape) != shape:
            raise ValueError
    except ValueError:
        shape_text = build.shapes_text([shape])  # (as NumPy writes shapes: (2,3))
        if advanced:
            raise ValueError(f"shape mismatch: value array of shape {build.shapes_text([given])} could not be "
                             f"broadcast to indexing result of shape {shape_text}") from None
        # (named without the leading axes of 1 dropped above, as NumPy names it)
        raise ValueError(f"could not broadcast input array from shape {build.shapes_text([out])} into shape {shape_text}") from None
    return out


def _value(x: LazyArray, value: Any, shape: tuple[int, ...], advanced: bool = False) -> LazyArray:
    return _fitted(_converted(x, value), shape, advanced)


# --- x[key] = value ----------------------------------------------------------------------------
def assign(x: LazyArray, key: Any, value: Any) -> build.Node:
    """The node ``x`` stands for after ``x[key] = value`` (see the module docstring)."""
    items = key if isinstance(key, tuple) else (key,)
    key = integer_key(items) or key
    items = key if isinstance(key, tuple) else (key,)
    if any(is_bool_scalar(k) for k in items) and not bool_scalar_advanced(items):
        # a boolean scalar (a 0-d mask): NumPy's advanced assignment into a new axis of 1 (True) or
        # 0 (False), beside slices, None and '...' (beside arrays or integers: a scatter, below)
        items = tuple(k[()] if isinstance(k, np.ndarray) else k for k in items)
        flags = [bool(k) for k in items if isinstance(k, (bool, np.bool_))]
        if len(items) == 1 and x.ndim == 0:  # (a mask of x's shape: NumPy's mask assignment)
            return _assign_mask(x, np.asarray(items[0]), value)
        v = _value(x, value, x[items].shape, advanced=True)  # (checked where nothing is selected too, as NumPy)
        if not all(flags):  # a False selects nothing: nothing is written
            return x._node
        return _assign_basic(x, tuple(None if isinstance(k, (bool, np.bool_)) else k for k in items), v)
    if any(_is_array(k) for k in items) or bool_scalar_advanced(items):
        if any(_is_array(k) and _is_mask(k) and not is_bool_scalar(k) for k in items):
            if len(items) != 1:
                raise IndexError("a boolean mask must be the only index in an assignment; combine the "
                                 "conditions into one mask (sl.where(mask, value, x) for others)")
            return _assign_mask(x, items[0], value)
        return _assign_arrays(x, items, value)
    return _assign_basic(x, key, value)


def _regions(x: LazyArray, key: Any) -> list[tuple[int, int, int]]:
    """Per axis of ``x``: the first position, step and number of positions a basic ``key``
    selects (an integer: itself, 1, 1). ``key`` was already checked by ``x[key]``."""
    items = key if isinstance(key, tuple) else (key,)
    real = [k for k in items if k is not None]
    if Ellipsis in real:
        i = real.index(Ellipsis)
        real = real[:i] + [slice(None)] * (x.ndim - len(real) + 1) + real[i + 1:]
    real += [slice(None)] * (x.ndim - len(real))
    out = []
    for n, k in zip(x.shape, real, strict=True):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            out.append((start, step, len(range(start, stop, step))))
        else:
            out.append((int(k) % n, 1, 1))
    return out


def _nesting(value: list | tuple) -> int:
    """How deep the first elements of a list or tuple nest (NumPy's dimensions for a regular one)."""
    depth = 0
    while isinstance(value, (list, tuple)) and len(value):
        depth, value = depth + 1, value[0]
    return depth + (isinstance(value, (list, tuple)) or np.ndim(value))


def one_element(x: LazyArray, value: Any, fix: str = "or a key that selects as many elements as it holds") -> Any:
    """``value`` as NumPy's conversion of one element of ``x`` reads it (``x[i, j] = value``,
    ``x.fill(value)``): a sequence's truth for bool (``[]`` is False, ``[0]`` True), else NumPy's
    error for a sequence (``TypeError`` for an integer or bfloat16 array, ``ValueError`` for a
    float one); ``fix`` finishes the message's advice."""
    if isinstance(value, (list, tuple)):  # (as NumPy's scalar conversion of one element reads a sequence)
        if x.dtype == np.bool_:
            return bool(value)
        if x.dtype.kind in "iu" or is_bfloat16(x.dtype):
            raise TypeError(f"cannot assign the {type(value).__name__} {value!r} to one element of an array of dtype "
                            f"{x.dtype}: give a number, {fix}")
    # (an array's shape is checked before its values are converted, as NumPy checks it)
    shape = value.shape if on_device(value) or isinstance(value, np.ndarray) else _converted(x, value).shape
    if shape and not (x.dtype == np.bool_ and math.prod(shape) == 1):  # (NumPy's truth of one value for bool)
        if is_bfloat16(x.dtype):  # (ml_dtypes' conversion of one element takes a number only)
            raise TypeError(f"cannot assign an array of shape {shape} to one element of an array of dtype "
                            f"bfloat16: give a number, {fix}")
        raise ValueError("setting an array element with a sequence.")
    return value


def _assign_basic(x: LazyArray, key: Any, value: Any) -> build.Node:
    view = x[key].shape  # (NumPy's errors for the key)
    items = key if isinstance(key, tuple) else (key,)
    if len(items) == x.ndim and all(_is_int(k) for k in items):  # one element: NumPy takes a scalar
        value = one_element(x, value)
    elif isinstance(value, (list, tuple)) and _nesting(value) > len(view):
        # (NumPy reads a list into at most the view's dimensions: [[6]] into x[0:1] is refused, where
        # an array of shape (1, 1) drops its leading axis)
        raise ValueError(f"setting an array element with a sequence. The requested array would exceed "
                         f"the maximum number of dimension of {len(view)}.")
    v = _value(x, value, view)
    regions = _regions(x, key)
    v = v.reshape(tuple(length for _, _, length in regions))  # None's axes out, integers' in
    return _embed(x, regions, v)._node


def _embed(x: LazyArray, regions: list[tuple[int, int, int]], v: LazyArray) -> LazyArray:
    """``x`` with the positions of ``regions`` (per axis: first, step, count) replaced by ``v``
    (of the regions' shape): ``v`` moved to its place by index maps, selected by positions."""
    inside: Any = None
    for d, (start, step, length) in enumerate(regions):
        n = x.shape[d]
        if length == 0:
            return x
        if step < 0:  # the same positions, walked up: the values reversed
            v, start, step = v[(slice(None),) * d + (slice(None, None, -1),)], start + (length - 1) * step, -step
        span = (length - 1) * step + 1 if length else 0
        if step > 1:  # each value followed by step - 1 unused ones: a reshape of a broadcast
            s = v.shape
            v = LazyArray(build.broadcast_to(v.reshape(s[:d + 1] + (1,) + s[d + 1:])._node, s[:d + 1] + (step,) + s[d + 1:]))
            v = v.reshape(s[:d] + (length * step,) + s[d + 1:])[(slice(None),) * d + (slice(0, span),)]
        if step == 1 and span == n:
            continue
        v = LazyArray(build.pad(v._node, d, start, n - start - span, "edge", masked=True))
        at = arange(n, dtype=np.int32 if n < 2**31 else np.int64).reshape((-1,) + (1,) * (x.ndim - d - 1))
        here = (at >= start) & (at < start + span)
        if step > 1:
            here = here & ((at - start) % step == 0)
        inside = here if inside is None else inside & here
    return v if inside is None else where(inside, v, x)


def _assign_mask(x: LazyArray, mask: Any, value: Any) -> build.Node:
    """``x[mask] = value``: a boolean ``mask`` over ``x``'s leading axes."""
    m = asarray(mask) if on_device(mask) else np.asarray(mask, dtype=bool)
    build.check_mask_shape(x.shape, m.shape)
    rest = x.shape[m.ndim:]
    v = _converted(x, value)
    if not rest and v.ndim > 1:
        raise TypeError(f"NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, input has {v.ndim} dimensions")
    while v.ndim > len(rest) + 1 and v.shape[0] == 1:
        v = v.reshape(v.shape[1:])
    if v.ndim <= len(rest) or v.shape[0] == 1:  # one value (or row) for every selected position
        one = _fitted(v.reshape(v.shape[1:]) if v.ndim > len(rest) else v, rest)
        picked = asarray(m) if isinstance(m, np.ndarray) else m
        return where(picked.reshape(m.shape + (1,) * len(rest)), one, x)._node
    if isinstance(m, np.ndarray):
        pos = np.flatnonzero(m)
    else:
        from .selection import flatnonzero

        pos = flatnonzero(m)  # (evaluates the mask: the count decides the values' shape)
    count = pos.shape[0]
    if v.shape[0] != count:
        raise ValueError(
            f"NumPy boolean array indexing assignment cannot assign {v.shape[0]} input values to the "
            f"{count} output values where the mask is true"
        )
    flat = x.reshape((math.prod(m.shape),) + rest)
    positions = _leaf_on(x, pos) if isinstance(pos, np.ndarray) else pos
    new = build.scatter(flat._node, positions._node, _fitted(v, (count,) + rest)._node, 0, checked=True)
    return build.reshape(new, x.shape)


def _in_merged_block(x: LazyArray, items: tuple[Any, ...], hint: str, update: Any, fit: Any = None) -> build.Node:
    """``x`` with the block that a key of integer arrays (and integers beside them, slices, ``...``)
    selects replaced: the arrays' axes are merged into one at position ``at`` of the block, and
    ``update(merged, pos, at, sizes, names)`` returns the new merged block (``pos``: the positions
    in the merged axis, :func:`_flat_positions`; ``sizes``: the merged axes' extents; ``names``:
    those axes as NumPy's errors name them, :func:`_device_checks`). ``hint`` names what
    a key may hold, for NumPy's errors. ``fit(view)``, given, checks the value against the shape
    the key selects (merged axis unmerged) before the positions are checked, as NumPy does.
    ``None`` and boolean scalars in the key: a block of ``x`` with unit axes (:func:`unit_axes`)."""
    unit, items, names = unit_axes(x, items)
    node = _in_block(unit, items, names, hint, update, fit)
    return node if unit is x else build.reshape(node, x.shape)


def _in_block(x: LazyArray, items: tuple[Any, ...], names: list[int], hint: str, update: Any, fit: Any) -> build.Node:
    """:func:`_in_merged_block` of a key without ``None`` or boolean scalars (``names``: the axes
    of ``x`` as NumPy's errors name them)."""
    items, adv, basic, at, perm = index_parts(x, items, hint)
    block = x[basic]
    sizes = [block.shape[ax] for ax in adv]

    def merge(a: LazyArray) -> LazyArray:
        moved = a.transpose(perm)
        return moved.reshape(moved.shape[:at] + (math.prod(sizes),) + moved.shape[at + len(adv):])

    def unmerge(m: LazyArray, shape: tuple[int, ...]) -> LazyArray:
        return m.reshape(tuple(shape[ax] for ax in perm)).transpose(list(np.argsort(perm)))

    def shaped(shape: tuple[int, ...]) -> None:
        moved = tuple(block.shape[ax] for ax in perm)
        fit(moved[:at] + shape + moved[at + len(adv):])

    named = [names[ax] for ax in adv]
    pos = _flat_positions(x, [items[ax] for ax in adv], sizes, named, shaped if fit is not None else None)
    new = unmerge(update(merge(block), pos, at, sizes, named), block.shape)
    if all(k == slice(None) for k in basic):
        return new._node
    if block.size == 0 and not isinstance(pos, np.ndarray):
        return unmerge(_rewritten(merge(x), pos, at, sizes, named), x.shape)._node
    return _embed(x, _regions(x, basic), new)._node


def _device_checks(sizes: list[int], names: list[int]) -> dict[str, Any]:
    """How a scatter step at device positions names one out of bounds: the extents of the axes
    merged (several arrays), or NumPy's axis (one array; the block's axis may count new axes of 1
    before it, :func:`~stitchlab.frontend.library.unit_axes`)."""
    return {"merged": tuple(sizes), "named": tuple(names)} if len(sizes) > 1 else {"named": names[0]}


def _rewritten(merged: LazyArray, pos: LazyArray, at: int, sizes: list[int], names: list[int]) -> LazyArray:
    """``merged`` with its own values written back at the device positions ``pos`` (along ``at``,
    the merged axes of ``sizes``): unchanged, but the positions are checked by the scatter step
    (NumPy's ``IndexError``, one flag read, as the scatter of a non-empty block). For a key whose
    slices select nothing: NumPy checks its positions all the same."""
    flat, n = ravel(pos), merged.shape[at]
    view = merged.shape[:at] + flat.shape + merged.shape[at + 1:]
    if n:  # (gathered at positions brought in range, so that only the scatter checks them)
        inside = where(flat < 0, flat + n, flat).clip(0, n - 1)
        old = LazyArray(build.take(merged._node, inside._node, at, checked=True))
    else:
        old = LazyArray(build.broadcast_to(build.const(0, merged.dtype), view))
    return LazyArray(build.scatter(merged._node, flat._node, old._node, at, checked=False, **_device_checks(sizes, names)))


def _assign_arrays(x: LazyArray, items: tuple[Any, ...], value: Any, ufunc: str | None = None) -> build.Node:
    """``x[key] = value`` with integer arrays in ``key`` (and integers beside them): a scatter
    along their axes merged, in the block the key's slices select. With ``ufunc``,
    ``ufunc.at(x, key, value)`` instead (``value``: a stitchlab array of the op's loop dtype)."""
    hint = "assign with integer arrays, integers, slices and '...' (a boolean mask alone)"
    fit = None
    if ufunc is None:  # (NumPy's order of errors: the key's form, its integers' bounds and its arrays'
        # dtypes; the value's conversion (x[[0, 7]] = "abc" raises the value's ValueError); the arrays'
        # broadcast, the value's against it, then the arrays' bounds)
        unit, key, names = unit_axes(x, items)
        check_key_items(unit, index_parts(unit, key, hint)[0], names)
        value = _converted(x, value)

        def fit(view: tuple[int, ...]) -> None:
            _fitted(value, view, advanced=True)

    def update(merged: LazyArray, pos: Any, at: int, sizes: list[int], names: list[int]) -> LazyArray:
        view = merged.shape[:at] + tuple(np.shape(pos)) + merged.shape[at + 1:]
        v = _value(x, value, view, advanced=True) if ufunc is None else _fitted(value, view)
        v = v.reshape(merged.shape[:at] + (math.prod(np.shape(pos)),) + merged.shape[at + 1:])
        if ufunc is not None and isinstance(pos, np.ndarray):  # (repeats accumulate: applied in their order)
            flat = pos.ravel()
            order = np.argsort(flat, kind="stable")  # (sorted here, so that the step sorts nothing)
            given = _leaf_on(x, order)._node if np.any(order != np.arange(flat.size)) else None
            return LazyArray(build.scatter(merged._node, _leaf_on(x, flat[order])._node, v._node, at, checked=True,
                                           ufunc=ufunc, presorted=True, order=given))
        if ufunc is not None:
            return LazyArray(build.scatter(merged._node, ravel(pos)._node, v._node, at, checked=False, ufunc=ufunc,
                                           **_device_checks(sizes, names)))
        if isinstance(pos, np.ndarray):
            flat = pos.ravel()
            last = flat.size - 1 - np.unique(flat[::-1], return_index=True)[1]  # each position's last entry
            if last.size < flat.size:
                v = LazyArray(build.take(v._node, _leaf_on(x, last)._node, at, checked=True))
                flat = flat[last]
            return LazyArray(build.scatter(merged._node, _leaf_on(x, flat)._node, v._node, at, checked=True))
        return LazyArray(build.scatter(merged._node, ravel(pos)._node, v._node, at, checked=False,
                                       **_device_checks(sizes, names)))

    return _in_merged_block(x, items, hint, update, fit)


def _unary_at_arrays(x: LazyArray, items: tuple[Any, ...], f: Any) -> build.Node:
    """``ufunc.at(x, key)`` of a unary op ``f`` (LazyArray -> LazyArray) with integer arrays in
    ``key``: a position given ``c`` times gets ``f`` applied ``c`` times (NumPy's unbuffered
    repeats); the positions of each count are gathered once, ``f`` applied ``c`` times in one
    fused expression, and scattered back. Device positions are read back to count them."""
    def update(merged: LazyArray, pos: Any, at: int, sizes: list[int], names: list[int]) -> LazyArray:
        if not isinstance(pos, np.ndarray) and len(sizes) == 1:  # (one array's own positions: NumPy's error)
            pos = build.check_indices(np.asarray(pos.get()), sizes[0], names[0], indexing=True)
        elif not isinstance(pos, np.ndarray):  # (several merged: see _flat_positions)
            pos, n = np.asarray(pos.get()), math.prod(sizes)
            if np.any(pos >= n):
                raise IndexError(merged_position_error(pos, sizes, names))
        unique, counts = np.unique(pos.ravel(), return_counts=True)
        for c in np.unique(counts):
            where_c = _leaf_on(x, unique[counts == c])._node
            v = LazyArray(build.take(merged._node, where_c, at, checked=True))
            for _ in range(int(c)):
                v = f(v)
            merged = LazyArray(build.scatter(merged._node, where_c, v._node, at, checked=True))
        return merged

    return _in_merged_block(x, items, "index with integer arrays, integers, slices and '...' (a boolean mask alone)", update)


# --- NumPy's functions that write into an argument ---------------------------------------------
def _repeated(v: LazyArray, n: int, at: Any = None) -> LazyArray:
    """``n`` values from the 1-d, non-empty ``v`` repeated as NumPy repeats a short value array:
    element i is ``v[at[i] % v.size]`` (``at``: int64 positions, default ``0 .. n-1``). One value
    is broadcast; others are a gather step (positions in range by construction)."""
    if v.size == 1:
        return _fitted(v.reshape(()), (n,))
    if at is None:
        if v.size == n:
            return v
        at = arange(n, dtype=np.int64)
    return LazyArray(build.take(v._node, (at % v.size)._node, 0, checked=True))


def _target(name: str, a: Any) -> LazyArray:
    if not isinstance(a, LazyArray):
        raise TypeError(f"sl.{name} writes into a stitchlab array (got {type(a).__name__}); for a NumPy or "
                        f"CuPy array call numpy.{name} or cupy.{name}")
    return a


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """Write ``src`` (broadcast to ``dst``'s shape) into ``dst`` where ``where`` is true, as NumPy's
    ``copyto``, ``casting`` included. A stitchlab ``dst`` then stands for the new value (fused
    with the work around it); a NumPy or CuPy ``dst`` is written in place (``src`` evaluated).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.zeros(4)
        >>> sl.copyto(x, sl.arange(4.0), where=np.array([True, False, True, False]))
        >>> x.get()
        array([0., 0., 2., 0.])
    """
    casting = build.casting_arg(casting, "copyto")
    if not isinstance(dst, LazyArray):
        if hasattr(dst, "__cuda_array_interface__"):
            import cupy as xp
        elif isinstance(dst, np.ndarray):
            xp = np  # type: ignore[assignment]
        else:
            raise TypeError(f"copyto() argument 1 must be an array, not {type(dst).__name__}")
        def native(a: Any) -> Any:  # (a stitchlab array evaluated, on dst's side)
            return (a.get() if xp is np else xp.asarray(a)) if isinstance(a, LazyArray) else a

        xp.copyto(dst, native(src), casting=casting, where=native(where))
        return
    if isinstance(src, (bool, int, float)):  # a Python scalar: its kind against dst's (NEP 50)
        check_copied_int(src, dst.dtype)
        try:
            weak = np.result_type(dst.dtype, src)
        except TypeError:  # (bfloat16 with a Python scalar: ml_dtypes' own promotion)
            weak = dst.dtype
        _check_cast(weak, dst.dtype, casting, "scalar")
    else:  # (a 0-d source is a "scalar" in NumPy's message, an array among them)
        _check_cast(src.dtype if on_device(src) else np.asarray(src).dtype, dst.dtype, casting,
                    "scalar" if np.ndim(src) == 0 else "array data")
    if not on_device(src):  # (NumPy's copyto: host data as an array, its shape checked, then cast as that
        # array casts: [300] into int8 wraps under the rule that lets it, where x[...] = [300] raises)
        src = np.asarray(src)
        _fitted_shape(src.shape, dst.shape)
        src = cast(src, dst.dtype)
    v = _value(dst, src, dst.shape)
    if where is True:
        dst._rebind(v._node)
        return
    w = api.bool_mask(where, "copyto()")
    dst._rebind(api.where(_fitted(w, dst.shape), v, dst)._node)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """Put ``vals`` (repeated as needed) in order into the positions of ``arr`` where ``mask`` (of
    ``arr``'s size) is true, as NumPy's ``place``: ``arr`` then stands for the new value. The
    positions are a running count of the mask (a scan step), the values a gather step at them.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(6))
        >>> sl.place(x, x > 2, [40, 50])
        >>> x.get()
        array([ 0,  1,  2, 40, 50, 40])
    """
    x = _target("place", arr)
    m = ravel(asarray(mask)).astype(bool)
    if m.size != x.size:
        raise ValueError("place: mask and data must be the same size")
    v = ravel(_converted(x, vals, "safe"))
    if v.size == 0:
        if bool(m.any()):  # (NumPy's error: reads one flag back)
            raise ValueError("Cannot insert from an empty array!")
        return
    picked = _repeated(v, m.size, cumsum(m) - 1)  # (the count of selected positions before each)
    x._rebind(where(m, picked, ravel(x)).reshape(x.shape)._node)


def putmask(a: Any, mask: Any, values: Any) -> None:
    """Set ``a``'s elements where ``mask`` (of ``a``'s size) is true to ``values``' at the same
    flat position (``values`` repeated as needed), as NumPy's ``putmask``: ``a`` then stands for
    the new value.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(6))
        >>> sl.putmask(x, x > 2, [10, 20])
        >>> x.get()
        array([ 0,  1,  2, 20, 10, 20])
    """
    x = _target("putmask", a)
    m = ravel(asarray(mask)).astype(bool)  # (NumPy pairs them by flat position: any shape of a's size)
    if m.size != x.size:
        raise ValueError("putmask: mask and data must be the same size")
    v = ravel(_converted(x, values, "safe"))
    if v.size == 0:
        return
    x._rebind(where(m, _repeated(v, x.size), ravel(x)).reshape(x.shape)._node)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """Set ``a``'s elements at the flat positions ``ind`` to ``v`` (repeated as needed), as NumPy's
    ``put`` with its ``mode`` (``"raise"``, ``"wrap"``, ``"clip"``): ``a`` then stands for the new
    value (a scatter step; of a position given more than once, the last value is kept).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.zeros(5, dtype=np.int64)
        >>> sl.put(x, [0, 2, -1], [7, 8])
        >>> x.get()
        array([7, 0, 8, 0, 7])
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    x = _target("put", a)
    n = x.size
    host = _host_positions(ind)
    if host is not None and host.dtype.kind == "f" and not isinstance(ind, np.ndarray):
        host = np.array(ind, dtype=np.int64)  # (NumPy converts a list or a number of positions as int() does)
    idx: Any = ravel(asarray(ind)) if host is None else host.ravel()
    if idx.dtype.kind not in "iub":  # (an array: NumPy's safe cast to its index type)
        raise TypeError(f"Cannot cast array data from {idx.dtype!r} to dtype('int64') according to the rule 'safe': "
                        f"put takes integer positions (round them first, e.g. ind.astype(np.int64))")
    values = ravel(_converted(x, v))
    if idx.size == 0:
        return
    if n == 0:  # (NumPy's order: positions into an empty array raise, values or none)
        raise IndexError("cannot replace elements of an empty array")
    if values.size == 0:
        return
    if mode == "wrap":
        idx = idx.astype(np.int64) % n
    elif mode == "clip":
        idx = idx.astype(np.int64).clip(0, n - 1)
    x._rebind(_scatter_flat(x, idx, _repeated(values, idx.shape[0])))


def _scatter_flat(x: LazyArray, idx: Any, values: LazyArray) -> build.Node:
    """``x`` with the flat positions ``idx`` (host or device, 1-d) set to ``values``."""
    flat = ravel(x)
    if isinstance(idx, np.ndarray):
        return build.reshape(_assign_arrays(flat, (idx,), values), x.shape)
    return build.reshape(build.scatter(flat._node, idx._node, values._node, 0, checked=False), x.shape)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """Set ``arr``'s elements at ``indices`` along ``axis`` to ``values`` (broadcast), as NumPy's
    ``put_along_axis``: ``indices`` has ``arr``'s number of dimensions (``axis=None``: 1-d, into
    the flattened array); ``arr`` then stands for the new value (a scatter step).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([[10, 30, 20], [60, 40, 50]]))
        >>> sl.put_along_axis(x, sl.argmax(x, axis=1, keepdims=True), 0, axis=1)
        >>> x.get()
        array([[10,  0, 20],
               [ 0, 40, 50]])
    """
    x = _target("put_along_axis", arr)
    host = _host_positions(indices)
    ind = host if host is not None else asarray(indices)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        build.check_index_dtype(ind.dtype, along_axis=True)  # (a bool array is no mask here)
        x._rebind(build.reshape(assign(ravel(x), indices, values), x.shape))
        return
    axis = build.normalize_axis(axis, x.ndim)  # (NumPy's order of checks: axis, the positions' type, ndim)
    build.check_index_dtype(ind.dtype, along_axis=True)
    if ind.ndim != x.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    key = tuple(indices if d == axis else np.arange(n).reshape((-1,) + (1,) * (x.ndim - d - 1))
                for d, n in enumerate(x.shape))
    x._rebind(assign(x, key, values))


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """Set the main diagonal of ``a`` (2-d, or every axis of one extent) to ``val`` (repeated as
    needed), as NumPy's ``fill_diagonal``, ``wrap`` included: ``a`` then stands for the new value,
    one fused ``where`` over positions (a gather step for more than one value).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.zeros((3, 3), dtype=np.int32)
        >>> sl.fill_diagonal(x, [1, 2])
        >>> x.get()
        array([[1, 0, 0],
               [0, 2, 0],
               [0, 0, 1]], dtype=int32)
    """
    x = _target("fill_diagonal", a)
    if x.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if x.ndim == 2:
        step = x.shape[1] + 1
        end = x.size if wrap else x.shape[1] * x.shape[1]
    else:
        if len(set(x.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step, end = 1 + int(np.cumprod(x.shape[:-1]).sum()), x.size
    v = ravel(_converted(x, val))
    if v.size == 0 or x.size == 0:
        return
    at = arange(x.size, dtype=np.int64)
    on = (at % step == 0) & (at < end)
    x._rebind(where(on, _repeated(v, x.size, at // step), ravel(x)).reshape(x.shape)._node)


# --- ufunc.at ----------------------------------------------------------------------------------
def _at_mask(x: LazyArray, mask: Any) -> Any:
    """The boolean ``mask`` of a ``ufunc.at`` key into ``x``, checked against ``x``'s shape: it
    fuses as a ``where``, the mask not evaluated."""
    m = asarray(mask) if on_device(mask) else np.asarray(mask, dtype=bool)
    build.check_mask_shape(x.shape, m.shape)
    return m


def _unary_at(name: str, x: LazyArray, indices: Any, work: np.dtype) -> None:
    """:func:`ufunc_at` of the unary op ``name`` (loop dtype ``work``)."""
    def f(old: LazyArray) -> LazyArray:
        return LazyArray(build.elementwise(name, old.astype(work)._node)).astype(x.dtype)

    items = indices if isinstance(indices, tuple) else (indices,)
    if isinstance(indices, (bool, np.bool_)):  # (all of x once, or nothing)
        if indices:
            x._rebind(f(x)._node)
        return
    if len(items) == 1 and _is_array(items[0]) and _is_mask(items[0]):
        m = _at_mask(x, items[0])
        x._rebind(where(asarray(m).reshape(m.shape + (1,) * (x.ndim - m.ndim)), f(x), x)._node)
        return
    sel = x[indices]  # (NumPy's errors for the key)
    if any(_is_array(k) and not _is_mask(k) for k in items):
        x._rebind(_unary_at_arrays(x, items, f))
        return
    x._rebind(assign(x, indices, f(sel)))


def ufunc_at(name: str, a: Any, indices: Any, b: Any = None) -> None:
    """NumPy's unbuffered ``ufunc.at(a, indices, b)`` for the binary op ``name``: ``a[indices] =
    name(a[indices], b)`` with every repeat of a position applied in turn, in the order the
    index gives them (``np.add.at(x, [0, 0], 1)`` adds 2). As NumPy: the loop dtype is the
    op's for ``a``'s dtype and ``b``'s (a Python number counts as an int64, float64 or bool
    array), each result is cast back to ``a``'s dtype (``unsafe``), ``b`` broadcasts to
    ``a[indices]``'s shape. ``a`` then stands for the new value. Keys without integer arrays (no
    position twice) are the assignment ``a[indices] = name(a[indices], b)``, fused; integer
    arrays are a scatter step that applies each position's values in order (docs/compiler.md).
    A unary op takes no ``b``: a position given ``c`` times gets the op ``c`` times
    (``np.negative.at(x, [1, 1])`` leaves ``x[1]``); integer positions held on the device are
    read back to count their repeats.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.zeros(4, dtype=np.int64)
        >>> np.add.at(x, [0, 2, 0, 0], 1)
        >>> x.get()
        array([3, 0, 1, 0])
    """
    x = _target(f"{name}.at", a)
    op = OPS.get(name)
    if op is None or op.kind is not Kind.ELEMENTWISE or op.ufunc is None or op.ufunc.__name__ != name:
        raise TypeError(f"{name}.at is not supported on stitchlab arrays: only NumPy's elementwise ufuncs have .at")
    if op.nin == 1:
        if b is not None:
            raise ValueError("second operand provided when ufunc is unary")
        _unary_at(name, x, indices, op.ufunc.resolve_dtypes((x.dtype, None))[0])
        return
    if op.nin != 2:
        raise TypeError(f"{name}.at is not supported on stitchlab arrays: only ufuncs of one or two operands have .at")
    if b is None:
        raise ValueError("second operand needed for ufunc")
    host = None if on_device(b) else np.asarray(b)  # (a Python number: int64, float64 or bool, as NumPy's at)
    if host is not None and host.dtype == object:
        raise TypeError(f"{name}.at: cannot use {b!r} as values; give numbers or arrays")
    given = host.dtype if host is not None else b.dtype
    loop = op.ufunc.resolve_dtypes((x.dtype, given, None))  # (NumPy's TypeError where it has no loop)
    if loop[0] != loop[1]:
        raise TypeError(f"numpy.{name}.at on a stitchlab array needs a loop whose two inputs share a dtype; "
                        f"for {x.dtype} and {given} it is {loop[0]}, {loop[1]} -> {loop[2]}")
    work = loop[0]
    if host is None:
        v = asarray(b).astype(work)
    else:
        conv = cast(host, work)
        if conv.ndim:
            v = _leaf_on(x, conv)
        else:
            c = build.const(conv[()], work)
            c.device = x._node.device
            v = LazyArray(c)
    items = indices if isinstance(indices, tuple) else (indices,)

    def applied(old: LazyArray, value: LazyArray) -> LazyArray:
        return LazyArray(build.elementwise(name, old.astype(work)._node, value._node)).astype(x.dtype)

    def check(shape: tuple[int, ...], value: LazyArray) -> None:
        try:
            fits = np.broadcast_shapes(shape, value.shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"{name}.at: values of shape {v.shape} do not broadcast to the indexed shape {shape}")

    if isinstance(indices, (bool, np.bool_)):  # (all of x, once, with an axis in front; or nothing)
        check((int(indices),) + x.shape, v)
        if indices:
            x._rebind(applied(x, v.reshape(v.shape[1:]) if v.ndim > x.ndim else v)._node)
        return
    if len(items) == 1 and _is_array(items[0]) and _is_mask(items[0]):  # a mask: one value per row of x
        m = _at_mask(x, items[0])
        rest = x.shape[m.ndim:]
        row = v.reshape(v.shape[1:]) if v.ndim > len(rest) and v.shape[0] == 1 else v
        if row.ndim <= len(rest):
            check(rest, row)
            x._rebind(where(asarray(m).reshape(m.shape + (1,) * len(rest)), applied(x, row), x)._node)
            return
    sel = x[indices]  # (NumPy's errors for the key; a device mask is evaluated, as x[mask] is)
    check(sel.shape, v)
    if any(_is_array(k) and not _is_mask(k) for k in items):
        x._rebind(_assign_arrays(x, items, v, name))
        return
    x._rebind(assign(x, indices, applied(sel, v)))
