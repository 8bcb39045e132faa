"""1-d convolution on the GPU: ``sl.convolve`` (a filter of at most ``LAZY_FILTER`` taps is
written as shifted views summed in one kernel; a longer one runs CuPy's ``convolve``) against
CuPy's ``convolve``, torch's ``conv1d`` and torch.compile of it, side by side in one process:
device time from CUDA events (median of ``--samples`` loops after a warm-up), random inputs,
every result checked against NumPy's float64 ``convolve`` of the same float32 values; the floor
is the bytes read and written over the copy bandwidth measured in the same run.

    python3 benchmarks/convolve.py --out /tmp/conv [--samples 15] [--commit C]

Programs over n = 2**24 float32 values with filters of 3, 9, 31 and 129 taps: ``valid`` and
``same`` (NumPy's modes) and ``valid_tanh`` (``tanh(convolve(x, w, "valid")) + 1``, the
convolution fused with its neighbours). torch runs with ``torch.backends.cudnn.allow_tf32 =
False`` (float32 products, as NumPy's). Writes ``convolve.json``.
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

N = 1 << 24
TAPS = (3, 9, 31, 129)
PROGRAMS = ("valid", "same", "valid_tanh")
IMPLS = ("stitchlab", "cupy", "torch", "torch_compile")


def _impls(program: str, x_cp: Any, w_cp: Any, x_t: Any, w_t: Any) -> dict[str, tuple[Callable[[], Any], Any]]:
    """name -> (call, clock); every call returns a 1-d device array."""
    import cupy as cp
    import torch

    import stitchlab as sl
    from stitchlab.frontend.manipulation import LAZY_FILTER

    mode = "same" if program == "same" else "valid"
    tail = program == "valid_tanh"
    m = int(w_t.shape[0])

    def sl_program(x: Any, w: Any) -> Any:
        y = sl.convolve(x, w, mode)
        return sl.tanh(y) + 1 if tail else y

    def cp_program() -> Any:
        y = cp.convolve(x_cp, w_cp, mode)
        return cp.tanh(y) + 1 if tail else y

    kernel = torch.flip(w_t, (0,)).view(1, 1, m)  # conv1d correlates: the flipped filter convolves

    def torch_program(x: Any) -> Any:
        y = torch.nn.functional.conv1d(x.view(1, 1, -1), kernel, padding=(m - 1) // 2 if mode == "same" else 0).view(-1)
        return torch.tanh(y) + 1 if tail else y

    if m <= LAZY_FILTER:
        jitted = sl.jit(sl_program)
        sl_call = lambda: jitted(x_cp, w_cp)  # noqa: E731
    else:  # a longer filter is evaluated (CuPy's convolve), which sl.jit cannot trace
        sl_call = lambda: sl.compute(sl_program(sl.asarray(x_cp), sl.asarray(w_cp)))[0]  # noqa: E731
    torch._dynamo.reset()
    compiled = torch.compile(torch_program)
    return {
        "stitchlab": (sl_call, CupyClock()),
        "cupy": (cp_program, CupyClock()),
        "torch": (lambda: torch_program(x_t), TorchClock()),
        "torch_compile": (lambda: compiled(x_t), TorchClock()),
    }


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "convolve-results", argv)

    import cupy as cp
    import torch

    import stitchlab as sl
    from stitchlab.frontend.manipulation import LAZY_FILTER

    sl.set_backend("cupy")
    torch.backends.cudnn.allow_tf32 = False
    meta, bw = gpu_run_meta(args.commit, args.samples, n=N, taps=list(TAPS), lazy_filter=LAZY_FILTER)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(N, dtype=np.float32)
    x_cp, x_t = cp.asarray(x), torch.as_tensor(x, device="cuda")
    rows: list[dict[str, Any]] = []
    for m in TAPS:
        w = (rng.standard_normal(m, dtype=np.float32) / np.sqrt(m)).astype(np.float32)
        w_cp, w_t = cp.asarray(w), torch.as_tensor(w, device="cuda")
        for program in PROGRAMS:
            mode = "same" if program == "same" else "valid"
            ref = np.convolve(x.astype(np.float64), w.astype(np.float64), mode)
            if program == "valid_tanh":
                ref = np.tanh(ref) + 1
            # float32 sums of m products: within m float32 roundings of sum |w| |x|
            tol = 4 * m * np.finfo(np.float32).eps * float(np.abs(w).sum()) * float(np.abs(x).max())
            floor_us = (N + ref.size) * 4 / bw * 1e6
            for impl, (call, clock) in _impls(program, x_cp, w_cp, x_t, w_t).items():
                def check(out: Any, ref: np.ndarray = ref, tol: float = tol) -> tuple[bool, str]:
                    got = to_host(out, np.float64)
                    err = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
                    return bool(err <= tol), f"shape {got.shape}, max error {err:.3g} (tolerance {tol:.3g})"

                row = {"taps": m, "program": program, "impl": impl, "floor_us": floor_us}
                rows.append(measure(row, call, clock, args.samples, check))
            cp.get_default_memory_pool().free_all_blocks()
            (out / "convolve.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s; n = {N} float32; "
          "device us per call (floor/time)")
    print(f"{'taps':>4} {'program':10} {'floor':>6} " + " ".join(f"{n:>17}" for n in IMPLS))
    for m in TAPS:
        for program in PROGRAMS:
            sel = {r["impl"]: r for r in rows if r["taps"] == m and r["program"] == program}
            cells = floor_cells(sel, list(IMPLS))
            floor = next(iter(sel.values()))["floor_us"]
            print(f"{m:4} {program:10} {floor:6.1f} " + " ".join(f"{c:>17}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
