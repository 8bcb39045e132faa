"""Kernel launches with programmatic dependent launch (PDL), through the driver's cuLaunchKernelEx.

Every generated kernel starts with ``sl_grid_dependency_wait()`` (PTX ``griddepcontrol.wait``, in
the preamble): it waits until the kernel before it in the stream has finished and its writes are
visible, before its first load or store. Launched with the programmatic-stream-serialization
attribute, a kernel may then be started while the previous one drains its last blocks, which hides
part of the launch and block ramp-up that every kernel pays: 1.1-2.1 µs a call for the float16
workloads of ``benchmarks/run.py`` on the H200 (logsumexp 20.2 -> 19.0 µs at 8192 x 4096;
docs/compiler.md §4). Launched without the attribute the instruction does nothing, so the same
cubin runs under CuPy's launch.

CuPy's ``Function`` call has no launch attributes, hence the driver call through ctypes. It is
used on devices of compute capability 9.0 and newer whose driver has ``cuLaunchKernelEx`` (CUDA
12.0); ``STITCHLAB_PDL=0`` turns it off (CuPy's launch then, as on older devices). The driver call
releases the GIL, as CuPy's launch does, so each thread fills its own copy of the argument slots.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: ``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`` (cuda.h).
ATTR_PROGRAMMATIC_STREAM_SERIALIZATION = 6
#: Oldest compute capability with ``griddepcontrol`` (sm_90).
MIN_COMPUTE_CAPABILITY = 90


class LaunchAttribute(ctypes.Structure):
    """``CUlaunchAttribute``: an id, padding to 8 bytes, a 64-byte value union (72 bytes)."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_int), ("value", ctypes.c_int * 16)]


class LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` (56 bytes)."""

    _fields_ = [("grid_x", ctypes.c_uint), ("grid_y", ctypes.c_uint), ("grid_z", ctypes.c_uint),
                ("block_x", ctypes.c_uint), ("block_y", ctypes.c_uint), ("block_z", ctypes.c_uint),
                ("shared_mem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("num_attrs", ctypes.c_uint)]


_driver: Any = None  # (cuLaunchKernelEx, cuGetErrorName), or False where the driver has none
_capable: dict[int, bool] = {}  # device id -> compute capability >= 9.0


def _driver_functions() -> Any:
    global _driver
    if _driver is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            launch = lib.cuLaunchKernelEx
        except (OSError, AttributeError):
            _driver = False
        else:
            launch.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                               ctypes.c_void_p]
            launch.restype = ctypes.c_int
            name = lib.cuGetErrorName
            name.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
            name.restype = ctypes.c_int
            _driver = (launch, name)
    return _driver


def enabled() -> bool:
    """Whether kernels on the current device are launched with PDL (see the module docstring)."""
    if os.environ.get("STITCHLAB_PDL", "1") == "0" or not _driver_functions():
        return False
    import cupy

    dev = cupy.cuda.Device()
    capable = _capable.get(dev.id)
    if capable is None:
        try:
            capable = int(dev.compute_capability) >= MIN_COMPUTE_CAPABILITY
        except Exception:  # noqa: BLE001 - no usable device: CuPy's launch reports it
            return False
        _capable[dev.id] = capable
    return capable


def _error_name(code: int) -> str:
    text = ctypes.c_char_p()
    if _driver and _driver[1](code, ctypes.byref(text)) == 0 and text.value:
        return text.value.decode()
    return f"CUresult {code}"


class Launcher:
    """``launcher(args)`` launches ``fn`` with PDL on CuPy's current stream.

    ``args`` is the kernel's argument list as CuPy's call takes it; the entries at ``pointers``
    are arrays (their device addresses are passed), the others are fixed when the launcher is made
    (``fixed``: NumPy scalars, at most 8 bytes each).
    """

    __slots__ = ("name", "_fn", "_function", "_grid", "_block", "_shared_mem", "_pointers", "_fixed", "_n",
                 "_attrs", "_local", "_launch", "_stream")

    def __init__(self, fn: Any, name: str, grid: Sequence[int], block: Sequence[int], shared_mem: int,
                 n_args: int, pointers: Sequence[int], fixed: dict[int, Any], launch: Any = None) -> None:
        import cupy

        self.name = name
        self._fn = fn  # holds its module: the handle below is valid only while the module is loaded
        self._function = fn.ptr
        self._grid = tuple(grid) + (1,) * (3 - len(grid))
        self._block = tuple(block) + (1,) * (3 - len(block))
        self._shared_mem = shared_mem
        self._pointers = tuple(pointers)
        self._n = n_args
        self._fixed = {j: np.asarray(v).tobytes() for j, v in fixed.items()}
        if any(len(b) > 8 for b in self._fixed.values()):
            raise ValueError(f"kernel {name}: a scalar argument is wider than 8 bytes")
        self._attrs = (LaunchAttribute * 1)()
        self._attrs[0].id = ATTR_PROGRAMMATIC_STREAM_SERIALIZATION
        self._attrs[0].value[0] = 1
        self._local = threading.local()
        self._launch = launch if launch is not None else _driver_functions()[0]
        self._stream = cupy.cuda.get_current_stream

    def _slots(self) -> tuple[Any, Any, Any]:
        """This thread's (config, 8-byte value slots, pointers to them)."""
        values = (ctypes.c_uint64 * max(self._n, 1))()
        base = ctypes.addressof(values)
        for j, raw in self._fixed.items():
            ctypes.memmove(base + 8 * j, raw, len(raw))
        params = (ctypes.c_void_p * max(self._n, 1))(*[base + 8 * j for j in range(self._n)])
        config = LaunchConfig(*self._grid, *self._block, self._shared_mem, None, self._attrs, 1)
        slots = self._local.slots = (config, values, params)
        return slots

    def __call__(self, args: Sequence[Any]) -> None:
        try:
            config, values, params = self._local.slots
        except AttributeError:
            config, values, params = self._slots()
        for j in self._pointers:
            values[j] = args[j].data.ptr
        config.stream = self._stream().ptr
        code = self._launch(ctypes.byref(config), self._function, params, None)
        if code:
            raise RuntimeError(f"stitchlab: launching kernel {self.name} failed: {_error_name(code)} ({code}); "
                               "set STITCHLAB_PDL=0 to launch through CuPy instead")


def launcher(fn: Any, name: str, grid: Sequence[int], block: Sequence[int], shared_mem: int,
             template: Sequence[Any]) -> Callable[[Sequence[Any]], None]:
    """The launch of ``fn``: a :class:`Launcher` where PDL is :func:`enabled`, else CuPy's call.

    ``template`` is the argument list with its fixed scalars (NumPy scalars) filled in; every other
    entry is a buffer, given at each call.
    """
    if enabled():
        fixed = {j: v for j, v in enumerate(template) if isinstance(v, np.generic)}
        pointers = [j for j in range(len(template)) if j not in fixed]
        return Launcher(fn, name, grid, block, shared_mem, len(template), pointers, fixed)
    grid, block = tuple(grid), tuple(block)

    def call(args: Sequence[Any]) -> None:
        fn(grid, block, tuple(args), shared_mem)

    return call
