"""NumPy's dispatch protocols for ``LazyArray``: ``np.exp(x)``, ``np.mean(x, axis=0)``,
``np.where(c, x, y)``, ``np.add.reduce(x)``, ``ndarray + x``... on a stitchlab array build the same
lazy graph as ``sl.exp(x)``, ``sl.mean(x, axis=0)``..., so NumPy code fuses unchanged (NEP 13
``__array_ufunc__``, NEP 18 ``__array_function__``; CuPy arrays answer the same protocols).

* A ufunc (``np.exp(x, out=y, where=m, dtype=d, casting=c)``, ``np.add.reduce``,
  ``np.add.accumulate``, ``np.add.outer``) is stitchlab's ufunc of that name
  (:mod:`stitchlab.frontend.ufunc`), NumPy's keywords included; ``np.add.at(x, ...)`` on a
  stitchlab ``x`` is :func:`stitchlab.frontend.assign.ufunc_at` (repeated positions accumulate).
* What stitchlab has no lazy version of (``np.unique(x)``, ``np.nancumsum``,
  ``np.fmax.accumulate(x)``, ``np.add.reduceat``) runs on the evaluated values in the library
  that holds them, CuPy on the GPU and NumPy on the CPU, and returns that library's arrays, as it
  would for CuPy/NumPy arrays (NumPy on a host copy where CuPy lacks the function).
* ``out=`` a NumPy or CuPy array: the value is computed and written into it (NumPy's ``out``
  semantics and its ``same_kind`` casting rule; ``ndarray += x`` too). ``out=`` a stitchlab array:
  the array then stands for the value (lazy, as after ``x[...] = value``).
* NumPy's functions that write into an argument (``np.copyto``, ``np.place``, ``np.putmask``,
  ``np.put``, ``np.put_along_axis``, ``np.fill_diagonal``) into a stitchlab array are stitchlab's
  (:mod:`stitchlab.frontend.assign`): the array then stands for the new value.
* Arguments of NumPy functions without a lazy meaning raise ``TypeError`` naming them (``np.sum``'s
  ``where=`` and ``initial=``, ``order="F"``...), with the way round them.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np

from .ufunc import outputs

#: NumPy functions with a lazy stitchlab version of the same name and meaning
_FUNCTIONS = (
    "sum", "prod", "max", "min", "amax", "amin", "any", "all", "mean", "var", "std", "argmax",
    "argmin", "where", "clip", "reshape", "transpose", "ravel", "expand_dims", "squeeze",
    "isclose", "allclose", "nan_to_num", "nansum", "nanmax", "nanmin", "nanmean", "nanvar",
    "nanstd", "count_nonzero", "ptp", "swapaxes", "moveaxis", "atleast_1d", "atleast_2d",
    "broadcast_arrays", "broadcast_to", "zeros_like", "ones_like", "empty_like", "full_like",
    "astype", "round", "around", "concatenate", "stack",
    # library steps (stitchlab.frontend.library) and views/composites (.manipulation)
    "take", "take_along_axis", "cumsum", "cumprod", "sort", "argsort", "dot", "tensordot", "inner",
    "vdot", "einsum",
    "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile", "searchsorted", "digitize",
    "interp",
    "flip", "fliplr", "flipud", "tril", "triu", "diagonal", "diag", "trace", "outer", "split",
    "array_split", "hsplit", "vsplit", "dsplit", "tile", "repeat", "meshgrid", "diff", "roll",
    "pad", "array_equal", "array_equiv", "average", "atleast_3d", "vstack", "hstack", "dstack",
    "column_stack", "kron", "cross", "cov", "corrcoef", "fix", "sinc", "real", "imag", "angle",
    "result_type", "can_cast", "nanprod", "isposinf", "isneginf", "copy", "select", "nancumsum", "nancumprod",
    "rot90", "append", "ediff1d", "trapezoid", "convolve", "correlate", "matrix_transpose", "unstack", "cumulative_sum", "cumulative_prod",
    "isin", "diagflat", "gradient",
    "unique_all", "unique_counts", "unique_inverse", "unique_values", "intersect1d", "union1d", "setdiff1d", "setxor1d",
    "partition", "argpartition", "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv",
    "polyfit", "vander", "unwrap", "ix_", "tril_indices_from", "triu_indices_from",
    "diag_indices_from", "nanargmax", "nanargmin", "delete", "insert", "ndim", "shape", "size", "rollaxis", "block",
    "resize", "unravel_index", "ravel_multi_index", "lexsort", "i0", "piecewise", "choose", "trim_zeros", "packbits",
    "unpackbits", "isreal", "iscomplex", "isrealobj", "iscomplexobj", "histogram_bin_edges", "apply_over_axes", "real_if_close", "poly", "einsum_path",
    # shapes that depend on the values (.selection): evaluated when called
    "nonzero", "flatnonzero", "argwhere", "extract", "compress", "unique", "bincount", "histogram", "histogram2d", "histogramdd",
)

#: NumPy parameters that mean nothing for an immutable lazy array, whatever their value
_IGNORED = {"copy", "subok"}

_tables: tuple[dict[np.ufunc, Any], dict[Any, Any]] | None = None
_signatures: dict[Any, inspect.Signature] = {}


def _lazy_tables() -> tuple[dict[np.ufunc, Any], dict[Any, Any]]:
    """(NumPy ufunc -> stitchlab function, NumPy function -> stitchlab function)."""
    global _tables
    if _tables is None:
        from . import api, creation, library, linalg, manipulation, selection

        def lazy(name: str) -> Any:
            for module in (api, creation, library, manipulation, selection):
                if hasattr(module, name):
                    return getattr(module, name)
            raise AttributeError(name)

        ufuncs = {getattr(np, n): lazy(n) for n in api.ELEMENTWISE + ["fabs", "matmul", "divmod", "modf", "frexp", "float_power", "conjugate",
                                                                     "vecdot", "matvec", "vecmat"]
                   if isinstance(getattr(np, n, None), np.ufunc)}
        functions = {getattr(np, n): lazy(n) for n in _FUNCTIONS if hasattr(np, n)}
        functions.update({getattr(np.linalg, n): getattr(linalg, n) for n in linalg.__all__ if hasattr(np.linalg, n)})
        _tables = ufuncs, functions
    return _tables


def _signature(func: Any) -> inspect.Signature:
    if func not in _signatures:
        _signatures[func] = inspect.signature(func)
    return _signatures[func]


def _is_lazy(obj: Any) -> bool:
    from .array import LazyArray

    return isinstance(obj, LazyArray)


def _lazies(obj: Any) -> Iterator[Any]:
    """The stitchlab arrays in ``obj`` (lists, tuples and dicts searched)."""
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _lazies(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _lazies(o)
    elif _is_lazy(obj):
        yield obj


def native(obj: Any, host: bool) -> Any:
    """``obj`` with every stitchlab array in it (lists, tuples, dicts too) evaluated: the array of
    the library that holds it (a CuPy array on the GPU, a read-only NumPy array on the CPU), or
    with ``host`` a NumPy array."""
    if _is_lazy(obj):
        if host:
            return np.asarray(obj)
        value = obj._value()
        if isinstance(value, np.ndarray):  # the backend's own buffer: NumPy must not write into it
            value = value.view()
            value.flags.writeable = False
        return value
    if isinstance(obj, (list, tuple)):
        return type(obj)(native(o, host) for o in obj)
    if isinstance(obj, dict):
        return {k: native(v, host) for k, v in obj.items()}
    return obj


def _unsupported(name: str, param: str, hint: str = "") -> TypeError:
    return TypeError(
        f"numpy.{name}(..., {param}=...) on a stitchlab array: {param}= has no lazy equivalent"
        + (f"; {hint}" if hint else "")
        + f" (or materialize first: numpy.{name}(x.get(), ...))"
    )


def _store(result: Any, outs: tuple[Any, ...] | None) -> Any:
    """``result``, or, given output arrays, its value written into them as a ufunc's ``out``
    (:func:`stitchlab.frontend.ufunc.write`: broadcast to their shape, ``same_kind`` casting; a
    stitchlab array then stands for it) and those arrays returned as NumPy does."""
    if outs is None:
        return result
    from .ufunc import write

    results = result if isinstance(result, tuple) else (result,)
    for target, value in zip(outs, results, strict=True):
        if target is not None:
            write(value, target)
    return outs if isinstance(result, tuple) else outs[0]


#: NumPy functions that write into an argument (by position, or by keyword)
_IN_PLACE = {"copyto": "dst", "put": "a", "place": "arr", "putmask": "a", "fill_diagonal": "a",
             "put_along_axis": "arr"}


def run_natively(func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func`` on the evaluated values, run by the library that holds them: CuPy on the GPU
    (NumPy hands it the call), NumPy on the CPU; where CuPy has no such function (a ``TypeError``)
    or does not support it (``NotImplementedError``: ``cupy.fmax.accumulate``), NumPy on a host
    copy. Returns what that library returns."""
    outs = outputs(kwargs.get("out"), None, name)
    if outs is not None and any(True for _ in _lazies(outs)):  # run it, then write into them
        return _store(run_natively(func, name, args, {k: v for k, v in kwargs.items() if k != "out"}), outs)
    if name in _IN_PLACE and _is_lazy(args[0] if args else kwargs.get(_IN_PLACE[name])):
        from . import assign  # (the stitchlab array then stands for the new value)

        return getattr(assign, name)(*args, **kwargs)
    try:
        return func(*native(args, False), **native(kwargs, False))
    except (TypeError, NotImplementedError):
        if not any(x.device.startswith("cuda") for x in _lazies((args, kwargs))):
            raise
    return func(*native(args, True), **native(kwargs, True))


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``LazyArray.__array_ufunc__``: a ufunc call, ``reduce``, ``accumulate`` or ``outer`` as
    stitchlab's ufunc of the same name (:class:`stitchlab.frontend.ufunc.ufunc`: ``out=``,
    ``where=``, ``dtype=``, ``casting=`` as NumPy's), ``at`` as :func:`stitchlab.frontend.assign.ufunc_at`;
    what has no lazy version on the values (:func:`run_natively`)."""
    from .ufunc import lazy_method

    name = ufunc.__name__
    if method == "at" and _is_lazy(inputs[0]):
        from .assign import ufunc_at  # (the stitchlab array then stands for the new value)

        if kwargs:
            raise TypeError(f"{name}.at() takes no keyword arguments")
        return ufunc_at(name, *inputs)
    lazy = _lazy_tables()[0].get(ufunc)
    if lazy is not None and lazy_method(lazy, method):
        return getattr(lazy, method)(*inputs, **kwargs)
    return run_natively(getattr(ufunc, method), name if method == "__call__" else f"{name}.{method}", inputs, kwargs)


def array_function(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``LazyArray.__array_function__``: the NumPy function as its stitchlab version, where there
    is one; otherwise the function itself on the values (:func:`run_natively`)."""
    name = getattr(func, "__name__", str(func))
    lazy = _lazy_tables()[1].get(func)
    if lazy is None:
        return run_natively(func, name, args, kwargs)
    bound = _signature(func).bind(*args, **kwargs)
    params = _signature(lazy).parameters
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    outs = None
    # parameters before a *args (gradient(f, *varargs)) go positionally, ahead of its values
    has_var = any(p.kind is p.VAR_POSITIONAL for p in bound.signature.parameters.values())
    for param, value in bound.arguments.items():
        p = bound.signature.parameters[param]
        if p.kind is p.VAR_POSITIONAL:
            positional.extend(value)
        elif has_var and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and param in params:
            positional.append(value)
        elif p.kind is p.VAR_KEYWORD:
            unknown = [k for k in value if k not in params]
            if unknown and not any(q.kind is q.VAR_KEYWORD for q in params.values()):
                raise _unsupported(name, unknown[0])
            keywords.update(value)  # (the lazy function takes them too: pad's constant_values, stat_length)
        elif param in params:
            keywords[param] = value
        elif param == "out":
            outs = outputs(value, None, name)
        elif not (param in _IGNORED or value is p.default or _same(value, p.default) or (param == "where" and value is True)):
            raise _unsupported(name, param)
    return _store(lazy(*positional, **keywords), outs)


def _same(value: Any, default: Any) -> bool:
    """``value`` is a plain value equal to the parameter's default (``order="C"``)."""
    return type(value) is type(default) and isinstance(value, (str, bool, int, float)) and value == default
