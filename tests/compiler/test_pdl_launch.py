"""Programmatic dependent launch without a GPU (``stitchlab/runtime/pdl.py``): the generated kernels
wait for the previous grid before anything else, the launcher passes what ``cuLaunchKernelEx``
expects (checked against a recording stand-in driver function), and the executable launches
through it where PDL is on. That the launches run and give the right values is checked on the
GPU (``tests/gpu/test_pdl_gpu.py``)."""

from __future__ import annotations

import ctypes
import gc
import threading
import weakref
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.runtime import kernels, pdl

from .standin import StandIn, fake_cupy
from .workloads import WORKLOADS, make_args

WAIT = "  sl_grid_dependency_wait();"
_LOAD = kernels.load  # the real one: the standin fixture replaces it


class _Driver:
    """A stand-in for ``cuLaunchKernelEx``: records what each launch passes, returns ``code``."""

    def __init__(self, code: int = 0) -> None:
        self.code = code
        self.calls: list[dict[str, Any]] = []

    def __call__(self, config: Any, function: int, params: Any, extra: Any) -> int:
        cfg = config._obj  # ctypes.byref's object
        self.calls.append({
            "grid": (cfg.grid_x, cfg.grid_y, cfg.grid_z),
            "block": (cfg.block_x, cfg.block_y, cfg.block_z),
            "shared_mem": cfg.shared_mem,
            "stream": cfg.stream or 0,
            "attrs": [(cfg.attrs[k].id, cfg.attrs[k].value[0]) for k in range(cfg.num_attrs)],
            "function": function,
            "params": list(params),
            "values": [ctypes.c_uint64.from_address(p).value for p in params],  # each 8-byte slot, now
            "extra": extra,
        })
        return self.code


class _Function:
    """A loaded kernel whose CuPy call is recorded."""

    ptr = 0x1234

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any) -> None:
        self.calls.append(args)


def _u64(address: int) -> int:
    return ctypes.c_uint64.from_address(address).value


