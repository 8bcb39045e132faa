"""NumPy functions whose result's shape depends on the values: ``nonzero``, ``flatnonzero``,
``argwhere``, ``extract``, ``compress``, ``unique``, ``bincount``, ``histogram``, and indexing with
a boolean mask computed on the device (``x[x > 0]``); and ``unravel_index`` and
``ravel_multi_index``, whose errors depend on the values (NumPy's ``ValueError`` for a position
outside the shape, which a lazy result could not raise), as do ``choose``'s with ``mode="raise"``.

A lazy array has its shape before its values, so these evaluate when called: the values they
need (the mask, the condition, the array ``unique`` sorts) are computed in one plan, the array
library (CuPy on the GPU, NumPy on the CPU) finds the positions, reading their count back to the
host as CuPy does, and the result is a stitchlab array of that shape. Work on the result is lazy
and fuses as usual; a selection from an array (``x[mask]``, ``compress``, ``extract``) is a gather
step (:func:`stitchlab.take`) at positions known to be in range.

They cannot run inside ``sl.jit`` (a traced function has one shape per signature) or under a
CUDA-graph capture (the count is read back): both raise a ``RuntimeError`` saying so.
"""

from __future__ import annotations

import math
import operator
from collections import namedtuple
from typing import Any

import numpy as np

from .. import runtime
from ..ir.dtypes import is_bfloat16
from ..runtime.interpreter import nans_sort_last
from . import build
from .api import clip, concatenate, not_equal, ravel, result_type, where  # type: ignore[attr-defined]
from .array import LazyArray
from .creation import _leaf_on, asarray, full
from .library import argsort, isin, sort, take
from .ufunc import stored

__all__ = ["nonzero", "flatnonzero", "argwhere", "extract", "compress", "unique", "unique_all", "unique_counts",
           "unique_inverse", "unique_values", "intersect1d", "union1d", "setdiff1d", "setxor1d", "bincount", "histogram",
           "histogram2d", "histogramdd", "unravel_index", "ravel_multi_index", "choose", "trim_zeros",
           "histogram_bin_edges"]

_WHY = "its result's shape depends on the values"


def _evaluated(what: str, *arrays: LazyArray, why: str | None = None) -> tuple[list[Any], Any]:
    """The buffers of ``arrays``, evaluated in one plan, and their array module (cupy or numpy).
    Raises ``RuntimeError`` inside ``sl.jit`` and under a CUDA-graph capture (``why``: why the
    caller cannot be traced or captured; default: a result whose shape depends on the values)."""
    if any(a._node.device != arrays[0]._node.device for a in arrays):
        devices = sorted({str(a.device) for a in arrays})
        raise ValueError(f"{what}: the arrays are on different devices ({', '.join(devices)}); move them to one with sl.asarray")
    on_gpu = str(arrays[0].device).startswith("cuda")
    if on_gpu:
        import cupy

        from ..runtime.scratch import capturing

        if capturing(cupy.cuda.get_current_stream()):
            raise RuntimeError(
                f"{what} cannot run under a CUDA-graph capture: "
                + (f"{_WHY}, and reading its count back to the host is not allowed while capturing" if why is None else why)
                + "; compute it before the capture begins"
            )
    try:
        bufs = runtime.evaluate([a._node for a in arrays])
    except runtime.TracedValueError as err:
        raise RuntimeError(
            f"{what} cannot be traced by sl.jit: "
            + (f"{_WHY}, and a traced function has one shape per signature; call it outside the jitted "
               "function, or keep the shape with sl.where(mask, x, fill)" if why is None else
               f"{why}; call it outside the jitted function")
        ) from err
    if on_gpu:
        import cupy

        return bufs, cupy
    return bufs, np


def _positions(what: str, condition: LazyArray, *also: LazyArray) -> tuple[Any, Any]:
    """(flat positions where ``condition`` is true, as int64 on its device; its array module),
    evaluating ``also`` in the same plan."""
    truth = condition if condition.dtype == np.bool_ else not_equal(condition, 0)
    bufs, xp = _evaluated(what, truth, *also)
    return xp.flatnonzero(bufs[0]).astype(np.int64, copy=False), xp


def _gather(what: str, source: LazyArray, flat: LazyArray, condition: LazyArray, axis: int) -> LazyArray:
    """The elements of ``flat`` (a view of ``source``) along ``axis`` where the 1-d ``condition``
    is true; positions past the axis (a longer condition) raise NumPy's ``IndexError``, unless the
    axes before ``axis`` hold no element (NumPy's ``take`` checks nothing then). ``source`` is
    evaluated with the condition (``x[x > 0]`` computes ``x`` once, not once for the mask and again
    for the gather)."""
    pos, _ = _positions(what, condition, source)
    n = flat.shape[axis]
    if condition.size > n and pos.size and math.prod(flat.shape[:axis]):
        bad = pos[pos >= n]
        if bad.size:
            raise IndexError(f"index {int(bad[0])} is out of bounds for axis {axis} with size {n}")
    return LazyArray(build.take(flat._node, _leaf_on(flat, pos)._node, axis, checked=True))


