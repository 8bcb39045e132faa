"""Start-up measurements, each in a fresh process (run by :mod:`benchmarks.run`, or by hand).

Phases:
  ``jit``       one ``sl.jit`` function per workload at the small size, float32: time to the first
                result, the steady per-call time, and the counters (NVRTC compiles, registry hits
                and misses) that first call moved. Run once over an empty registry (cold compile)
                and again, in a new process, over the registry the first one filled (warm start).
  ``notebook``  what a notebook's first cell does: ``import stitchlab``, a lazy softmax of a
                64x512 NumPy array, ``.get()``; the parent times it from process spawn.

The result is one JSON object on the last line of stdout (and in ``--json`` if given).
"""

from __future__ import annotations

import time

T_START = time.time()  # before any import: the parent compares it with its spawn time

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # after PYTHONPATH (see run.py)
    sys.path.append(str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

COUNTERS = ("nvrtc_compiles", "registry_hits", "registry_misses", "launches", "plans", "fallbacks")


def _diff(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in COUNTERS}


def phase_jit(workloads: list[str], size: str, gpu: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    import stitchlab as sl

    import_s = time.perf_counter() - t0
    from benchmarks.impls import Inputs, fixed_arity, stitchlab_kernels
    from benchmarks.ops import stitchlab_ops
    from benchmarks.workloads import SIZES, WORKLOADS

    t0 = time.perf_counter()
    if gpu:
        import cupy

        cupy.empty(1)  # CUDA context, outside the per-workload numbers
        cupy.cuda.runtime.deviceSynchronize()
    context_s = time.perf_counter() - t0
    # one-time costs of the first evaluation (compiler modules, registry open, first module load),
    # measured apart so that they are not charged to the first workload's kernels
    t0 = time.perf_counter()
    first = sl.asarray(np.arange(8, dtype=np.float32))
    (first * 2.0 + 1.0).get()
    init_s = time.perf_counter() - t0
    o = stitchlab_ops()
    out: dict[str, Any] = {"import_s": import_s, "context_s": context_s, "init_s": init_s,
                           "backend": sl.get_backend(), "workloads": {}}
    first_result_wall = None
    for name in workloads:
        wl = WORKLOADS[name]
        case = wl.make(np.random.default_rng(0), SIZES[size], np.dtype("float32"))
        inputs = Inputs(case, gpu)
        arrays = inputs.cupy if gpu else inputs.host
        fn = sl.jit(fixed_arity(lambda *a, wl=wl, case=case: wl.run(o, case, list(a)), len(arrays), name))
        before = sl.stats()
        t0 = time.perf_counter()
        res = fn(*arrays)
        [np.asarray(r.get()) for r in (res if isinstance(res, tuple) else (res,))]
        first_s = time.perf_counter() - t0
        if first_result_wall is None:
            first_result_wall = time.time()
        counters = _diff(sl.stats(), before)
        steady = []
        for _ in range(5):
            t0 = time.perf_counter()
            res = fn(*arrays)
            [np.asarray(r.get()) for r in (res if isinstance(res, tuple) else (res,))]
            steady.append(time.perf_counter() - t0)
        # a new batch size (outer extent doubled) must reuse the compiled kernels
        rows, cols = SIZES[size]
        case2 = wl.make(np.random.default_rng(1), (2 * rows, cols), np.dtype("float32"))
        inputs2 = Inputs(case2, gpu)
        arrays2 = inputs2.cupy if gpu else inputs2.host
        before = sl.stats()
        res = fn(*arrays2)
        [np.asarray(r.get()) for r in (res if isinstance(res, tuple) else (res,))]
        rec = {"first_s": first_s, "steady_s": statistics.median(steady), "counters_first_call": counters,
               "counters_new_batch": _diff(sl.stats(), before)}
        rec.update(stitchlab_kernels(wl, case, arrays))
        out["workloads"][name] = rec
    out["first_result_wall"] = first_result_wall
    out["stats_end"] = {k: int(v) for k, v in sl.stats().items()}
    return out


def phase_notebook() -> dict[str, Any]:
    t0 = time.perf_counter()
    import stitchlab as sl

    import_s = time.perf_counter() - t0
    a = np.random.default_rng(0).standard_normal((64, 512), dtype=np.float32)
    x = sl.asarray(a)
    e = sl.exp(x - x.max(axis=-1, keepdims=True))
    z = e / e.sum(axis=-1, keepdims=True)
    got = z.get()
    t_result = time.time()
    ref = np.exp(a - a.max(-1, keepdims=True))
    ref /= ref.sum(-1, keepdims=True)
    return {"import_s": import_s, "first_result_wall": t_result, "backend": sl.get_backend(),
            "max_abs_err": float(np.abs(got.astype(np.float64) - ref).max()),
            "stats_end": {k: int(v) for k, v in sl.stats().items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--phase", choices=("jit", "notebook"), required=True)
    p.add_argument("--workloads", default="")
    p.add_argument("--size", default="small")
    p.add_argument("--cpu", action="store_true", help="numpy backend (CPU dry run)")
    p.add_argument("--json", default="")
    args = p.parse_args(argv)
    if args.cpu:
        os.environ["STITCHLAB_BACKEND"] = "numpy"
    if args.phase == "jit":
        result = phase_jit([w for w in args.workloads.split(",") if w], args.size, gpu=not args.cpu)
    else:
        result = phase_notebook()
    result["t_start"] = T_START
    text = json.dumps(result)
    if args.json:
        Path(args.json).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
