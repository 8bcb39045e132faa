"""A time-stepping stencil fused over several steps, on the GPU: the plan the planner picks
(counting the recompute of shifted reads, docs/compiler.md §3) against the one kernel of every
step (its plan before it counted recompute, still a candidate: picked here through
``stitchlab.notebook.hooks.set_plan_override``), CuPy eager, torch eager and torch.compile
(inductor makes its own choice of what to fuse), side by side in one process: device time from
CUDA events (median of ``--samples`` held loops after a warm-up), random float32 input, every
result checked against NumPy's float64 steps of the same values; for stitchlab also the seconds
of its first call (plan, source, compile: an empty registry unless ``STITCHLAB_CACHE_DIR`` holds
the kernels) and the kernels' source size.

    python3 benchmarks/stencil_steps.py --out /tmp/steps [--samples 15] [--commit C] [--forms roll,pad] [--steps 2,4,8] [--shape 8192x4096] [--impls stitchlab,cupy,...]

Programs: ``steps`` explicit heat-equation updates over 8192 x 4096 (``--shape``), for 2, 4 and 8 steps, in two
forms: ``roll``, periodic, ``u + 0.1 * (roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) +
roll(u, -1, 1) - 4 * u)`` (``torch.roll``), and ``pad``, the boundary held fixed, ``u + 0.1 *
pad(u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1], 1)``
(``torch.nn.functional.pad``). Writes ``stencil_steps.json``.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # appended: the installed stitchlab (or the GPU machine's shim) stays first
    sys.path.append(str(ROOT))

from benchmarks.timing import CupyClock, TorchClock, gpu_run_meta, measure, probe_args, to_host  # noqa: E402


def heat(xp: Any, u: Any, steps: int, form: str = "roll") -> Any:
    """``steps`` updates of ``u`` in ``form`` with the array module ``xp`` (NumPy, CuPy, stitchlab)."""
    for _ in range(steps):
        if form == "roll":
            u = u + 0.1 * (xp.roll(u, 1, 0) + xp.roll(u, -1, 0) + xp.roll(u, 1, 1) + xp.roll(u, -1, 1) - 4 * u)
        else:
            u = u + 0.1 * xp.pad(u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1], 1)
    return u


def heat_torch(u: Any, steps: int, form: str = "roll") -> Any:
    import torch

    for _ in range(steps):
        if form == "roll":
            u = u + 0.1 * (torch.roll(u, 1, 0) + torch.roll(u, -1, 0) + torch.roll(u, 1, 1) + torch.roll(u, -1, 1) - 4 * u)
        else:
            lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
            u = u + 0.1 * torch.nn.functional.pad(lap, (1, 1, 1, 1))
    return u


def _options(ap: Any) -> None:
    ap.add_argument("--forms", default="roll,pad", help="roll and/or pad, comma-separated")
    ap.add_argument("--steps", default="2,4,8", help="the step counts, comma-separated")
    ap.add_argument("--shape", default="8192x4096", help="ROWSxCOLS (256x256: a grid whose steps are launch-bound)")
    ap.add_argument("--impls", default="stitchlab,stitchlab_one_kernel,cupy,torch,torch_compile",
                    help="the implementations timed, comma-separated")


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "stencil-steps-results", argv, _options)

    import cupy as cp
    import torch

    import stitchlab as sl
    from stitchlab.notebook.hooks import clear_plan_overrides, set_plan_override

    sl.set_backend("cupy")
    shape = tuple(int(n) for n in args.shape.split("x"))
    meta, bw = gpu_run_meta(args.commit, args.samples, shape=list(shape))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    xs = cp.asarray(x)
    xt = torch.as_tensor(x, device="cuda")
    rows: list[dict[str, Any]] = []
    for form, steps in [(f, int(k)) for f in args.forms.split(",") for k in args.steps.split(",")]:
        ref = heat(np, x.astype(np.float64), steps, form)
        tol = 64 * np.finfo(np.float32).eps * float(np.abs(x).max())

        def check(got: Any, ref: np.ndarray = ref, tol: float = tol) -> tuple[bool, str]:
            err = float(np.max(np.abs(to_host(got, np.float64) - ref)))
            return bool(err <= tol), f"max error {err:.3g} (tolerance {tol:.3g})"

        t0 = time.perf_counter()
        plan = sl.explain(heat(sl, sl.asarray(xs), steps, form))
        plan_s = time.perf_counter() - t0
        one = min(range(len(plan.candidates)), key=lambda i: len(plan.candidates[i].groups))
        torch._dynamo.reset()
        compiled = torch.compile(lambda u, s=steps, f=form: heat_torch(u, s, f))
        impls: dict[str, Any] = {"stitchlab": None, "stitchlab_one_kernel": one, "cupy": "cupy",
                                 "torch": "torch", "torch_compile": "torch_compile"}
        for impl, pick in impls.items():
            if impl not in args.impls.split(","):
                continue
            row: dict[str, Any] = {"form": form, "steps": steps, "impl": impl, "floor_us": 2 * x.nbytes / bw * 1e6}
            clock: Any = CupyClock()
            if impl == "cupy":
                call = lambda s=steps, f=form: heat(cp, xs, s, f)  # noqa: E731
            elif impl == "torch":
                call, clock = (lambda s=steps, f=form: heat_torch(xt, s, f)), TorchClock()
            elif impl == "torch_compile":
                call, clock = (lambda f=compiled: f(xt)), TorchClock()
            else:
                if pick is not None and len(plan.kernels) == 1:
                    continue  # (the planner's plan: timed above)
                clear_plan_overrides()
                if pick is not None:
                    set_plan_override(plan.graph.key, pick)
                chosen = sl.explain(heat(sl, sl.asarray(xs), steps, form))
                row.update(kernels=len(chosen.kernels), source_kb=round(sum(len(k.source) for k in chosen.kernels) / 1024),
                           estimate_us=round(sum(k.estimated_time for k in chosen.kernels) * 1e6, 1))
                if impl == "stitchlab":
                    row["plan_s"] = round(plan_s, 3)
                jitted = sl.jit(lambda u, s=steps, f=form: heat(sl, u, s, f))
                t0 = time.perf_counter()
                try:  # (plan, source and compile; measure's first call checks the result)
                    jitted(xs)
                    cp.cuda.get_current_stream().synchronize()
                    row["first_call_s"] = round(time.perf_counter() - t0, 3)
                except Exception:  # noqa: BLE001,S110 - measure records the error
                    pass
                call = lambda f=jitted: f(xs)  # noqa: E731
            rows.append(measure(row, call, clock, args.samples, check))
        clear_plan_overrides()
        cp.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()
        (out / "stencil_steps.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; {shape[0]} x {shape[1]} float32")
    for r in rows:
        dev = r.get("device", {}).get("median_us")
        print(f"{r['form']} steps {r['steps']} {r['impl']:22} first call {r.get('first_call_s', '-')} s kernels {r.get('kernels', '-')!s:>3} "
              f"device {dev if dev is None else round(dev, 1)} us  ok {r.get('ok')} {r.get('error', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