def mask_index(x: LazyArray, mask: Any) -> LazyArray:
    """``x[mask]`` for a boolean mask over ``x``'s leading axes that is a stitchlab or CuPy array
    (the positions are found on the device; see the module docstring). The mask's shape is checked
    before anything is evaluated."""
    m = asarray(mask)
    build.check_mask_shape(x.shape, m.shape)
    flat = x.reshape((math.prod(m.shape),) + x.shape[m.ndim:])
    return _gather("x[mask] with a mask computed on the device", x, flat, ravel(m), 0)


def flatnonzero(a: Any) -> LazyArray:
    """Positions of the non-zero elements of the flattened ``a`` (NumPy's ``flatnonzero``, int64).
    Evaluates ``a`` (see the module docstring).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.flatnonzero(sl.asarray(np.array([[0.0, 2.0], [3.0, 0.0]]))).get()
        array([1, 2])
    """
    x = asarray(a)
    pos, _ = _positions("flatnonzero", ravel(x))
    return _leaf_on(x, pos)


def nonzero(a: Any) -> tuple[LazyArray, ...]:
    """The indices of the non-zero elements, one int64 array per axis (NumPy's ``nonzero``; a 0-d
    array raises NumPy's ``ValueError``). Evaluates ``a`` (see the module docstring).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> rows, cols = sl.nonzero(sl.asarray(np.array([[0.0, 2.0], [3.0, 0.0]])))
        >>> rows.get(), cols.get()
        (array([0, 1]), array([1, 0]))
    """
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    pos, xp = _positions("nonzero", ravel(x))
    return tuple(_leaf_on(x, i.astype(np.int64, copy=False)) for i in xp.unravel_index(pos, x.shape))


def argwhere(a: Any) -> LazyArray:
    """The indices of the non-zero elements as an ``(N, a.ndim)`` int64 array (NumPy's
    ``argwhere``; a 0-d array gives ``(1, 0)`` or ``(0, 0)``). Evaluates ``a``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.argwhere(sl.asarray(np.array([[0.0, 2.0], [3.0, 0.0]]))).get()
        array([[0, 1],
               [1, 0]])
    """
    x = asarray(a)
    pos, xp = _positions("argwhere", ravel(x))
    if x.ndim == 0:
        return _leaf_on(x, xp.zeros((pos.size, 0), dtype=np.int64))
    return _leaf_on(x, xp.stack(xp.unravel_index(pos, x.shape), axis=1).astype(np.int64, copy=False))


def extract(condition: Any, arr: Any) -> LazyArray:
    """The elements of the flattened ``arr`` where the flattened ``condition`` is non-zero
    (NumPy's ``extract``: a shorter condition selects from the start, a longer one raises
    ``IndexError`` where it selects past the end). Evaluates ``condition``; the selection is a
    gather step.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(6.0).reshape(2, 3))
        >>> sl.extract(x % 2 == 0, x).get()
        array([0., 2., 4.])
    """
    x = asarray(arr)
    return _gather("extract", x, ravel(x), ravel(asarray(condition)), 0)


def compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> Any:
    """The slices of ``a`` along ``axis`` (``None``: of the flattened array) where the 1-d
    ``condition`` is true (NumPy's ``compress``; a shorter condition selects from the start).
    Evaluates ``condition``; the selection is a gather step. ``out``: an array of the result's
    shape that receives it (cast ``unsafe``, as NumPy's ``compress`` and ``take``) and is returned.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(6.0).reshape(2, 3))
        >>> sl.compress([True, False, True], x, axis=1).get()
        array([[0., 2.],
               [3., 5.]])
    """
    c = asarray(condition)
    if c.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    x = asarray(a)
    if build.zero_d_axis(axis, x.ndim, None) is None:  # (axis 0 or -1 of 0-d data: as NumPy, its one element)
        result = _gather("compress", x, ravel(x), c, 0)
    else:
        result = _gather("compress", x, x, c, build.normalize_axis(axis, x.ndim))
    return stored(result, out, "compress")


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Any = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:  # noqa: A002 - NumPy's name
    """The sorted unique elements of ``ar`` (NumPy's ``unique``, with its ``return_index``,
    ``return_inverse``, ``return_counts``, ``axis`` and ``equal_nan``; the inverse has ``ar``'s
    shape when ``axis`` is None, as in NumPy 2; positions and counts are int64). The values are
    always sorted (``sorted=False`` allows any order). Evaluates ``ar`` and runs the array
    library's ``unique`` (bfloat16 in float32, exact). ``-0.0`` and ``0.0`` are one value; with
    ``axis``, which of them a unique row shows may differ from NumPy's on the GPU, and there a
    NaN's sign bit is cleared (which NaN NumPy keeps depends on its sort).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> values, counts = sl.unique(sl.asarray(np.array([3, 1, 3, 2])), return_counts=True)
        >>> values.get(), counts.get()
        (array([1, 2, 3]), array([1, 1, 2]))
    """
    del sorted  # always sorted, which every value of the flag allows
    x = asarray(ar)
    if axis is not None:
        axis = build.normalize_axis(axis, x.ndim)
    src = x.astype(np.float32) if is_bfloat16(x.dtype) else x
    (buf,), xp = _evaluated("unique", src)
    got = xp.unique(nans_sort_last(buf, xp), return_index=return_index, return_inverse=return_inverse, return_counts=return_counts,
                    axis=axis, equal_nan=equal_nan)
    parts = list(got) if isinstance(got, tuple) else [got]
    values = _leaf_on(x, parts[0])
    out = [values.astype(x.dtype) if src is not x else values]
    k = 1
    for wanted, name in ((return_index, "index"), (return_inverse, "inverse"), (return_counts, "counts")):
        if not wanted:
            continue
        part = parts[k].astype(np.int64, copy=False)
        k += 1
        if name == "inverse":  # NumPy 2's shapes, whatever the library gives
            part = part.reshape(x.shape if axis is None else (x.shape[axis],))
        out.append(_leaf_on(x, part))
    return out[0] if len(out) == 1 else tuple(out)


UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x: Any) -> UniqueAllResult:
    """NumPy 2's ``unique_all`` (the array API's): :func:`unique` with every NaN its own value
    (``equal_nan=False``), as ``(values, indices, inverse_indices, counts)``; ``inverse_indices``
    has ``x``'s shape. Evaluated when called, as :func:`unique`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> r = sl.unique_all(sl.asarray(np.array([3, 1, 3])))
        >>> r.values.get(), r.indices.get(), r.inverse_indices.get(), r.counts.get()
        (array([1, 3]), array([1, 0]), array([1, 0, 1]), array([1, 2]))
    """
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False))


def unique_counts(x: Any) -> UniqueCountsResult:
    """NumPy 2's ``unique_counts``: ``(values, counts)`` of :func:`unique_all`."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x: Any) -> UniqueInverseResult:
    """NumPy 2's ``unique_inverse``: ``(values, inverse_indices)`` of :func:`unique_all`."""
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


def unique_values(x: Any) -> LazyArray:
    """NumPy 2's ``unique_values``: the values of :func:`unique_all` (sorted, which the array
    API's unspecified order allows)."""
    return unique(x, equal_nan=False)


def union1d(ar1: Any, ar2: Any) -> LazyArray:
    """The sorted values in either array, flattened (NumPy's ``union1d``). Evaluated when called.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.union1d(sl.asarray(np.array([3, 1])), [2, 1]).get()
        array([1, 2, 3])
    """
    return unique(concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))]))


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> LazyArray:
    """The values of ``ar1`` not in ``ar2`` (NumPy's ``setdiff1d``: sorted and unique unless
    ``assume_unique``, then in ``ar1``'s order). Evaluated when called.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.setdiff1d(sl.asarray(np.array([5, 1, 2, 1])), [2]).get()
        array([1, 5])
    """
    a = ravel(asarray(ar1)) if assume_unique else unique(ar1)
    return extract(isin(a, ar2, invert=True), a)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> LazyArray:
    """The sorted values in exactly one of the arrays (NumPy's ``setxor1d``). Evaluated when called.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.setxor1d(sl.asarray(np.array([1, 2, 3])), [2, 3, 4]).get()
        array([1, 4])
    """
    a, b = (ravel(asarray(v)) if assume_unique else unique(v) for v in (ar1, ar2))
    aux = sort(concatenate([a, b]))
    if aux.size < 2:
        return aux
    edge = full((1,), True, np.bool_)
    # a value unlike both neighbours (NaN is unlike NaN: NumPy keeps every NaN, and so does this)
    differs = concatenate([edge, aux[1:] != aux[:-1], edge])
    return extract(differs[1:] & differs[:-1], aux)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False) -> Any:
    """The sorted values in both arrays (NumPy's ``intersect1d``); with ``return_indices`` also
    the positions of their first occurrences in each flattened array. Evaluated when called.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> values, i1, i2 = sl.intersect1d(sl.asarray(np.array([1, 3, 4, 3])), [3, 1, 2, 1], return_indices=True)
        >>> values.get(), i1.get(), i2.get()
        (array([1, 3]), array([0, 1]), array([1, 0]))
    """
    if assume_unique:
        a, b = ravel(asarray(ar1)), ravel(asarray(ar2))
    elif return_indices:
        (a, first1), (b, first2) = unique(ar1, return_index=True), unique(ar2, return_index=True)
    else:
        a, b = unique(ar1), unique(ar2)
    aux = concatenate([a, b])
    if not return_indices:
        aux = sort(aux)
        return take(aux, flatnonzero(aux[1:] == aux[:-1]))
    order = argsort(aux, kind="stable")
    aux = take(aux, order)
    pos = flatnonzero(aux[1:] == aux[:-1])  # (evaluated once for the three results)
    at1, at2 = take(order, pos), take(order, pos + 1) - a.size
    if not assume_unique:
        at1, at2 = take(first1, at1), take(first2, at2)
    return take(aux, pos), at1, at2


