"""NumPy-named functions of the ``stitchlab`` namespace.

Elementwise functions are generated from the op table; reductions and layout functions are
written out, composite ones (``mean``, ``var``, ``std``, ``logsumexp``, ``clip``) as graphs of
primitive ops so the planner sees their structure.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from .. import runtime
from ..ir.dtypes import as_dtype
from ..ir.ops import OPS, Kind
from . import build
from .array import LazyArray, node_of
from .creation import asarray


def _elementwise(opname: str, doc_name: str | None = None) -> Any:
    nin = OPS[opname].nin

    def fn(*args: Any) -> LazyArray:
        if len(args) != nin:
            raise TypeError(f"{fn.__name__}() takes {nin} positional argument{'s' * (nin > 1)} but {len(args)} were given")
        operands = [node_of(a) for a in args]
        if not builtins.any(isinstance(o, build.Node) for o in operands):  # all Python scalars
            operands[0] = node_of(asarray(args[0]))
        return LazyArray(build.elementwise(opname, *operands))

    fn.__name__ = fn.__qualname__ = doc_name or opname
    fn.__doc__ = f"Elementwise ``{doc_name or opname}`` with NumPy's semantics (lazy)."
    return fn


_ALIASES = {"absolute": ["abs"], "divide": ["true_divide"], "remainder": ["mod"], "power": ["pow"]}

for _name, _op in OPS.items():
    if _op.kind is Kind.ELEMENTWISE and _name not in ("astype", "where"):
        globals()[_name] = _elementwise(_name)
        for _alias in _ALIASES.get(_name, ()):
            globals()[_alias] = _elementwise(_name, _alias)

ELEMENTWISE = [n for n, o in OPS.items() if o.kind is Kind.ELEMENTWISE and n not in ("astype", "where")]
ELEMENTWISE += [a for names in _ALIASES.values() for a in names]


def where(condition: Any, x: Any, y: Any) -> LazyArray:
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (three-argument form only)."""
    c = node_of(condition)
    if not isinstance(c, build.Node):
        c = node_of(asarray(c))
    return LazyArray(build.elementwise("where", c, node_of(x), node_of(y)))


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> LazyArray:
    """Limit values to ``[a_min, a_max]`` (NaN stays NaN, as in NumPy)."""
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both")
    out = asarray(a)
    if a_min is not None:
        out = maximum(out, a_min)  # noqa: F821  (generated above)
    if a_max is not None:
        out = minimum(out, a_max)  # noqa: F821
    return out


def astype(x: Any, dtype: Any) -> LazyArray:
    return asarray(x).astype(dtype)


