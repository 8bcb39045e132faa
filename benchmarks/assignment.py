"""Assignment into arrays on the GPU: ``sl.jit`` functions that copy an input and assign into the
copy (basic indexes and masks fused into one kernel; integer rows a scatter step) against the
same code in CuPy eager and torch eager (``clone`` for ``copy``), side by side in one process:
device time from CUDA events (median of ``--samples`` loops after a warm-up), random float32
input of 8192 x 4096, every result checked against NumPy's; the floor is one read of the input
and one write of the result (plus the rows' values where there are some) over the copy bandwidth
measured in the same run.

    python3 benchmarks/assignment.py --out /tmp/assign [--samples 15] [--commit C]

Writes ``assignment.json`` and prints a table.
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

SHAPE = (8192, 4096)
IMPLS = ("stitchlab", "cupy", "torch")
ROWS = np.random.default_rng(5).permutation(SHAPE[0])[:1024]  # distinct rows, random order


def _masked(y: Any, copy: Any) -> Any:
    y = copy(y)
    y[y < 0] = 0
    y[:, :16] = 1
    return y


def _strided(y: Any, copy: Any) -> Any:
    y = copy(y)
    y[::2, 1::2] = y[::2, 1::2] * 2
    y[-1] = y[0]
    return y


def _rows(y: Any, copy: Any, v: Any, rows: Any) -> Any:
    y = copy(y)
    y[rows] = v
    return y


#: name -> (body over (array, copy function, values, rows), extra bytes moved per call besides x and y)
PROGRAMS: dict[str, tuple[Callable[..., Any], int]] = {
    "y[y < 0] = 0; y[:, :16] = 1": (lambda y, c, v, r: _masked(y, c), 0),
    "y[::2, 1::2] *= 2; y[-1] = y[0]": (lambda y, c, v, r: _strided(y, c), 0),
    "y[rows] = v (1024 rows)": (lambda y, c, v, r: _rows(y, c, v, r), 1024 * SHAPE[1] * 4),
}


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "assign-results", argv)

    import cupy as cp
    import torch

    import stitchlab as sl

    sl.set_backend("cupy")
    n = SHAPE[0] * SHAPE[1]
    meta, bw = gpu_run_meta(args.commit, args.samples, shape=list(SHAPE), dtype="float32")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    v = rng.standard_normal((len(ROWS), SHAPE[1])).astype(np.float32)
    x_cp, v_cp, r_cp = cp.asarray(x), cp.asarray(v), cp.asarray(ROWS)
    x_t, v_t, r_t = (torch.as_tensor(a, device="cuda") for a in (x, v, ROWS))
    rows: list[dict[str, Any]] = []
    for name, (body, extra) in PROGRAMS.items():
        want = body(x, np.copy, v, ROWS)
        jitted = sl.jit(lambda a, b, body=body: body(a, lambda t: t.copy(), b, ROWS))
        calls = {
            "stitchlab": (lambda jitted=jitted: jitted(x_cp, v_cp), CupyClock()),
            "cupy": (lambda body=body: body(x_cp, cp.copy, v_cp, r_cp), CupyClock()),
            "torch": (lambda body=body: body(x_t, torch.clone, v_t, r_t), TorchClock()),
        }
        floor_us = (2 * n * 4 + extra) / bw * 1e6
        steps = len(sl.explain(body(sl.asarray(x_cp), lambda t: t.copy(), sl.asarray(v_cp), ROWS)).kernels)
        for impl, (call, clock) in calls.items():
            def check(got_: Any, want: np.ndarray = want) -> tuple[bool, str]:
                got = to_host(got_)
                same = bool(got.dtype == want.dtype and np.array_equal(got, want))
                return same, f"{got.dtype}{got.shape}: {int(np.count_nonzero(got != want))} differ from NumPy"

            row = {"program": name, "impl": impl, "floor_us": floor_us, "steps": steps if impl == "stitchlab" else None}
            rows.append(measure(row, call, clock, args.samples, check))
        cp.get_default_memory_pool().free_all_blocks()
        (out / "assignment.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; {SHAPE} float32; "
          "device us per call (floor/time)")
    print(f"{'program':34} {'floor':>6} {'steps':>5} " + " ".join(f"{n:>17}" for n in IMPLS))
    for name in PROGRAMS:
        sel = {r["impl"]: r for r in rows if r["program"] == name}
        print(f"{name:34} {sel['stitchlab']['floor_us']:6.1f} {sel['stitchlab']['steps']!s:>5} "
              + " ".join(f"{c:>17}" for c in floor_cells(sel, list(IMPLS))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