def _checked_counts_input(x: LazyArray) -> None:
    """NumPy's errors for what ``bincount`` cannot count (before anything is evaluated)."""
    if x.ndim != 1:
        raise ValueError(f"object too deep for desired array (bincount counts a 1-d array; got {x.ndim} dimensions: "
                         f"ravel it first)" if x.ndim > 1 else "object of too small depth for desired array")
    if x.dtype.kind not in "biu":
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype}') to dtype('int64') according to the rule 'safe' "
                        f"(bincount counts non-negative integers: x.astype(np.int64) if the values are whole)")


def bincount(x: Any, weights: Any = None, minlength: int = 0) -> LazyArray:
    """How many times each non-negative integer occurs in the 1-d ``x`` (NumPy's ``bincount``;
    with ``weights``, their float64 sums instead), ``max(x) + 1`` long, or ``minlength``.
    Evaluates ``x`` (and ``weights``) and runs the array library's ``bincount``: a negative value
    raises its ``ValueError`` (uint64 values are counted as int64, as NumPy 2 casts them: one past
    ``2**63 - 1`` is negative there).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.bincount(sl.asarray(np.array([0, 1, 1, 3]))).get()
        array([1, 2, 0, 1])
    """
    if not _on_device([x]) and not isinstance(x, np.ndarray) and np.size(x) == 0:
        x = np.zeros(np.shape(x), np.int64)  # (an empty list holds no value to count: NumPy's, not float64)
    v = asarray(x)
    _checked_counts_input(v)
    if v.dtype == np.uint64:  # NumPy 2 casts uint64 to intp: a value past 2**63 - 1 is then negative (its ValueError)
        v = v.astype(np.int64)
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if v.size == 0:  # (NumPy's: nothing counted, int64 zeros, whatever the weights)
        return _leaf_on(v, np.zeros(minlength, np.int64))
    if weights is None:
        (buf,), xp = _evaluated("bincount", v)
        return _leaf_on(v, xp.bincount(buf, minlength=minlength).astype(np.int64, copy=False))
    w = asarray(weights)
    if w.shape != v.shape:
        raise ValueError(f"The weights and list don't have the same length ({w.shape} against {v.shape})")
    (buf, wbuf), xp = _evaluated("bincount", v, w.astype(np.float64))
    return _leaf_on(v, xp.bincount(buf, weights=wbuf, minlength=minlength))


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002 - NumPy's name
              weights: Any = None) -> tuple[LazyArray, LazyArray]:
    """The histogram of ``a``'s values (NumPy's ``histogram``: ``bins`` a count or the edges,
    ``range`` for a count, ``density``, ``weights``); returns ``(hist, bin_edges)``. Evaluates the
    arrays and runs the array library's ``histogram`` (bfloat16 in float32, exact): NaN in an
    autodetected range raises its ``ValueError``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> hist, edges = sl.histogram(sl.asarray(np.array([1.0, 2.0, 2.0, 3.0, 10.0])), bins=3)
        >>> hist.get(), edges.get()
        (array([4, 0, 1]), array([ 1.,  4.,  7., 10.]))
    """
    x = asarray(a)
    src = x.astype(np.float32) if is_bfloat16(x.dtype) else x
    arrays = [src]
    edges_given = not isinstance(bins, (int, str, np.integer))
    if edges_given:
        arrays.append(asarray(bins))
    if weights is not None:
        w = asarray(weights)
        arrays.append(w.astype(np.float32) if is_bfloat16(w.dtype) else w)
    bufs, xp = _evaluated("histogram", *arrays)
    hist, edges = xp.histogram(bufs[0], bins=bufs[1] if edges_given else bins, range=range, density=density,
                               weights=bufs[-1] if weights is not None else None)
    if hist.dtype.kind in "iu":
        hist = hist.astype(np.int64, copy=False)
    return _leaf_on(x, hist), _leaf_on(x, edges)


