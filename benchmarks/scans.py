"""Scans on the GPU: ``cumsum`` along rows, columns and a long 1-d array, and a scan inside a
program (top-p sampling's mask: a softmax's probabilities cumulated and compared), stitchlab
(``sl.jit``; its scans are ``stitchlab/runtime/scan.py``'s passes) against CuPy eager, torch eager
and torch.compile, side by side in one process: device time from CUDA events (median of
``--samples`` held loops after a warm-up), random input, every result checked against NumPy in
float64 (to the order of adds; the top-p mask away from the threshold: 1e-5, bfloat16 2**-6). The top-p cases also
time ``stitchlab_steps``: the same program with the planner switch ``row_scans`` off
(``stitchlab.plan.groups.OPTIONS``), its scan a library step between two kernels, as before
scans joined row kernels; and, at a vocabulary too long for a row in registers (Llama-3's
128,256), ``stitchlab_two_pass``: the kernel that walks its rows in tiles with the sum of exps
in a pass of its own (``schedules.OPTIONS["online_exp_sum"]`` off), as in the other streamed rows,
``stitchlab_forward``: every pass walking its tiles first to last (``reverse_tiles`` off), and
``stitchlab_element_maxima``: the online sums scaled at each element that raises the running
maximum, not once a tile (``group_maxima`` off). Scans down another axis also time
``stitchlab_three_pass``: chunks scanned in three passes (their totals, the totals' running
values, the chunks again) as before the columns kernel's one pass with look-back
(``scan.COLUMNS`` raised past every width). A lone scan along the rows (float32, float64,
bfloat16, int32 into int64; not float16, whose scans keep NumPy's out-of-range results through
the step), a row kernel of its own where there are as many rows as SMs, also times
``stitchlab_scan_step``: the scan kernels' step, as before (``groups.OPTIONS["lone_row_scans"]``
off). The running maximum cases (``cummax_*``:
``maximum.accumulate``, against ``torch.cummax(...).values``; ``drawdown_float32``: ``1 - e /
cummax(e)``, one row kernel in stitchlab) check bit-exact maxima (the drawdown within 1e-6); CuPy's
``maximum.accumulate`` raising ``NotImplementedError`` is recorded as its error.

    python3 benchmarks/scans.py --out /tmp/scans [--samples 15] [--commit C] [--cases top_p_float32,...]

Writes ``scans.json``; the floor is the bytes read and written once over the copy bandwidth
measured in the same run.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # appended: the installed stitchlab (or the GPU machine's shim) stays first
    sys.path.append(str(ROOT))

from benchmarks.impls import _torch_from_host  # noqa: E402
from benchmarks.timing import CupyClock, TorchClock, gpu_run_meta, measure, probe_args, to_host  # noqa: E402

#: name -> (shape, dtype, axis); "top_p" is the mask program, "cummax" a running maximum
#: (NumPy's ``maximum.accumulate``) and "drawdown" ``1 - e / cummax(e)`` of ``e = exp(x / 100)``
#: along the rows (one row kernel), the others one cumsum
CASES = {
    "rows_float32": ((8192, 4096), "float32", 1),
    "rows_float16": ((8192, 4096), "float16", 1),
    "rows_bfloat16": ((8192, 4096), "bfloat16", 1),
    "rows_int32": ((8192, 4096), "int32", 1),
    "columns_float32": ((8192, 4096), "float32", 0),
    "columns_float64": ((8192, 4096), "float64", 0),
    "columns_tall_float32": ((262144, 128), "float32", 0),
    "middle_float32": ((64, 1024, 512), "float32", 1),
    "flat_float32": ((2**25,), "float32", 0),
    "top_p_float32": ((2048, 32000), "float32", 1),
    "top_p_llama3_64": ((64, 128256), "float32", 1),
    "top_p_llama3_512": ((512, 128256), "float32", 1),
    "top_p_bfloat16": ((2048, 32000), "bfloat16", 1),
    "top_p_llama3_512_bfloat16": ((512, 128256), "bfloat16", 1),
    "rows_float64": ((8192, 4096), "float64", 1),
    "rows_short_float32": ((262144, 128), "float32", 1),
    "rows_vocab_float32": ((2048, 32000), "float32", 1),
    "rows_long_float32": ((512, 128256), "float32", 1),
    "rows_few_float32": ((16, 65536), "float32", 1),
    "cummax_rows_float32": ((8192, 4096), "float32", 1),
    "cummax_columns_float32": ((8192, 4096), "float32", 0),
    "cummax_rows_bfloat16": ((8192, 4096), "bfloat16", 1),
    "drawdown_float32": ((8192, 4096), "float32", 1),
}

#: impl -> (planner switches, code generator switches) it runs under; the others under the defaults
VARIANTS: dict[str, tuple[dict[str, bool], dict[str, bool]]] = {
    "stitchlab_steps": ({"row_scans": False}, {}),
    "stitchlab_two_pass": ({}, {"online_exp_sum": False}),
    "stitchlab_forward": ({}, {"reverse_tiles": False}),
    "stitchlab_element_maxima": ({}, {"group_maxima": False}),
    "stitchlab_scan_step": ({"lone_row_scans": False}, {}),
}
#: scans down another axis in three passes (chunk totals, their running totals, the chunks), as
#: before the columns kernel's look-back
THREE_PASS = "stitchlab_three_pass"
#: a lone scan along the rows as a step of the scan kernels (``runtime/scan.py``), as before it was
#: a row kernel of its own (``groups.OPTIONS["lone_row_scans"]`` off)
SCAN_STEP = "stitchlab_scan_step"

#: relative to the running sum of magnitudes: a few roundings of the result's dtype
TOLERANCE = {"float64": 1e-14, "float32": 2e-6, "float16": 2.0**-9, "bfloat16": 2.0**-6, "int32": 0.0}


def top_p(xp: Any, x: Any, p: float = 0.9) -> Any:
    e = xp.exp(x - x.max(axis=1, keepdims=True))
    return xp.cumsum(e / e.sum(axis=1, keepdims=True), axis=1) < p


def top_p_torch(x: Any, p: float = 0.9) -> Any:
    import torch

    return torch.cumsum(torch.softmax(x, dim=1), dim=1) < p


def _data(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    if dtype == "int32":
        return rng.integers(-1000, 1000, shape, dtype=np.int32)
    a = rng.standard_normal(shape, dtype=np.float32)
    if dtype == "bfloat16":
        import ml_dtypes

        return a.astype(ml_dtypes.bfloat16)
    return a.astype(dtype)


def running_max(xp: Any, x: Any, axis: int) -> Any:
    """A running maximum in ``xp`` (stitchlab, CuPy or NumPy): ``maximum.accumulate``."""
    return xp.maximum.accumulate(x, axis=axis)


def running_max_torch(x: Any, axis: int) -> Any:
    import torch

    return torch.cummax(x, dim=axis).values


def drawdown(xp: Any, x: Any) -> Any:
    e = xp.exp(x * 0.01)
    return 1 - e / xp.maximum.accumulate(e, axis=1)


def drawdown_torch(x: Any) -> Any:
    import torch

    e = torch.exp(x * 0.01)
    return 1 - e / torch.cummax(e, dim=1).values


def _checker(name: str, x: np.ndarray, axis: int) -> Any:
    x64 = x.astype(np.float64)
    if name.startswith(("cummax", "drawdown")):  # (a running maximum picks values: exact; the drawdown within rounding)
        want = (running_max(np, x, axis) if name.startswith("cummax") else drawdown(np, x64)).astype(np.float64)

        def check_max(got: Any) -> tuple[bool, str]:
            g = got.float() if hasattr(got, "detach") and str(got.dtype) == "torch.bfloat16" else got
            err = float(np.max(np.abs(to_host(g, np.float64) - want)))
            tol = 0.0 if name.startswith("cummax") else 1e-6
            return err <= tol, f"max abs error {err:.3g} (tolerance {tol:.3g})"
        return check_max
    if name.startswith("top_p"):
        e = np.exp(x64 - x64.max(1, keepdims=True))
        c = np.cumsum(e / e.sum(1, keepdims=True), axis=1)
        # (bfloat16: each exp and running sum rounded to 8 bits, a few of 2**-8 of the sum)
        want, far = c < 0.9, np.abs(c - 0.9) > (2.0**-6 if str(x.dtype) == "bfloat16" else 1e-5)

        def check_mask(got: Any) -> tuple[bool, str]:
            g = to_host(got)
            bad = int(np.count_nonzero((g != want) & far))
            return bad == 0, f"{bad} of {far.sum()} mask entries away from the threshold differ"
        return check_mask
    ref, scale = np.cumsum(x64, axis=axis), np.cumsum(np.abs(x64), axis=axis)
    tol = TOLERANCE[str(x.dtype)]

    def check(got: Any) -> tuple[bool, str]:
        g = got.float() if hasattr(got, "detach") and str(got.dtype) == "torch.bfloat16" else got
        err = float(np.max(np.abs(to_host(g, np.float64) - ref) / (scale + 1e-30)))
        return err <= tol, f"max error / running sum of magnitudes {err:.3g} (tolerance {tol:.3g})"
    return check


@contextlib.contextmanager
def _variant(impl: str) -> Iterator[None]:
    """The switches of :data:`VARIANTS` for ``impl``, restored afterwards (a failure included)."""
    from stitchlab.codegen.schedules import switches
    from stitchlab.plan import groups
    from stitchlab.runtime import scan

    planner, codegen = VARIANTS.get(impl, ({}, {}))
    before, columns = dict(groups.OPTIONS), scan.COLUMNS
    groups.OPTIONS.update(planner)
    if impl == THREE_PASS:
        scan.COLUMNS = sys.maxsize
    try:
        with switches(**codegen):
            yield
    finally:
        groups.OPTIONS.clear()
        groups.OPTIONS.update(before)
        scan.COLUMNS = columns


def main(argv: list[str] | None = None) -> int:
    args = probe_args(__doc__, "scans-results", argv,
                      lambda ap: ap.add_argument("--cases", default=",".join(CASES), help="comma-separated names of CASES"))

    import cupy as cp
    import torch

    import stitchlab as sl
    from stitchlab import runtime

    sl.set_backend("cupy")
    meta, bw = gpu_run_meta(args.commit, args.samples)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    unknown = sorted(set(args.cases.split(",")) - set(CASES))
    if unknown:
        raise SystemExit(f"--cases: no case {unknown}; the cases are {', '.join(CASES)}")
    for name in args.cases.split(","):
        shape, dtype, axis = CASES[name]
        x = _data(shape, dtype)
        xs = sl.asarray(x) if dtype == "bfloat16" else cp.asarray(x)  # (CuPy has no bfloat16)
        xt = _torch_from_host(torch, x).to("cuda")
        check = _checker(name, x, axis)
        result_bytes = (1 if name.startswith("top_p") else x.itemsize if name.startswith(("cummax", "drawdown"))
                        else np.cumsum(np.ones(1, x.dtype)).dtype.itemsize)
        base = {"case": name, "shape": list(shape), "dtype": dtype, "axis": axis,
                "floor_us": (x.nbytes + x.size * result_bytes) / bw * 1e6}
        torch._dynamo.reset()
        if name.startswith("top_p"):
            prog, fns = (lambda u: top_p(sl, u)), {"cupy": lambda u: top_p(cp, u), "torch": top_p_torch,
                                                    "torch_compile": torch.compile(top_p_torch)}
        elif name.startswith("cummax"):
            prog = lambda u, a=axis: running_max(sl, u, a)  # noqa: E731
            fns = {"cupy": lambda u, a=axis: running_max(cp, u, a), "torch": lambda u, a=axis: running_max_torch(u, a),
                   "torch_compile": torch.compile(lambda u, a=axis: running_max_torch(u, a))}
        elif name.startswith("drawdown"):
            prog, fns = (lambda u: drawdown(sl, u)), {"cupy": lambda u: drawdown(cp, u), "torch": drawdown_torch,
                                                       "torch_compile": torch.compile(drawdown_torch)}
        else:
            prog = lambda u, a=axis: sl.cumsum(u, axis=a)  # noqa: E731
            fns = {"cupy": lambda u, a=axis: cp.cumsum(u, axis=a), "torch": lambda u, a=axis: torch.cumsum(u, dim=a),
                   "torch_compile": torch.compile(lambda u, a=axis: torch.cumsum(u, dim=a))}
        fns = {"stitchlab": sl.jit(prog), **fns}
        if name.startswith("top_p"):  # (the scan a library step between kernels, as before it joined the row kernel)
            variants = ["stitchlab_steps"] + (["stitchlab_two_pass", "stitchlab_forward", "stitchlab_element_maxima"] if shape[1] > 32768 else [])
            fns = {"stitchlab": fns["stitchlab"], **{v: sl.jit(lambda u: top_p(sl, u)) for v in variants}, **fns}
        elif axis != len(shape) - 1:
            fns = {"stitchlab": fns["stitchlab"], THREE_PASS: sl.jit(prog), **fns}
        elif name.startswith(("rows", "cummax")) and dtype != "float16":  # (a lone scan a row kernel can hold)
            fns = {"stitchlab": fns["stitchlab"], SCAN_STEP: sl.jit(prog), **fns}
        for impl, fn in fns.items():
            row = dict(base, impl=impl)
            torch_side = impl.startswith("torch")
            with _variant(impl):
                runtime.current().clear_cache()
                if impl.startswith("stitchlab"):
                    row["kernels"] = [str(k.schedule) for k in sl.explain(prog(sl.asarray(xs))).kernels]
                elif impl == "cupy" and dtype == "bfloat16":
                    rows.append(dict(row, error="CuPy has no bfloat16"))
                    continue
                elif impl == "cupy" and name.startswith(("cummax", "drawdown")):
                    try:
                        fn(xs)
                    except NotImplementedError as exc:  # (CuPy's maximum.accumulate)
                        rows.append(dict(row, error=f"CuPy: {exc}"))
                        continue
                arg = xt if torch_side else xs
                rows.append(measure(row, lambda f=fn, a=arg: f(a), TorchClock() if torch_side else CupyClock(), args.samples, check))
        cp.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()
        (out / "scans.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"{meta['date']} {meta['gpu']} commit {args.commit}; copy {bw / 1e12:.3f} TB/s")
    for r in rows:
        dev = r.get("device", {}).get("median_us")
        floor = f"{r['floor_us'] / dev:.2f}" if dev else "-"
        print(f"{r['case']:16} {r['impl']:14} device {dev if dev is None else round(dev, 1)} us (floor {r['floor_us']:.1f}, "
              f"floor/time {floor}) ok {r.get('ok')} {r.get('check', '')} {r.get('error', '')} {r.get('kernels', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
