"""A notebook's loop over the rows and batches of an evaluated array, on the GPU: wall time of the
whole loop the first time (kernels compiled into an empty registry) and per step once warm, for
stitchlab (rows and batches as views of the buffer, one kernel per loop body), stitchlab with every
row an index map of its own (what it did before views: the position a constant of each kernel,
emulated here by turning ``build._buffer_view`` off), CuPy eager and torch eager, side by side in
one process on random data (warm loops interleaved, median of ``--warm-reps``); every first loop's
results checked against NumPy's float64 results.

    python3 benchmarks/row_loop.py --out /tmp/rows [--steps 64] [--commit C]

Loops over a (4096, 1024) float32 array: ``row_softmax_max`` (``float(max(softmax(x[i])))`` per
row: one value read back each step) and ``batch_layernorm`` (``layernorm(x[b:b + 64])`` per batch
of 64 rows, kept on the device, one synchronize at the end) and ``row_chain`` (``y[i] = y[i - 1]
* 0.5 + y[i]`` over 64 rows of a copy, read back at the end: stitchlab evaluates ``y`` every 16
assignments). Writes ``row_loop.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # appended: the installed stitchlab (or the GPU machine's shim) stays first
    sys.path.append(str(ROOT))

SHAPE, BATCH = (4096, 1024), 64


def row_softmax_max(m: Any, r: Any) -> Any:
    e = m.exp(r - r.max())
    return (e / e.sum()).max()


def batch_layernorm(m: Any, b: Any) -> Any:
    d = b - m.mean(b, axis=-1, keepdims=True)
    return d / m.sqrt(m.mean(d * d, axis=-1, keepdims=True) + 1e-5)


def loops(impl: str, x: Any, steps: int, start: int) -> dict[str, Callable[[], list[Any]]]:
    """The three loops over rows ``start ... start + steps`` (batches from row ``start``) for ``impl``."""
    import cupy as cp

    if impl.startswith("stitchlab"):
        import stitchlab as m

        def evaluate(v: Any) -> Any:
            return m.compute(v)[0]

        fresh, host = (lambda v: v * 1), (lambda v: v.get())  # (v * 1: a new lazy array)
    else:
        m = cp if impl == "cupy" else _torch_ns()

        def evaluate(v: Any) -> Any:
            return v  # eager: computed already

        fresh = (lambda v: v.copy()) if impl == "cupy" else (lambda v: v.clone())
        host = (lambda v: v.get()) if impl == "cupy" else (lambda v: v.cpu().numpy())

    def rows() -> list[Any]:
        return [float(row_softmax_max(m, x[i])) for i in range(start, start + steps)]

    def batches() -> list[Any]:
        out = [evaluate(batch_layernorm(m, x[b:b + BATCH])) for b in range(start, start + steps)]
        cp.cuda.runtime.deviceSynchronize()
        return out

    def chain() -> list[Any]:
        y = fresh(x[start:start + steps])
        for i in range(1, steps):
            y[i] = y[i - 1] * 0.5 + y[i]
        return [host(y)]

    return {"row_softmax_max": rows, "batch_layernorm": batches, "row_chain": chain}


def _torch_ns() -> Any:
    import torch

    class T:
        exp, sqrt = staticmethod(torch.exp), staticmethod(torch.sqrt)

        @staticmethod
        def mean(b: Any, axis: int, keepdims: bool) -> Any:
            return torch.mean(b, dim=axis, keepdim=keepdims)

    return T


def _check(name: str, got: list[Any], a: np.ndarray, start: int) -> bool:
    w = a.astype(np.float64)
    for k, g in enumerate(got):
        if name == "row_softmax_max":
            want = row_softmax_max(np, w[start + k])
            ok = abs(g - want) <= 1e-5 * abs(want)
        elif name == "row_chain":
            want = a[start:start + g.shape[0]].copy()
            for i in range(1, want.shape[0]):
                want[i] = want[i - 1] * np.float32(0.5) + want[i]
            ok = np.allclose(g, want, rtol=1e-5, atol=1e-5)
        else:
            want = batch_layernorm(np, w[start + k:start + k + BATCH])
            g = g.get() if hasattr(g, "get") else g.cpu().numpy() if hasattr(g, "cpu") else np.asarray(g)
            ok = np.allclose(g, want, rtol=1e-4, atol=1e-4)
        if not ok:
            return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--warm-reps", type=int, default=9)
    ap.add_argument("--commit", default=os.environ.get("STITCHLAB_COMMIT", "unknown"))
    args = ap.parse_args()
    os.environ["STITCHLAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="sl-rows-")  # an empty registry
    import cupy as cp
    import torch

    import stitchlab as sl
    from benchmarks.timing import gpu_run_meta
    from stitchlab.frontend import build

    sl.set_backend("cupy")
    meta, _ = gpu_run_meta(args.commit, args.warm_reps, shape=list(SHAPE), steps=args.steps, batch=BATCH)
    a = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    xs = {"stitchlab": sl.asarray(cp.asarray(a)), "cupy": cp.asarray(a), "torch": torch.as_tensor(a, device="cuda")}
    xs["stitchlab_index_maps"] = xs["stitchlab"]
    views = build._buffer_view
    results: dict[str, dict[str, Any]] = {}
    impls = ("stitchlab", "stitchlab_index_maps", "cupy", "torch")
    # each implementation's first loop on rows of its own (index maps: kernels of their own positions)
    starts = {"stitchlab": 0, "stitchlab_index_maps": 1024, "cupy": 2048, "torch": 3000}
    bodies = {impl: loops(impl, xs[impl], args.steps, starts[impl]) for impl in impls}

    def use(impl: str) -> None:
        build._buffer_view = views if impl != "stitchlab_index_maps" else (lambda *a: None)

    for impl in impls:
        use(impl)
        for name, loop in bodies[impl].items():
            before = sl.stats()["nvrtc_compiles"]
            t0 = time.perf_counter()
            got = loop()
            first = time.perf_counter() - t0
            results.setdefault(name, {})[impl] = {
                "first_loop_s": first, "nvrtc_compiles": sl.stats()["nvrtc_compiles"] - before, "warm": [],
                "ok": _check(name, got, a, starts[impl])}
    for _ in range(args.warm_reps):  # warm loops interleaved: each implementation in turn
        for impl in impls:
            use(impl)
            for name, loop in bodies[impl].items():
                t0 = time.perf_counter()
                loop()
                results[name][impl]["warm"].append((time.perf_counter() - t0) / args.steps * 1e6)
    for name, row in results.items():
        for impl, r in row.items():
            warm = r.pop("warm")
            r.update(warm_step_us=statistics.median(warm), warm_step_us_min=min(warm))
            print(f"{name:16s} {impl:22s} first loop {r['first_loop_s']:7.3f} s ({r['nvrtc_compiles']:3d} compiles), "
                  f"warm {r['warm_step_us']:8.1f} us/step (min {r['warm_step_us_min']:.1f}), ok={r['ok']}", flush=True)
    build._buffer_view = views
    pathlib.Path(args.out).mkdir(parents=True, exist_ok=True)
    (pathlib.Path(args.out) / "row_loop.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))


if __name__ == "__main__":
    main()