def _is_edges(b: Any) -> bool:
    """Whether ``b`` is an array of bin edges (not a count)."""
    return isinstance(b, LazyArray) or np.ndim(b) > 0 or hasattr(b, "__cuda_array_interface__")


def _histogram_nd(what: str, samples: list[LazyArray], bins: Any, weights: Any, run: Any) -> tuple[Any, ...]:
    """Evaluate ``samples`` (bfloat16 in float32, exact), ``weights`` and the edge arrays in
    ``bins`` (a count, an array of edges, or a sequence of either per dimension) in one plan, then
    ``run(xp, sample_buffers, bins, weights)``: the array library's function."""
    per_dim = isinstance(bins, (list, tuple))
    items = list(bins) if per_dim else [bins]
    edges = [asarray(b) for b in items if _is_edges(b)]
    arrays = [x.astype(np.float32) if is_bfloat16(x.dtype) else x for x in samples] + edges
    if weights is not None:
        w = asarray(weights)
        arrays.append(w.astype(np.float32) if is_bfloat16(w.dtype) else w)
    bufs, xp = _evaluated(what, *arrays)
    given = iter(bufs[len(samples):len(samples) + len(edges)])
    spec = [next(given) if _is_edges(b) else b for b in items]
    return run(xp, bufs[:len(samples)], spec if per_dim else spec[0], bufs[-1] if weights is not None else None)


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002 - NumPy's name
                weights: Any = None) -> tuple[LazyArray, LazyArray, LazyArray]:
    """The two-dimensional histogram of the points ``(x, y)`` (NumPy's ``histogram2d``: ``bins`` a
    count, an array of edges, or one of either per dimension; ``range``, ``density``, ``weights``);
    returns ``(H, xedges, yedges)``, ``H`` float64 as NumPy's. Evaluates the arrays and runs the array
    library's ``histogram2d``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> H, xe, ye = sl.histogram2d(sl.asarray(np.array([0.1, 0.5, 0.9])), sl.asarray(np.array([1.0, 2.0, 3.0])), bins=2)
        >>> H.get()
        array([[1., 0.],
               [0., 2.]])
    """
    xs, ys = asarray(x), asarray(y)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"histogram2d takes x and y of one length, 1-d (got shapes {xs.shape} and {ys.shape})")
    h, xe, ye = _histogram_nd("histogram2d", [xs, ys], bins, weights,
                              lambda xp, s, b, w: xp.histogram2d(s[0], s[1], bins=b, range=range, density=density, weights=w))
    return _leaf_on(xs, h), _leaf_on(xs, xe), _leaf_on(xs, ye)


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002 - NumPy's name
                weights: Any = None) -> tuple[LazyArray, list[LazyArray]]:
    """The histogram of ``D``-dimensional points (NumPy's ``histogramdd``: ``sample`` an ``(N, D)``
    array, ``bins`` a count, an array of edges or one of either per dimension, ``range``,
    ``density``, ``weights``); returns ``(H, [edges per dimension])``. Evaluates the arrays and runs
    the array library's ``histogramdd``."""
    pts = asarray(sample)
    if pts.ndim == 1:
        pts = pts.reshape((-1, 1))
    if pts.ndim != 2:
        raise ValueError(f"histogramdd takes an (N, D) array of points (got shape {pts.shape})")
    h, edges = _histogram_nd("histogramdd", [pts], bins, weights,
                             lambda xp, s, b, w: xp.histogramdd(s[0], bins=b, range=range, density=density, weights=w))
    return _leaf_on(pts, h), [_leaf_on(pts, e) for e in edges]


def _positions_checked(what: str, arrays: list[Any], bound: Any, message: str) -> tuple[list[Any], Any] | None:
    """Device integer ``arrays`` (stitchlab or CuPy), evaluated in one plan and checked on their
    device against ``0 <= a < bound`` (``bound``: one extent per array, broadcast): NumPy's
    ``ValueError`` (``message``, formatted with the first bad value) if one is outside; their
    buffers and array module; their nodes and None where they are in range by construction
    (``_argmax_within``); None where the arrays are host data (the caller uses NumPy)."""
    if not _on_device(arrays):
        return None
    lazy = [asarray(a) for a in arrays]
    _positions_typed(lazy)
    if all(_argmax_within(a._node, n) for a, n in zip(lazy, bound, strict=True)):
        return [a._node for a in lazy], None  # in range by construction: nothing to evaluate
    bufs, xp = _evaluated(what, *lazy, why="its positions are checked against the shape on the host (NumPy's ValueError)")
    for buf, n in zip(bufs, bound, strict=True):
        bad = (buf < 0) | (buf >= n)
        if bool(bad.any()):  # (a host sync, as NumPy's check)
            raise ValueError(message.format(int(buf[bad].ravel()[0])))
    return bufs, xp


