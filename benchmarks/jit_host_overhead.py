"""Host cost of stitchlab's call paths on a machine without a GPU, with a stand-in for CuPy
(``benchmarks/fake_cupy.py``: arrays are shapes, a launch does nothing).

Three measurements, each a fresh process:

* ``--mode call``: a cached ``sl.jit`` call of the one-kernel SiLU-gated product (64×512 float32,
  ``a * sigmoid(a) * b``) against the "bare" path the issue-9 target compares with (``empty_like``
  plus a ``RawKernel`` call). Only the Python on the host differs between the two, so the
  difference is what stitchlab adds per call; on the GPU both also pay the launch and the sync.
* ``--mode split``: cached ``sl.jit`` calls whose plan has a split reduction (``x.sum()`` over 4M
  float32: ``row_split``; ``x.sum(0)`` of a 1M×48 float32 array: ``column_split``), timed in turns
  with the one-kernel SiLU-gated product above. These calls also use the split kernels' workspaces
  and counters (``stitchlab/runtime/scratch.py``), and their outputs have fewer dimensions than the
  reductions' nodes (0-d; ``(48,)`` for a ``(1, 48)`` node).
* ``--mode eager``: per workload (64×512 float32), an eager evaluation (the body over
  ``sl.asarray`` inputs, then ``sl.compute``) once its kernels are loaded, beside the cached
  ``sl.jit`` call of the same body: what the graph building, canonicalization and plan lookup of
  an eager expression cost on the host.
* ``--mode warm``: per workload, the first ``sl.jit`` call minus the steady call in a new process
  over a registry that an earlier process filled (as ``benchmarks/startup.py`` measures it), i.e.
  tracing, planning (or the plan cache) and loading kernels.

Usage: ``python benchmarks/jit_host_overhead.py [--mode call|split|eager|warm|both] [--reps N]``
(NVRTC from the ``cuda-bindings`` pip packages compiles the kernels; no GPU is used).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _setup() -> Any:
    from benchmarks import fake_cupy

    cp = fake_cupy.install()
    from stitchlab.plan import device

    device._current = device.preset("H200")  # what the planner would read from an H200
    return cp


def _per_call(calls: dict[str, Any], reps: int, rounds: int = 30) -> dict[str, float]:
    """Seconds per call of each of ``calls``: the calls take turns in ``rounds`` blocks of ``reps``
    calls, and each keeps its fastest block (robust against other load on the machine)."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, fn in calls.items():
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / reps)
    return best


