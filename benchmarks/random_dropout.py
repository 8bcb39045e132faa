"""Random numbers and dropout on the GPU: stitchlab's draws computed inside the kernel that uses
them (``sl.random``, ``sl.jit``), against CuPy eager, torch eager and torch.compile, side by side
in one process: device time from CUDA events (median of ``--samples`` loops after a warm-up),
random inputs, every result checked (the share of dropped values and the kept values, since the
generators differ); the floor is the bytes read and written over the copy bandwidth measured in
the same run.

    python3 benchmarks/random_dropout.py --out /tmp/rd [--samples 15]

Programs at 8192 x 4096: ``draw`` (uniform floats written to memory) and ``dropout``
(``x * (u >= p) / (1 - p)``, p = 0.1), float32 and bfloat16. Writes ``random_dropout.json``.
"""

from __future__ import annotations

import json
import pathlib
import sys
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
    measure,
    probe_args,
)

SHAPE = (8192, 4096)
P = 0.1


def _impls(program: str, dtype: str, x_cp: Any, x_t: Any) -> dict[str, tuple[Callable[[], Any], Any, Callable[[Any], np.ndarray]]]:
    """name -> (call, clock, result as a float64 host array)."""
    import cupy as cp
    import torch

    import stitchlab as sl

    rng = sl.random.default_rng(0)
    tdt = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    if program == "draw":
        def sl_program(x: Any) -> Any:
            return rng.random(x.shape, dtype)

        def torch_program(x: Any) -> Any:
            return torch.rand(SHAPE, dtype=tdt, device="cuda")
    else:
        def sl_program(x: Any) -> Any:
            return x * (rng.random(x.shape, dtype) >= P) / (1 - P)

        def torch_program(x: Any) -> Any:
            return torch.nn.functional.dropout(x, P, training=True)

    jitted = sl.jit(sl_program)
    to_host_sl = lambda o: np.asarray(o.get(), dtype=np.float64)  # noqa: E731
    to_host_t = lambda o: o.float().cpu().numpy().astype(np.float64)  # noqa: E731
    impls = {
        "stitchlab": (lambda: jitted(x_cp), CupyClock(), to_host_sl),
        "stitchlab_eager": (lambda: sl.compute(sl_program(sl.asarray(x_cp)))[0], CupyClock(),
                            lambda o: cp.asnumpy(o).astype(np.float64)),
    }
    if dtype == "float32":
        crng = cp.random.default_rng(0)
        if program == "draw":
            impls["cupy"] = (lambda: crng.random(SHAPE, dtype=cp.float32), CupyClock(), lambda o: cp.asnumpy(o).astype(np.float64))
        else:
            impls["cupy"] = (lambda: x_cp * (crng.random(SHAPE, dtype=cp.float32) >= P) / (1 - P), CupyClock(),
                             lambda o: cp.asnumpy(o).astype(np.float64))
    impls["torch"] = (lambda: torch_program(x_t), TorchClock(), to_host_t)
    torch._dynamo.reset()
    compiled = torch.compile(torch_program)
    impls["torch_compile"] = (lambda: compiled(x_t), TorchClock(), to_host_t)
    return impls


def _check(program: str, got: np.ndarray, x: np.ndarray, dtype: str) -> tuple[bool, str]:
    if program == "draw":  # (bfloat16 values in steps of 2**-8 average (1 - 2**-8) / 2 = 0.498)
        ok = bool(got.min() >= 0 and got.max() < 1 and abs(got.mean() - 0.5) < (1e-3 if dtype == "float32" else 3e-3))
        return ok, f"min {got.min():.3g} max {got.max():.6g} mean {got.mean():.5f}"
    dropped = got == 0
    share = float(dropped.mean())
    kept = ~dropped & (x != 0)
    rel = float(np.max(np.abs(got[kept] - x[kept] / (1 - P)) / np.abs(x[kept] / (1 - P))))
    ok = abs(share - P) < 2e-3 and rel < (1e-6 if dtype == "float32" else 1.6e-2)
    return ok, f"dropped {share:.4f}, kept values within {rel:.2g}"


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "random-dropout", argv)

    import cupy as cp
    import torch

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples, shape=list(SHAPE), p=P)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for dtype in ("float32", "bfloat16"):
        host32 = np.random.default_rng(1).standard_normal(SHAPE, dtype=np.float32)
        x_t = torch.as_tensor(host32, device="cuda").to({"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype])
        x_cp = cp.asarray(host32.astype(sl.bfloat16) if dtype == "bfloat16" else host32)
        x_host = x_t.float().cpu().numpy().astype(np.float64)
        itemsize = 4 if dtype == "float32" else 2
        for program in ("draw", "dropout"):
            floor_us = (host32.size * itemsize * (1 if program == "draw" else 2)) / bw * 1e6
            for impl, (call, clock, host_of) in _impls(program, dtype, x_cp, x_t).items():
                row = {"dtype": dtype, "program": program, "impl": impl, "floor_us": floor_us}
                rows.append(measure(row, call, clock, args.samples,
                                    lambda out, p=program, h=host_of, x=x_host, t=dtype: _check(p, h(out), x, t)))
            cp.get_default_memory_pool().free_all_blocks()
            (out / "random_dropout.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; device us per call (floor/time)")
    names = ["stitchlab", "stitchlab_eager", "cupy", "torch", "torch_compile"]
    print(f"{'dtype':9} {'program':8} {'floor':>6} " + " ".join(f"{n:>17}" for n in names))
    for dtype in ("float32", "bfloat16"):
        for program in ("draw", "dropout"):
            sel = {r["impl"]: r for r in rows if r["dtype"] == dtype and r["program"] == program}
            cells = floor_cells(sel, names)
            floor = next(iter(sel.values()))["floor_us"]
            print(f"{dtype:9} {program:8} {floor:6.1f} " + " ".join(f"{c:>17}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
