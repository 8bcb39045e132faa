"""``sl.vectorize`` on the GPU: Python functions of elements with a branch, written once for
stitchlab (``sl.where``: one fused kernel, called through ``sl.jit``) and once for
``cupy.vectorize`` (an ``if``: CuPy compiles the Python function), against the same expression in
CuPy eager, torch eager and torch.compile, side by side in one process: device time from CUDA events
(median of ``--samples`` loops after a warm-up), random data at 8192 x 4096 float32; every result
checked against NumPy's ``vectorize`` of the ``if`` version on the same values (float64, ``rtol``
1e-5). The floor is the bytes moved (each input read once, the output written once) over the copy
bandwidth measured in the same run.

    python3 benchmarks/vectorize.py --out /tmp/vec [--samples 15] [--commit C]

Writes ``vectorize.json`` and prints a table.
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

IMPLS = ("sl.vectorize", "cupy.vectorize", "cupy", "torch", "torch.compile")
SHAPE = (8192, 4096)


# --- the functions, written with a branch (cupy.vectorize, NumPy's reference) and with where ------------
#: the branch versions' math: NumPy's for the reference, CuPy's ufuncs inside cupy.vectorize (its JIT
#: takes neither ``abs`` nor ``math.exp``: "Invalid function call"); set before each use
xp: Any = np


def huber_if(r: Any) -> Any:
    a = xp.absolute(r)
    if a <= 1.0:
        return 0.5 * r * r
    return a - 0.5


def huber_where(w: Any, r: Any) -> Any:
    """``w``: the module (sl, cupy, torch)."""
    a = abs(r)
    return w.where(a <= 1.0, 0.5 * r * r, a - 0.5)


def softplus_if(x: Any, beta: Any) -> Any:
    z = x * beta
    if z > 20.0:
        return x
    return xp.log1p(xp.exp(z)) / beta


def softplus_where(w: Any, x: Any, beta: Any) -> Any:
    z = x * beta
    return w.where(z > 20.0, x, w.log1p(w.exp(w.clip(z, None, 20.0))) / beta)


CASES = {
    "huber(r)": (huber_if, huber_where, 1),
    "softplus(x, beta)": (softplus_if, softplus_where, 2),
}


def _calls(where_version: Callable[..., Any], if_version: Callable[..., Any], host: list[np.ndarray]
           ) -> dict[str, tuple[Callable[[], Any], Any]]:
    import cupy as cp
    import torch

    import stitchlab as sl

    dev = [cp.asarray(a) for a in host]
    ten = [torch.as_tensor(a, device="cuda") for a in host]
    ours = sl.vectorize(lambda *a: where_version(sl, *a))
    jitted = sl.jit(lambda *a: ours(*a))
    global xp
    xp = cp
    theirs = cp.vectorize(if_version)
    compiled = torch.compile(lambda *a: where_version(torch, *a))
    return {
        "sl.vectorize": (lambda: jitted(*dev), CupyClock()),
        "cupy.vectorize": (lambda: theirs(*dev), CupyClock()),
        "cupy": (lambda: where_version(cp, *dev), CupyClock()),
        "torch": (lambda: where_version(torch, *ten), TorchClock()),
        "torch.compile": (lambda: compiled(*ten), TorchClock()),
    }


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "vectorize-results", argv)

    import cupy as cp

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples, shape=list(SHAPE), dtype="float32")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    rows: list[dict[str, Any]] = []
    for name, (if_version, where_version, nin) in CASES.items():
        host = [(rng.standard_normal(SHAPE) * 4).astype(np.float32)]
        if nin == 2:
            host.append(rng.uniform(0.5, 8.0, SHAPE[1]).astype(np.float32))  # (beta per column, broadcast)
        global xp
        xp = np
        want = np.vectorize(if_version, otypes=[np.float64])(*[a.astype(np.float64) for a in host])
        floor_us = (sum(a.nbytes for a in host) + host[0].nbytes) / bw * 1e6
        for impl, (call, clock) in _calls(where_version, if_version, host).items():
            def check(got_: Any, want: np.ndarray = want) -> tuple[bool, str]:
                got = to_host(got_)
                err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-3)))
                return bool(got.dtype == np.float32 and err < 1e-5), f"{got.dtype}: max relative error {err:.1e}"

            row = {"program": name, "impl": impl, "floor_us": floor_us}
            rows.append(measure(row, call, clock, args.samples, check))
        cp.get_default_memory_pool().free_all_blocks()
        (out / "vectorize.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; 8192 x 4096 float32; "
          "device us per call (floor/time)")
    print(f"{'program':20} {'floor':>7} " + " ".join(f"{n:>16}" for n in IMPLS))
    for name in CASES:
        sel = {r["impl"]: r for r in rows if r["program"] == name}
        print(f"{name:20} {sel['sl.vectorize']['floor_us']:7.1f} " + " ".join(f"{c:>16}" for c in floor_cells(sel, list(IMPLS))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
