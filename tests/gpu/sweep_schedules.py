"""Measure every schedule the latency evaluator considers, for the workloads' kernels.

Not a test: ``python3 tests/gpu/sweep_schedules.py [rows cols]`` on the GPU machine prints, per
workload, each schedule's measured device time next to the evaluator's estimate (to tune it).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import pathlib
import sys

import numpy as np


def main() -> None:
    import cupy as cp

    import stitchlab as sl
    from stitchlab.codegen import emit
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.cost import schedules
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    spec = importlib.util.spec_from_file_location("wl", pathlib.Path(__file__).resolve().parents[1] / "compiler" / "workloads.py")
    wl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wl)
    rows, cols = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (8192, 4096)
    names = sys.argv[3].split(",") if len(sys.argv) > 3 else list(wl.WORKLOADS)
    sl.set_backend("cupy")
    backend = _instance("cupy")
    rows_out = []
    for name in names:
        build, _, kinds = wl.WORKLOADS[name]
        args = [cp.asarray(a) for a in wl.make_args(kinds, rows, cols, np.float32, seed=1)]
        if name == "adam":
            args[3] = cp.abs(args[3])
        graph, sources = build_graph([o._node for o in build(*args)])
        bufs = [s.value for s in sources]
        plan = backend.plan(graph).plan
        if len(plan.kernels) != 1:
            print(name, "has", len(plan.kernels), "kernels; sweeping the first")
        k0 = plan.kernels[0]
        chosen = str(k0.schedule)
        for est in schedules(k0.info, plan.device):
            try:
                ks = emit(k0.info, est.schedule)
            except Exception as exc:  # noqa: BLE001
                print(name, est.schedule, "emit failed:", exc)
                continue
            k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule, launch=est.launch)
            p = dataclasses.replace(plan, kernels=[k] + plan.kernels[1:])
            exe = build_executable(p)
            for _ in range(3):
                exe(bufs)
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            times = []
            for _ in range(5):
                start.record()
                for _ in range(10):  # back to back: host overhead hidden behind device work
                    exe(bufs)
                stop.record()
                stop.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, stop) * 1e3 / 10)
            rows_out.append({"workload": name, "schedule": str(ks.schedule), "grid": est.launch.grid,
                             "block": est.launch.block, "measured_us": float(np.median(times)),
                             "estimated_us": est.seconds * 1e6, "chosen": str(ks.schedule) == chosen})
        best = min((r for r in rows_out if r["workload"] == name), key=lambda r: r["measured_us"])
        for r in sorted((r for r in rows_out if r["workload"] == name), key=lambda r: r["measured_us"]):
            mark = "*" if r["chosen"] else " "
            print(f"{name:18s}{mark} {r['measured_us']:8.1f} us (est {r['estimated_us']:7.1f})  {r['schedule']} grid={r['grid'][:2]} block={r['block'][:2]}")
        print(f"{name}: best {best['schedule']} {best['measured_us']:.1f} us")
    print(json.dumps(rows_out))


if __name__ == "__main__":
    main()
