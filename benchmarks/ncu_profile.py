"""Run stitchlab workloads under Nsight Compute: one warm call each, then one profiled call.

Meant to run under ``ncu`` (``scripts/gpu-check.sh`` does, when ``GPU_CHECK_NCU`` names workloads)::

    ncu --clock-control none --profile-from-start off -k regex:^sl_ --section SpeedOfLight \
        python3 benchmarks/ncu_profile.py --workloads softmax,colnorm --size large

Only the call between ``cudaProfilerStart`` and ``cudaProfilerStop`` is profiled, so the warm-up
call (tracing, NVRTC, registry) stays out of the report. Never changes clocks (--clock-control none).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # after PYTHONPATH (see run.py)
    sys.path.append(str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="softmax,logsumexp,colnorm")
    p.add_argument("--size", default="large")
    p.add_argument("--dtype", default="float32")
    args = p.parse_args(argv)

    import cupy
    from cupy.cuda import profiler

    import stitchlab as sl
    from benchmarks.impls import Inputs, fixed_arity
    from benchmarks.ops import stitchlab_ops
    from benchmarks.workloads import SIZES, WORKLOADS

    o = stitchlab_ops()
    for name in [w for w in args.workloads.split(",") if w]:
        wl = WORKLOADS[name]
        case = wl.make(np.random.default_rng(0), SIZES[args.size], np.dtype(args.dtype))
        arrays = Inputs(case, gpu=True).cupy
        fn = sl.jit(fixed_arity(lambda *a, wl=wl, case=case: wl.run(o, case, list(a)), len(arrays), name))
        fn(*arrays)
        cupy.cuda.runtime.deviceSynchronize()
        plan = sl.explain(*wl.run(o, case, [sl.asarray(a) for a in arrays]))
        print(f"profiling {name} {args.size} {args.dtype}: kernels "
              + ", ".join(f"{k.name} {k.schedule} grid={k.launch.grid} block={k.launch.block}" for k in plan.kernels),
              flush=True)
        profiler.start()
        fn(*arrays)
        cupy.cuda.runtime.deviceSynchronize()
        profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
