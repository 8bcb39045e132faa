"""Timers: device-bound time from CUDA events, per-call wall latency, copy bandwidth.

Device-bound time: ``n`` calls back to back between two CUDA events, repeated ``samples`` times
after a warm-up; the per-call median is reported (with min and max). Wall latency: one call plus
a device synchronize, timed with ``perf_counter``, median of many. On the CPU (``--cpu``) the
"device" timer is ``perf_counter`` around the same loop.
"""

from __future__ import annotations

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


class CupyClock:
    """CUDA events on CuPy's current stream (the legacy default stream unless changed)."""

    name = "cuda-events (cupy)"

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy
        self.start, self.end = cupy.cuda.Event(), cupy.cuda.Event()

    def sync(self) -> None:
        self.cupy.cuda.runtime.deviceSynchronize()

    def time_loop_us(self, call: Callable[[], Any], n: int) -> float:
        self.sync()
        self.start.record()
        for _ in range(n):
            call()
        self.end.record()
        self.end.synchronize()
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

    def _elapsed_ms(self) -> float:
        return self.start.elapsed_time(self.end)


def device_time(call: Callable[[], Any], clock: Any, target_us: float = 3000.0, samples: int = 15,
                max_n: int = 200) -> dict[str, Any]:
    """Per-call device-bound time in µs: median/min/max over ``samples`` loops of ``n`` calls.

    ``n`` is chosen so that one loop lasts about ``target_us`` (at least 1, at most ``max_n``).
    """
    call()
    clock.sync()
    one = clock.time_loop_us(call, 1)
    n = int(min(max_n, max(1, target_us // max(one, 1.0))))
    per_call = [clock.time_loop_us(call, n) / n for _ in range(samples)]
    return {
        "median_us": statistics.median(per_call),
        "min_us": min(per_call),
        "max_us": max(per_call),
        "calls_per_sample": n,
        "samples": samples,
        "clock": clock.name,
    }


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
    against the reference), then ``device`` (:func:`device_time`); ``error`` instead where either
    raised (a failure is a result). Prints the row and returns it."""
    try:
        row["ok"], row["check"] = check(call())
        row["device"] = device_time(call, clock, samples=samples)
    except Exception as exc:  # noqa: BLE001 - a failure is a result
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    print(row, flush=True)
    return row


def probe_args(doc: str, default_out: str, argv: list[str] | None = None) -> Any:
    """The options every GPU probe script takes: ``--out`` (results folder), ``--samples``
    (loops per timing) and ``--commit`` (recorded with the numbers); ``doc``'s first paragraph
    is the help text."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--commit", default="")
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
