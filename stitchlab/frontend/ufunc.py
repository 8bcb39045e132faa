"""NumPy's ufunc interface on stitchlab's elementwise functions: every ``sl.add``, ``sl.exp``,
``sl.divmod``, ``sl.matmul``... is a :class:`ufunc`, called as NumPy's are.

* ``out=`` (positionally too, a tuple for ``divmod``/``modf``/``frexp``): a stitchlab array then
  stands for the value, as after ``out[...] = value`` (lazy, fused with the work around it); a
  NumPy or CuPy array is written in place. The value broadcasts to ``out``'s shape, never the other
  way, and is cast by ``casting`` (``same_kind`` by default), as NumPy checks it.
* ``where=``: a mask broadcast with the inputs. With ``out``, the positions where it is false keep
  ``out``'s values; without, they are 0 (NumPy leaves them uninitialized).
* ``dtype=`` and ``signature=``: NumPy's loop for them (``ufunc.resolve_dtypes``), the inputs
  cast to its dtypes under ``casting`` with NumPy's errors (``sl.add(x_int8, 1, dtype=np.float64)``
  adds in float64). A Python number is converted to its loop dtype first, as NumPy converts it
  (``sl.multiply(x_int32, 1.5, dtype=np.int32, casting="unsafe")`` multiplies by 1; an int out of
  the loop dtype's range raises ``OverflowError``); the one operand of a one-input ufunc, a Python
  number, is an int64/float64 array, not weak, as in NumPy.
* ``reduce``, ``accumulate``, ``outer``, ``reduceat`` and ``at``, as NumPy's methods: ``add``,
  ``multiply``, ``maximum``, ``minimum``, ``logical_and`` and ``logical_or`` reduce lazily (with
  ``initial=`` and ``where=``), ``add``/``multiply``/``maximum``/``minimum`` accumulate as scans
  (``cumsum``/``cumprod``, a running maximum/minimum: a library step, or a phase of the row
  kernel around it along the rows), every
  ``outer`` is a broadcast; the others run on the evaluated values in CuPy or NumPy and come back
  as stitchlab arrays.
* ``axes=``, ``axis=`` and ``keepdims=`` of the ufuncs with a signature (``matmul``, ``vecdot``,
  ``matvec``, ``vecmat``), as NumPy's gufuncs take them (:mod:`stitchlab.frontend.gufunc`).
* ``nin``, ``nout``, ``nargs``, ``identity``, ``signature``, ``types``, ``ntypes``: NumPy's.

``np.add(x, y, out=z)`` on stitchlab arrays (NumPy's ``__array_ufunc__``) takes the same path
(:mod:`stitchlab.frontend.protocols`).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..ir.dtypes import as_dtype, is_float, is_low_float
from . import build
from .array import LazyArray
from .scalars import TracedScalar

#: ``ufunc.reduce`` that stitchlab reduces lazily: the op -> its reduction
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
               "logical_or": "any"}

#: ``ufunc.accumulate`` that stitchlab scans as a library step: the op -> its scan
_SCANS = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax", "minimum": "cummin"}


def _lazy(obj: Any) -> Any:
    """``obj`` as a stitchlab array (a NumPy or CuPy array, a list or a number is copied in)."""
    from .creation import asarray

    return obj if isinstance(obj, LazyArray) else asarray(obj)


def _dtype_of(obj: Any) -> Any:
    """What ``resolve_dtypes`` takes for an operand: its dtype, or a Python number's type (weak,
    NEP 50; a bool is not weak)."""
    if isinstance(obj, bool):
        return np.dtype(bool)
    if type(obj) in (int, float, complex):
        return type(obj)
    dtype = getattr(obj, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(obj).dtype


def _is_python_number(obj: Any) -> bool:
    """Whether ``obj`` is a Python ``bool``, ``int`` or ``float`` itself (``np.float64``, a float
    subclass, is a NumPy scalar: strong, converted as a 0-d array)."""
    return type(obj) in (bool, int, float)


def _scalar_in(value: bool | int | float, dtype: np.dtype, name: str) -> LazyArray:
    """A Python number converted to a loop's input ``dtype`` as NumPy's ufuncs convert it: an
    ``int`` by value (``OverflowError`` out of the dtype's range), a ``float`` or ``bool`` by a C
    cast of its float64/bool array (``1.5`` to int32 is 1)."""
    from ..ir.dtypes import cast

    if type(value) is int and not -2**63 <= value < 2**64:  # (NumPy reads it as an int64 or uint64 first)
        raise OverflowError(f"{name}: Python int {value} too large to convert to C long; give a value within "
                            f"[-2**63, 2**64), or a float")
    if type(value) is int and dtype.kind in "iub":
        try:
            converted = np.asarray(value, dtype=dtype)
        except OverflowError:
            raise OverflowError(f"{name}: Python integer {value} out of bounds for {dtype} (the loop's input dtype); "
                                f"give a dtype= or signature= whose loop holds it") from None
    else:
        with np.errstate(all="ignore"):
            converted = cast(np.asarray(value), dtype)
    return LazyArray(build.const(converted[()], dtype))


def outputs(out: Any, nout: int | None, name: str) -> tuple[Any, ...] | None:
    """The output arrays ``out`` names, as a tuple of ``nout`` (entries may be None; ``None``:
    any count, as a NumPy function's ``out`` comes), or None where there are none; NumPy's errors
    for the wrong count or a non-array."""
    outs = out if isinstance(out, tuple) else (out,)
    if nout is not None and len(outs) != nout:
        raise ValueError(f"{name}: the 'out' tuple must have exactly one entry per ufunc output ({nout}, got {len(outs)})")
    for o in outs:
        if o is not None and not (isinstance(o, LazyArray) or isinstance(o, np.ndarray) or hasattr(o, "__cuda_array_interface__")):
            raise TypeError(f"{name}: out= must be a stitchlab, NumPy or CuPy array, not {type(o).__name__}")
    return None if all(o is None for o in outs) else outs


def write(value: Any, target: Any, casting: str = "same_kind", where: Any = True, name: str = "ufunc",
          exact: bool = False) -> Any:
    """``value`` written into the output array ``target`` where ``where`` is true, as a ufunc's
    ``out`` is: ``value`` broadcasts to ``target``'s shape (never the other way; with ``exact``, a
    reduction's ``out``, the shapes are equal) and is cast by ``casting``. A stitchlab ``target``
    then stands for the new value; returns ``target``."""
    from .assign import copyto

    shape = tuple(np.shape(value))
    if exact and shape != tuple(target.shape):
        raise ValueError(f"{name}: the output parameter has shape {tuple(target.shape)}, the result {shape}; give an "
                         f"out= of shape {shape}")
    try:
        full = np.broadcast_shapes(tuple(target.shape), shape, tuple(np.shape(where)))
    except ValueError:
        full = None
    if full != tuple(target.shape):
        raise ValueError(f"{name}: non-broadcastable output operand with shape {tuple(target.shape)} doesn't match the "
                         f"broadcast shape {shape}; give an out= of shape {shape} (or one it broadcasts to)")
    copyto(target, value, casting=casting, where=where)
    return target


def check_output_cast(ufunc: str, result: Any, out: Any, casting: str, which: str = "output") -> None:
    """NumPy's ``TypeError`` for a ufunc's result that ``casting`` does not let into ``out``
    (NumPy raises its ``UFuncTypeError``, a ``TypeError``, with this text)."""
    if not np.can_cast(result.dtype, np.dtype(out.dtype), casting):
        raise TypeError(f"Cannot cast ufunc '{ufunc}' {which} from {result.dtype!r} to {np.dtype(out.dtype)!r} with "
                        f"casting rule {casting!r}")


def stored(result: Any, out: Any, name: str, exact: bool = True, casting: str | None = None,
           ufunc: str | None = None) -> Any:
    """``result``, or the output array ``out`` with it written in (:func:`write`; ``exact``: a
    reduction's or scan's ``out``, of the result's shape, cast as NumPy's reductions cast into it,
    ``unsafe``; otherwise ``same_kind``, or ``casting``), as NumPy's functions take ``out=``;
    ``ufunc``: the ufunc NumPy's function calls, which its casting error names."""
    outs = outputs(out, 1, name) if out is not None else None
    if outs is None:
        return result
    if ufunc is not None:
        check_output_cast(ufunc, result, outs[0], casting or ("unsafe" if exact else "same_kind"))
    return write(result, outs[0], casting=casting or ("unsafe" if exact else "same_kind"), name=name, exact=exact)


def dot_stored(result: LazyArray, out: Any, name: str) -> Any:
    """``result``, or the output array ``out`` with it written in, under NumPy's rule for
    ``dot``'s ``out`` (and ``multi_dot``'s): NumPy writes the product into it directly, so it must
    be an array of exactly the result's dtype and shape, C-contiguous and writeable, and nothing is
    cast (``ValueError`` otherwise, as NumPy's). A stitchlab ``out`` is C-ordered; one that is a
    view raises :func:`write`'s ``TypeError``, as for every ``out``."""
    if out is None:
        return result
    if not (isinstance(out, (LazyArray, np.ndarray)) or hasattr(out, "__cuda_array_interface__")):
        raise TypeError(f"{name}: 'out' must be an array (stitchlab, NumPy or CuPy), not {type(out).__name__}")
    flags = out.flags
    usable = isinstance(out, LazyArray) or (flags.c_contiguous and getattr(flags, "writeable", True))
    if np.dtype(out.dtype) != result.dtype or out.ndim != result.ndim or not usable:
        layout = "" if usable else ", not C-contiguous and writeable"
        raise ValueError(f"output array is not acceptable (must have the right datatype, number of dimensions, and be a "
                         f"C-Array): {name}'s result is {result.dtype} of shape {result.shape}, out is {out.dtype} of "
                         f"shape {tuple(out.shape)}{layout}; give np.empty({result.shape}, {str(result.dtype)!r})")
    if tuple(out.shape) != result.shape:
        raise ValueError(f"output array has wrong dimensions ({name}'s result has shape {result.shape}, out "
                         f"{tuple(out.shape)})")
    return write(result, out, casting="no", name=name, exact=True)


class ufunc:  # noqa: N801 - NumPy's and CuPy's name
    """A stitchlab elementwise function with NumPy's ufunc interface (module docstring):
    ``sl.add(x, y, out=z, where=m, dtype=d, casting=c)``, ``sl.add.reduce``, ``.accumulate``,
    ``.outer``, ``.reduceat``, ``.at``; lazy, as the plain call is.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([1, 2, 3], dtype=np.int8))
        >>> sl.add(x, 1, dtype=np.float32).get()
        array([2., 3., 4.], dtype=float32)
        >>> sl.maximum.accumulate(sl.asarray([1, 3, 2])).get()
        array([1, 3, 3])
        >>> y = sl.zeros(3)
        >>> _ = sl.multiply(x, 2, out=y, where=x > 1)  # returns y
        >>> y.get()
        array([0., 4., 6.])
    """

    def __init__(self, func: Any, name: str, numpy_ufunc: np.ufunc | None, nin: int, nout: int = 1) -> None:
        self._func = func
        self._np = numpy_ufunc
        self.__name__ = self.__qualname__ = name
        self.__doc__ = func.__doc__
        self.__wrapped__ = func  # (inspect.signature, help())
        self.__module__ = "stitchlab"
        self.nin, self.nout, self.nargs = nin, nout, nin + nout
        self.signature = numpy_ufunc.signature if numpy_ufunc is not None else None
        self.identity = numpy_ufunc.identity if numpy_ufunc is not None else None

    @property
    def types(self) -> list[str]:
        """NumPy's loops of this ufunc (``'ff->f'``...); stitchlab's dtypes are those of
        :data:`stitchlab.ir.dtypes.SUPPORTED` among them, and bfloat16."""
        return list(self._np.types) if self._np is not None else []

    @property
    def ntypes(self) -> int:
        return len(self.types)

    def __repr__(self) -> str:
        return f"<stitchlab ufunc '{self.__name__}'>"

    def __reduce__(self) -> str:  # pickled by name, as NumPy's ufuncs are
        return self.__name__

    # --- calls ------------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == self.nin:
            return self._func(*args)
        name = self.__name__
        if len(args) < self.nin or len(args) > self.nargs:
            raise TypeError(f"{name}() takes from {self.nin} to {self.nargs} positional arguments but {len(args)} "
                            f"{'was' if len(args) == 1 else 'were'} given")
        out = kwargs.pop("out", None)
        if len(args) > self.nin:  # outputs given positionally, as NumPy allows
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword argument")
            out = tuple(args[self.nin:]) + (None,) * (self.nargs - len(args))
            args = args[:self.nin]
        outs = outputs(out, self.nout, f"{name}()") if out is not None else None
        where = kwargs.pop("where", True)
        if where is not True:
            from .api import bool_mask

            where = bool_mask(where, f"{name}()")
        casting = build.casting_arg(kwargs.pop("casting", "same_kind"), f"{name}()")
        dtype, signature = kwargs.pop("dtype", None), kwargs.pop("signature", None)
        if dtype is not None and signature is not None:
            raise TypeError("cannot specify both 'signature' and 'dtype'")
        order = kwargs.pop("order", "K")
        if order not in ("K", "C", "A", None):
            raise TypeError(f"{name}(..., order={order!r}): stitchlab arrays are C-ordered; leave order out (or 'C')")
        kwargs.pop("subok", None)  # (no subclasses: nothing to keep)
        # what is left is the function's own (a gufunc's axes/axis/keepdims); its TypeError names the rest
        loop = None
        if dtype is not None or signature is not None or casting != "same_kind":
            if self.nin == 1 and _is_python_number(args[0]):  # NumPy: an int64/float64 array, not weak
                args = (np.asarray(args[0]),)
            loop = self._loop(args, outs, dtype, signature, casting)
            args = self._cast_inputs(args, loop)
        place = None
        if self.signature is not None and {"axes", "axis", "keepdims"} & kwargs.keys():
            from .gufunc import with_core_axes

            args, place = with_core_axes(name, self.signature, args, kwargs.pop("axes", None),
                                         kwargs.pop("axis", None), bool(kwargs.pop("keepdims", False)))
        result = self._func(*args, **kwargs)
        results = result if self.nout > 1 else (result,)
        if place is not None:
            results = place(results)
        if loop is not None:  # (the loop's output dtypes; stitchlab's function gives them already but for bfloat16 quirks)
            results = tuple(r if r.dtype == d else r.astype(d) for r, d in zip(results, loop[self.nin:], strict=True))
        if outs is None:
            if where is not True:
                from .api import where as select

                results = tuple(select(where, r, r.dtype.type(0)) for r in results)
            return results if self.nout > 1 else results[0]
        for i, (r, o) in enumerate(zip(results, outs, strict=True)):  # (output n counts the inputs, as NumPy's)
            if o is not None:
                check_output_cast(name, r, o, casting, f"output {self.nin + i}" if self.nout > 1 else "output")
        written = tuple(
            write(r, o, casting, where, f"{name}()") if o is not None else r for r, o in zip(results, outs, strict=True)
        )
        return written if self.nout > 1 else written[0]

    def _loop(self, args: tuple[Any, ...], outs: tuple[Any, ...] | None, dtype: Any, signature: Any,
              casting: str) -> tuple[np.dtype, ...]:
        """NumPy's loop dtypes (inputs, then outputs) for these operands, ``dtype``/``signature``
        and ``casting``, with NumPy's casting errors."""
        if self._np is None:  # (sigmoid, erf...: unary, one loop per float dtype)
            if signature is not None:
                raise TypeError(f"{self.__name__}(): signature= needs a NumPy ufunc's loops; give dtype= instead")
            target = as_dtype(dtype) if dtype is not None else self._func(_lazy(args[0])).dtype
            given = _dtype_of(args[0])
            if not isinstance(given, type) and not np.can_cast(given, target, casting):
                raise TypeError(f"Cannot cast ufunc '{self.__name__}' input 0 from {given!r} to {target!r} with "
                                f"casting rule {casting!r}")
            return (target,) * self.nargs
        if dtype is not None:
            signature = (None,) * self.nin + (as_dtype(dtype),) * self.nout
        given = tuple(_dtype_of(a) for a in args) + (
            tuple(o.dtype if o is not None else None for o in outs) if outs is not None else (None,) * self.nout)
        extra = {"signature": signature} if signature is not None else {}
        if casting == "equiv" and any(isinstance(g, type) for g in given):
            # NumPy's resolve_dtypes crashes (a segfault) on a Python number's type under 'equiv'
            # (NumPy 2.4); its call raises instead where the number would need a cast. That call
            # on empty arrays gives the error; 'no' is 'equiv' for the native dtypes here.
            self._check_equiv(args, outs, extra)
            casting = "no"
        return tuple(self._np.resolve_dtypes(given, casting=casting, **extra))

    def _check_equiv(self, args: tuple[Any, ...], outs: tuple[Any, ...] | None, extra: dict[str, Any]) -> None:
        """NumPy's error for a Python number that ``casting='equiv'`` would need cast (its own
        call on empty operands of the same dtypes decides)."""
        if self._np.signature is not None:  # (a gufunc takes no Python numbers as NumPy's do)
            return
        empty = tuple(a if isinstance(_dtype_of(a), type) else np.empty(0, _dtype_of(a)) for a in args)
        out = tuple(np.empty(0, o.dtype) if o is not None else None for o in outs) if outs is not None else None
        try:
            with np.errstate(all="ignore"):
                self._np(*empty, casting="equiv", **extra, **({"out": out} if out is not None else {}))
        except TypeError as exc:
            if str(exc).startswith("cannot cast Python"):
                raise TypeError(f"{self.__name__}(): {exc} (only a cast of byte order is 'equiv'); give the number as "
                                f"an array or NumPy scalar of the loop's dtype, or use casting='safe'") from None

    def _cast_inputs(self, args: tuple[Any, ...], loop: tuple[np.dtype, ...]) -> tuple[Any, ...]:
        """The operands in the loop's input dtypes, Python numbers converted as NumPy converts them
        (:func:`_scalar_in`); an integer outside a comparison's loop dtype stays a Python int,
        which stitchlab's comparisons compare exactly, as NumPy's do."""
        out = []
        for a, d in zip(args, loop, strict=False):
            if _is_python_number(a):
                if type(a) is int and self.__name__ in build.COMPARISONS and not build.fits(a, d):
                    out.append(a)
                else:
                    out.append(_scalar_in(a, d, f"{self.__name__}()"))
            else:
                a = _lazy(a)
                out.append(a if a.dtype == d else a.astype(d))
        return tuple(out)

    # --- methods ----------------------------------------------------------------------------------
    def _binary(self, method: str) -> None:
        if self.signature is not None:
            raise ValueError(f"{self.__name__}.{method}: not defined on a ufunc with a signature ({self.signature})")
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{self.__name__}.{method}: only supported for binary functions")
        if self._np is None:
            raise TypeError(f"{self.__name__}.{method}: {self.__name__} is not a NumPy ufunc")

    def _library(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """NumPy's ``method`` on the evaluated values, run by CuPy or NumPy
        (:func:`stitchlab.frontend.protocols.run_natively`); a stitchlab array back, or the
        output arrays given."""
        from .protocols import run_natively

        result = run_natively(getattr(self._np, method), f"{self.__name__}.{method}", args, kwargs)
        return result if kwargs.get("out") is not None else _lazy(result)

    def reduce(self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False,
               initial: Any = np._NoValue, where: Any = True) -> Any:
        """NumPy's ``ufunc.reduce`` (``axis=0`` by default, ``None`` for all, a tuple for several):
        ``add``, ``multiply``, ``maximum``, ``minimum``, ``logical_and`` and ``logical_or`` lazily
        (a reduction the planner fuses), with ``initial`` and a ``where`` mask; the others on the
        evaluated values (CuPy or NumPy)."""
        self._binary("reduce")
        name = f"{self.__name__}.reduce"
        initial = initial_arg(initial, name)
        kind = _REDUCTIONS.get(self.__name__)
        if kind is None:  # (only what was given: CuPy's reduce takes fewer keywords than NumPy's)
            given = {"dtype": dtype, "out": out, "keepdims": keepdims or None, "initial": initial, "where": where}
            kwargs = {"axis": axis} | {k: v for k, v in given.items() if v is not None and v is not np._NoValue
                                       and not (k == "where" and v is True)}
            return self._library("reduce", (array,), kwargs)
        from . import api
        from .creation import full

        a = _lazy(array)
        axis = build.zero_d_axis(axis, a.ndim, ())
        if dtype is not None and kind in ("all", "any") and not np.can_cast(as_dtype(dtype), np.bool_):
            raise TypeError(f"{name}: No loop matching the specified signature and casting was found for dtype="
                            f"{as_dtype(dtype)} ({self.__name__} reduces in bool); leave dtype out")
        target = outputs(out, 1, name)[0] if out is not None else None
        if dtype is None and target is not None and kind in ("sum", "prod"):
            # NumPy's loop for a reduction into out: both dtypes promoted (bool into bool adds as or)
            dtype = np.result_type(target.dtype, a.dtype)
        if dtype is None and target is not None and kind in ("max", "min"):
            extreme_out(name, f"{self.__name__}.reduce", a.dtype, np.dtype(target.dtype))
        if dtype is not None and kind in ("max", "min"):
            a, dtype = a.astype(dtype), None
        elif target is not None and kind in ("max", "min"):  # NumPy's loop runs in out='s dtype (initial=2.5
            a = a.astype(target.dtype)                        # over integers into a float out stays 2.5)
        loop = as_dtype(dtype) if dtype is not None else a.dtype
        if target is not None and initial is not np._NoValue and target.dtype != loop:
            # NumPy converts initial to the loop's dtype (with its checks), then starts out= from it, cast
            # unsafely: 2.5 over float data into an int64 out is 2, -1 over int32 data into uint16 65535,
            # 2.5 with dtype=float32 into a uint16 out 2
            start = _initial_in(initial, loop)
            initial = start.astype(target.dtype) if isinstance(start, LazyArray) else np.asarray(start).astype(target.dtype)
        if kind == "prod" and _is_zero(initial):
            a = _zeroed(a, dtype)
        if where is not True:
            fill = self.identity if self.identity is not None else initial  # (initial is applied below too)
            if fill is np._NoValue:
                raise ValueError(f"reduction operation '{self.__name__}' does not have an identity, so to use a where "
                                 "mask one has to specify 'initial'")
            a = api.where(api.bool_mask(where, name), a, _initial_in(fill, a.dtype))
        reduction = getattr(api, kind)
        empty = 0 in [a.shape[i] for i in _axes(axis, a.ndim)]
        if kind in ("max", "min") and empty:
            if initial is np._NoValue:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity; "
                                 "give initial= (the value of an empty reduction)")
            shape = _reduced_shape(a.shape, _axes(axis, a.ndim), keepdims)
            result = full(shape, _initial_in(initial, a.dtype), dtype=a.dtype)
        elif empty and target is not None and initial is not np._NoValue:  # (a sum or product)
            # out= keeps what NumPy started it from: -1 into a uint64 out is 2**64 - 1, which the float64
            # loop of int32 and uint64 would not give back
            result = full(_reduced_shape(a.shape, _axes(axis, a.ndim), keepdims), initial, dtype=target.dtype)
        else:
            summed = kind in ("sum", "prod")
            low = (as_dtype(dtype) if dtype is not None else build.reduction_dtype(kind, a.dtype)) if summed else None
            if initial is not np._NoValue and low is not None and is_low_float(low):
                # NumPy's float16 loop accumulates in float32 from initial on and rounds once
                wide = reduction(a, axis, np.float32, keepdims=keepdims)
                result = self._func(wide, _initial_in(initial, np.dtype(np.float32))).astype(low)
            else:
                result = reduction(a, axis, dtype, keepdims=keepdims) if summed else reduction(a, axis, keepdims=keepdims)
                if initial is not np._NoValue:
                    result = self._func(result, _initial_in(initial, result.dtype))
        return stored(result, out, name)

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        """NumPy's ``ufunc.accumulate`` along ``axis`` (0 by default): ``add`` and ``multiply``
        as ``cumsum``/``cumprod``, ``maximum`` and ``minimum`` as a running maximum/minimum
        (NumPy's bits: the first NaN, of equal values NumPy's pick; a library step, or stitched
        into the row kernel of the work around it), the others on the evaluated values (CuPy or
        NumPy)."""
        self._binary("accumulate")
        name = f"{self.__name__}.accumulate"
        if axis is None or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{name}: axis must be an integer (got {axis!r}); accumulate runs along one axis")
        kind = _SCANS.get(self.__name__)
        if kind is None:
            return self._library("accumulate", (array,), {"axis": axis, "dtype": dtype, "out": out})
        from . import library

        a = _lazy(array)
        if a.ndim == 0:
            raise np.exceptions.AxisError(f"{name}: a 0-d array has no axis to accumulate along")
        return library.scan_into(kind, a, operator.index(axis), dtype, out, name)

    def outer(self, a: Any, b: Any, **kwargs: Any) -> Any:
        """NumPy's ``ufunc.outer``: ``op(a[i, ...], b[j, ...])`` over every pair, a broadcast of
        ``a`` against ``b`` (fused, lazy); the call's keywords (``out``, ``dtype``...) as for the
        call itself."""
        self._binary("outer")
        a, b = _lazy(a), _lazy(b)
        return self(a.reshape(a.shape + (1,) * b.ndim), b, **kwargs)

    def reduceat(self, array: Any, indices: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        """NumPy's ``ufunc.reduceat``, on the evaluated values (CuPy or NumPy)."""
        self._binary("reduceat")
        return self._library("reduceat", (array, indices), {"axis": axis, "dtype": dtype, "out": out})

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        """NumPy's unbuffered ``ufunc.at(a, indices, b)`` on a stitchlab ``a``: repeated
        positions apply the op again, in order (:func:`stitchlab.frontend.assign.ufunc_at`)."""
        from .assign import ufunc_at

        ufunc_at(self._np.__name__ if self._np is not None else self.__name__, a, indices, b)


def initial_arg(value: Any, name: str) -> Any:
    """A reduction's ``initial=`` checked as NumPy checks it: ``None`` is no initial value
    (``np._NoValue``); a sequence (``ValueError``) or a complex number (``TypeError``) is refused,
    naming it (it was broadcast against the result, or its real part taken)."""
    if value is None:
        return np._NoValue
    if value is np._NoValue or isinstance(value, TracedScalar):
        return value
    if np.ndim(value) != 0:
        raise ValueError(f"{name}: initial={value!r} is not a single number (NumPy: setting an array element with "
                         f"a sequence); give a scalar, the value an empty reduction starts from")
    if isinstance(value, (complex, np.complexfloating)):
        raise TypeError(f"{name}: initial={value!r} is complex; stitchlab reduces real numbers, give a real one")
    return value


def extreme_out(name: str, call: str, dtype: np.dtype, into: np.dtype) -> None:
    """The check of a maximum's or minimum's ``out=`` (``max``, ``nanmax``, ``maximum.reduce``...)
    of dtype ``into`` for data of ``dtype``: NumPy reduces in ``out``'s dtype, each value cast into
    it first, so where ``out`` cannot hold every value its result depends on how it buffers (and,
    for float data into an integer ``out``, on how NaN and out-of-range values cast): refused,
    naming the fix (``call``: how to cast first)."""
    if not np.can_cast(dtype, into):
        raise TypeError(f"{name}: out= of dtype {into} cannot hold every {dtype} value (NumPy's result then depends "
                        f"on how it buffers); give out= of dtype {dtype}, or cast first: {call}(x.astype(np.{into}), "
                        f"out=...)")


def _initial_in(value: Any, dtype: np.dtype) -> Any:
    """A reduction's ``initial`` (or ``where=``'s fill) in ``dtype`` as NumPy converts it: a Python
    number checked (300 into uint8, inf or NaN into an integer raise NumPy's errors), a NumPy
    scalar or array cast. (An operand's Python float is C-cast instead: :func:`_scalar_in`.)"""
    if dtype.kind == "b":
        return bool(value)
    if isinstance(value, LazyArray):  # (an array argument of an sl.jit call)
        return value.astype(dtype)
    if isinstance(value, (int, float)):
        try:
            return np.array(value, dtype=dtype)
        except (OverflowError, ValueError) as e:
            raise type(e)(f"{e}: initial={value!r} does not fit the reduction's dtype {dtype}; give one that "
                          f"does, or a dtype= that holds it") from None
    return np.asarray(value).astype(dtype)


def _is_zero(initial: Any) -> bool:
    """Whether a reduction's ``initial`` is a number known to be zero (``0``, ``-0.0``...)."""
    return initial is not np._NoValue and not isinstance(initial, (LazyArray, TracedScalar)) and initial == 0


def _zeroed(a: LazyArray, dtype: Any) -> LazyArray:
    """``a`` times zero in a float product's loop dtype (``dtype`` or ``a``'s), for a product
    from ``initial=0``: NumPy multiplies from the initial value on, so the result is a signed zero,
    or NaN once an element is inf or NaN, even where the elements' own product overflows (which,
    times 0, gave NaN). Zeros, multiplied in any order, give exactly that. Integer loops are
    left alone."""
    loop = as_dtype(dtype) if dtype is not None else build.reduction_dtype("prod", a.dtype)
    return a.astype(loop) * 0 if is_float(loop) else a


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    from .build import normalize_axes

    return normalize_axes(axis, ndim)


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keepdims or i not in axes)


def reduction_ufunc(kind: str) -> ufunc:
    """The ufunc whose ``reduce`` stitchlab's reduction ``kind`` is (``"sum"``: ``add``), for
    ``LazyArray.sum(out=, initial=, where=)``."""
    from . import api

    return getattr(api, next(op for op, k in _REDUCTIONS.items() if k == kind))


def lazy_method(lazy: ufunc, method: str) -> bool:
    """Whether NumPy's ``method`` of a ufunc on these operands is stitchlab's lazily (NumPy's
    ``__array_ufunc__``): the call and ``outer``; ``reduce`` of the ops with a reduction;
    ``accumulate`` of ``add``, ``multiply``, ``maximum`` and ``minimum``."""
    if method in ("__call__", "outer"):
        return True
    if method == "reduce":
        return lazy.__name__ in _REDUCTIONS
    if method == "accumulate":
        return lazy.__name__ in _SCANS
    return False
