"""Array creation: ``asarray``, ``array``, ``from_dlpack``, ``zeros``/``ones``/``full``/``empty``
(and ``*_like``), ``arange``, ``linspace``."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from operator import index as operator_index
from typing import Any

import numpy as np

from .. import runtime
from ..ir.dtypes import (
    as_dtype,
    bfloat16,
    cast,
    check_copied_int,
    check_python_ints,
    is_bfloat16,
    is_float,
)
from ..ir.node import Node, make_attrs
from . import build
from .array import LazyArray, c_order
from .scalars import TracedScalar


def _shape(shape: Any) -> tuple[int, ...]:
    """A shape as NumPy takes one: an int, or a tuple, list or 1-d array of ints."""
    one_d = isinstance(shape, np.ndarray) and shape.ndim == 1
    items = tuple(shape) if isinstance(shape, (tuple, list)) or one_d else (shape,)
    try:
        out = tuple(operator_index(s) for s in items)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"negative dimensions are not allowed: {shape!r}")
    return out


def _leaf(buf: Any, device: str) -> LazyArray:
    dtype = as_dtype(buf.dtype)
    return LazyArray(Node("input", (), tuple(buf.shape), dtype, value=buf, device=device))


def _leaf_on(like: LazyArray, obj: Any) -> LazyArray:
    """``obj`` (host data, or a buffer of ``like``'s backend, not copied) as an array on
    ``like``'s device."""
    backend = runtime.for_device(like._node.device)
    return _leaf(backend.from_object(obj), backend.device())


def _backend_of(obj: Any) -> runtime.Backend:
    for name in runtime.BACKENDS:
        if name == "cupy" and "cupy" not in type(obj).__module__:
            continue
        backend = runtime._instance(name)
        if backend.owns(obj):
            return backend
    return runtime.current()


def _ones_in_front(a: LazyArray, ndim: int) -> LazyArray:
    """``a`` with axes of length 1 in front of its shape up to ``ndim`` axes (NumPy's ``ndmin``)."""
    return a.reshape((1,) * (ndim - a.ndim) + a.shape) if a.ndim < ndim else a


def asarray(obj: Any, dtype: Any = None, order: Any = None, *, copy: bool | None = None) -> LazyArray:
    """Wrap ``obj`` as a lazy array without copying where possible.

    NumPy arrays, CuPy arrays, nested sequences, scalars and objects with ``__array__`` or
    ``__cuda_array_interface__`` are accepted. A CuPy array stays on its GPU; other data goes to
    the current backend's device (a host-to-device copy on the cupy backend).

    The array is read when the computation runs: mutate it before then and the result sees the
    new values (use :func:`array` for a copy).

    Args:
        obj: the data.
        dtype: optional dtype to convert to.
        order: ``"C"``, ``"A"``, ``"K"`` or None (stitchlab arrays are C-ordered; ``"F"`` raises).
        copy: NumPy 2's: None (the default) copies only where it must, True always copies, False
            raises NumPy's ``ValueError`` where a copy would be needed (another dtype, a list,
            host data for the GPU).

    Returns:
        A :class:`LazyArray`.
    """
    if order is not None:
        c_order("asarray", order)
    if copy is False:
        _refuse_a_copy(obj, dtype)
    if isinstance(obj, LazyArray):
        out = obj if dtype is None or as_dtype(dtype) == obj.dtype else obj.astype(dtype)  # (NumPy: the array itself)
        return out.copy() if copy else out
    return _wrap(obj, dtype, copy=bool(copy))


def _refuse_a_copy(obj: Any, dtype: Any) -> None:
    """NumPy 2's ``copy=False``: ``ValueError`` where wrapping ``obj`` as ``dtype`` needs a copy."""
    message = ("Unable to avoid copy while creating an array as requested; {why}. Use copy=None to copy "
               "only where needed (sl.asarray's default)")
    if isinstance(obj, LazyArray):
        if dtype is not None and as_dtype(dtype) != obj.dtype:
            raise ValueError(message.format(why=f"converting {obj.dtype} to {as_dtype(dtype)} makes a new array"))
        return
    backend = _backend_of(obj) if hasattr(obj, "__cuda_array_interface__") else runtime.current()
    if backend.device().startswith("cuda"):
        if not hasattr(obj, "__cuda_array_interface__"):
            raise ValueError(message.format(why=f"{type(obj).__name__} on the host is copied to the GPU"))
        return
    try:
        np.asarray(obj, dtype=None if dtype is None else as_dtype(dtype), copy=False)
    except ValueError:
        wrapped = f" as {as_dtype(dtype)}" if dtype is not None else ""
        raise ValueError(message.format(why=f"a {type(obj).__name__} cannot be wrapped{wrapped} without a copy")) from None


def asanyarray(obj: Any, dtype: Any = None) -> LazyArray:
    """:func:`asarray` (NumPy's ``asanyarray``: stitchlab has no array subclasses)."""
    return asarray(obj, dtype)


def ascontiguousarray(obj: Any, dtype: Any = None) -> LazyArray:
    """:func:`asarray` with at least one dimension (NumPy's ``ascontiguousarray``); stitchlab
    arrays have no memory layout to choose, a result is written C-contiguous."""
    out = asarray(obj, dtype)
    return out.reshape(1) if out.ndim == 0 else out


def from_dlpack(x: Any, *, device: Any = None, copy: Any = None) -> LazyArray:
    """An array sharing the memory of any DLPack producer (NumPy's and the array API's
    ``from_dlpack``): a torch tensor (bfloat16 included), a CuPy, JAX or NumPy array. GPU memory
    stays on its GPU and is not copied; host memory is wrapped as :func:`asarray` does (copied to
    the GPU on the cupy backend). ``copy=True`` copies; ``device`` must be None or the producer's.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.from_dlpack(np.arange(3.0)).get()
        array([0., 1., 2.])
    """
    if device is not None and str(device) != str(getattr(x, "device", device)):
        raise ValueError(f"from_dlpack(device={device!r}): stitchlab does not move data here; "
                         f"the producer is on {getattr(x, 'device', 'another device')}, move it there first")
    if isinstance(x, LazyArray):
        return x.copy() if copy else x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} has no __dlpack__ method; use sl.asarray for other data")
    if _torch_bfloat16(x) is None:
        kind, _ = x.__dlpack_device__()
        if kind == 2:  # kDLCUDA: CuPy takes the capsule, sharing the memory
            import cupy

            x = cupy.from_dlpack(x)
        elif kind == 1:  # kDLCPU
            x = np.from_dlpack(x)
        else:
            raise ValueError(f"from_dlpack: DLPack device type {kind} is neither the CPU (1) nor a CUDA GPU (2)")
    return _wrap(x, None, copy=bool(copy))


