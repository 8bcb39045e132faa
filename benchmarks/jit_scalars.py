"""An Adam step whose learning rate and step count change at every call (a training loop with a
schedule), on the GPU: time per step back to back, stitchlab's ``sl.jit`` (the two numbers read at
run time) against the same function traced for each value (what ``sl.jit`` did before), with
NumPy scalars for the numbers (``np.float32(lr)``, ``np.int64(step)``), the replay with fixed numbers, CuPy eager, torch eager and ``torch.compile``, side by side in one
process on random data, every implementation warmed up, blocks of steps interleaved, median of
``--samples`` blocks. Each implementation's step is checked against NumPy's float64 step.

    python3 benchmarks/jit_scalars.py --out /tmp/scalars [--samples 7] [--commit C]

Sizes: 64 × 512 (32K parameters: the host's cost per call) and 8192 × 4096 (33.5M: the device's),
float32. Writes ``jit_scalars.json``.
"""

from __future__ import annotations

import json
import pathlib
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # appended: the installed stitchlab (or the GPU machine's shim) stays first
    sys.path.append(str(ROOT))

from benchmarks.timing import probe_args, to_host  # noqa: E402
from benchmarks.workloads import adam  # noqa: E402

SIZES = {"small": (64, 512), "large": (8192, 4096)}
B1, B2, EPS = 0.9, 0.999, 1e-8


def schedule(k: int) -> tuple[float, int]:
    """Step ``k``'s learning rate and step count (both new at every step)."""
    return 1e-3 * 0.999 ** k, k + 1


def steppers(host: dict[str, np.ndarray]) -> dict[str, Callable[[int], Any]]:
    """Per implementation, a function doing step ``k`` on its own copy of the state."""
    import cupy as cp
    import torch

    import stitchlab as sl

    def ns_torch() -> Any:
        class T:
            sqrt = staticmethod(torch.sqrt)
        return T

    out: dict[str, Callable[[int], Any]] = {}
    dev = {k: cp.asarray(v) for k, v in host.items()}

    def body(o: Any) -> Callable[..., Any]:
        return lambda p, g, m, v, lr, step: adam(o, p, g, m, v, lr, B1, B2, EPS, step)

    jitted = sl.jit(body(sl))
    out["stitchlab"] = lambda k: jitted(dev["p"], dev["g"], dev["m"], dev["v"], *schedule(k))
    per_value = sl.jit(body(sl))  # a trace for each value: the call path sl.jit took before
    out["stitchlab, traced per value"] = lambda k: per_value._call((dev["p"], dev["g"], dev["m"], dev["v"], *schedule(k)), literal=True)
    as_numpy = sl.jit(body(sl))  # the numbers as NumPy scalars: 0-d arrays read at run time from the first call
    out["stitchlab, NumPy scalars"] = lambda k: as_numpy(dev["p"], dev["g"], dev["m"], dev["v"],
                                                         np.float32(schedule(k)[0]), np.int64(schedule(k)[1]))
    fixed = sl.jit(body(sl))
    out["stitchlab, fixed numbers"] = lambda k: fixed(dev["p"], dev["g"], dev["m"], dev["v"], *schedule(0))
    cupy_step = body(cp)
    out["cupy"] = lambda k: cupy_step(dev["p"], dev["g"], dev["m"], dev["v"], *schedule(k))
    tt = {k: torch.as_tensor(v, device="cuda") for k, v in host.items()}
    torch_step = body(ns_torch())
    out["torch"] = lambda k: torch_step(tt["p"], tt["g"], tt["m"], tt["v"], *schedule(k))
    compiled = torch.compile(body(ns_torch()))
    out["torch.compile"] = lambda k: compiled(tt["p"], tt["g"], tt["m"], tt["v"], *schedule(k))
    return out


def reference(host: dict[str, np.ndarray], k: int) -> list[np.ndarray]:
    f64 = {name: a.astype(np.float64) for name, a in host.items()}
    lr, step = schedule(k)
    return list(adam(np, f64["p"], f64["g"], f64["m"], f64["v"], lr, B1, B2, EPS, step))


def check(host: dict[str, np.ndarray], name: str, step: Callable[[int], Any], k: int) -> float:
    """Step ``k`` of ``step`` against NumPy's float64 step: the largest error over the largest value."""
    got = [to_host(x, np.float64) for x in step(k)]
    err = max(float(np.max(np.abs(a - b)) / np.max(np.abs(b))) for a, b in zip(got, reference(host, k), strict=True))
    assert err < 1e-5, (name, k, err)
    return err


def main() -> None:
    args = probe_args(__doc__, "/tmp/jit_scalars")
    import cupy as cp
    import torch

    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    results: dict[str, Any] = {"commit": args.commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                               "torch": torch.__version__, "cupy": cp.__version__, "sizes": {}}
    for size, shape in SIZES.items():
        n = shape[0] * shape[1]
        host = {"p": rng.standard_normal(n).astype(np.float32), "g": (0.1 * rng.standard_normal(n)).astype(np.float32),
                "m": (0.01 * rng.standard_normal(n)).astype(np.float32),
                "v": (1e-3 + 1e-2 * rng.random(n)).astype(np.float32)}
        impls = steppers(host)
        block = 200 if size == "small" else 50
        rows: dict[str, Any] = {}
        for name, step in impls.items():  # first calls (compiles), all at step 0, and the check
            t0 = time.perf_counter()
            err = check(host, name, step, 0)
            rows[name] = {"first_call_s": time.perf_counter() - t0, "max_err_vs_float64_over_max": err, "per_step_us": []}
        k = 0
        for name, step in impls.items():
            t0 = time.perf_counter()
            for _ in range(30):  # warm-up, new numbers at each step
                k += 1
                step(k)
            cp.cuda.runtime.deviceSynchronize()
            rows[name]["warm_up_30_steps_s"] = time.perf_counter() - t0
            if name != "stitchlab, fixed numbers":  # and a step with new numbers, once warm
                rows[name]["max_err_after_warm_up"] = check(host, name, step, 1000)
            print(size, name, rows[name], flush=True)
        impls = {name: step for name, step in impls.items() if rows[name]["warm_up_30_steps_s"] < 30}
        for _ in range(args.samples):
            for name, step in impls.items():
                cp.cuda.runtime.deviceSynchronize()
                t0 = time.perf_counter()
                for _ in range(block):
                    k += 1
                    step(k)
                cp.cuda.runtime.deviceSynchronize()
                rows[name]["per_step_us"].append((time.perf_counter() - t0) / block * 1e6)
        for name, row in rows.items():
            if name not in impls:
                row["skipped"] = "30 warm-up steps took 30 s or more"
                continue
            row["median_us"] = statistics.median(row["per_step_us"])
            print(f"{size:6s} {name:30s} {row['median_us']:10.1f} us/step", flush=True)
        results["sizes"][size] = {"shape": shape, "steps_per_block": block, "rows": rows}
    (out_dir / "jit_scalars.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
