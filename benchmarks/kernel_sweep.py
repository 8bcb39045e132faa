"""Time variants of the stitched kernels of the compiler's workloads on the GPU (to tune the
emitters and the latency evaluator).

For each workload of ``tests/compiler/workloads.py`` (and top-p's mask, ``top_p``, and a lone
running sum, ``cumsum``) at one shape, every schedule the latency
evaluator considers for its first kernel is emitted, launched back to back between two CUDA
events and timed (median of several loops, each queued behind the suite's hold kernel), next to
the evaluator's estimate. Also: row schedules
without 16-byte vectors, and register-cached ones with narrower vectors; streamed row ones unrolled 4, 8 or 16 deep and column ones 8 or 32 (those
other than the default); register-cached row ones prefetching the row 1, 2, 4 or 8 × (SM count)
ahead into L2, after the row's loads or after its first reduction, or not at all, and the same
rows streamed through 256, 512 or 1024 threads instead (each pass reading them again); streamed
``row_block`` ones walking their rows (``Schedule.row_loop``) with 1, 2 or 4 blocks an SM, or a
row a block; pointwise ones
with 8 elements per thread and a full grid; and the evaluator's choice once with each emitter
switch (``stitchlab.codegen.schedules.OPTIONS``) the other way from its default.
Every variant's output is compared with the chosen plan's.

    python3 benchmarks/kernel_sweep.py --out /tmp/sweep [--shape 8192,4096] [--workloads softmax,logsumexp]
        [--dtype float16] [--match 'row_warp.*(scalar|vec \\d)?$']

Writes ``kernel_sweep.json`` to ``--out`` and prints one line per variant (best first per workload).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import math
import pathlib
import re
import sys
import time
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # (benchmarks.timing; stitchlab stays the installed one)


def _workloads() -> Any:
    spec = importlib.util.spec_from_file_location("sl_workloads", ROOT / "tests" / "compiler" / "workloads.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _top_p(x: Any) -> list[Any]:
    """Top-p sampling's mask over rows of logits: a scan in a row kernel (rows longer than a
    block's registers walked in tiles)."""
    import stitchlab as sl

    x = sl.asarray(x)
    e = sl.exp(x - x.max(axis=-1, keepdims=True))
    return [sl.cumsum(e / e.sum(axis=-1, keepdims=True), axis=-1) < 0.9]


def _cumsum(x: Any) -> list[Any]:
    """A lone running sum along the rows: a row kernel of its own over as many rows as SMs."""
    import stitchlab as sl

    return [sl.cumsum(sl.asarray(x), axis=-1)]


def _row_norm(x: Any) -> list[Any]:
    """The L2 norm of each row: a row kernel that stores only its reductions."""
    import stitchlab as sl

    x = sl.asarray(x)
    return [sl.sqrt((x * x).sum(axis=-1))]


#: workloads of the sweep besides the compiler's (tests/compiler/workloads.py)
EXTRA_WORKLOADS = {"top_p": (_top_p, 1, "m"), "cumsum": (_cumsum, 1, "m"), "row_norm": (_row_norm, 1, "m")}


def _device_us(exe: Any, bufs: list[Any], loops: int = 7, inner: int = 10, loop_us: float = 200.0) -> float:
    """Device time per call, µs: the median of ``loops`` loops of calls back to back, each loop
    queued behind the suite's hold kernel (``benchmarks/timing.py``), so that a call's host cost
    is not timed (a plain loop of short kernels, ten microseconds or so, times the host). A loop
    holds ``inner`` calls, or as many as last ``loop_us`` (at most 1000): each loop also times
    2-3.5 us of its own (the first launch after the hold, the end event; H100, 2026-12-07: float16
    logsumexp rows of 24 4.7 us a call in loops of 10, 4.4 in loops of 100)."""
    from benchmarks.timing import CupyClock

    clock = CupyClock()
    for _ in range(3):
        exe(bufs)
    first = clock.time_loop_us(lambda: exe(bufs), inner, hold=True) / inner
    inner = min(1000, max(inner, math.ceil(loop_us / max(first, 1e-3))))
    times = []
    for _ in range(loops):
        times.append(clock.time_loop_us(lambda: exe(bufs), inner, hold=True) / inner)
        if clock.held_timed_out:
            raise RuntimeError("the hold kernel ran out before the loop was queued: the loop timed the host")
    return float(np.median(times))