def mode_call(reps: int) -> dict[str, Any]:
    import numpy as np

    cp = _setup()
    import stitchlab as sl

    a = cp.empty((64, 512), np.float32)
    b = cp.empty((64, 512), np.float32)

    @sl.jit
    def silu_gate(a: Any, b: Any) -> Any:
        return a * sl.sigmoid(a) * b

    silu_gate(a, b)
    before = sl.stats()
    silu_gate(a, b)
    after = sl.stats()
    per_call = {k: after[k] - before[k] for k in after if after[k] != before[k]}
    kernel = cp.RawKernel("", "silu_gate")
    n = a.size

    def raw() -> Any:
        out = cp.empty_like(a)
        kernel(((n + 255) // 256,), (256,), (a, b, out, np.int32(n)))
        return out

    t = _per_call({"jit": lambda: silu_gate(a, b), "raw": raw}, reps)
    jit_s, raw_s = t["jit"], t["raw"]
    return {"jit_us": jit_s * 1e6, "bare_us": raw_s * 1e6, "extra_us": (jit_s - raw_s) * 1e6,
            "ratio": jit_s / raw_s, "stats_per_call": per_call}


def mode_split(reps: int) -> dict[str, Any]:
    import numpy as np

    cp = _setup()
    import stitchlab as sl

    a = cp.empty((64, 512), np.float32)
    b = cp.empty((64, 512), np.float32)
    x = cp.empty((1 << 22,), np.float32)
    tall = cp.empty((1 << 20, 48), np.float32)
    cases = {
        "silu_gate 64x512": (lambda a, b: a * sl.sigmoid(a) * b, (a, b)),
        "x.sum() 4M": (lambda x: x.sum(), (x,)),
        "x.sum(0) 1Mx48": (lambda x: x.sum(0), (tall,)),
    }
    calls: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for name, (body, args) in cases.items():
        fn = sl.jit(body)
        fn(*args)
        before = sl.stats()
        fn(*args)
        after = sl.stats()
        kernels = sl.explain(body(*[sl.asarray(v) for v in args])).kernels
        out[name] = {"schedules": [k.schedule.family for k in kernels],
                     "stats_per_call": {k: after[k] - before[k] for k in after if after[k] != before[k]}}
        calls[name] = lambda fn=fn, args=args: fn(*args)
    for name, seconds in _per_call(calls, reps).items():
        out[name]["jit_us"] = seconds * 1e6
    return out


def mode_eager(workloads: list[str], reps: int) -> dict[str, Any]:
    """Host cost of an eager evaluation of each workload (64×512 float32): the expression built
    from ``sl.asarray`` inputs and evaluated with ``sl.compute``, after a first evaluation that
    planned and loaded its kernels; the cached ``sl.jit`` call of the same body beside it."""
    import numpy as np

    cp = _setup()
    import stitchlab as sl
    from benchmarks.ops import stitchlab_ops
    from benchmarks.workloads import SIZES, WORKLOADS

    o = stitchlab_ops()
    calls: dict[str, Any] = {}
    for name in workloads:
        wl = WORKLOADS[name]
        case = wl.make(np.random.default_rng(0), SIZES["small"], np.dtype("float32"))
        arrays = [cp.empty(a.shape, a.dtype) for a in case.inputs]
        lazy = [sl.asarray(a) for a in arrays]
        body = lambda *xs, wl=wl, case=case: wl.run(o, case, list(xs))  # noqa: E731
        fn = sl.jit(body)

        def eager(body: Any = body, lazy: list[Any] = lazy) -> Any:
            out = body(*lazy)
            return sl.compute(*(out if isinstance(out, tuple) else (out,)))

        eager()
        fn(*arrays)
        calls[f"{name} eager"] = eager
        calls[f"{name} jit"] = lambda fn=fn, arrays=arrays: fn(*arrays)
    per_call = _per_call(calls, reps, rounds=10)
    return {name: {"eager_us": per_call[f"{name} eager"] * 1e6, "jit_us": per_call[f"{name} jit"] * 1e6}
            for name in workloads}


def mode_warm_child(workloads: list[str]) -> dict[str, Any]:
    import numpy as np

    cp = _setup()
    import stitchlab as sl
    from benchmarks.ops import stitchlab_ops
    from benchmarks.workloads import SIZES, WORKLOADS

    first = sl.asarray(cp.asarray(np.arange(8, dtype=np.float32)))
    (first * 2.0 + 1.0).get()  # one-time costs, not charged to the workloads
    o = stitchlab_ops()
    out: dict[str, Any] = {}
    for name in workloads:
        wl = WORKLOADS[name]
        case = wl.make(np.random.default_rng(0), SIZES["small"], np.dtype("float32"))
        arrays = [cp.asarray(x) for x in case.inputs]
        body = lambda *xs, wl=wl, case=case: wl.run(o, case, list(xs))  # noqa: E731
        fn = sl.jit(body)
        before = sl.stats()
        t0 = time.perf_counter()
        res = fn(*arrays)
        [r.get() for r in (res if isinstance(res, tuple) else (res,))]
        first_s = time.perf_counter() - t0
        counters = {k: v - before[k] for k, v in sl.stats().items() if v != before[k]}
        steady = []
        for _ in range(5):
            t0 = time.perf_counter()
            res = fn(*arrays)
            [r.get() for r in (res if isinstance(res, tuple) else (res,))]
            steady.append(time.perf_counter() - t0)
        kernels = max(1, counters.get("registry_hits", 0) + counters.get("registry_misses", 0))
        out[name] = {"first_ms": first_s * 1e3, "steady_ms": statistics.median(steady) * 1e3,
                     "ms_per_kernel": (first_s - statistics.median(steady)) * 1e3 / kernels,
                     "counters": counters}
    return out


def mode_warm(workloads: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="stitchlab-warm-") as cache:
        env = dict(os.environ, STITCHLAB_CACHE_DIR=cache)
        runs = []
        for _ in range(2):  # cold, then warm over the directory the cold one filled
            cmd = [sys.executable, __file__, "--mode", "warm-child", "--workloads", ",".join(workloads)]
            res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    return {"cold": runs[0], "warm": runs[1]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", default="both", choices=["call", "split", "eager", "warm", "both", "warm-child"])
    p.add_argument("--reps", type=int, default=2000, help="calls per timed block (30 blocks each)")
    p.add_argument("--workloads", default="softmax,layernorm,rmsnorm,bias_gelu,add_layernorm,colnorm,adam,"
                                          "logsumexp,cross_entropy,silu_gate,groupnorm,l2norm")
    args = p.parse_args(argv)
    workloads = [w for w in args.workloads.split(",") if w]
    if args.mode == "warm-child":
        print(json.dumps(mode_warm_child(workloads)))
        return 0
    if args.mode in ("call", "both"):
        r = mode_call(args.reps)
        print(f"cached sl.jit call   {r['jit_us']:7.2f} us/call (host, fake CuPy)")
        print(f"bare RawKernel path  {r['bare_us']:7.2f} us/call (empty_like + kernel call)")
        print(f"stitchlab adds       {r['extra_us']:7.2f} us/call; host ratio {r['ratio']:.2f}; "
              f"counters per call {r['stats_per_call']}")
    if args.mode == "split":
        for name, r in mode_split(args.reps).items():
            print(f"cached sl.jit call {name:17s} {r['jit_us']:7.2f} us/call (host, fake CuPy); "
                  f"kernels {r['schedules']}; counters per call {r['stats_per_call']}")
    if args.mode == "eager":
        print(f"{'workload':14s} {'eager us/call':>13s} {'sl.jit us/call':>14s}  (host, fake CuPy, 64x512 float32)")
        for name, r in mode_eager(workloads, args.reps).items():
            print(f"{name:14s} {r['eager_us']:13.1f} {r['jit_us']:14.1f}")
    if args.mode in ("warm", "both"):
        r = mode_warm(workloads)
        print(f"{'workload':14s} {'cold first ms':>13s} {'warm first ms':>13s} {'steady ms':>9s} "
              f"{'warm ms/kernel':>14s}  warm counters")
        for name in workloads:
            c, w = r["cold"][name], r["warm"][name]
            print(f"{name:14s} {c['first_ms']:13.2f} {w['first_ms']:13.2f} {w['steady_ms']:9.3f} "
                  f"{w['ms_per_kernel']:14.2f}  {w['counters']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
