"""Device time of the fused kernels of each workload against the copy-bandwidth floor.

Not a test: ``python3 tests/gpu/bench_compiler.py [rows cols]`` on the GPU machine prints a table
(time, bytes moved at least, fraction of the 4.27 TB/s floor, the plan) and the same as JSON.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import numpy as np


def main() -> None:
    import cupy as cp

    import stitchlab as sl
    from stitchlab import runtime
    from stitchlab.ir.graph import build_graph

    spec = importlib.util.spec_from_file_location("wl", pathlib.Path(__file__).resolve().parents[1] / "compiler" / "workloads.py")
    wl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wl)
    rows, cols = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (8192, 4096)
    sl.set_backend("cupy")
    floor_bw = 4.27e12
    results = []
    for name, (build, _, kinds) in wl.WORKLOADS.items():
        args = [cp.asarray(a) for a in wl.make_args(kinds, rows, cols, np.float32, seed=1)]
        if name == "adam":
            args[3] = cp.abs(args[3])
        outs = build(*args)
        graph, sources = build_graph([o._node for o in outs])
        bufs = [s.value for s in sources]
        backend = runtime._instance("cupy")
        exe = backend.plan(graph)
        unfused = backend.plan_unfused(graph)
        plan = exe.plan
        res = exe(bufs)
        moved = sum(b.nbytes for b in bufs) + sum(r.nbytes for r in res)

        def timed(f, reps=5, inner=20, bufs=bufs):
            # device time: many calls between two events keep the GPU busy, so the host's
            # per-call overhead (allocation, launch) does not show as idle time between events
            for _ in range(3):
                f(bufs)
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            times = []
            for _ in range(reps):
                start.record()
                for _ in range(inner):
                    f(bufs)
                stop.record()
                stop.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3 / inner)
            return float(np.median(times))

        t = timed(exe)
        tu = timed(unfused, 3, 5)
        floor = moved / floor_bw
        results.append({
            "workload": name, "shape": [rows, cols], "fused_us": t * 1e6, "unfused_cupy_us": tu * 1e6,
            "floor_us": floor * 1e6, "fraction_of_floor": floor / t, "kernels": len(plan.kernels),
            "schedules": [str(k.schedule) for k in plan.kernels],
            "estimated_us": plan.estimated_time * 1e6,
        })
    print(f"{'workload':18s} {'fused us':>9s} {'unfused':>9s} {'floor us':>9s} {'floor/t':>7s} {'est us':>8s}  plan")
    for r in results:
        print(f"{r['workload']:18s} {r['fused_us']:9.1f} {r['unfused_cupy_us']:9.1f} {r['floor_us']:9.1f} "
              f"{r['fraction_of_floor']:7.2f} {r['estimated_us']:8.1f}  {r['kernels']}x {'; '.join(r['schedules'])}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
