"""Timers: device-bound time from CUDA events, per-call wall latency, copy bandwidth.

Device-bound time: ``n`` calls back to back between two CUDA events, repeated ``samples`` times
after a warm-up; the per-call median is reported (with min and max). Back to back is device-bound
only while the host queues calls faster than the GPU runs them: a call whose host cost (Python,
guards, launches) exceeds its kernels' time leaves the GPU idle between calls, and the events
then time the host. So a *held* loop (``hold=True``) first launches a kernel that spins until the
host has queued all ``n`` calls and the end event (``Hold``, as nvbench's blocking kernel): the
events then see only the kernels, back to back. Wall latency: one call plus a device synchronize,
timed with ``perf_counter``, median of many. On the CPU (``--cpu``) the "device" timer is
``perf_counter`` around the same loop.
"""

from __future__ import annotations

import ctypes
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any


class CpuClock:
    """Host clock; ``sync`` is a no-op (NumPy runs synchronously)."""

    name = "perf_counter"

    def sync(self) -> None:
        return None

    def time_loop_us(self, call: Callable[[], Any], n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - t0) * 1e6


_HOLD_SOURCE = r"""
extern "C" __global__ void hold(const volatile int* release, int* timed_out, unsigned long long timeout_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*release == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) { *timed_out = 1; return; }
    }
}
"""


class Hold:
    """A one-thread kernel that keeps a stream busy until the host releases it (a flag in mapped
    pinned memory), or until ``timeout_s`` has passed: then :attr:`timed_out` says so (the host
    was held up longer, for instance by a full launch queue, and the loop was not all queued)."""

    def __init__(self, timeout_s: float = 1.0) -> None:
        import cupy

        rt = cupy.cuda.runtime
        self.cupy = cupy
        self._flag_ptr = rt.hostAlloc(4, rt.hostAllocMapped)  # UVA: the same address on the device
        self._flag = ctypes.c_int.from_address(self._flag_ptr)
        self._timed_out = cupy.zeros(1, cupy.int32)
        self._kernel = cupy.RawKernel(_HOLD_SOURCE, "hold")
        self._timeout_ns = int(timeout_s * 1e9)

    def launch(self) -> None:
        """Hold the current CuPy stream (call with nothing running: the flag is reset here)."""
        self._flag.value = 0
        self._timed_out.fill(0)
        self._kernel((1,), (1,), (self._flag_ptr, self._timed_out, self.cupy.uint64(self._timeout_ns)))

    def release(self) -> None:
        self._flag.value = 1

    @property
    def timed_out(self) -> bool:
        return bool(self._timed_out.get()[0])


_hold: Hold | None = None


def _the_hold() -> Hold:
    global _hold
    if _hold is None:
        _hold = Hold()
    return _hold


class CupyClock:
    """CUDA events on CuPy's current stream (the legacy default stream unless changed)."""

    name = "cuda-events (cupy)"

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy
        self.start, self.end = cupy.cuda.Event(), cupy.cuda.Event()

    def sync(self) -> None:
        self.cupy.cuda.runtime.deviceSynchronize()

    def _stream(self) -> Any:
        """The stream the events are recorded on, as a CuPy stream (for the hold kernel)."""
        return self.cupy.cuda.get_current_stream()

    def time_loop_us(self, call: Callable[[], Any], n: int, hold: bool = False) -> float:
        """Device time of ``n`` calls back to back, µs; ``hold``: queued behind the hold kernel
        (:attr:`held_timed_out` then says whether the hold ran out before the loop was queued)."""
        self.sync()
        if hold:
            with self._stream():
                _the_hold().launch()
        self.start.record()
        for _ in range(n):
            call()
        self.end.record()
        if hold:
            _the_hold().release()
        self.end.synchronize()
        self.held_timed_out = hold and _the_hold().timed_out
        return self._elapsed_ms() * 1e3

    def _elapsed_ms(self) -> float:
        return self.cupy.cuda.get_elapsed_time(self.start, self.end)


class TorchClock(CupyClock):
    """CUDA events on torch's current stream."""

    name = "cuda-events (torch)"

    def __init__(self) -> None:
        import cupy
        import torch

        self.cupy, self.torch = cupy, torch
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def _stream(self) -> Any:
        ptr = self.torch.cuda.current_stream().cuda_stream
        return self.cupy.cuda.Stream.null if ptr == 0 else self.cupy.cuda.ExternalStream(ptr)

    def _elapsed_ms(self) -> float:
        return self.start.elapsed_time(self.end)