def _variants(k0: Any, dev: Any) -> list[tuple[str, Any, Any, dict[str, Any]]]:
    """(label, schedule, launch, emitter options) to try for kernel ``k0``."""
    from stitchlab.codegen.schedules import OPTIONS
    from stitchlab.plan.cost import Launch, row_vector_width, schedules, stream_unroll

    out: list[tuple[str, Any, Any, dict[str, Any]]] = []
    info = k0.info
    ests = schedules(info, dev)
    for est in ests:
        out.append(("", est.schedule, est.launch, {}))
        s = est.schedule
        if s.family in ("row_block", "row_warp") and s.vec > 1:
            out.append(("scalar", dataclasses.replace(s, vec=1), est.launch, {}))
        if s.family in ("row_block", "row_warp") and s.cache == "registers" and s.lanes == 32:
            # other vector widths up to the group's widest (short rows: narrower ones keep every
            # lane of a warp busy)
            for vec in (2, 4, 8):
                if vec <= row_vector_width(info) and vec != s.vec:
                    out.append((f"vec {vec}", dataclasses.replace(s, vec=vec), est.launch, {}))
        if s.family == "row_warp" and s.lanes < 32:
            # rows of a group of lanes: half or twice as many lanes (grids that cover the rows)
            for lanes in (s.lanes // 2, s.lanes * 2):
                if 1 <= lanes < 32:
                    grid = math.ceil(est.launch.grid[0] * lanes / s.lanes)
                    out.append((f"lanes {lanes}", dataclasses.replace(s, lanes=lanes), Launch((grid, 1, 1), est.launch.block), {}))
    if info.kind == "pointwise":
        n = math.prod(info.shape)
        for block in (128, 256, 512):
            for vec in (4, 8):
                grid = max(1, math.ceil(n / (block * vec)))
                out.append(("full grid", dataclasses.replace(ests[0].schedule, block=block, vec=vec), Launch((grid, 1, 1), (block, 1, 1)), {}))
                if vec == 8:
                    capped = min(grid, dev.sms * (2048 // block) * 4)
                    out.append(("capped grid", dataclasses.replace(ests[0].schedule, block=block, vec=vec), Launch((capped, 1, 1), (block, 1, 1)), {}))
    for name, on in OPTIONS.items():  # (each the other way from its default)
        out.append((f"{name} {'off' if on else 'on'}", k0.schedule, k0.launch, {name: not on}))
    for est in ests:
        if est.schedule.family in ("row_block", "row_warp") and est.schedule.cache == "none":
            for unroll in (4, 8, 16):
                if unroll != stream_unroll(info):  # the default is the plain variant
                    out.append((f"unroll {unroll}", est.schedule, est.launch, {"ROW_STREAM_UNROLL": unroll}))
    for est in ests:
        if est.schedule.family == "row_block" and est.schedule.cache == "none":
            # each block walks rows, its passes alternating direction (Schedule.row_loop): a
            # grid of a few blocks an SM bounds the rows in flight (their bytes against L2's);
            # the full grid (a row a block) times the turned passes alone
            s = dataclasses.replace(est.schedule, row_loop=True)
            for per_sm in (1, 2, 4):
                grid = min(est.launch.grid[0], dev.sms * per_sm)
                launch = dataclasses.replace(est.launch, grid=(grid, 1, 1))
                out.append((f"row loop {per_sm}/SM", s, launch, {}))
                if info.online_exp_sums():  # and the sum of exps in the max's pass the other way
                    on = not OPTIONS["online_exp_sum"]
                    out.append((f"row loop {per_sm}/SM, online_exp_sum {'on' if on else 'off'}", s, launch, {"online_exp_sum": on}))
            out.append(("row loop, full grid", s, est.launch, {}))
    if k0.schedule.family == "column":
        for unroll in (8, 32):
            out.append((f"unroll {unroll}", k0.schedule, k0.launch, {"COLUMN_UNROLL": unroll}))
    if k0.schedule.family == "row_block" and k0.schedule.cache == "registers":
        # the row streamed instead (later passes re-read it from L1/L2), with more threads and
        # fewer registers a block, as torch.compile's reduction kernels do
        for block in (256, 512, 1024):
            s = dataclasses.replace(k0.schedule, block=block, cache="none", prefetch=0)
            out.append(("streamed", s, Launch(k0.launch.grid, (block, 1, 1)), {}))  # (a row a block)
    if k0.schedule.family in ("row_block", "row_warp") and k0.schedule.cache == "registers":
        if k0.schedule.prefetch:
            out.append(("prefetch off", k0.schedule, k0.launch, {"ROW_PREFETCH": 0}))
        for ahead in (1, 2, 4, 8):
            for late in (False, True):
                if (ahead * dev.sms, late) != (k0.schedule.prefetch, True):  # the default is the plain variant
                    out.append((f"prefetch {ahead * dev.sms}{' late' if late else ''}", k0.schedule, k0.launch,
                                {"ROW_PREFETCH": ahead * dev.sms, "ROW_PREFETCH_LATE": late}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="kernel-sweep")
    ap.add_argument("--shape", default="8192,4096")
    ap.add_argument("--workloads", default="all")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--match", default="", help="time only the variants whose 'schedule label' this regular expression finds")
    args = ap.parse_args(argv)

    import cupy as cp

    import stitchlab as sl
    from stitchlab.codegen import schedules as sched_mod
    from stitchlab.codegen.schedules import emit
    from stitchlab.ir.graph import build_graph
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    wl = _workloads()
    rows, cols = (int(v) for v in args.shape.split(","))
    workloads = {**wl.WORKLOADS, **EXTRA_WORKLOADS}
    names = list(wl.WORKLOADS) if args.workloads == "all" else args.workloads.split(",")
    sl.set_backend("cupy")
    backend = _instance("cupy")
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for name in names:
        build, _, kinds = workloads[name]
        host = wl.make_args(kinds, rows, cols, np.dtype(sl.bfloat16) if args.dtype == "bfloat16" else np.dtype(args.dtype), seed=1)
        if name == "adam":
            host[3] = np.abs(host[3])
        graph, sources = build_graph([o._node for o in build(*[cp.asarray(a) for a in host])])
        bufs = [s.value for s in sources]
        exe0 = backend.plan(graph)
        plan = exe0.plan
        ref = [o.get() for o in exe0(bufs)]
        moved = sum(b.nbytes for b in bufs) + sum(r.nbytes for r in ref)
        k0 = plan.kernels[0]
        for label, sched, launch, opts in _variants(k0, plan.device):
            if not re.search(args.match, f"{sched} {label}"):
                continue
            knobs = {a: getattr(sched_mod, a) for a in opts if a.isupper()}  # module-level settings
            for a in knobs:
                setattr(sched_mod, a, opts[a])
            try:
                with sched_mod.switches(**{k: v for k, v in opts.items() if k in sched_mod.OPTIONS}):
                    ks = emit(k0.info, sched)
            except Exception as exc:  # noqa: BLE001 - a variant that cannot be written is reported
                print(f"{name}: {sched} {label}: emit failed: {exc}")
                continue
            finally:
                for a, v in knobs.items():
                    setattr(sched_mod, a, v)
            k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule, launch=launch)
            p = dataclasses.replace(plan, kernels=[k] + plan.kernels[1:])
            try:
                exe = build_executable(p)
                got = [o.get() for o in exe(bufs)]
                err = max(float(np.max(np.abs(g.astype(np.float64) - r)) / max(1.0, float(np.max(np.abs(r))))) for g, r in zip(got, ref, strict=True))
                us = _device_us(exe, bufs)
            except Exception as exc:  # noqa: BLE001
                print(f"{name}: {sched} {label}: failed: {str(exc).splitlines()[0]}")
                continue
            est = next((e.seconds for e in __import__("stitchlab.plan.cost", fromlist=["schedules"]).schedules(k0.info, plan.device)
                        if e.schedule == sched), float("nan"))
            results.append({
                "workload": name, "schedule": str(ks.schedule), "label": label, "grid": list(launch.grid),
                "block": list(launch.block), "measured_us": us, "estimated_us": est * 1e6,
                "floor_us": moved / 4.27e12 * 1e6, "floor_ratio": moved / 4.27e12 / (us * 1e-6),
                "chosen": label == "" and ks.schedule == k0.schedule, "max_rel_diff": err,
                "kernels": len(plan.kernels),
            })
        rs = sorted((r for r in results if r["workload"] == name), key=lambda r: r["measured_us"])
        for r in rs:
            mark = "*" if r["chosen"] else " "
            print(f"{name:17s}{mark}{r['measured_us']:8.1f} us {r['floor_ratio']:5.2f} est {r['estimated_us']:7.1f}  "
                  f"{r['schedule']} {r['label']} grid={r['grid'][0]} diff={r['max_rel_diff']:.1e}")
        (out_dir / "kernel_sweep.json").write_text(json.dumps({"shape": [rows, cols], "dtype": args.dtype, "results": results,
                                                               "elapsed_s": time.perf_counter() - t0}, indent=1))
    print("best per workload:")
    for name in names:
        rs = [r for r in results if r["workload"] == name]
        if rs:
            best = min(rs, key=lambda r: r["measured_us"])
            chosen = next((r for r in rs if r["chosen"]), None)
            print(f"  {name:17s} best {best['measured_us']:7.1f} ({best['floor_ratio']:.2f}) {best['schedule']} {best['label']}"
                  f" | chosen {chosen['measured_us'] if chosen else float('nan'):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
