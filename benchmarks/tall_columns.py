"""Column reductions of tall, narrow arrays on the GPU: the sum over the batch (bias gradients),
batch-norm statistics (mean and variance per channel of channels-last activations) and column
normalization, where few columns leave a one-block-per-32-columns kernel with few blocks.

stitchlab (``sl.jit``), the same planned with a kernel per phase (``stitchlab_phases``: before
split kernels took a variance in its mean's pass) and with the split over blocks turned off
(``stitchlab_nosplit``: the schedule before ``column_split``), CuPy, torch eager and torch.compile, side by side in one process: device time
from CUDA events (median of ``--samples`` loops after a warm-up), random data, every result
checked against float64 NumPy; the floor is the bytes read and written over the copy bandwidth
measured in the same run.

    python3 benchmarks/tall_columns.py --out /tmp/tall [--samples 15]

Writes ``tall_columns.json`` to ``--out`` and prints one table.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # appended: the installed stitchlab (or the GPU machine's shim) stays first
    sys.path.append(str(ROOT))

from benchmarks.timing import (  # noqa: E402
    CupyClock,
    TorchClock,
    floor_cells,
    gpu_run_meta,
    held_and_plain,
    probe_args,
)

SHAPES = [(1 << 20, 64), (1 << 18, 256), (100_003, 7)]


def _programs(xp: str) -> dict[str, Callable[[Any], tuple[Any, ...]]]:
    """The three programs, written once per array library (``xp``: "sl", "cupy" or "torch")."""
    if xp == "torch":
        import torch

        def bn_t(x: Any) -> tuple[Any, ...]:
            var, mean = torch.var_mean(x, dim=0, correction=0)
            return mean, var

        return {"sum0": lambda x: (x.sum(0),), "bn_stats": bn_t,
                "colnorm": lambda x: ((x - x.mean(0)) / x.std(0, correction=0),)}
    return {"sum0": lambda x: (x.sum(0),), "bn_stats": lambda x: (x.mean(0), x.var(0)),
            "colnorm": lambda x: ((x - x.mean(0)) / x.std(0),)}


def _reference(name: str, x: np.ndarray) -> list[np.ndarray]:
    x64 = x.astype(np.float64)
    return [np.asarray(o) for o in _programs("numpy")[name](x64)]


def _planned_with(program: Callable[[Any], tuple[Any, ...]], x: Any, name: str, rule: Callable[..., bool]) -> Callable[[], Any]:
    """``program`` planned with the cost model's function ``name`` replaced by ``rule`` (built
    directly, past the plan caches): ``_column_splits`` returning False plans it as before
    ``column_split`` existed; ``_splittable`` of one phase only, as before split kernels took a
    variance in its mean's pass (a kernel per phase)."""
    import stitchlab as sl
    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan import cost
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    graph, sources = build_graph([o._node for o in program(sl.asarray(x))])
    device = _instance("cupy").plan(graph).plan.device
    saved = getattr(cost, name)
    setattr(cost, name, rule)
    try:
        plan = build_plan(graph, device)
    finally:
        setattr(cost, name, saved)
    exe, bufs = build_executable(plan), [s.value for s in sources]

    def call() -> Any:
        return exe(bufs)

    call.kernels = [str(k.schedule) + f" grid={k.launch.grid[0]}" for k in plan.kernels]  # type: ignore[attr-defined]
    return call


def _one_phase(info: Any) -> bool:
    """The split rule before variances shared their mean's pass in split kernels."""
    return info.phases <= 1 and not any(lvl == "full" for _, lvl in info.outputs)


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "tall-columns", argv)

    import cupy as cp
    import torch

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for shape in SHAPES:
        host = np.random.default_rng(shape[0]).standard_normal(shape, dtype=np.float32) * 2 + 3
        x_cp = cp.asarray(host)
        x_t = torch.as_tensor(host, device="cuda")
        for name in ("sum0", "bn_stats", "colnorm"):
            ref = _reference(name, host)
            out_bytes = sum(r.size * 4 for r in ref)
            floor_us = (host.nbytes + out_bytes) / bw * 1e6
            impls: dict[str, tuple[Callable[[], Any], Any, Callable[[Any], list[np.ndarray]]]] = {}
            sl_fn = sl.jit(_programs("sl")[name])
            impls["stitchlab"] = (lambda f=sl_fn, x=x_cp: f(x), CupyClock(), lambda o: [v.get() for v in o])
            impls["stitchlab_phases"] = (_planned_with(_programs("sl")[name], x_cp, "_splittable", _one_phase), CupyClock(),
                                         lambda o: [v.get() for v in o])
            impls["stitchlab_nosplit"] = (_planned_with(_programs("sl")[name], x_cp, "_column_splits", lambda R, K, dev: False),
                                          CupyClock(), lambda o: [v.get() for v in o])
            cupy_fn = _programs("cupy")[name]
            impls["cupy"] = (lambda f=cupy_fn, x=x_cp: f(x), CupyClock(), lambda o: [v.get() for v in o])
            torch_fn = _programs("torch")[name]
            impls["torch"] = (lambda f=torch_fn, x=x_t: f(x), TorchClock(), lambda o: [v.cpu().numpy() for v in o])
            torch._dynamo.reset()
            compiled = torch.compile(torch_fn)
            impls["torch_compile"] = (lambda f=compiled, x=x_t: f(x), TorchClock(), lambda o: [v.cpu().numpy() for v in o])
            for impl, (call, clock, host_of) in impls.items():
                row: dict[str, Any] = {"shape": list(shape), "program": name, "impl": impl, "floor_us": floor_us}
                try:
                    got = host_of(call())
                    err = max(float(np.linalg.norm(g.astype(np.float64) - r) / max(np.linalg.norm(r), 1e-30))
                              for g, r in zip(got, ref, strict=True))
                    row["rel_err"], row["ok"] = err, err < 1e-5
                    row.update(held_and_plain(call, clock, args.samples))
                    if impl == "stitchlab":
                        plan = sl.explain(*_programs("sl")[name](sl.asarray(x_cp)))
                        row["kernels"] = [str(k.schedule) + f" grid={k.launch.grid[0]}" for k in plan.kernels]
                    elif impl in ("stitchlab_phases", "stitchlab_nosplit"):
                        row["kernels"] = call.kernels  # type: ignore[attr-defined]
                except Exception as exc:  # noqa: BLE001 - a failure is a result
                    row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                rows.append(row)
            cp.get_default_memory_pool().free_all_blocks()
            meta["elapsed_s"] = time.perf_counter() - t0  # written as it goes: a cut-off run keeps its rows
            (out / "tall_columns.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
            print(f"{shape} {name}: done at {meta['elapsed_s']:.0f} s", flush=True)
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; device us per call (floor/time)")
    impl_names = ["stitchlab", "stitchlab_phases", "stitchlab_nosplit", "cupy", "torch", "torch_compile"]
    print(f"{'shape':>14} {'program':9} {'floor':>7} " + " ".join(f"{n:>19}" for n in impl_names))
    for shape in SHAPES:
        for name in ("sum0", "bn_stats", "colnorm"):
            sel = {r["impl"]: r for r in rows if r["shape"] == list(shape) and r["program"] == name}
            cells = floor_cells(sel, impl_names, width=10)
            floor = next(iter(sel.values()))["floor_us"]
            print(f"{str(shape):>14} {name:9} {floor:7.1f} " + " ".join(f"{c:>19}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
