"""Where an eager evaluation's host time goes, per workload (64×512 float32): building the
expression's nodes (the workload's body over ``sl.asarray`` inputs), canonicalizing the graph
(``build_graph``), finding the executable, running it (allocation and launch), and the whole
``sl.compute`` of a freshly built expression. Medians over 600 evaluations, µs.

    python3 benchmarks/eager_breakdown.py              # on a GPU machine, real CuPy
    python3 benchmarks/eager_breakdown.py --stand-in   # anywhere: benchmarks/fake_cupy.py

Run it under ``scripts/device-env.sh`` on the GPU machine (stitchlab from the shim on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # benchmarks/; an installed or shimmed stitchlab comes first


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stand-in", action="store_true", help="use benchmarks/fake_cupy.py (no GPU)")
    p.add_argument("--workloads", default="softmax,layernorm,silu_gate,adam")
    p.add_argument("--evaluations", type=int, default=600)
    args = p.parse_args(argv)
    if args.stand_in:
        from benchmarks import fake_cupy

        cp: Any = fake_cupy.install()
        from stitchlab.plan import device

        device._current = device.preset("H200")
    else:
        import cupy as cp
    import numpy as np

    import stitchlab as sl
    from benchmarks.ops import stitchlab_ops
    from benchmarks.workloads import SIZES, WORKLOADS
    from stitchlab import runtime
    from stitchlab.ir.graph import build_graph

    o = stitchlab_ops()
    print(f"{'stand-in' if args.stand_in else 'real'} CuPy; median µs per eager evaluation, 64x512 float32")
    for name in args.workloads.split(","):
        wl = WORKLOADS[name]
        case = wl.make(np.random.default_rng(0), SIZES["small"], np.dtype("float32"))
        lazy = [sl.asarray(cp.asarray(a) if not args.stand_in else cp.empty(a.shape, a.dtype)) for a in case.inputs]
        times: dict[str, list[float]] = {}

        def tick(what: str, t0: float, times: dict[str, list[float]] = times) -> float:
            t = time.perf_counter()
            times.setdefault(what, []).append(t - t0)
            return t

        def body(wl: Any = wl, case: Any = case, lazy: list[Any] = lazy) -> tuple[Any, ...]:
            out = wl.run(o, case, lazy)
            return out if isinstance(out, tuple) else (out,)

        sl.compute(*body())  # plans and loads the kernels
        for _ in range(args.evaluations):
            t = time.perf_counter()
            out = body()
            t = tick("nodes", t)
            graph, sources = build_graph([x._node for x in out])
            t = tick("build_graph", t)
            exe = runtime.for_device(next(n.device for n in graph.nodes if n.device is not None)).executable(graph)
            t = tick("executable", t)
            exe([s.value for s in sources])
            t = tick("run", t)
            out = body()
            t = time.perf_counter()
            sl.compute(*out)
            tick("sl.compute", t)
        if not args.stand_in:
            cp.cuda.Device().synchronize()
        print(f"{name:14s} " + "  ".join(f"{k} {statistics.median(v) * 1e6:6.1f}" for k, v in times.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