def device_time(call: Callable[[], Any], clock: Any, target_us: float = 3000.0, samples: int = 15,
                max_n: int = 200, hold: bool = False) -> dict[str, Any]:
    """Per-call device-bound time in µs: median/min/max over ``samples`` loops of ``n`` calls.

    ``n`` is chosen so that one loop lasts about ``target_us`` (at least 1, at most ``max_n``).
    ``hold`` (GPU clocks only): each loop is queued behind the hold kernel, so the host's cost per
    call is not timed (see the module's docstring); ``held_loops_timed_out`` counts the loops whose
    hold ran out first (those were partly timed as the host queued them). A call that waits for
    the device itself (it reads a value back, or synchronizes) cannot be queued behind a hold: where
    a single held call runs the hold out, the loops are plain and ``hold_refused`` says why.
    """
    hold = hold and isinstance(clock, CupyClock)
    call()
    clock.sync()
    refused = None
    loop = functools.partial(clock.time_loop_us, hold=True) if hold else clock.time_loop_us
    one = loop(call, 1)
    if hold and clock.held_timed_out:  # the call itself waits for the device: it cannot be held
        hold, refused = False, "a call waited for the device while the stream was held (it synchronizes)"
        loop = clock.time_loop_us
        one = loop(call, 1)
    n = int(min(max_n, max(1, target_us // max(one, 1.0))))
    per_call, timed_out = [], 0
    for _ in range(samples):
        per_call.append(loop(call, n) / n)
        timed_out += hold and clock.held_timed_out
    out = {
        "median_us": statistics.median(per_call),
        "min_us": min(per_call),
        "max_us": max(per_call),
        "calls_per_sample": n,
        "samples": samples,
        "clock": clock.name + (", held" if hold else ""),
    }
    if hold:
        out["held_loops_timed_out"] = timed_out
    if refused:
        out["hold_refused"] = refused
    return out


def held_and_plain(call: Callable[[], Any], clock: Any, samples: int) -> dict[str, Any]:
    """``{"device": ...}``, the held :func:`device_time`, and on a GPU clock ``"device_unheld"``
    beside it, the plain loop (where it is longer, the host's cost per call exceeds the device's)."""
    out = {"device": device_time(call, clock, samples=samples, hold=True)}
    if isinstance(clock, CupyClock):
        out["device_unheld"] = device_time(call, clock, samples=samples)
    return out


def wall_latency(call: Callable[[], Any], clock: Any, reps: int = 200, warmup: int = 10) -> dict[str, Any]:
    """Per-call wall latency in µs: one call plus a device synchronize (median), and the
    pipelined host cost (``reps`` calls back to back, then one synchronize, divided by ``reps``)."""
    for _ in range(warmup):
        call()
    clock.sync()
    synced = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        clock.sync()
        synced.append((time.perf_counter() - t0) * 1e6)
    t0 = time.perf_counter()
    for _ in range(reps):
        call()
    clock.sync()
    pipelined = (time.perf_counter() - t0) * 1e6 / reps
    return {
        "median_us": statistics.median(synced),
        "p10_us": sorted(synced)[reps // 10],
        "p90_us": sorted(synced)[(9 * reps) // 10],
        "pipelined_us": pipelined,
        "reps": reps,
    }


def copy_bandwidth_gpu(nbytes: int = 2 << 30, reps: int = 20) -> dict[str, Any]:
    """Device-to-device copy bandwidth (bytes read + written per second) with cudaMemcpyAsync,
    and with CuPy's elementwise copy kernel, both timed with CUDA events (median of ``reps``)."""
    import cupy

    n = nbytes // 4
    src = cupy.random.default_rng(1).random(n, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    clock = CupyClock()
    stream = cupy.cuda.get_current_stream().ptr

    def memcpy() -> None:
        cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes, 3, stream)  # 3: D2D

    def kernel() -> None:
        cupy.copyto(dst, src)

    out: dict[str, Any] = {"bytes_copied": int(src.nbytes)}
    for name, fn in (("memcpy", memcpy), ("copy_kernel", kernel)):
        fn()
        times = [clock.time_loop_us(fn, 1) for _ in range(reps)]
        t = statistics.median(times)
        out[name] = {"median_us": t, "bytes_per_s": 2 * src.nbytes / (t * 1e-6)}
    out["bytes_per_s"] = max(out["memcpy"]["bytes_per_s"], out["copy_kernel"]["bytes_per_s"])
    out["method"] = ("max of cudaMemcpyAsync D2D and cupy.copyto over a "
                     f"{src.nbytes / 2**30:.0f} GiB float32 buffer; bytes read + written; median of {reps}")
    return out  # the caller frees the pool's blocks once src and dst are gone


def copy_bandwidth_cpu(nbytes: int = 16 << 20, reps: int = 5) -> dict[str, Any]:
    """Host memory copy bandwidth (NumPy ``copyto``), read + written, for the CPU dry run."""
    import numpy as np

    src = np.random.default_rng(1).random(nbytes // 8)
    dst = np.empty_like(src)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    t = statistics.median(times)
    return {"bytes_copied": int(src.nbytes), "bytes_per_s": 2 * src.nbytes / t,
            "method": f"numpy.copyto of {src.nbytes >> 20} MiB on the host; median of {reps}"}


def gpu_run_meta(commit: str, samples: int, **extra: Any) -> tuple[dict[str, Any], float]:
    """What a GPU probe records about its run (commit, UTC date, GPU, the copy bandwidth measured
    now, samples per timing, ``extra``) and that bandwidth in bytes per second (the floors'
    denominator)."""
    import cupy

    bw = copy_bandwidth_gpu()["bytes_per_s"]
    meta = {"commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "gpu": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "copy_bytes_per_s": bw,
            "samples": samples, **extra}
    return meta, bw


def floor_cells(rows: dict[str, dict[str, Any]], names: list[str], width: int = 8) -> list[str]:
    """One table cell per implementation of ``names``: ``"<µs> (<floor/time>)"`` (``" BAD"`` where
    its result was wrong), ``"error"`` where it raised, ``"-"`` where it did not run. ``rows``:
    implementation -> its result row (``device``, ``floor_us``, ``ok``)."""
    cells = []
    for name in names:
        r = rows.get(name, {})
        if "device" in r:
            us = r["device"]["median_us"]
            cells.append(f"{us:{width}.1f} ({r['floor_us'] / us:.2f}){'' if r['ok'] else ' BAD'}")
        else:
            cells.append("error" if r else "-")
    return cells


def measure(row: dict[str, Any], call: Callable[[], Any], clock: Any, samples: int,
            check: Callable[[Any], tuple[bool, str]]) -> dict[str, Any]:
    """Fill a probe's result ``row``: ``ok`` and ``check`` from ``check(call())`` (its result
    against the reference), then ``device`` and ``device_unheld`` (:func:`held_and_plain`);
    ``error`` instead where either raised (a failure is a result). Prints
    the row and returns it. (Probe results before 2026-12-04 have the plain loop as ``device``.)"""
    try:
        row["ok"], row["check"] = check(call())
        row.update(held_and_plain(call, clock, samples))
    except Exception as exc:  # noqa: BLE001 - a failure is a result
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    print(row, flush=True)
    return row


def probe_args(doc: str, default_out: str, argv: list[str] | None = None,
               extra: Callable[[Any], Any] | None = None) -> Any:
    """The options every GPU probe script takes: ``--out`` (results folder), ``--samples``
    (loops per timing) and ``--commit`` (recorded with the numbers), and those ``extra`` adds to
    the parser; ``doc``'s first paragraph is the help text."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--commit", default="")
    if extra is not None:
        extra(ap)
    return ap.parse_args(argv)


def to_host(out: Any, dtype: Any = None) -> Any:
    """A NumPy array of ``out`` (a torch tensor, a CuPy or stitchlab array, or array-like), in
    ``dtype`` if given: what the probe scripts check their results with."""
    import numpy as np

    if hasattr(out, "detach"):
        arr = out.detach().cpu().numpy()
    else:
        arr = np.asarray(out.get() if hasattr(out, "get") else out)
    return arr if dtype is None else arr.astype(dtype)
