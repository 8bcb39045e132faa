"""Compile CUDA C to a cubin with NVRTC (``cuda.bindings.nvrtc``).

Works on a machine with no GPU: only the NVRTC library is needed (pip ``cuda-bindings`` +
``nvidia-cuda-nvrtc``). Generated kernels include no header (see
:mod:`stitchlab.codegen.preamble`), so no include path is passed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from . import stats


class CompileError(RuntimeError):
    """NVRTC rejected a kernel; the message holds NVRTC's log."""


def _options(arch: str) -> list[bytes]:
    # --fmad=false: a multiply and an add stay two IEEE operations, each rounded, as NumPy computes
    # them (NVRTC's default contracts them into one fma where it likes: the same value computed
    # twice in one kernel could differ in the last bit). The emitters write the fmas they want.
    return [f"--gpu-architecture={arch}".encode(), b"--std=c++17", b"--device-as-default-execution-space",
            b"--fmad=false"]


@functools.lru_cache(maxsize=1)
def version() -> str:
    """NVRTC's version as "major.minor" (a registry key component)."""
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}"
    except Exception:
        return "unavailable"


#: The first NVRTC whose ptxas keeps negations in fused integer min/max. Before it, ptxas can
#: merge two 32-bit integer min/max instructions into one three-input VIMNMX3 and drop a negated
#: operand: ``max(-a, -b, -c)`` runs as ``max(-a, b, -c)``. Seen on the H200 with NVRTC 13.0
#: (``(x * -1).max(axis=1)`` of int32 and int16 rows gave wrong maxima, and so did ``min``,
#: ``x * -2`` and ``0 - x``); the machine code of NVRTC 12.9 and 13.0-13.3 drops the negation,
#: 13.4 and 13.5 keep it; older 12.x are treated alike (docs/compiler.md §8).
PTXAS_FIXED = (13, 4)


def ptxas_drops_negations(version: str) -> bool:
    """Whether the ptxas of NVRTC ``version`` ("major.minor") predates :data:`PTXAS_FIXED`
    (False for "unavailable": there is nothing to compile with)."""
    try:
        return tuple(int(p) for p in version.split(".")[:2]) < PTXAS_FIXED
    except ValueError:
        return False


def _check(result: object, what: str, prog: object = None) -> None:
    from cuda.bindings import nvrtc

    err = result[0] if isinstance(result, tuple) else result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        log = _log(prog) if prog is not None else ""
        raise CompileError(f"NVRTC {what} failed ({err.name}):\n{log}")


def _log(prog: object) -> str:
    from cuda.bindings import nvrtc

    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    # a fresh writable buffer: ``b" " * 1`` is CPython's shared one-byte object, and writing
    # NVRTC's terminating zero into it turned every b" " in the process into b"\x00"
    buf = bytearray(size)
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return buf.decode(errors="replace").rstrip("\x00 \n")


def compile_cubin(source: str, name: str, arch: str = "sm_90", extra: tuple[str, ...] = ()) -> tuple[bytes, str]:
    """Compile ``source`` for ``arch`` (e.g. "sm_90") with NVRTC options ``extra`` besides the
    standard ones; returns (cubin, NVRTC log).

    Counts ``nvrtc_compiles`` in ``sl.stats()``.

    Raises:
        CompileError: with NVRTC's log when the source does not compile.
    """
    stats.bump("nvrtc_compiles")
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise CompileError(
            "NVRTC is not available: install it with `pip install cuda-bindings nvidia-cuda-nvrtc` "
            "(stitchlab[cuda13] does)"
        ) from exc
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
    _check(err, "nvrtcCreateProgram")
    try:
        opts = _options(arch) + [o.encode() for o in extra]
        result = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _check(result, "compilation", prog)
        log = _log(prog)
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        _check(err, "nvrtcGetCUBINSize", prog)
        cubin = bytearray(size)
        _check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN", prog)
        return bytes(cubin), log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


@dataclass(frozen=True)
class ResourceUsage:
    """What ptxas reports for one kernel: registers per thread, bytes spilled to local memory
    (stores, loads) and the stack frame."""

    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int


def resource_usage(source: str, name: str, arch: str = "sm_90") -> ResourceUsage:
    """Compile ``source`` with ``ptxas -v`` and read the kernel's register count and spills from
    the log: no GPU needed (a regression check that a change of the emitters keeps kernels off
    local memory, and that the latency evaluator's register estimate is not optimistic)."""
    _, log = compile_cubin(source, name, arch, ("--ptxas-options=-v",))

    def field(pattern: str) -> int:
        m = re.search(pattern, log)
        if m is None:
            raise CompileError(f"ptxas -v output without {pattern!r}:\n{log}")
        return int(m.group(1))

    return ResourceUsage(field(r"Used (\d+) registers"), field(r"(\d+) bytes spill stores"),
                         field(r"(\d+) bytes spill loads"), field(r"(\d+) bytes stack frame"))
