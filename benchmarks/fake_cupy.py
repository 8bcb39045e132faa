"""A stand-in for the few parts of CuPy that stitchlab's call path touches, so that the *host* cost
of a call can be measured on a machine without a GPU (``benchmarks/jit_host_overhead.py``).

Nothing runs on a device: arrays hold a shape and a dtype, ``empty`` allocates nothing, a loaded
kernel's call does nothing. What the real CuPy does in Python on these paths is mirrored where it
matters for a fair comparison (``empty_like`` takes the same Python steps as CuPy 14's, a kernel
call takes ``(grid, block, args, shared_mem=0, stream=None)`` like ``cupy.cuda.Function``).

Use :func:`install` before stitchlab touches ``cupy``; it replaces ``sys.modules["cupy"]``.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import sys
import types
from typing import Any

import numpy as np


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous")

    def __init__(self, c: bool, f: bool) -> None:
        self.c_contiguous = c
        self.f_contiguous = f


class Device:
    __slots__ = ("id",)
    compute_capability = "90"  # the H200's

    def __init__(self, device: int = 0) -> None:
        self.id = device

    def synchronize(self) -> None:
        pass

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


_addresses = itertools.count(1 << 32, 512)


class _MemoryPointer:
    __slots__ = ("device_id", "ptr")

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self.ptr = next(_addresses)  # distinct per array, as a device address would be


class Stream:
    """CuPy's current stream: ``ptr`` is the handle (0: the legacy default stream); ``capturing``
    is what ``is_capturing()`` answers (set it to play a CUDA graph capture)."""

    __slots__ = ("ptr", "capturing")

    def __init__(self, ptr: int = 0) -> None:
        self.ptr = ptr
        self.capturing = False

    def is_capturing(self) -> bool:
        return self.capturing

    def __enter__(self) -> Stream:  # ``with stream:`` makes it the current stream, as in CuPy
        _streams.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _streams.pop()


_streams = [Stream()]
#: host-to-device copies made through ``cupy.cuda.runtime.memcpyAsync``: (destination address,
#: the bytes copied, kind, stream handle)
copies: list[tuple[int, bytes, int, int]] = []


class ndarray:  # noqa: N801 (CuPy's name)
    """Shape, dtype and contiguity only; ``get()`` returns zeros."""

    __slots__ = ("_shape", "dtype", "size", "_c_contiguous", "data", "__weakref__")

    def __init__(self, shape: Any, dtype: Any = float, memptr: Any = None, strides: Any = None, order: str = "C") -> None:
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.size = math.prod(self._shape)
        self._c_contiguous = strides is None
        self.data = _MemoryPointer(0)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape  # CuPy builds a new tuple here; a tuple is returned either way

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def flags(self) -> _Flags:
        return _Flags(self._c_contiguous, self._c_contiguous and len(self._shape) <= 1)

    @property
    def device(self) -> Device:
        return Device(self.data.device_id)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self._shape, "typestr": self.dtype.str, "data": (0, False), "version": 3,
                "strides": None, "stream": 1}

    @property
    def T(self) -> ndarray:
        out = ndarray(self._shape[::-1], self.dtype, strides=())
        out._c_contiguous = len(self._shape) <= 1 or self.size <= 1
        return out

    def reshape(self, *shape: Any) -> ndarray:
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        out = ndarray(shape, self.dtype)
        out.data = self.data  # a view: the same device address
        return out

    def __getitem__(self, key: Any) -> ndarray:
        """Basic indexing: a view (shape, contiguity and address as CuPy's), found on a NumPy
        array of this one's shape and strides over one element that is never read."""
        strides, step = [], self.dtype.itemsize
        for n in reversed(self._shape):
            strides.append(step)
            step *= n
        probe = np.lib.stride_tricks.as_strided(np.zeros(1, self.dtype), self._shape, tuple(reversed(strides)))
        view = probe[key]
        out = ndarray(view.shape, self.dtype)
        out._c_contiguous = self._c_contiguous and view.flags.c_contiguous
        out.data = _MemoryPointer(self.data.device_id)
        out.data.ptr = self.data.ptr + view.__array_interface__["data"][0] - probe.__array_interface__["data"][0]
        return out

    def astype(self, dtype: Any) -> ndarray:
        return ndarray(self._shape, dtype)

    def view(self, dtype: Any) -> ndarray:
        """The same memory as ``dtype`` (a C-contiguous array; the last axis rescaled)."""
        dtype = np.dtype(dtype)
        shape = self._shape[:-1] + (self._shape[-1] * self.dtype.itemsize // dtype.itemsize,) if self._shape else ()
        out = ndarray(shape, dtype)
        out.data = self.data
        return out

    def get(self) -> np.ndarray:
        return np.zeros(self._shape, self.dtype)


ndarray.__module__ = "cupy"


def empty(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return ndarray(shape, dtype, order=order)


def zeros(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return ndarray(shape, dtype, order=order)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> ndarray:
    return ndarray(shape, dtype if dtype is not None else np.asarray(fill_value).dtype)


def _update_order_char(c: bool, f: bool, order: int) -> int:
    if order in (ord("K"), ord("A")):
        return ord("F") if f and not c else ord("C")
    return order


def empty_like(prototype: ndarray, dtype: Any = None, order: str = "K", subok: None = None, shape: Any = None) -> ndarray:
    """The Python steps of CuPy 14's ``empty_like`` for a contiguous prototype."""
    if subok is not None:
        raise TypeError("subok is not supported yet")
    if dtype is None:
        dtype = prototype.dtype
    order = order.upper()
    if order not in ["C", "F", "K", "A"]:
        raise ValueError(f"order not understood: {order}")
    if np.isscalar(shape):
        shape = (shape,)
    order = chr(_update_order_char(prototype.flags.c_contiguous, prototype.flags.f_contiguous, ord(order)))
    strides = memptr = None
    shape = shape if shape else prototype.shape
    return ndarray(shape, dtype, memptr, strides, order)


def ascontiguousarray(a: ndarray, dtype: Any = None) -> ndarray:
    return ndarray(a.shape, a.dtype if dtype is None else dtype)


def asarray(a: Any, dtype: Any = None) -> ndarray:
    if isinstance(a, ndarray):
        return a
    a = np.asarray(a, dtype=dtype)
    return ndarray(a.shape, a.dtype)


class Function:
    """A loaded kernel: a call launches nothing."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ptr = next(_addresses)  # the CUfunction handle

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...],
                 shared_mem: int = 0, stream: Any = None) -> None:
        pass


class Module:
    def load(self, cubin: bytes) -> None:
        self.cubin = cubin

    def get_function(self, name: str) -> Function:
        return Function(name)


class RawKernel:
    """``cupy.RawKernel``'s call: look the function up for the current device, then launch."""

    def __init__(self, code: str, name: str) -> None:
        self._kernels = {0: Function(name)}

    @property
    def kernel(self) -> Function:
        return self._kernels[0]

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], *, shared_mem: int = 0) -> None:
        self.kernel(grid, block, args, shared_mem)


def make_module() -> types.ModuleType:
    """A module object ``cupy`` (with ``cupy.cuda``) made of the stand-ins above."""
    cp = types.ModuleType("cupy")
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device  # type: ignore[attr-defined]
    cuda.runtime = types.SimpleNamespace(  # type: ignore[attr-defined]
        getDeviceCount=lambda: 1, deviceSynchronize=lambda: None, memcpyHostToDevice=1,
        memcpyAsync=lambda dst, src, size, kind, stream: copies.append((dst, ctypes.string_at(src, size), kind, stream)))
    cuda.function = types.SimpleNamespace(Module=Module, Function=Function)  # type: ignore[attr-defined]
    cuda.Stream = Stream  # type: ignore[attr-defined]
    cuda.get_current_stream = lambda: _streams[-1]  # type: ignore[attr-defined]
    cp.cuda = cuda  # type: ignore[attr-defined]
    for name, value in {"ndarray": ndarray, "empty": empty, "zeros": zeros, "full": full, "empty_like": empty_like,
                        "ascontiguousarray": ascontiguousarray, "asarray": asarray, "RawKernel": RawKernel,
                        "float32": np.float32, "int32": np.int32, "uint32": np.uint32}.items():
        setattr(cp, name, value)
    return cp


def install() -> types.ModuleType:
    """Put the stand-in into ``sys.modules`` as ``cupy`` and ``cupy.cuda``; return it."""
    cp = make_module()
    sys.modules["cupy"] = cp
    sys.modules["cupy.cuda"] = cp.cuda
    return cp