def _array_order(order: Any) -> None:
    """NumPy's ``ValueError`` for an ``order`` that is no array order at all."""
    if order not in ("C", "F", "A", "K", None):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _c_or_f(order: Any) -> str:
    """``order`` of :func:`unravel_index` or :func:`ravel_multi_index` as ``"C"`` or ``"F"``
    (``None``: ``"C"``); NumPy's ``ValueError`` for anything else, ``"A"`` and ``"K"`` included."""
    _array_order(order)
    if order in ("A", "K"):
        raise ValueError(f"only 'C' or 'F' order is permitted (got {order!r})")
    return order or "C"


def _positions_typed(arrays: list[LazyArray]) -> None:
    """NumPy's ``TypeError`` for positions that do not cast safely to intp: integer or bool only."""
    for a in arrays:
        if a.dtype.kind not in "biu":
            raise TypeError(f"only int indices permitted (got dtype {a.dtype}); round them first, "
                            f"e.g. x.astype(np.int64)")


def _on_device(arrays: list[Any]) -> bool:
    """Whether any of ``arrays`` is a stitchlab or CuPy array (else host data, NumPy's to handle)."""
    return any(isinstance(a, LazyArray) or "cupy" in type(a).__module__ for a in arrays)


def _argmax_within(node: build.Node, n: int) -> bool:
    """Whether ``node`` is an ``argmax``/``argmin`` (through reshapes) over at most ``n``
    elements: its positions are in ``[0, n)`` whatever the values (the idiom
    ``unravel_index(argmax(x), x.shape)``, which then stays lazy and runs inside ``sl.jit``)."""
    while node.op == "reshape":
        node = node.inputs[0]
    return node.op in ("argmax", "argmin") and math.prod(node.inputs[0].shape[a] for a in node.attr("axes")) <= n


