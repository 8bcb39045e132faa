"""Long rows (a language model's vocabulary: 128256, 151936 columns) on the GPU: the planner's
kernel against the one it chose before rows were walked by blocks, in one process.

For each workload of ``tests/compiler/workloads.py`` with rows (softmax, logsumexp, layernorm,
rmsnorm), each dtype and each shape: the plan's kernel, and the same group emitted as the
128-thread row-a-block streamed kernel with the sum of exps in its own pass (the choice before
``Schedule.row_loop`` and ``OPTIONS["online_exp_sum"]`` were measured), each timed back to back
between CUDA events (median of 15 loops of at least 10 calls and 200 µs after a warm-up, each
loop queued behind the suite's hold kernel), on random data, both checked against the workload
in float64 on the numpy backend; torch eager's own op beside them. Where
the plan's kernel scales its sum of exps once a 16-byte chunk (``OPTIONS["group_maxima"]``), also
the same kernel scaling it at each element that raises the running maximum (``element_maxima``).

    python3 benchmarks/long_rows.py --out /tmp/long [--shapes 1024x128256,512x151936] [--dtypes float32,float16]

Writes ``long_rows.json`` and prints one line per case.
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
sys.path.append(str(ROOT))  # (benchmarks.kernel_sweep; stitchlab stays the installed one)

from benchmarks.kernel_sweep import _device_us, _workloads  # noqa: E402

#: relative L2 error against float64 allowed, by dtype (as the benchmark suite's)
TOL = {"float32": 1e-5, "float16": 5e-3, "bfloat16": 4e-2, "float64": 1e-12}


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    got, want = got.astype(np.float64), want.astype(np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def torch_op(name: str, host: list[np.ndarray], dtype: str) -> tuple[Any, list[Any]] | None:
    """torch's own op for the workload (softmax, logsumexp, layer_norm, rms_norm) and the host
    arguments on the GPU as torch tensors, or None where torch is missing or has no such op."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    cols = host[0].shape[-1]
    ops = {"softmax": lambda x: torch.softmax(x, -1), "logsumexp": lambda x: torch.logsumexp(x, -1),
           "layernorm": lambda x, w, b: F.layer_norm(x, (cols,), w, b, 1e-5),
           "rmsnorm": lambda x, w: F.rms_norm(x, (cols,), w, 1e-6)}
    if name not in ops:
        return None
    if dtype == "bfloat16":  # (torch takes bfloat16 through its own dtype; no DLPack of ml_dtypes' bfloat16)
        args = [torch.from_numpy(a.astype(np.float32)).to("cuda", torch.bfloat16) for a in host]
    else:
        args = [torch.from_numpy(a).to("cuda") for a in host]
    return ops[name], args


def time_torch(fn: Any, args: list[Any], want: list[np.ndarray], dtype: str) -> dict[str, Any]:
    """``fn(*args)`` checked against ``want`` and timed as our kernels."""
    import torch

    err = _rel(fn(*args).float().cpu().numpy(), want[0])
    torch.cuda.synchronize()
    us = _device_us(lambda _b: fn(*args), [], loops=15, inner=10)  # (torch on the legacy default stream, as CuPy's events)
    return {"us": us, "rel_err": err, "ok": err <= TOL[dtype]}


def reference(build: Any, host: list[np.ndarray]) -> list[np.ndarray]:
    """The workload in float64 through the numpy backend."""
    import stitchlab as sl

    sl.set_backend("numpy")
    try:
        with np.errstate(all="ignore"):
            return [np.asarray(o.get(), np.float64) for o in build(*[a.astype(np.float64) for a in host])]
    finally:
        sl.set_backend("cupy")


