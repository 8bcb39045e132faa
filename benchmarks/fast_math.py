"""``sl.fast_math`` on the GPU: four elementwise programs heavy in exp, log, sin, cos, sigmoid and
division, run by ``sl.jit`` with and without ``fast_math=True`` against the same expression in
CuPy eager, torch eager and torch.compile, side by side in one process: device time from CUDA events
(median of ``--samples`` loops after a warm-up), random data at 8192 x 4096 float32. Every result is
checked against NumPy's float64 value of the same expression; the error is
``max |got - want| / max(|want|, s)`` with ``s`` the program's scale (1e-2; 1 for the rotation, whose
results cancel), and the check passes below 1e-4. The floor is the bytes moved (each input read once, the
output written once) over the copy bandwidth measured in the same run.

    python3 benchmarks/fast_math.py --out /tmp/fm [--samples 15] [--commit C]

Writes ``fast_math.json`` and prints a table.
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
    to_host,
)
from benchmarks.vectorize import softplus_where as softplus  # noqa: E402

IMPLS = ("sl", "sl fast_math", "cupy", "torch", "torch.compile")
SHAPE = (8192, 4096)


def _sigmoid(w: Any, x: Any) -> Any:
    return w.sigmoid(x) if hasattr(w, "sigmoid") else 1 / (1 + w.exp(-x))  # (NumPy and CuPy have none)


# --- the programs: ``w`` is the module (sl, numpy, cupy, torch); softplus is benchmarks/vectorize.py's
def silu(w: Any, x: Any) -> Any:
    return x * _sigmoid(w, x)


def rotate(w: Any, x: Any, y: Any, t: Any) -> Any:
    return x * w.cos(t) - y * w.sin(t)


def kl_terms(w: Any, p: Any, q: Any) -> Any:
    return p * w.log(p / q)


#: name -> (program, input makers over a random generator, error scale)
PROGRAMS: dict[str, tuple[Callable[..., Any], list[Callable[[np.random.Generator], np.ndarray]], float]] = {
    "softplus(x, beta)": (softplus, [lambda r: r.standard_normal(SHAPE) * 4, lambda r: r.uniform(0.5, 8.0, SHAPE[1])], 1e-2),
    "silu(x)": (silu, [lambda r: r.standard_normal(SHAPE) * 4], 1e-2),
    "x cos t - y sin t": (rotate, [lambda r: r.standard_normal(SHAPE)] * 2 + [lambda r: r.uniform(-np.pi, np.pi, SHAPE)], 1.0),
    "p log(p / q)": (kl_terms, [lambda r: r.uniform(0.01, 1.0, SHAPE)] * 2, 1e-2),
}


def _calls(program: Callable[..., Any], host: list[np.ndarray]) -> dict[str, tuple[Callable[[], Any], Any]]:
    import cupy as cp
    import torch

    import stitchlab as sl

    dev = [cp.asarray(a) for a in host]
    ten = [torch.as_tensor(a, device="cuda") for a in host]
    exact = sl.jit(lambda *a: program(sl, *a))
    fast = sl.jit(lambda *a: program(sl, *a), fast_math=True)
    compiled = torch.compile(lambda *a: program(torch, *a))
    return {
        "sl": (lambda: exact(*dev), CupyClock()),
        "sl fast_math": (lambda: fast(*dev), CupyClock()),
        "cupy": (lambda: program(cp, *dev), CupyClock()),
        "torch": (lambda: program(torch, *ten), TorchClock()),
        "torch.compile": (lambda: compiled(*ten), TorchClock()),
    }


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "fast-math-results", argv)

    import cupy as cp

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples, shape=list(SHAPE), dtype="float32")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    rows: list[dict[str, Any]] = []
    for name, (program, makers, scale) in PROGRAMS.items():
        host = [m(rng).astype(np.float32) for m in makers]
        with np.errstate(all="ignore"):
            want = np.asarray(program(np, *[a.astype(np.float64) for a in host]))
        floor_us = (sum(a.nbytes for a in host) + want.size * 4) / bw * 1e6
        for impl, (call, clock) in _calls(program, host).items():
            def check(got_: Any, want: np.ndarray = want, scale: float = scale) -> tuple[bool, str]:
                got = to_host(got_)
                err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), scale)))
                return bool(got.dtype == np.float32 and err < 1e-4), f"{got.dtype}: max error {err:.1e}"

            row = {"program": name, "impl": impl, "floor_us": floor_us}
            rows.append(measure(row, call, clock, args.samples, check))
        cp.get_default_memory_pool().free_all_blocks()
        (out / "fast_math.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; 8192 x 4096 float32; "
          "device us per call (floor/time)")
    print(f"{'program':20} {'floor':>7} " + " ".join(f"{n:>16}" for n in IMPLS))
    for name in PROGRAMS:
        sel = {r["impl"]: r for r in rows if r["program"] == name}
        print(f"{name:20} {sel['sl']['floor_us']:7.1f} " + " ".join(f"{c:>16}" for c in floor_cells(sel, list(IMPLS))))
    print("max error against NumPy's float64 value:")
    for name in PROGRAMS:
        sel = {r["impl"]: r for r in rows if r["program"] == name}
        print(f"{name:20} " + " ".join(f"{sel[n].get('check', '-').split(': max error ')[-1]:>16}" for n in IMPLS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
