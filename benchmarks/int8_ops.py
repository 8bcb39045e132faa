"""int8 elementwise programs on the GPU: ``sl.jit`` (one kernel each; every byte of the 16-byte
vector loads is extended to 32 bits on its own, the preamble's ``sl_load``) against CuPy eager,
``cupy.fuse`` and torch eager, side by side in one process: device time from CUDA events (median
of ``--samples`` loops after a warm-up), random int8 inputs, every result checked against NumPy's;
the floor is the bytes read and written over the copy bandwidth measured in the same run.

    python3 benchmarks/int8_ops.py --out /tmp/int8 [--samples 15] [--commit C]

Writes ``int8_ops.json`` and prints a table.
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

N = 1 << 28
IMPLS = ("stitchlab", "cupy", "cupy_fuse", "torch")

#: name -> (function of a module and an array: NumPy, CuPy, stitchlab; torch's own; output bytes per element)
PROGRAMS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any], int]] = {
    "x + 1": (lambda m, x: x + 1, lambda t, x: x + 1, 1),
    "x // 2": (lambda m, x: m.floor_divide(x, 2), lambda t, x: t.floor_divide(x, 2), 1),
    "(x - 2) >> 1": (lambda m, x: m.right_shift(x - 2, 1), lambda t, x: (x - 2) >> 1, 1),
    "sign(x - 1)": (lambda m, x: m.sign(x - 1), lambda t, x: t.sign(x - 1), 1),
    "maximum(x - 1, 2)": (lambda m, x: m.maximum(x - 1, 2), lambda t, x: t.clamp_min(x - 1, 2), 1),
    "float32(x * 3)": (lambda m, x: (x * 3).astype(np.float32), lambda t, x: (x * 3).to(t.float32), 4),
}


def _impls(name: str, x_cp: Any, x_t: Any) -> dict[str, tuple[Callable[[], Any], Any]]:
    import cupy as cp
    import torch

    import stitchlab as sl

    f, f_torch, _ = PROGRAMS[name]
    jitted = sl.jit(lambda x: f(sl, x))
    fused = cp.fuse(lambda x: f(cp, x))
    return {
        "stitchlab": (lambda: jitted(x_cp), CupyClock()),
        "cupy": (lambda: f(cp, x_cp), CupyClock()),
        "cupy_fuse": (lambda: fused(x_cp), CupyClock()),
        "torch": (lambda: f_torch(torch, x_t), TorchClock()),
    }


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "int8-results", argv)

    import cupy as cp
    import torch

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples, n=N, dtype="int8")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    x = np.random.default_rng(3).integers(-128, 128, N, dtype=np.int8)
    x_cp, x_t = cp.asarray(x), torch.as_tensor(x, device="cuda")
    rows: list[dict[str, Any]] = []
    for name, (f, _, out_bytes) in PROGRAMS.items():
        want = f(np, x)
        floor_us = N * (1 + out_bytes) / bw * 1e6
        for impl, (call, clock) in _impls(name, x_cp, x_t).items():
            def check(out: Any, want: np.ndarray = want) -> tuple[bool, str]:
                got = to_host(out)
                same = bool(got.dtype == want.dtype and np.array_equal(got, want))
                return same, f"{got.dtype}{got.shape}: {int(np.count_nonzero(got != want))} differ from NumPy"

            row = {"program": name, "impl": impl, "floor_us": floor_us}
            rows.append(measure(row, call, clock, args.samples, check))
        cp.get_default_memory_pool().free_all_blocks()
        (out / "int8_ops.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; n = {N} int8; "
          "device us per call (floor/time)")
    print(f"{'program':18} {'floor':>6} " + " ".join(f"{n:>17}" for n in IMPLS))
    for name in PROGRAMS:
        sel = {r["impl"]: r for r in rows if r["program"] == name}
        print(f"{name:18} {next(iter(sel.values()))['floor_us']:6.1f} " + " ".join(f"{c:>17}" for c in floor_cells(sel, list(IMPLS))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