def time_kernel(plan: Any, kernel: Any, bufs: list[Any], want: list[np.ndarray], dtype: str) -> dict[str, Any]:
    """``plan`` with ``kernel`` as its one kernel, checked against ``want`` and timed."""
    from stitchlab.runtime.launch import build_executable

    exe = build_executable(dataclasses.replace(plan, kernels=[kernel]))
    err = max(_rel(o.get(), w) for o, w in zip(exe(bufs), want, strict=True))
    return {"schedule": str(kernel.schedule), "grid": kernel.launch.grid[0], "us": _device_us(exe, bufs, loops=15, inner=10),
            "rel_err": err, "ok": err <= TOL[dtype]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="long-rows")
    ap.add_argument("--shapes", default="1024x128256,512x151936")
    ap.add_argument("--dtypes", default="float32,float16")
    ap.add_argument("--workloads", default="softmax,logsumexp,layernorm,rmsnorm")
    ap.add_argument("--commit", default="")
    args = ap.parse_args(argv)

    import cupy as cp

    import stitchlab as sl
    from stitchlab.codegen import emit
    from stitchlab.codegen.schedules import switches
    from stitchlab.ir.graph import build_graph
    from stitchlab.runtime import _instance

    wl = _workloads()
    sl.set_backend("cupy")
    backend = _instance("cupy")
    results: list[dict[str, Any]] = []
    for shape in args.shapes.split(","):
        rows, cols = (int(v) for v in shape.split("x"))
        for dtype in args.dtypes.split(","):
            for name in args.workloads.split(","):
                build, _, kinds = wl.WORKLOADS[name]
                host = wl.make_args(kinds, rows, cols, np.dtype(dtype), seed=1)
                graph, sources = build_graph([o._node for o in build(*[cp.asarray(a) for a in host])])
                bufs = [s.value for s in sources]
                plan = backend.plan(graph).plan
                if len(plan.kernels) != 1:  # (a few long rows split over blocks: not this comparison's)
                    print(f"{name:10s} {dtype:8s} {rows}x{cols}: skipped, planned as {len(plan.kernels)} kernels "
                          f"({', '.join(str(k.schedule) for k in plan.kernels)})", flush=True)
                    continue
                (k0,) = plan.kernels
                before = dataclasses.replace(k0.schedule, block=128, row_loop=False)
                with switches(online_exp_sum=False):
                    ks = emit(k0.info, before)
                k_before = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule,
                                               launch=dataclasses.replace(k0.launch, grid=(rows, 1, 1), block=(128, 1, 1)))
                want = reference(build, host)  # (the workload in float64 through NumPy)
                with switches(group_maxima=False):
                    ke = emit(k0.info, k0.schedule)
                k_elem = dataclasses.replace(k0, name=ke.name, source=ke.source, params=ke.params, schedule=ke.schedule)
                row: dict[str, Any] = {"workload": name, "dtype": dtype, "shape": [rows, cols]}
                variants = [("planned", k0), ("before", k_before)] + ([("element_maxima", k_elem)] if ke.source != k0.source else [])
                for label, k in variants:
                    row[label] = time_kernel(plan, k, bufs, want, dtype)
                op = torch_op(name, host, dtype)
                row["torch"] = time_torch(*op, want, dtype) if op else None
                row["speedup"] = row["before"]["us"] / row["planned"]["us"]
                results.append(row)
                print(f"{name:10s} {dtype:8s} {rows}x{cols}: planned {row['planned']['us']:8.1f} us "
                      f"({row['planned']['schedule']} grid={row['planned']['grid']}, err {row['planned']['rel_err']:.1e}) "
                      f"before {row['before']['us']:8.1f} us (err {row['before']['rel_err']:.1e})  {row['speedup']:.2f}x"
                      + (f"  element maxima {row['element_maxima']['us']:8.1f} us (err {row['element_maxima']['rel_err']:.1e})"
                         if "element_maxima" in row else "")
                      + (f"  torch {row['torch']['us']:8.1f} us (err {row['torch']['rel_err']:.1e})" if row["torch"] else ""),
                      flush=True)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "commit": args.commit,
            "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "command": " ".join(sys.argv)}
    (out / "long_rows.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    return 0 if all(r[k]["ok"] for r in results for k in ("planned", "before", "element_maxima") if k in r) else 1


if __name__ == "__main__":
    raise SystemExit(main())
