"""Short rows (an attention head's 64 or 128 channels, a small class count) on the GPU: the
planner's kernel against the same group a warp a row, one element a lane (the choice before
rows shorter than 32 vectors were given a group of lanes, ``Schedule.lanes``), in one process.

For each workload of ``tests/compiler/workloads.py`` with rows (softmax, logsumexp, layernorm,
rmsnorm), each dtype and each shape: both kernels, torch eager's own op and torch.compile of it,
each timed back to back between CUDA events (median of 15 loops of at least 10 calls and 200 µs
after a warm-up, each loop queued behind the suite's hold kernel so that no call's host cost is
timed), on random data, each checked against the workload in float64 on the numpy backend.
The floor is the bytes read and written over the device-to-device copy bandwidth measured in
the same process (``benchmarks/timing.py``'s, as the suite's).

    python3 benchmarks/short_rows.py --out /tmp/short [--shapes 262144x64,262144x128] [--dtypes float32,float16]

Writes ``short_rows.json`` (after every case) and prints one line per case.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
import time
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # (benchmarks.*; stitchlab stays the installed one)

from benchmarks.kernel_sweep import _workloads  # noqa: E402
from benchmarks.long_rows import reference, time_kernel, time_torch, torch_op  # noqa: E402
from benchmarks.timing import copy_bandwidth_gpu  # noqa: E402


def _torch_rows(name: str, host: list[np.ndarray], want: list[np.ndarray], dtype: str) -> dict[str, Any]:
    """torch eager's op for the workload and torch.compile of it, timed as ours."""
    import torch

    op = torch_op(name, host, dtype)
    if op is None:
        return {}
    fn, args = op
    return {"torch": time_torch(fn, args, want, dtype), "torch_compile": time_torch(torch.compile(fn, dynamic=False), args, want, dtype)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="short-rows")
    ap.add_argument("--shapes", default="262144x64,262144x128")
    ap.add_argument("--dtypes", default="float32,float16")
    ap.add_argument("--workloads", default="softmax,logsumexp,layernorm,rmsnorm")
    ap.add_argument("--commit", default="")
    args = ap.parse_args(argv)

    import cupy as cp

    import stitchlab as sl
    from stitchlab.codegen import emit
    from stitchlab.ir.graph import build_graph
    from stitchlab.runtime import _instance

    wl = _workloads()
    sl.set_backend("cupy")
    backend = _instance("cupy")
    bandwidth = copy_bandwidth_gpu(1 << 30)["bytes_per_s"]  # (the suite's floor: benchmarks/timing.py)
    print(f"copy bandwidth {bandwidth / 1e12:.3f} TB/s", flush=True)
    results: list[dict[str, Any]] = []
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "commit": args.commit,
            "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "command": " ".join(sys.argv),
            "copy_bandwidth_Bps": bandwidth}
    for shape in args.shapes.split(","):
        rows, cols = (int(v) for v in shape.split("x"))
        for dtype in args.dtypes.split(","):
            np_dtype = np.dtype(sl.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
            for name in args.workloads.split(","):
                build, _, kinds = wl.WORKLOADS[name]
                host = wl.make_args(kinds, rows, cols, np_dtype, seed=1)
                graph, sources = build_graph([o._node for o in build(*[cp.asarray(a) for a in host])])
                bufs = [s.value for s in sources]
                plan = backend.plan(graph).plan
                (k0,) = plan.kernels
                variants = [("planned", k0)]
                if k0.schedule.family == "row_warp" and k0.schedule.lanes < 32:
                    # a warp a row, one element a lane (4 rows a 128-thread block)
                    kb = emit(k0.info, dataclasses.replace(k0.schedule, block=128, lanes=32, vec=1))
                    variants.append(("warp_a_row", dataclasses.replace(
                        k0, name=kb.name, source=kb.source, params=kb.params, schedule=kb.schedule,
                        launch=dataclasses.replace(k0.launch, grid=(-(-rows // 4), 1, 1), block=(128, 1, 1)))))
                want = reference(build, host)  # (the workload in float64 through NumPy)
                moved = sum(b.nbytes for b in bufs) + sum(w.size for w in want) * np_dtype.itemsize
                row: dict[str, Any] = {"workload": name, "dtype": dtype, "shape": [rows, cols],
                                       "floor_us": moved / bandwidth * 1e6}
                for label, k in variants:
                    row[label] = time_kernel(plan, k, bufs, want, dtype)
                row.update(_torch_rows(name, host, want, dtype))
                results.append(row)
                times = "  ".join(f"{label} {row[label]['us']:7.1f}{'' if row[label]['ok'] else ' (WRONG)'}"
                                  for label in ("planned", "warp_a_row", "torch", "torch_compile") if label in row)
                print(f"{name:10s} {dtype:8s} {rows}x{cols}: floor {row['floor_us']:6.1f} us  {times}  "
                      f"[{row['planned']['schedule']}]", flush=True)
                # (after every case: a run stopped by a time limit keeps what it measured)
                (out / "short_rows.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    return 0 if all(r[k]["ok"] for r in results for k in ("planned", "warp_a_row", "torch", "torch_compile") if k in r) else 1


if __name__ == "__main__":
    raise SystemExit(main())