def array(obj: Any, dtype: Any = None, *, copy: bool | None = True, order: Any = "K", subok: bool = False,
          ndmin: int = 0) -> LazyArray:
    """Like :func:`asarray` but copies the data (NumPy's ``array``): ``copy=None`` copies only
    where it must, ``copy=False`` raises where it must; ``ndmin`` puts axes of length 1 in front
    up to that many dimensions."""
    c_order("array", order)
    if isinstance(obj, LazyArray):
        out = asarray(obj, dtype, copy=copy)
    else:
        if copy is False:
            _refuse_a_copy(obj, dtype)
        out = _wrap(obj, dtype, copy=bool(copy))
    ndmin = operator_index(ndmin)
    return _ones_in_front(out, ndmin)


def _torch_bfloat16(obj: Any) -> Any:
    """A torch bfloat16 tensor as its bits (int16), which NumPy, CuPy and the CUDA array
    interface all take (torch cannot give NumPy a bfloat16 array, and its CUDA array interface
    says only "<V2"); None for anything else."""
    if type(obj).__module__.split(".")[0] != "torch" or str(getattr(obj, "dtype", "")) != "torch.bfloat16":
        return None
    import torch

    return obj.detach().view(torch.int16)


def _wrap(obj: Any, dtype: Any, copy: bool) -> LazyArray:
    if dtype is not None:
        dtype = as_dtype(dtype)
    bits = _torch_bfloat16(obj)
    if bits is not None:  # the tensor's memory viewed as bfloat16, then converted
        out = _wrap(bits, None, copy)
        out = LazyArray(Node("input", (), out.shape, bfloat16(), value=out._node.value.view(bfloat16()), device=out._node.device))
        return out if dtype is None else out.astype(dtype)
    if dtype is not None and is_bfloat16(dtype):  # converted by stitchlab's cast (one rounding)
        if isinstance(obj, (int, list, tuple)) or (isinstance(obj, np.ndarray) and obj.dtype == object):
            held = _held(obj)
            if held is not None and held.dtype == object:  # (Python ints past 64 bits: ml_dtypes converts each)
                obj = cast(held, dtype)
        out = _wrap(obj, None, copy)
        return out if out.dtype == dtype else out.astype(dtype)
    backend = _backend_of(obj) if hasattr(obj, "__cuda_array_interface__") else runtime.current()
    try:
        buf = backend.from_object(obj, dtype=dtype, copy=copy)
    except OverflowError:
        if dtype is not None:
            check_python_ints(obj, dtype)  # (names a Python int past 64 bits, which NumPy's message does not)
        raise
    except (TypeError, ValueError) as exc:  # (NumPy's type of error: ValueError for NaN into an integer dtype)
        error = TypeError if isinstance(exc, TypeError) else ValueError
        raise error(f"cannot make a stitchlab array from {type(obj).__name__}: {exc}") from None
    if not buf.dtype.isnative:  # byte-swapped (">f4" on x86): copied into native byte order
        buf = buf.astype(buf.dtype.newbyteorder("="))
    if buf.dtype.kind in "OUSVcMm" and not is_bfloat16(buf.dtype):
        raise TypeError(
            f"cannot make a stitchlab array from {type(obj).__name__} with dtype {buf.dtype}{_first_object(buf)}; "
            f"supported dtypes are bool, integers, float16/32/64 and bfloat16{_dtype_fix(buf)}"
        )
    return _leaf(buf, backend.device())