@pytest.fixture
def driver(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> _Driver:
    """PDL on, through a recording driver function, on the stand-in GPU (compute capability 9.0)."""
    drv = _Driver()
    monkeypatch.delenv("STITCHLAB_PDL", raising=False)
    monkeypatch.setattr(pdl, "_driver", (drv, None))
    monkeypatch.setattr(pdl, "_capable", {})
    return drv


def test_the_launch_structures_have_the_layout_of_cuda_h() -> None:
    assert ctypes.sizeof(pdl.LaunchAttribute) == 72 and pdl.LaunchAttribute.value.offset == 8
    assert ctypes.sizeof(pdl.LaunchConfig) == 56
    offsets = [getattr(pdl.LaunchConfig, f).offset for f in ("shared_mem", "stream", "attrs", "num_attrs")]
    assert offsets == [24, 32, 40, 48]


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_generated_kernel_waits_for_the_previous_grid_before_anything_else(name: str) -> None:
    build, _, kinds = WORKLOADS[name]
    plan = sl.explain(*build(*make_args(kinds, 64, 512)), device="H200")
    assert plan.kernels
    for k in plan.kernels:
        signature = k.source.index(f"{k.name}(")
        body = k.source[k.source.index("{\n", signature) + 2:]
        assert body.startswith(WAIT + "  //"), f"{k.name} starts with {body[:80]!r}"


def _ptx(source: str, name: str, arch: str) -> str:
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        opts = [f"--gpu-architecture={arch}".encode(), b"--std=c++17", b"--device-as-default-execution-space"]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
        err, size = nvrtc.nvrtcGetPTXSize(prog)
        buf = bytearray(size)
        nvrtc.nvrtcGetPTX(prog, buf)
        return buf.decode()
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def test_the_wait_is_griddepcontrol_from_sm_90_and_absent_before() -> None:
    (k,) = sl.explain(*WORKLOADS["softmax"][0](*make_args("m", 64, 512)), device="H200").kernels
    assert "griddepcontrol.wait" in _ptx(k.source, k.name, "compute_90")
    assert "griddepcontrol" not in _ptx(k.source, k.name, "compute_80")


def test_a_launch_passes_grid_block_stream_the_attribute_and_the_arguments(
        standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    drv = _Driver()
    fn = fake_cupy.Function("k")
    x, y = standin.array((4, 8)), standin.array((4,))
    go = pdl.Launcher(fn, "k", (4,), (128,), 256, 4, [0, 1], {2: np.int32(-3), 3: np.int64(1 << 40)}, launch=drv)
    go([x, y, None, None])
    (call,) = drv.calls
    assert (call["grid"], call["block"], call["shared_mem"], call["stream"]) == ((4, 1, 1), (128, 1, 1), 256, 0)
    assert call["attrs"] == [(pdl.ATTR_PROGRAMMATIC_STREAM_SERIALIZATION, 1)]
    assert call["function"] == fn.ptr and call["extra"] is None
    p = call["params"]
    assert [_u64(p[0]), _u64(p[1])] == [x.data.ptr, y.data.ptr]
    assert ctypes.c_int32.from_address(p[2]).value == -3
    assert ctypes.c_int64.from_address(p[3]).value == 1 << 40

    x2 = standin.array((4, 8))
    with fake_cupy.Stream(0xABC):
        go([x2, y, None, None])
    second = drv.calls[1]
    assert second["stream"] == 0xABC
    assert [_u64(a) for a in second["params"][:2]] == [x2.data.ptr, y.data.ptr] != [x.data.ptr, y.data.ptr]


def test_each_thread_fills_its_own_argument_slots(standin: StandIn) -> None:
    drv = _Driver()
    go = pdl.Launcher(fake_cupy.Function("k"), "k", (1,), (32,), 0, 1, [0], {}, launch=drv)
    mine, theirs = standin.array((8,)), standin.array((8,))
    go([mine])
    worker = threading.Thread(target=go, args=([theirs],))
    worker.start()
    worker.join()
    (a,), (b,) = drv.calls[0]["params"], drv.calls[1]["params"]
    assert a != b  # different slots: the driver call releases the GIL
    # read when launched: the worker's slots are freed when it ends
    assert (drv.calls[0]["values"], drv.calls[1]["values"]) == ([mine.data.ptr], [theirs.data.ptr])


def test_a_launcher_keeps_its_function_and_so_its_module_loaded(standin: StandIn) -> None:
    fn = fake_cupy.Function("k")
    ref = weakref.ref(fn)
    go = pdl.Launcher(fn, "k", (1,), (32,), 0, 1, [0], {}, launch=_Driver())
    del fn
    gc.collect()
    assert ref() is not None  # CuPy unloads a module when its last function goes: the handle would dangle
    del go
    gc.collect()
    assert ref() is None


def test_threads_loading_one_kernel_at_once_all_get_the_module_stored_first(
        standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the H200 before the fix, four threads making their first call of one function at once
    launched with CUDA_ERROR_INVALID_HANDLE; a module loaded twice, the first unloaded, is the
    inferred cause that this checks."""
    monkeypatch.setattr(kernels, "_functions", {})
    inside = threading.Barrier(4)

    class SlowModule(fake_cupy.Module):
        def load(self, cubin: bytes) -> None:
            inside.wait()  # all four threads are loading before any stores its module
            super().load(cubin)

    monkeypatch.setattr(standin.cupy.cuda.function, "Module", SlowModule)
    got: list[Any] = []
    threads = [threading.Thread(target=lambda: got.append(_LOAD("key", b"cubin", "k"))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(f is got[0] for f in got)
    assert kernels._functions[("key", 0)][1] is got[0]


def test_a_failed_launch_names_the_kernel_and_the_way_out(standin: StandIn) -> None:
    go = pdl.Launcher(fake_cupy.Function("k"), "sl_row_block_x", (1,), (32,), 0, 1, [0], {}, launch=_Driver(code=700))
    with pytest.raises(RuntimeError, match=r"sl_row_block_x.*\(700\).*STITCHLAB_PDL=0"):
        go([standin.array((8,))])


def test_a_scalar_wider_than_a_slot_is_refused(standin: StandIn) -> None:
    with pytest.raises(ValueError, match="wider than 8 bytes"):
        pdl.Launcher(fake_cupy.Function("k"), "k", (1,), (32,), 0, 2, [0], {1: np.complex128(1)}, launch=_Driver())


@pytest.mark.parametrize("case", ["on", "env off", "sm_80", "no driver"])
def test_pdl_is_used_only_on_sm_90_with_the_driver_call_and_not_turned_off(
        driver: _Driver, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    if case == "env off":
        monkeypatch.setenv("STITCHLAB_PDL", "0")
    elif case == "sm_80":
        monkeypatch.setattr(fake_cupy.Device, "compute_capability", "80")
    elif case == "no driver":
        monkeypatch.setattr(pdl, "_driver", False)
    assert pdl.enabled() is (case == "on")
    fn = _Function()
    go = pdl.launcher(fn, "k", (2,), (64,), 0, [None, np.int32(5)])
    assert isinstance(go, pdl.Launcher) is (case == "on")
    arr = fake_cupy.ndarray((3,), np.float32)
    go([arr, np.int32(5)])
    if case == "on":
        assert len(driver.calls) == 1 and not fn.calls
    else:  # CuPy's launch
        assert fn.calls == [((2,), (64,), (arr, np.int32(5)), 0)] and not driver.calls


def test_a_jit_call_launches_through_the_driver_with_its_buffers(
        standin: StandIn, driver: _Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernels, "load", lambda key, cubin, name: fake_cupy.Function(name))
    f = sl.jit(lambda x: sl.logsumexp(x, axis=1))
    x = standin.array((64, 512))
    out = f(x)._node.value
    (call,) = driver.calls
    assert call["grid"] == (64, 1, 1) and call["attrs"] == [(pdl.ATTR_PROGRAMMATIC_STREAM_SERIALIZATION, 1)]
    p = call["params"]
    assert [_u64(p[0]), _u64(p[1])] == [x.data.ptr, out.data.ptr]
    assert ctypes.c_int32.from_address(p[2]).value == 64  # the row count
    assert not standin.launches  # not CuPy's launch
    f(standin.array((64, 512)))
    assert len(driver.calls) == 2 and driver.calls[1]["params"] == p  # the same slots, refilled