def _dims(shape: Any, what: str) -> tuple[int, ...]:
    dims = tuple(operator.index(d) for d in shape) if np.iterable(shape) else (operator.index(shape),)
    if any(d < 0 for d in dims):
        raise ValueError("dimensions must be non-negative")
    if math.prod(dims) >= 2**63:
        raise ValueError(f"invalid dims: array size defined by dims is larger than the maximum possible size ({what})")
    return dims


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[LazyArray, ...]:
    """The coordinates in an array of ``shape`` of flat positions ``indices`` (NumPy's
    ``unravel_index``), e.g. of the largest element: ``sl.unravel_index(sl.argmax(x), x.shape)``.

    Positions on the device are evaluated when called and checked there (NumPy's ``ValueError``
    for one outside the array, read back as a flag; not inside ``sl.jit``); the coordinates are
    then a fused integer division chain over that buffer. Positions from ``argmax`` or ``argmin``
    of at most as many elements are in range by construction: they stay lazy, fuse, and run
    inside ``sl.jit``. Host positions are NumPy's.

    Returns:
        A tuple of int64 arrays of ``indices``' shape, one per axis.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([[3.0, 9.0, 1.0], [4.0, 2.0, 8.0]]))
        >>> tuple(int(c.get()) for c in sl.unravel_index(sl.argmax(x), x.shape))
        (0, 1)
    """
    dims = _dims(shape, "unravel_index")
    if not _on_device([indices]):
        return tuple(asarray(np.asarray(c, np.int64)) for c in np.unravel_index(indices, dims, order=order))
    _array_order(order)  # (NumPy's order of checks: dims, order's spelling, the positions' type, C or F)
    _positions_typed([asarray(indices)])
    order = _c_or_f(order)
    size = math.prod(dims)
    if not dims and np.ndim(indices):
        raise ValueError("multiple indices are not supported for 0d arrays")
    checked = _positions_checked("unravel_index", [indices], [size], f"index {{}} is out of bounds for array with size {size}")
    assert checked is not None
    (buf,), xp = checked
    flat = (_leaf_on(asarray(indices), buf) if xp is not None else LazyArray(buf)).astype(np.int64)
    out: list[LazyArray] = []
    for d in (reversed(dims) if order == "C" else dims):
        out.append(flat % d if d > 1 else flat * 0)
        flat = flat // d if d > 1 else flat
    return tuple(reversed(out)) if order == "C" else tuple(out)


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C") -> LazyArray:
    """The flat positions in an array of shape ``dims`` of the coordinates ``multi_index`` (one
    integer array per axis, broadcast together; NumPy's ``ravel_multi_index``), with NumPy's
    ``mode`` (``"raise"``, ``"wrap"``, ``"clip"``, or one per axis) and ``order``.

    With ``mode="raise"`` coordinates on the device are evaluated when called and checked there
    (NumPy's ``ValueError``, read back as a flag; not inside ``sl.jit``); ``"wrap"`` and
    ``"clip"`` are lazy and fuse. Host coordinates are NumPy's.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> rows, cols = sl.asarray(np.array([0, 1, 1])), sl.asarray(np.array([2, 0, 1]))
        >>> sl.ravel_multi_index((rows, cols), (2, 3)).get()
        array([2, 3, 4])
    """
    shape = _dims(dims, "ravel_multi_index")
    coords = list(multi_index)
    if not _on_device(coords):
        return asarray(np.asarray(np.ravel_multi_index(tuple(coords), shape, mode=mode, order=order), np.int64))
    order = _c_or_f(order)
    if len(coords) != len(shape):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(shape)}")
    modes = [mode] * len(shape) if isinstance(mode, str) else list(mode)
    if len(modes) != len(shape) or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise ValueError(f"mode must be 'raise', 'wrap' or 'clip', one or one per axis (got {mode!r})")
    lazy = [asarray(c) for c in coords]
    _positions_typed(lazy)
    if math.prod(shape) == 0 and math.prod(build.broadcast_shapes(*(c.shape for c in lazy))):
        raise ValueError(f"cannot unravel if shape has zero entries (is empty): dims {shape} hold no position")
    raised = [k for k, m in enumerate(modes) if m == "raise"]
    checked = _positions_checked("ravel_multi_index", [lazy[k] for k in raised], [shape[k] for k in raised],
                                 "invalid entry in coordinates array") if raised else None
    if checked is not None and checked[1] is not None:
        for k, buf in zip(raised, checked[0], strict=True):
            lazy[k] = _leaf_on(lazy[k], buf)
    strides, acc = [0] * len(shape), 1
    for k in (reversed(range(len(shape))) if order == "C" else range(len(shape))):
        strides[k], acc = acc, acc * shape[k]
    out: LazyArray | None = None
    for k, (c, d, m) in enumerate(zip(lazy, shape, modes, strict=True)):
        c = c.astype(np.int64)
        if m == "wrap":
            c = c % d if d else c
        elif m == "clip":
            c = c.clip(0, max(d - 1, 0))
        term = c * strides[k]
        out = term if out is None else out + term
    assert out is not None
    return out


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> LazyArray:
    """For each element of the integer array ``a``, the element of ``choices[a]`` at its place
    (NumPy's ``choose``): ``a`` and the choices broadcast together, the result dtype is the
    choices' ``result_type`` (Python scalars weak), and ``mode`` is NumPy's: ``"raise"`` (a
    ``ValueError`` for an entry outside ``[0, len(choices))``), ``"wrap"`` or ``"clip"``. A chain
    of selects in one fused kernel; no gather.

    With ``mode="raise"``, entries on the device are evaluated when called and checked there (a
    flag read back; not inside ``sl.jit``, where ``"wrap"`` or ``"clip"`` work).

    ``out``: an array of the result's shape (NumPy's ``TypeError`` otherwise) that receives it,
    cast as NumPy casts it (``unsafe``), and is returned: a stitchlab array then stands for it (as
    after :func:`stitchlab.copyto`); a NumPy or CuPy array is written.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.choose(sl.asarray(np.array([2, 0, 1])), [[1, 2, 3], [10, 20, 30], [100, 200, 300]]).get()
        array([100,   2,  30])
    """
    if out is not None:
        from .assign import copyto

        result = choose(a, choices, mode=mode)
        if tuple(np.shape(out)) != result.shape:
            raise TypeError(f"choose: invalid shape for output array. out has shape {tuple(np.shape(out))}, the result "
                            f"{result.shape}: give an out of the result's shape")
        copyto(out, result, casting="unsafe")
        return out
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if isinstance(choices, LazyArray) or isinstance(choices, np.ndarray) or hasattr(choices, "__cuda_array_interface__"):
        cs = asarray(choices)
        options = [cs[i] for i in range(cs.shape[0])] if cs.ndim else []
    else:
        options = list(choices)
    if not options:
        raise ValueError("0-length sequence.")
    n = len(options)
    index = a if _on_device([a]) else np.asarray(a)
    kind = np.dtype(getattr(index, "dtype", np.int64)).kind
    if kind not in "iub":
        raise TypeError(f"Cannot cast array data from dtype({str(index.dtype)!r}) to dtype('int64') according to the "
                        f"rule 'safe'; choose takes integer positions (round them first, e.g. a.astype(int))")
    values = [o if isinstance(o, (bool, int, float)) else asarray(o) for o in options]
    shape = build.broadcast_shapes(np.shape(index), *(np.shape(v) for v in values))
    if mode == "raise" and not math.prod(shape):  # (an empty result reads no entry: NumPy checks none)
        index = asarray(index).astype(np.int64)
    elif mode == "raise" and isinstance(index, np.ndarray):  # host entries: checked here, as NumPy does
        if ((index < 0) | (index >= n)).any():
            raise ValueError("invalid entry in choice array")
        index = asarray(index).astype(np.int64)
    elif mode == "raise":  # device entries: evaluated and checked there
        index = asarray(index).astype(np.int64)
        (buf,), xp = _positions_checked("choose", [index], [n], "invalid entry in choice array")  # type: ignore[misc]
        index = _leaf_on(index, buf) if xp is not None else LazyArray(buf)
    elif mode == "wrap":
        index = asarray(index).astype(np.int64) % n
    else:
        index = clip(asarray(index).astype(np.int64), 0, n - 1)
    dtype = result_type(*values)
    lazy = [v.astype(dtype) if isinstance(v, LazyArray) else LazyArray(build.const(v, dtype)) for v in values]
    result = lazy[-1]
    for i in reversed(range(n - 1)):
        result = where(index == i, lazy[i], result)
    return LazyArray(build.broadcast_to(result._node, shape))


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> LazyArray:
    """``filt`` without its leading (``"f"``) and trailing (``"b"``) zeros along ``axis`` (all axes
    for ``None``; NumPy's ``trim_zeros``): along each axis the slices that hold only zeros (``-0.0``
    too; NaN is not zero). An array of zeros trims to empty along every such axis. Evaluates
    where the nonzero elements are (one small read back; not inside ``sl.jit``); the result is a
    lazy slice of ``filt``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.trim_zeros(sl.asarray(np.array([0, 0, 3, 0, 5, 0]))).get()
        array([3, 0, 5])
    """
    if not isinstance(trim, str) or trim.lower() not in ("f", "b", "fb", "bf"):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    x = asarray(filt)
    if x.ndim == 0:
        return x.copy()
    axes = range(x.ndim) if axis is None else np.lib.array_utils.normalize_axis_tuple(axis, x.ndim)
    if x.size == 0:  # nothing nonzero: empty along every trimmed axis
        return x[tuple(slice(0, 0) if d in axes else slice(None) for d in range(x.ndim))]
    nonzero_ = not_equal(x, 0)
    parts = []
    for d in axes:  # per axis: any nonzero, the first and the last slice holding one
        held = nonzero_.any(axis=tuple(e for e in range(x.ndim) if e != d)) if x.ndim > 1 else nonzero_
        parts += [held.any().astype(np.int64), held.argmax().astype(np.int64),
                  (held.shape[0] - 1 - held[::-1].argmax()).astype(np.int64)]
    bufs, xp = _evaluated("trim_zeros", concatenate([p.reshape(1) for p in parts]),
                          why="the result's shape depends on where the zeros are")
    found = [int(v) for v in (bufs[0].get() if xp is not np else bufs[0])]
    lower, upper = trim.lower(), [slice(None)] * x.ndim
    for k, d in enumerate(axes):
        held, first, last = found[3 * k:3 * k + 3]
        if not held:
            upper[d] = slice(0, 0)
        else:
            upper[d] = slice(first if "f" in lower else 0, last + 1 if "b" in lower else x.shape[d])
    return x[tuple(upper)]


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> LazyArray:  # noqa: A002
    """The bin edges :func:`histogram` would use (NumPy's ``histogram_bin_edges``: ``bins`` a
    count, the edges, or an estimator name such as ``"auto"``; ``range``; ``weights`` only checked
    for shape, as NumPy does). Evaluates ``a`` (bfloat16 in float32, exact) and runs the array
    library's function (NumPy on a host copy where CuPy has none).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.histogram_bin_edges(sl.asarray(np.array([1.0, 2.0, 5.0])), bins=4).get()
        array([1., 2., 3., 4., 5.])
    """
    x = asarray(a)

    def run(xp: Any, samples: list[Any], spec: Any, w: Any) -> Any:
        if hasattr(xp, "histogram_bin_edges"):
            return xp.histogram_bin_edges(samples[0], bins=spec, range=range, weights=w)
        host = [None if b is None else xp.asnumpy(b) for b in (samples[0], w)]  # CuPy: NumPy's estimators on a host copy
        return xp.asarray(np.histogram_bin_edges(host[0], bins=xp.asnumpy(spec) if _is_edges(spec) else spec, range=range,
                                                 weights=host[1]))

    edges = asarray(bins) if isinstance(bins, (list, tuple)) else bins  # (one array of edges, not one spec per dimension)
    return _leaf_on(x, _histogram_nd("histogram_bin_edges", [x], edges, weights, run))