# --- reductions ---------------------------------------------------------------------------------
def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> LazyArray:  # noqa: A001
    return asarray(a).sum(axis, dtype, keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> LazyArray:
    return asarray(a).prod(axis, dtype, keepdims)


def max(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:  # noqa: A001
    return asarray(a).max(axis, keepdims)


def min(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:  # noqa: A001
    return asarray(a).min(axis, keepdims)


amax, amin = max, min


def any(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:  # noqa: A001
    return asarray(a).any(axis, keepdims)


def all(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:  # noqa: A001
    return asarray(a).all(axis, keepdims)


def _count(x: LazyArray, axis: Any) -> int:
    axes = build.normalize_axes(axis, x.ndim)
    return math.prod(x.shape[i] for i in axes)


def _divisor(x: LazyArray, axis: Any, ddof: int, work: np.dtype) -> LazyArray:
    """``count - ddof`` of ``x``'s elements along ``axis``, as a count constant (build.count)."""
    return LazyArray(build.count(_count(x, axis), ddof, work))


def _float_work(dtype: np.dtype, requested: Any) -> tuple[np.dtype, np.dtype]:
    """(dtype to compute in, dtype to return) for mean/var/std, as NumPy chooses them."""
    if requested is not None:
        out = as_dtype(requested)
        return (np.dtype("float32") if out == np.float16 else out), out
    if dtype.kind in "biu":
        return np.dtype("float64"), np.dtype("float64")
    if dtype == np.float16:
        return np.dtype("float32"), dtype
    return dtype, dtype


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> LazyArray:
    """Arithmetic mean along ``axis`` (integers in float64, float16 accumulated in float32)."""
    x = asarray(a)
    work, out = _float_work(x.dtype, dtype)
    total = x.astype(work).sum(axis, keepdims=keepdims)
    return (total / _divisor(x, axis, 0, work)).astype(out)


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> LazyArray:
    """Variance along ``axis`` with ``ddof`` delta degrees of freedom (two-pass, as NumPy)."""
    x = asarray(a)
    work, out = _float_work(x.dtype, dtype)
    xf = x.astype(work)
    centered = xf - xf.sum(axis, keepdims=True) / _divisor(x, axis, 0, work)
    sq = centered * centered
    return (sq.sum(axis, keepdims=keepdims) / _divisor(x, axis, ddof, work)).astype(out)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> LazyArray:
    """Standard deviation: ``sqrt(var(...))``."""
    return sqrt(var(a, axis, dtype, ddof=ddof, keepdims=keepdims))  # noqa: F821


def _arg(opname: str, a: Any, axis: Any, keepdims: bool) -> LazyArray:
    x = asarray(a)
    if axis is None:
        flat = x.reshape(-1)
        out = LazyArray(build.reduce(opname, flat._node, 0, keepdims=False))
        return out.reshape((1,) * x.ndim) if keepdims else out
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{opname}: axis must be an integer or None, got {axis!r}")
    return LazyArray(build.reduce(opname, x._node, axis, keepdims))


def argmax(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:
    """Index of the first maximum along ``axis`` (over the flattened array if None)."""
    return _arg("argmax", a, axis, keepdims)


def argmin(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:
    """Index of the first minimum along ``axis`` (over the flattened array if None)."""
    return _arg("argmin", a, axis, keepdims)


def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:
    """``log(sum(exp(a)))`` along ``axis``, computed stably (SciPy's ``logsumexp``)."""
    x = asarray(a)
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    m = x.max(axis, keepdims=True)
    m = where(isfinite(m), m, 0)  # noqa: F821
    s = exp(x - m).sum(axis, keepdims=True)  # noqa: F821
    out = log(s) + m  # noqa: F821
    if not keepdims:
        out = out.squeeze(axis if axis is not None else None)
    return out


# --- layout -------------------------------------------------------------------------------------
def reshape(a: Any, shape: Any) -> LazyArray:
    return asarray(a).reshape(shape)


def transpose(a: Any, axes: Any = None) -> LazyArray:
    return asarray(a).transpose(axes)


def ravel(a: Any) -> LazyArray:
    return asarray(a).reshape(-1)


def expand_dims(a: Any, axis: Any) -> LazyArray:
    x = asarray(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    new = build.normalize_axes(axes, ndim)
    it = iter(x.shape)
    return x.reshape(tuple(1 if i in new else next(it) for i in range(ndim)))


def squeeze(a: Any, axis: Any = None) -> LazyArray:
    x = asarray(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = build.normalize_axes(axis, x.ndim)
        for i in axes:
            if x.shape[i] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in axes))


def compute(*arrays: Any) -> tuple[Any, ...]:
    """Evaluate several lazy arrays in one plan.

    Returns:
        A tuple with one concrete array per argument: ``numpy.ndarray`` on the numpy backend,
        ``cupy.ndarray`` on the cupy backend. These are the lazy arrays' own values; NumPy ones
        are read-only (copy before writing), so a later expression never sees a changed value.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(4.0))
        >>> total, peak = sl.compute(x.sum(), x.max())
        >>> float(total), float(peak)
        (6.0, 3.0)
    """
    lazies = [asarray(a) for a in arrays]
    by_device: dict[str | None, list[LazyArray]] = {}
    for x in lazies:
        by_device.setdefault(x._node.device, []).append(x)
    for group in by_device.values():
        runtime.evaluate([x._node for x in group])
    return tuple(x._node.value for x in lazies)