def _first_object(buf: np.ndarray) -> str:
    """For an object array: its first element that is not a Python or NumPy number, named."""
    if buf.dtype != object:
        return ""
    others = [v for v in buf.ravel()[:1000] if not isinstance(v, (int, float, np.number, np.bool_))]
    return f" (NumPy's for {others[0]!r})" if others else ""


def _dtype_fix(buf: np.ndarray) -> str:
    """The fix for an object or string array whose elements NumPy converts to numbers with a dtype
    given (a Fraction, a Decimal, a Python int past 64 bits, a numeric string)."""
    if buf.dtype.kind not in "OUS":
        return ""
    if buf.dtype == object and buf.ndim == 0 and isinstance(buf[()], Iterator):  # (NumPy keeps an iterator whole)
        return "; an iterator is one object to NumPy: sl.fromiter(values, dtype) or sl.asarray(list(values))"
    return ("; give a dtype to convert each element as NumPy does (sl.asarray(values, dtype=float), "
            "NumPy's float(), int() or parsing of each)")


def _held(obj: Any) -> np.ndarray | None:
    """``obj`` as NumPy's array, or None where NumPy cannot make one (a ragged list: the error is
    raised where the array is made)."""
    try:
        return np.asarray(obj)
    except (TypeError, ValueError):
        return None


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C") -> LazyArray:
    """An array of ``shape`` filled with ``fill_value`` (dtype from the value, as NumPy; ``order``
    ``"C"``: stitchlab arrays are C-ordered)."""
    c_order("full", order, ("C",))
    shape = _shape(shape)
    if isinstance(fill_value, LazyArray) or hasattr(fill_value, "__len__"):
        # NumPy's full: copyto(casting="unsafe") into an empty array
        from .assign import _bfloat16_values, _fitted, _fitted_shape

        if dtype is not None and not (isinstance(fill_value, LazyArray) or hasattr(fill_value, "__cuda_array_interface__")):
            # (host data: an array, its shape checked, then cast as NumPy's copyto(casting="unsafe") casts
            # it; a list of Python ints past 64 bits is an object array to NumPy, converted element by element)
            host, dt = np.asarray(fill_value), as_dtype(dtype)
            _fitted_shape(host.shape, shape)
            # (into bfloat16 as ml_dtypes converts: numbers only, a string or None is NumPy's TypeError)
            fill_value = _bfloat16_values(dt, fill_value, host) if is_bfloat16(dt) else cast(host, dt)
        fill = asarray(fill_value)
        fill = fill if dtype is None else fill.astype(dtype)
        return _fitted(fill, shape)  # (leading axes of 1 dropped, as NumPy's copyto drops them)
    device = runtime.current().device()
    if isinstance(fill_value, TracedScalar):  # a number an sl.jit call reads at run time
        dt = as_dtype(dtype) if dtype is not None else np.dtype(fill_value.kind)  # (NumPy's int64, float64)
        c = fill_value.node(dt)
    else:
        dt = as_dtype(dtype) if dtype is not None else asarray(fill_value).dtype  # (an object: the error names it)
        check_copied_int(fill_value, dt)  # (a Python int, as NumPy 2's full refuses it)
        if is_bfloat16(dt) and isinstance(fill_value, (np.datetime64, np.timedelta64)):
            np.full((), fill_value, dt)  # (ml_dtypes converts numbers only: NumPy's TypeError, not the ticks)
        c = build.const(fill_value, dt)
    c.device = device
    if not shape:
        return LazyArray(c)
    c = build.reshape(c, (1,) * len(shape))
    c.device = device
    return LazyArray(Node("broadcast", (c,), shape, dt, make_attrs(shape=shape), device=device))


