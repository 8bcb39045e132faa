"""Helpers shared by the tests that check generated code bit for bit: the bits of a float array,
NaNs with chosen payloads, and the PTX NVRTC makes of a kernel source (no GPU needed).

Importable from every test module: pytest puts this folder on ``sys.path`` with the root
``conftest.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

#: the unsigned integer type of each float type's bits
UINT = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def bits(a: np.ndarray) -> np.ndarray:
    """The bits of float array ``a`` as unsigned integers."""
    return np.ascontiguousarray(a).view(UINT[a.dtype])


def nan_with_payload(dtype: Any, payload: int, negative: bool = False) -> Any:
    """A quiet NaN of ``dtype`` with ``payload`` in its low mantissa bits."""
    dt = np.dtype(dtype)
    uint = UINT[dt]
    b = np.array(np.nan, dt).view(uint) | uint(payload)
    if negative:
        b |= uint(1) << uint(8 * dt.itemsize - 1)
    return b.view(dt)


def kernel_body(source: str) -> str:
    """A generated kernel's source without the preamble."""
    return source[source.index('extern "C"'):]


def ptx_of(source: str) -> str:
    """The PTX NVRTC makes of ``source`` for compute_90 (what ptxas turns into the cubin); the
    test fails with NVRTC's log where it does not compile, and is skipped without NVRTC."""
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"k.cu", 0, [], [])
    try:
        opts = [b"--gpu-architecture=compute_90", b"--std=c++17", b"--device-as-default-execution-space"]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = bytearray(size)
            nvrtc.nvrtcGetProgramLog(prog, log)
            pytest.fail(f"NVRTC: {log.decode(errors='replace')}\n--- source ---\n{kernel_body(source)}")
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        buf = bytearray(size)
        nvrtc.nvrtcGetPTX(prog, buf)
        return buf.decode().rstrip("\x00")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def compile_or_fail(source: str, name: str) -> None:
    """Compile ``source`` to a cubin as the runtime does (sm_90); fail the test with the log."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.runtime.nvrtc import CompileError, compile_cubin

    try:
        compile_cubin(source, name, "sm_90")
    except CompileError as exc:
        pytest.fail(f"{exc}\n--- source ---\n{kernel_body(source)}")
