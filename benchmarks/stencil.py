"""2-d stencils over padded and rolled arrays, and a join, on the GPU: ``sl.pad``, ``sl.roll`` and
``sl.concatenate`` of a few arrays are index maps fused into the kernel that reads them, against the same NumPy code on CuPy, torch eager
(``F.pad``, ``torch.roll``) and torch.compile of it, side by side in one process: device time
from CUDA events (median of ``--samples`` loops after a warm-up), random inputs, every result
checked against NumPy's float64 result of the same float32 values; the floor is the bytes read and
written over the copy bandwidth measured in the same run.

    python3 benchmarks/stencil.py --out /tmp/stencil [--samples 15] [--commit C]

Programs over 8192 x 4096 float32: ``laplace_reflect`` (the 5-point Laplacian of
``pad(x, 1, "reflect")``), ``laplace_roll`` (the periodic one, four ``roll``s), ``blur_zero``
(the 3 x 3 mean of ``pad(x, 1)``, zeros outside), ``rope`` (rotary embeddings' ``x * cos +
rotate_half(x) * sin``, ``rotate_half`` a ``concatenate``; ``cos`` and ``sin`` given, of ``x``'s
shape). Writes ``stencil.json``.
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
PROGRAMS = ("laplace_reflect", "laplace_roll", "blur_zero", "rope")
#: arrays of x's size each program reads and writes (the floor's bytes)
ARRAYS = {"laplace_reflect": 2, "laplace_roll": 2, "blur_zero": 2, "rope": 4}
IMPLS = ("stitchlab", "cupy", "torch", "torch_compile")


def program(name: str, m: Any, x: Any, cos: Any = None, sin: Any = None) -> Any:
    """``name`` written with the NumPy-like module ``m`` (stitchlab, CuPy or NumPy)."""
    if name == "rope":
        half = x.shape[-1] // 2
        return x * cos + m.concatenate([-x[:, half:], x[:, :half]], axis=-1) * sin
    if name == "laplace_reflect":
        p = m.pad(x, 1, mode="reflect")
        return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * x
    if name == "laplace_roll":
        return m.roll(x, 1, 0) + m.roll(x, -1, 0) + m.roll(x, 1, 1) + m.roll(x, -1, 1) - 4 * x
    p = m.pad(x, 1)
    rows, cols = x.shape
    return sum(p[i:i + rows, j:j + cols] for i in range(3) for j in range(3)) / 9


def torch_program(name: str, x: Any, cos: Any = None, sin: Any = None) -> Any:
    import torch
    import torch.nn.functional as F  # noqa: N812

    if name == "rope":
        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[:, half:], x[:, :half]), dim=-1) * sin
    if name == "laplace_reflect":
        p = F.pad(x[None, None], (1, 1, 1, 1), mode="reflect")[0, 0]
        return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * x
    if name == "laplace_roll":
        return torch.roll(x, 1, 0) + torch.roll(x, -1, 0) + torch.roll(x, 1, 1) + torch.roll(x, -1, 1) - 4 * x
    p = F.pad(x, (1, 1, 1, 1))
    rows, cols = x.shape
    return sum(p[i:i + rows, j:j + cols] for i in range(3) for j in range(3)) / 9


def _impls(name: str, xs_cp: list[Any], xs_t: list[Any]) -> dict[str, tuple[Callable[[], Any], Any]]:
    import cupy as cp
    import torch

    import stitchlab as sl

    jitted = sl.jit(lambda *xs: program(name, sl, *xs))
    torch._dynamo.reset()
    compiled = torch.compile(lambda *xs: torch_program(name, *xs))
    return {
        "stitchlab": (lambda: jitted(*xs_cp), CupyClock()),
        "cupy": (lambda: program(name, cp, *xs_cp), CupyClock()),
        "torch": (lambda: torch_program(name, *xs_t), TorchClock()),
        "torch_compile": (lambda: compiled(*xs_t), TorchClock()),
    }


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "stencil-results", argv)

    import cupy as cp
    import torch

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples, shape=list(SHAPE))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(SHAPE, dtype=np.float32)
    angle = rng.random(SHAPE, dtype=np.float32) * 6.0
    host = [x, np.cos(angle), np.sin(angle)]
    rows: list[dict[str, Any]] = []
    for name in PROGRAMS:
        inputs = host if name == "rope" else host[:1]
        xs_cp, xs_t = [cp.asarray(a) for a in inputs], [torch.as_tensor(a, device="cuda") for a in inputs]
        floor_us = ARRAYS[name] * x.nbytes / bw * 1e6
        ref = program(name, np, *[a.astype(np.float64) for a in inputs])
        tol = 16 * np.finfo(np.float32).eps * float(np.abs(x).max())  # a few float32 roundings of sums of 5 to 9 values

        def check(got: Any, ref: np.ndarray = ref, tol: float = tol) -> tuple[bool, str]:
            g = to_host(got, np.float64)
            err = float(np.max(np.abs(g - ref))) if g.shape == ref.shape else float("inf")
            return bool(err <= tol), f"shape {g.shape}, max error {err:.3g} (tolerance {tol:.3g})"

        for impl, (call, clock) in _impls(name, xs_cp, xs_t).items():
            rows.append(measure({"program": name, "impl": impl, "floor_us": floor_us}, call, clock, args.samples, check))
        cp.get_default_memory_pool().free_all_blocks()
        (out / "stencil.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; {SHAPE[0]} x {SHAPE[1]} float32; "
          "device us per call (floor/time)")
    print(f"{'program':16} {'floor':>6} " + " ".join(f"{n:>17}" for n in IMPLS))
    for name in PROGRAMS:
        sel = {r["impl"]: r for r in rows if r["program"] == name}
        floor_us = next(iter(sel.values()))["floor_us"]
        print(f"{name:16} {floor_us:6.1f} " + " ".join(f"{c:>17}" for c in floor_cells(sel, list(IMPLS))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