def zeros(shape: Any, dtype: Any = float, order: str = "C") -> LazyArray:
    """Zeros of ``shape`` (NumPy's ``zeros``; ``order`` ``"C"``: stitchlab arrays are C-ordered)."""
    c_order("zeros", order, ("C",))
    return full(shape, 0, dtype)


def ones(shape: Any, dtype: Any = float, order: str = "C") -> LazyArray:
    """Ones of ``shape`` (NumPy's ``ones``; ``order`` ``"C"``: stitchlab arrays are C-ordered)."""
    c_order("ones", order, ("C",))
    return full(shape, 1, dtype)


def empty(shape: Any, dtype: Any = float, order: str = "C") -> LazyArray:
    """Like NumPy's ``empty``; the contents are zeros (a lazy array has no uninitialized memory)."""
    c_order("empty", order, ("C",))
    return full(shape, 0, dtype)


def _like(a: Any, dtype: Any, shape: Any, order: Any = "K", call: str = "zeros_like") -> tuple[Any, Any]:
    """(shape, dtype) of an array like ``a`` (an array's own, without copying it in)."""
    c_order(call, order)
    if not (hasattr(a, "shape") and isinstance(getattr(a, "dtype", None), np.dtype)):
        a = asarray(a)
    return (tuple(a.shape) if shape is None else shape), (a.dtype if dtype is None else dtype)


# NumPy's parameters in NumPy's order (``order`` K, C or A: stitchlab arrays are C-ordered; ``subok``
# means nothing without subclasses)
def zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> LazyArray:
    return zeros(*_like(a, dtype, shape, order))


def ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> LazyArray:
    return ones(*_like(a, dtype, shape, order, "ones_like"))


def empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> LazyArray:
    return empty(*_like(prototype, dtype, shape, order, "empty_like"))


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None) -> LazyArray:
    shape, dtype = _like(a, dtype, shape, order, "full_like")
    return full(shape, fill_value, dtype)


