"""Run the stitchlab benchmark suite; write results.json, results.md and results.png to --out.

GPU (the H200 machine):
    python3 benchmarks/run.py --out gpu-results
    python3 benchmarks/run.py --sizes large --dtypes float32 --workloads softmax,colnorm --out /tmp/b
CPU dry run (numpy backend, tiny sizes; what tests/benchmarks/test_harness.py runs):
    python3 benchmarks/run.py --cpu --out /tmp/b

Every implementation's result is checked against a float64 NumPy reference in the same run. The
JSON is rewritten after every case, so a run stopped by a time limit still leaves its numbers;
``--budget-s`` skips (and records) the cases that would start after that many seconds.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # after PYTHONPATH: an installed or shimmed stitchlab wins
    sys.path.append(str(ROOT))

import numpy as np  # noqa: E402

from benchmarks import impls as _impls  # noqa: E402
from benchmarks import timing  # noqa: E402
from benchmarks.workloads import SIZES, WORKLOADS, min_bytes  # noqa: E402

#: relative L2 error ‖out − ref‖ / ‖ref‖ an output may have, by dtype
TOLERANCE = {"float32": 1e-5, "float16": 5e-3, "bfloat16": 4e-2, "float64": 1e-12}
LATENCY_MAX_ELEMENTS = 1 << 20  # sizes up to this many elements also get per-call wall latency
STARTUP_TIMEOUT_S = 240


# --- run metadata --------------------------------------------------------------------------------
def _sh(cmd: str) -> str:
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        return ""


def commit_id(explicit: str) -> str:
    """--commit, else $STITCHLAB_COMMIT, else ``git rev-parse --short HEAD`` (the device machine's
    copy of the tree has no .git: pass it in), else "unknown"."""
    if explicit:
        return explicit
    if os.environ.get("STITCHLAB_COMMIT"):
        return os.environ["STITCHLAB_COMMIT"]
    return _sh(f"git -C {shlex.quote(str(ROOT))} rev-parse --short HEAD 2>/dev/null") or "unknown"


def hardware(gpu: bool) -> dict[str, Any]:
    hw: dict[str, Any] = {"host": platform.node(), "cpu": platform.processor() or platform.machine(),
                          "python": platform.python_version(), "numpy": np.__version__}
    try:
        import stitchlab as sl

        hw["stitchlab"] = sl.__version__
        hw["stitchlab_backend"] = sl.get_backend()
        hw["stitchlab_has_explain"] = hasattr(sl, "explain")
    except Exception as exc:
        hw["stitchlab"] = f"import failed: {exc}"
    try:
        import torch

        hw["torch"] = torch.__version__
    except Exception:
        hw["torch"] = "not available"
    if gpu:
        import cupy

        hw["cupy"] = cupy.__version__
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        hw["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
        hw["sm_count"] = int(props["multiProcessorCount"])
        hw["l2_bytes"] = int(props["l2CacheSize"])
        hw["cuda_runtime"] = int(cupy.cuda.runtime.runtimeGetVersion())
        hw["nvidia_smi"] = _sh("nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,"
                               "clocks.max.sm,clocks.mem,power.limit,persistence_mode --format=csv")
    else:
        hw["gpu"] = "none (CPU dry run, numpy backend)"
    return hw


# --- one case ------------------------------------------------------------------------------------
def check(got: list[np.ndarray], ref: list[np.ndarray], dtype: str) -> dict[str, Any]:
    """Compare outputs with the float64 reference: relative L2 error and max absolute error."""
    tol = TOLERANCE[dtype]
    if len(got) != len(ref):
        return {"ok": False, "check": f"{len(got)} outputs, expected {len(ref)}"}
    rel, mx, notes = [], [], []
    for i, (g, r) in enumerate(zip(got, ref, strict=True)):
        if tuple(g.shape) != tuple(r.shape):
            notes.append(f"output {i}: shape {tuple(g.shape)}, expected {tuple(r.shape)}")
            continue
        g64 = g.astype(np.float64)
        if not np.all(np.isfinite(g64)):
            notes.append(f"output {i}: {int(np.count_nonzero(~np.isfinite(g64)))} non-finite values")
        d = g64 - r
        rel.append(float(np.linalg.norm(d) / max(np.linalg.norm(r), 1e-300)))
        mx.append(float(np.nanmax(np.abs(d))))
    ok = not notes and all(e <= tol for e in rel)
    out = {"ok": ok, "rel_err": max(rel) if rel else None, "max_abs_err": max(mx) if mx else None,
           "tol_rel": tol, "out_dtypes": [str(g.dtype) for g in got]}
    if notes:
        out["check"] = "; ".join(notes)
    return out


def _sl_stats() -> dict[str, int]:
    import stitchlab as sl

    return {k: int(v) for k, v in sl.stats().items()}


def _stats_delta(fn: Any) -> dict[str, int]:
    import stitchlab as sl

    before = sl.stats()
    fn()
    after = sl.stats()
    return {k: int(after[k]) - int(before.get(k, 0)) for k in after if int(after[k]) != int(before.get(k, 0))}


def _free(gpu: bool) -> None:
    if not gpu:
        return
    import cupy

    cupy.cuda.runtime.deviceSynchronize()
    cupy.get_default_memory_pool().free_all_blocks()
    if "torch" in sys.modules:
        sys.modules["torch"].cuda.empty_cache()


def _case_seed(seed: int, *parts: str) -> list[int]:
    return [seed] + [zlib.crc32(p.encode()) for p in parts]


def run_case(name: str, size: str, dtype: str, impls: list[str], gpu: bool, bw: float, seed: int,
             samples: int, reps: int) -> dict[str, Any]:
    wl = WORKLOADS[name]
    case = wl.make(np.random.default_rng(_case_seed(seed, name, size, dtype)), SIZES[size], np.dtype(dtype))
    ref = wl.reference(case)
    nbytes = min_bytes(case, wl, ref)
    rec: dict[str, Any] = {
        "workload": name, "size": size, "dtype": dtype, "description": wl.description,
        "inputs": {n: [list(a.shape), str(a.dtype)] for n, a in zip(case.names, case.inputs, strict=True)},
        "params": case.params, "bytes_min": nbytes, "floor_us": nbytes / bw * 1e6, "impls": {},
    }
    inputs = _impls.Inputs(case, gpu)
    latency = SIZES[size][0] * SIZES[size][1] <= LATENCY_MAX_ELEMENTS
    for impl in impls:
        r: dict[str, Any] = {}
        try:
            prep = _impls.prepare(impl, wl, case, inputs)
            before = _sl_stats() if impl == "stitchlab" else None
            t0 = time.perf_counter()
            out = prep.call()
            prep.clock.sync()
            r["first_call_s"] = time.perf_counter() - t0
            if before is not None:  # trace + plan + NVRTC/registry on the first call
                after = _sl_stats()
                r["stats_first_call"] = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
            r.update(check(prep.host(out), ref, dtype))
            del out
            if latency:
                r["device"] = timing.device_time(prep.call, prep.clock, samples=samples)
            else:  # the loop queued behind the hold kernel, and the plain loop beside it
                r.update(timing.held_and_plain(prep.call, prep.clock, samples))
            r["floor_fraction"] = rec["floor_us"] / r["device"]["median_us"]
            if latency:
                r["latency"] = timing.wall_latency(prep.call, prep.clock, reps=reps)
            if impl == "stitchlab":
                r["stats_per_call"] = _stats_delta(prep.call)
            r.update(prep.info)
        except Exception as exc:  # a failing implementation is a result
            r["ok"] = False
            r["error"] = f"{type(exc).__name__}: {str(exc).strip()}"[:800]
        rec["impls"][impl] = r
        _free(gpu)
        status = "FAIL" if not r.get("ok") else "ok"
        t = r.get("device", {}).get("median_us")
        print(f"  {name:14s} {size:5s} {dtype:8s} {impl:14s} {status:4s} "
              f"{(f'{t:10.1f} us' if t else r.get('error', r.get('check', ''))[:90])}", flush=True)
    del inputs
    _free(gpu)
    return rec


# --- one-kernel latency: cached sl.jit vs a bare RawKernel launch ---------------------------------
_RAW_SOURCE = r"""
extern "C" __global__ void silu_gate(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float x = a[i]; out[i] = x / (1.0f + expf(-x)) * b[i]; }
}
"""


def latency_compare(seed: int, reps: int) -> dict[str, Any]:
    """Per-call wall latency (call + synchronize, median) at 64x512 float32 of: the cached
    ``sl.jit`` SiLU-gated product (one kernel once stitched), a bare ``cupy.RawKernel`` launch of
    the same function with its output allocation, CuPy eager, and one torch eager op (a * b)."""
    import cupy
    import torch

    import stitchlab as sl
    from benchmarks import ops as _ops

    wl = WORKLOADS["silu_gate"]
    case = wl.make(np.random.default_rng(_case_seed(seed, "latency")), SIZES["small"], np.dtype("float32"))
    ref = wl.reference(case)
    a, b = (cupy.asarray(x) for x in case.inputs)
    ta, tb = torch.from_dlpack(a), torch.from_dlpack(b)
    n = a.size
    kernel = cupy.RawKernel(_RAW_SOURCE, "silu_gate")

    def raw() -> Any:
        out = cupy.empty_like(a)
        kernel(((n + 255) // 256,), (256,), (a, b, out, np.int32(n)))
        return out

    o = _ops.stitchlab_ops()
    jitted = sl.jit(_impls.fixed_arity(lambda *xy: wl.run(o, case, list(xy)), 2, "silu_gate"))
    co = _ops.cupy_ops()
    clock = timing.CupyClock()
    calls = {
        "stitchlab_jit": lambda: jitted(a, b),
        "raw_kernel": raw,
        "cupy_eager": lambda: wl.run(co, case, [a, b]),
        "torch_eager_one_op": lambda: ta * tb,
    }
    out: dict[str, Any] = {"workload": "silu_gate", "size": "small", "dtype": "float32",
                           "kernels_stitchlab": _impls.stitchlab_kernels(wl, case, [a, b]), "impls": {}}
    for name, fn in calls.items():
        r: dict[str, Any] = {}
        try:
            res = fn()
            if name != "torch_eager_one_op":
                r.update(check(_impls._host_generic(res), ref, "float32"))
            r["latency"] = timing.wall_latency(fn, clock, reps=reps)
            if name == "stitchlab_jit":
                r["stats_per_call"] = _stats_delta(fn)
        except Exception as exc:
            r["ok"], r["error"] = False, f"{type(exc).__name__}: {exc}"[:800]
        out["impls"][name] = r
    sl_t = out["impls"]["stitchlab_jit"].get("latency", {}).get("median_us")
    raw_t = out["impls"]["raw_kernel"].get("latency", {}).get("median_us")
    if sl_t and raw_t:
        out["ratio_stitchlab_to_raw"] = sl_t / raw_t
    return out


# --- start-up: cold compile, warm start, notebook first result -----------------------------------
def _spawn(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    t_spawn = time.time()
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "startup.py"), *args], env=env,
                          capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip()[-1500:]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["wall_s"] = time.time() - t_spawn
    if res.get("first_result_wall"):
        res["spawn_to_first_result_s"] = res["first_result_wall"] - t_spawn
    res["spawn_to_interpreter_s"] = res["t_start"] - t_spawn
    return res


def _per_kernel(phase: dict[str, Any]) -> None:
    """Add compile / start-up milliseconds per kernel to each workload of a ``jit`` phase."""
    for rec in phase.get("workloads", {}).values():
        extra_ms = max(0.0, rec["first_s"] - rec["steady_s"]) * 1e3
        rec["first_minus_steady_ms"] = extra_ms
        compiles = rec["counters_first_call"].get("nvrtc_compiles", 0)
        kernels = rec.get("kernels")
        rec["compile_ms_per_kernel"] = extra_ms / compiles if compiles else "n/a"
        rec["start_ms_per_kernel"] = extra_ms / kernels if isinstance(kernels, int) and kernels else "n/a"


def startup(workloads: list[str], cpu: bool) -> dict[str, Any]:
    """Cold compile (empty registry), warm start (new process, full registry), notebook first result."""
    tmp = Path(tempfile.mkdtemp(prefix="stitchlab-bench-"))
    base = dict(os.environ)
    if cpu:
        base["STITCHLAB_BACKEND"] = "numpy"
    cold_env = dict(base, STITCHLAB_CACHE_DIR=str(tmp / "registry"), CUPY_CACHE_DIR=str(tmp / "cupy"))
    common = ["--phase", "jit", "--workloads", ",".join(workloads), "--size", "small"] + (["--cpu"] if cpu else [])
    out: dict[str, Any] = {
        "method": ("fresh processes; 'cold' over an empty STITCHLAB_CACHE_DIR and CUPY_CACHE_DIR, "
                   "'warm' a new process over the directories the cold one filled; per workload: "
                   "first call (trace + plan + compile + run + .get()) minus the steady call"),
        "size": "small", "dtype": "float32",
    }
    out["notebook_cold"] = _spawn(["--phase", "notebook"] + (["--cpu"] if cpu else []),
                                  dict(base, STITCHLAB_CACHE_DIR=str(tmp / "nb-registry"),
                                       CUPY_CACHE_DIR=str(tmp / "nb-cupy")))
    out["cold"] = _spawn(common, cold_env)
    out["warm"] = _spawn(common, cold_env)
    out["notebook_warm"] = _spawn(["--phase", "notebook"] + (["--cpu"] if cpu else []), cold_env)
    for phase in ("cold", "warm"):
        _per_kernel(out[phase])
    return out


# --- driver --------------------------------------------------------------------------------------
def _csv(value: str, allowed: Any, what: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if items == ["all"]:
        return list(allowed)
    bad = [v for v in items if v not in allowed]
    if bad:
        raise SystemExit(f"unknown {what} {', '.join(bad)}; choose from {', '.join(allowed)}")
    return items


def _write(results: dict[str, Any], out: Path) -> None:
    from benchmarks import report

    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1, default=str))
    tmp.replace(out / "results.json")
    (out / "results.md").write_text(report.markdown(results))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--sizes", default="", help="comma list of large,small,tiny (default: large,small; --cpu: tiny)")
    p.add_argument("--dtypes", default="float32,float16", help="float32,float16,bfloat16 (bfloat16: ml_dtypes' NumPy dtype)")
    p.add_argument("--workloads", default="all", help=f"comma list or all: {','.join(WORKLOADS)}")
    p.add_argument("--impls", default="", help=f"GPU: {','.join(_impls.GPU_IMPLS)}; CPU: {','.join(_impls.CPU_IMPLS)}")
    p.add_argument("--out", default="bench-results", help="output folder (results.json, results.md, results.png)")
    p.add_argument("--cpu", "--dry-run", dest="cpu", action="store_true",
                   help="CPU dry run: numpy backend, NumPy/torch-CPU baselines, tiny sizes")
    p.add_argument("--budget-s", type=float, default=0.0, help="skip cases that would start after this many seconds")
    p.add_argument("--commit", default="", help="commit id to record (default: $STITCHLAB_COMMIT or git)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samples", type=int, default=15, help="timed loops per device-time measurement")
    p.add_argument("--reps", type=int, default=200, help="calls per wall-latency measurement")
    p.add_argument("--no-startup", action="store_true", help="skip the fresh-process start-up measurements")
    p.add_argument("--no-latency-compare", action="store_true", help="skip sl.jit vs RawKernel latency")
    p.add_argument("--no-png", action="store_true")
    args = p.parse_args(argv)

    t_begin = time.time()
    gpu = not args.cpu
    if args.cpu:
        os.environ["STITCHLAB_BACKEND"] = "numpy"
        import stitchlab as sl

        sl.set_backend("numpy")
    sizes = _csv(args.sizes or ("tiny" if args.cpu else "large,small"), SIZES, "size")
    dtypes_req = _csv(args.dtypes, ("float32", "float16", "bfloat16"), "dtype")
    workloads = _csv(args.workloads, WORKLOADS, "workload")
    impls = _csv(args.impls or ",".join(_impls.CPU_IMPLS if args.cpu else _impls.GPU_IMPLS),
                 _impls.GPU_IMPLS + _impls.CPU_IMPLS, "implementation")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dtypes = dtypes_req
    if "bfloat16" in dtypes:
        import ml_dtypes  # noqa: F401  (registers NumPy's "bfloat16" dtype name)

    results: dict[str, Any] = {
        "meta": {
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": "python3 benchmarks/run.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
            "commit": commit_id(args.commit),
            "mode": "cpu" if args.cpu else "gpu",
            "seed": args.seed, "sizes": {s: SIZES[s] for s in sizes}, "dtypes": dtypes,
            "workloads": workloads, "impls": impls, "tolerance_rel_l2": TOLERANCE,
            "timing": (f"device: CUDA events around n back-to-back calls (n so one loop is ~3 ms), "
                       f"median of {args.samples} loops after a warm-up; at the large size each loop is "
                       f"queued behind a kernel that holds the stream until the host has queued it all, "
                       f"so no call's host cost is timed; latency: call + device "
                       f"synchronize, perf_counter, median of {args.reps}" if gpu else
                       "CPU dry run: perf_counter around back-to-back calls"),
        },
        "skipped": [],
        "cases": [],
    }
    results["meta"]["hardware"] = hardware(gpu)
    print(f"stitchlab benchmarks: {results['meta']['hardware'].get('gpu')}, commit {results['meta']['commit']}, "
          f"backend {results['meta']['hardware'].get('stitchlab_backend')}", flush=True)

    bw = timing.copy_bandwidth_gpu() if gpu else timing.copy_bandwidth_cpu()
    results["copy_bandwidth"] = bw
    _free(gpu)
    print(f"copy bandwidth {bw['bytes_per_s'] / 1e12:.3f} TB/s (read + write)", flush=True)
    _write(results, out)

    if gpu and not args.no_latency_compare and "stitchlab" in impls:
        try:
            results["latency_compare"] = latency_compare(args.seed, args.reps)
        except Exception as exc:
            results["latency_compare"] = {"error": f"{type(exc).__name__}: {exc}"[:800]}
        _write(results, out)

    def over_budget() -> bool:
        return bool(args.budget_s) and time.time() - t_begin > args.budget_s

    blocks = [(d, s) for d in dtypes for s in sizes]
    for i, (dtype, size) in enumerate(blocks):
        for name in workloads:
            if over_budget():
                results["skipped"].append({"what": f"{name} {size} {dtype}", "why": f"--budget-s {args.budget_s:g} reached"})
                continue
            results["cases"].append(run_case(name, size, dtype, impls, gpu, bw["bytes_per_s"], args.seed,
                                             args.samples, args.reps))
            _write(results, out)
        last_of_first_dtype = i == len(blocks) - 1 or blocks[i + 1][0] != dtype
        if last_of_first_dtype and dtype == dtypes[0] and not args.no_startup and "stitchlab" in impls:
            if over_budget():
                results["skipped"].append({"what": "startup", "why": f"--budget-s {args.budget_s:g} reached"})
            else:
                print("start-up measurements (fresh processes)...", flush=True)
                try:
                    results["startup"] = startup(workloads, args.cpu)
                except Exception as exc:
                    results["startup"] = {"error": f"{type(exc).__name__}: {exc}"[:800]}
                _write(results, out)

    results["meta"]["elapsed_s"] = time.time() - t_begin
    _write(results, out)
    if not args.no_png:
        from benchmarks import chart

        msg = chart.write_png(results, out / "results.png")
        print(msg, flush=True)
    from benchmarks import report

    print(report.summary(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
