"""``ufunc.at`` on the GPU (repeated positions accumulate): ``sl.jit`` functions that copy an
input and call ``np.add.at`` / ``np.maximum.at`` into the copy, against CuPy's ``ufunc.at`` and
torch's ``index_add_`` / ``index_reduce_`` (atomics: their float sums come in an unspecified
order; CuPy and torch always get the positions on the device), side by side in one process: device time from CUDA events (median of ``--samples`` loops
after a warm-up), random data; every result checked against NumPy's ``ufunc.at`` (``exact``:
bit for bit; the atomics' float sums within ``rtol=1e-4``, and the cell says how many elements
differ). The floor is the bytes the program must move (the copy's read and write, the values and
the positions) over the copy bandwidth measured in the same run.

    python3 benchmarks/ufunc_at.py --out /tmp/at [--samples 15] [--commit C]

Writes ``ufunc_at.json`` and prints a table.
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

IMPLS = ("stitchlab", "cupy", "torch")
RNG = np.random.default_rng(11)


def _cases() -> dict[str, dict[str, Any]]:
    """name -> the table, the positions, the values, NumPy's ufunc and torch's in-place call."""
    table = RNG.standard_normal((32768, 1024)).astype(np.float32)
    ids = RNG.integers(0, 32768, size=16384)  # about 1 in 4 rows given twice or more
    grads = RNG.standard_normal((16384, 1024)).astype(np.float32)
    hist_v = RNG.standard_normal(1 << 24).astype(np.float32)
    bins = np.clip(((hist_v + 4) * 128).astype(np.int64), 0, 1023)  # 16.8 M values, 1024 bins
    counts = np.zeros(1 << 16, np.int32)
    keys = RNG.integers(0, 1 << 16, size=1 << 22)
    return {
        "embedding rows: add.at(t, ids, g)": dict(x=table, idx=ids, v=grads, ufunc="add", torch="index_add_"),
        "the same, ids from the host": dict(x=table, idx=ids, v=grads, ufunc="add", torch="index_add_", host=True),
        "histogram: add.at(h, bins, w) f32": dict(x=np.zeros(1024, np.float32), idx=bins, v=hist_v, ufunc="add",
                                                  torch="index_add_"),
        "counts: add.at(c, keys, 1) int32": dict(x=counts, idx=keys, v=np.ones(1 << 22, np.int32), ufunc="add",
                                                 torch="index_add_"),
        "row max: maximum.at(t, ids, g)": dict(x=table, idx=ids, v=grads, ufunc="maximum", torch="index_reduce_"),
    }


def _calls(c: dict[str, Any]) -> dict[str, tuple[Callable[[], Any], Any]]:
    """stitchlab (``sl.jit``), CuPy and torch calls of one case, each on a copy of the table."""
    import cupy as cp
    import torch

    import stitchlab as sl

    x_cp, i_cp, v_cp = cp.asarray(c["x"]), cp.asarray(c["idx"]), cp.asarray(c["v"])
    x_t, i_t, v_t = (torch.as_tensor(a, device="cuda") for a in (c["x"], c["idx"], c["v"]))
    ufunc, cp_ufunc = getattr(np, c["ufunc"]), getattr(cp, c["ufunc"])

    def program(a: Any, i: Any, w: Any) -> Any:
        y = a.copy()
        ufunc.at(y, i, w)
        return y

    def cupy_call() -> Any:
        y = x_cp.copy()
        cp_ufunc.at(y, i_cp, v_cp)
        return y

    def torch_call() -> Any:
        y = x_t.clone()
        if c["torch"] == "index_reduce_":
            return y.index_reduce_(0, i_t, v_t, "amax")
        return y.index_add_(0, i_t, v_t)

    if c.get("host"):  # (positions known when traced: checked then, nothing read back at a call)
        jitted_host = sl.jit(lambda a, w: program(a, c["idx"], w))
        ours: Callable[[], Any] = lambda: jitted_host(x_cp, v_cp)  # noqa: E731
    else:
        jitted = sl.jit(program)
        ours = lambda: jitted(x_cp, i_cp, v_cp)  # noqa: E731
    return {"stitchlab": (ours, CupyClock()), "cupy": (cupy_call, CupyClock()),
            "torch": (torch_call, TorchClock())}


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "ufunc-at-results", argv)

    import cupy as cp

    import stitchlab as sl

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    cases = _cases()
    for name, c in cases.items():
        want = c["x"].copy()
        getattr(np, c["ufunc"]).at(want, c["idx"], c["v"])
        floor_us = (2 * c["x"].nbytes + c["v"].nbytes + c["idx"].nbytes) / bw * 1e6
        for impl, (call, clock) in _calls(c).items():
            def check(got_: Any, want: np.ndarray = want) -> tuple[bool, str]:
                got = to_host(got_)
                differ = int(np.count_nonzero(got != want))
                close = bool(got.dtype == want.dtype and np.allclose(got, want, rtol=1e-4, atol=1e-4))
                return close, f"{got.dtype}{got.shape}: {differ} of {got.size} differ from NumPy's bits"

            row = {"program": name, "impl": impl, "floor_us": floor_us}
            rows.append(measure(row, call, clock, args.samples, check))
        cp.get_default_memory_pool().free_all_blocks()
        (out / "ufunc_at.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; device us per call "
          "(floor/time); [n]: elements that differ from NumPy's bits")
    print(f"{'program':36} {'floor':>7} " + " ".join(f"{n:>22}" for n in IMPLS))
    for name in cases:
        sel = {r["impl"]: r for r in rows if r["program"] == name}
        cells = floor_cells(sel, list(IMPLS))
        diffs = [f"[{r['check'].split(': ')[1].split(' ')[0]}]" if "check" in r else "" for r in (sel[i] for i in IMPLS)]
        print(f"{name:36} {sel['stitchlab']['floor_us']:7.1f} " + " ".join(f"{c + d:>22}" for c, d in zip(cells, diffs, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