def _iota(n: int, start: Any, step: Any, dtype: np.dtype) -> LazyArray:
    return LazyArray(
        Node("iota", (), (n,), dtype, make_attrs(start=start, step=step), device=runtime.current().device())
    )


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> LazyArray:
    """Evenly spaced values in ``[start, stop)`` (NumPy's ``arange``)."""
    if stop is None:
        start, stop = 0, start
    for value in (start, stop, step):
        if type(value) in (int, float):
            continue
        kind = value.dtype if isinstance(value, (LazyArray, np.ndarray, np.generic)) else np.asarray(value).dtype
        if kind.kind not in "biuf" or np.ndim(value):
            raise TypeError(f"arange() not supported for inputs with DType {type(kind)}: got {value!r}; give "
                            "numbers (start, stop, step)")
    if step == 0:
        raise ZeroDivisionError("division by zero (arange: step must not be zero)")  # (NumPy's type of error)
    n = max(0, math.ceil((stop - start) / step))
    natural = np.result_type(*(np.asarray(v).dtype for v in (start, stop, step)))
    dt = as_dtype(dtype) if dtype is not None else as_dtype(natural)
    if dt.kind == "b" and n > 2:
        raise TypeError(f"arange() is only supported for booleans when the result has at most length 2 (got "
                        f"length {n}); make integers and compare, e.g. sl.arange(n) > 0")
    # (int64 and uint64 bounds promote to float64; with an integer dtype NumPy counts exactly)
    if is_float(dt) or (natural.kind == "f" and not (
            dt.kind in "iu" and all(isinstance(v, (int, np.integer)) for v in (start, stop, step)))):
        return _iota(n, float(start), float(step), np.dtype("float64")).astype(dt)
    return _iota(n, int(start), int(step), dt)


def _linspace_dtype(start: Any, stop: Any) -> np.dtype:
    """NumPy's dtype for ``linspace(start, stop)``: the ends' result dtype, float64 where that is
    an integer or bool (a Python number is weak: ``linspace(np.float32(0), 1)`` is float32; with a
    bfloat16 end, ml_dtypes' promotion: a Python number's start with a bfloat16 stop is float32)."""
    def proxy(v: Any) -> Any:
        if isinstance(v, bool | int | float):
            return v
        dt = v.dtype if isinstance(v, LazyArray | np.ndarray | np.generic) else np.asarray(v).dtype
        if dt.kind not in "biuf" and not is_bfloat16(dt):
            raise TypeError(f"linspace: start and stop must be real numbers or arrays of them (got dtype {dt}); "
                            "give float or integer ends")
        return np.zeros((), dt)
    return np.linspace(proxy(start), proxy(stop), 0).dtype  # (NumPy's own promotion, on two zeros)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (NumPy's ``linspace``, computed its
    way: ``arange(num) * step + start`` in the ends' float dtype, the last value ``stop`` exactly
    where ``endpoint``). Array ends give one sequence per element, along ``axis`` of the result;
    an integer ``dtype`` floors the values first; ``retstep=True`` also returns the step (NaN
    where there is none: fewer than two points with ``endpoint``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> y, step = sl.linspace(np.array([0.0, 1.0]), 2.0, 3, retstep=True)
        >>> y.get()
        array([[0. , 1. ],
               [1. , 1.5],
               [2. , 2. ]])
        >>> step.get()
        array([1. , 0.5])
    """
    from .api import floor, moveaxis, where

    num = operator_index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = _linspace_dtype(start, stop)
    host = not any(isinstance(v, LazyArray) for v in (start, stop)) and np.ndim(start) == 0 and np.ndim(stop) == 0
    first, last = asarray(start), asarray(stop)
    delta = last.astype(dt) - first.astype(dt)
    y = arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim)
    step: Any = float("nan")
    if div <= 0:
        y = y * delta
    elif host:  # NumPy's scalar step, computed as NumPy computes it
        with np.errstate(all="ignore"):
            step = np.subtract(np.asarray(stop), np.asarray(start), dtype=dt.type) / div
        y = (y / div) * delta if step == 0 else y * step
    else:  # a step that underflows to 0 (subnormal ends): NumPy divides first, for every element
        step = delta / div
        y = where((step == 0).any(), (y / div) * delta, y * step)
    y = y + first.astype(dt)  # (NumPy adds in place: a Python number as dt, an array cast to it)
    if endpoint and num > 1:
        y = where(arange(num).reshape((-1,) + (1,) * delta.ndim) == num - 1, last.astype(dt), y)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None:
        out_dt = as_dtype(dtype)
        y = (floor(y) if out_dt.kind in "iu" else y).astype(out_dt)
    return (y, step) if retstep else y


def broadcast_to(array: Any, shape: Sequence[int], subok: bool = False) -> LazyArray:
    base = asarray(array)  # (subok: a stitchlab array is the only kind there is)
    return LazyArray(build.broadcast_to(base._node, _shape(shape)), view_of=base)
