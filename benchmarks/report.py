"""Turn a benchmark results JSON into the markdown section for docs/performance.md.

    python3 benchmarks/report.py gpu-results/results.json            # markdown to stdout
    python3 benchmarks/report.py gpu-results/results.json --out sec.md [--png chart.png]

Each table carries the run's date, hardware, commit and command under it. The targets of issue 9
are evaluated from the same run; a missed target says by how much.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

IMPL_TITLES = {
    "stitchlab": "stitchlab",
    "stitchlab_eager": "stitchlab eager",
    "cupy": "CuPy eager",
    "cupy_fuse": "cupy.fuse",
    "torch": "torch eager",
    "torch_compile": "torch.compile",
    "numpy": "NumPy",
}
ROW_TARGET_WORKLOADS = ("softmax", "logsumexp", "colnorm")
SIZE_TITLES = {"large": "8192×4096", "small": "64×512", "tiny": "16×64"}


# --- helpers ------------------------------------------------------------------------------------
def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _dev(rec: dict[str, Any], impl: str) -> float | None:
    r = rec["impls"].get(impl, {})
    if not r.get("ok"):
        return None
    return r.get("device", {}).get("median_us")


def _lat(rec: dict[str, Any], impl: str) -> float | None:
    r = rec["impls"].get(impl, {})
    if not r.get("ok"):
        return None
    return r.get("latency", {}).get("median_us")


def _cases(results: dict[str, Any], size: str, dtype: str) -> list[dict[str, Any]]:
    return [c for c in results.get("cases", []) if c["size"] == size and c["dtype"] == dtype]


def provenance(results: dict[str, Any]) -> str:
    m = results["meta"]
    hw = m.get("hardware", {})
    gpu = hw.get("gpu", "?")
    return f"{m.get('date')}, {gpu}, commit `{m.get('commit')}`, `{m.get('command')}`"


def _status(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "**missed**")


# --- targets ------------------------------------------------------------------------------------
def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 9's targets, evaluated on this run. Each: name, bound, measured, ok (None: n/a), note."""
    out: list[dict[str, Any]] = []
    for dtype in results["meta"].get("dtypes", []):
        cases = _cases(results, "large", dtype)
        if not cases:
            continue
        tag = f"large {dtype}"
        ratios = {c["workload"]: (_dev(c, "stitchlab"), _dev(c, "torch_compile")) for c in cases}
        both = {w: s / t for w, (s, t) in ratios.items() if s and t}
        if both:
            worst = max(both, key=both.get)
            missed = {w: r for w, r in both.items() if r > 1.0}
            out.append({
                "name": f"{tag}: stitchlab time ≤ torch.compile on every workload",
                "bound": "ratio ≤ 1.00 each",
                "measured": f"worst {worst} {both[worst]:.3f}×; {len(both) - len(missed)}/{len(both)} within",
                "ok": not missed,
                "note": ("missed on " + ", ".join(f"{w} ({r:.3f}× torch.compile's time)" for w, r in
                                                  sorted(missed.items(), key=lambda kv: -kv[1])))
                if missed else "",
            })
        fr = [c["floor_us"] / s for c in cases if (s := _dev(c, "stitchlab"))]
        g = _geomean(fr)
        if g is not None:
            out.append({"name": f"{tag}: geometric mean of floor/time (stitchlab)", "bound": "≥ 0.90",
                        "measured": f"{g:.3f} over {len(fr)} workloads", "ok": g >= 0.90,
                        "note": "" if g >= 0.90 else f"missed by {0.90 / g:.2f}× (reaches {g / 0.90:.0%} of the bound)"})
        for w in ROW_TARGET_WORKLOADS:
            if w in both:
                sp = 1.0 / both[w]
                out.append({"name": f"{tag}: {w} ≥ 1.3× faster than torch.compile", "bound": "speed-up ≥ 1.30",
                            "measured": f"{sp:.2f}×", "ok": sp >= 1.3,
                            "note": "" if sp >= 1.3 else f"missed: {sp:.2f}× vs 1.30× (needs {1.3 / sp:.2f}× more)"})
        sp_cupy = [t / s for c in cases if (s := _dev(c, "stitchlab")) and (t := _dev(c, "cupy"))]
        g = _geomean(sp_cupy)
        if g is not None:
            out.append({"name": f"{tag}: ≥ 8× faster than CuPy eager (geometric mean)", "bound": "≥ 8.0×",
                        "measured": f"{g:.2f}× over {len(sp_cupy)} workloads", "ok": g >= 8.0,
                        "note": "" if g >= 8.0 else f"missed: {g:.2f}× vs 8× (needs {8.0 / g:.2f}× more)"})
    lc = results.get("latency_compare") or {}
    if "ratio_stitchlab_to_raw" in lc:
        r = lc["ratio_stitchlab_to_raw"]
        k = lc.get("kernels_stitchlab", {}).get("kernels", "n/a")
        out.append({"name": "small: cached one-kernel sl.jit call ≤ 1.3× bare RawKernel launch + allocation",
                    "bound": "≤ 1.30×", "measured": f"{r:.2f}× (stitchlab plan kernels: {k})", "ok": r <= 1.3,
                    "note": "" if r <= 1.3 else f"missed: {r:.2f}× vs 1.30× ({r / 1.3:.2f}× over the bound)"})
    su = results.get("startup") or {}
    for phase, bound, key, label in (("cold", 300.0, "compile_ms_per_kernel", "cold compile ≤ 300 ms per kernel"),
                                     ("warm", 5.0, "start_ms_per_kernel", "warm start ≤ 5 ms per kernel")):
        wl = (su.get(phase) or {}).get("workloads", {})
        vals = {w: r[key] for w, r in wl.items() if isinstance(r.get(key), (int, float))}
        if vals:
            worst = max(vals, key=vals.get)
            ok = vals[worst] <= bound
            out.append({"name": label, "bound": f"≤ {bound:g} ms", "measured": f"worst {worst} {vals[worst]:.1f} ms",
                        "ok": ok, "note": "" if ok else f"missed: {vals[worst] / bound:.2f}× the bound"})
        elif wl:
            out.append({"name": label, "bound": f"≤ {bound:g} ms", "measured": "n/a", "ok": None,
                        "note": "no NVRTC compiles / no kernel count (stitchlab has no compiler yet)"})
    wl = (su.get("cold") or {}).get("workloads", {})
    if wl and all("counters_new_batch" in r for r in wl.values()):
        n = {w: r["counters_new_batch"].get("nvrtc_compiles", 0) for w, r in wl.items()}
        bad = {w: k for w, k in n.items() if k}
        out.append({"name": "a new batch size (rows doubled) compiles nothing", "bound": "0 NVRTC compiles",
                    "measured": f"{sum(n.values())} over {len(n)} workloads", "ok": not bad,
                    "note": ", ".join(f"{w}: {k}" for w, k in bad.items())})
    wl = (su.get("warm") or {}).get("workloads", {})
    if wl:
        n = sum(r["counters_first_call"].get("nvrtc_compiles", 0) for r in wl.values())
        out.append({"name": "warm start: zero NVRTC compiles", "bound": "0", "measured": str(n), "ok": n == 0,
                    "note": "" if n == 0 else f"{n} compiles in the warm process"})
    return out


# --- markdown -----------------------------------------------------------------------------------
def _cell_device(rec: dict[str, Any], impl: str, notes: list[str]) -> str:
    r = rec["impls"].get(impl)
    if r is None:
        return "—"
    if r.get("error"):
        notes.append(f"{rec['workload']} {rec['size']} {rec['dtype']}, {IMPL_TITLES.get(impl, impl)}: {r['error'].splitlines()[0][:300]}")
        return f"error [{len(notes)}]"
    t = r.get("device", {}).get("median_us")
    cell = f"{t:,.1f} ({rec['floor_us'] / t:.2f})" if t else "—"
    if r.get("device", {}).get("hold_refused"):
        notes.append(f"{rec['workload']} {rec['size']} {rec['dtype']}, {IMPL_TITLES.get(impl, impl)}: timed in plain "
                     f"loops, not held: {r['device']['hold_refused']}")
        cell = f"{cell} [{len(notes)}]"
    late = r.get("device", {}).get("held_loops_timed_out")
    if late:
        notes.append(f"{rec['workload']} {rec['size']} {rec['dtype']}, {IMPL_TITLES.get(impl, impl)}: the hold ran out "
                     f"before {late} of {r['device']['samples']} loops were queued (partly timed as the host queued them)")
        cell = f"{cell} [{len(notes)}]"
    fallbacks = r.get("stats_first_call", {}).get("fallbacks", 0)
    if fallbacks:
        notes.append(f"{rec['workload']} {rec['size']} {rec['dtype']}, stitchlab: {fallbacks} fused group(s) "
                     "fell back to unfused execution (a kernel failed to build)")
        cell = f"{cell} fallback [{len(notes)}]"
    if not r.get("ok"):
        notes.append(f"{rec['workload']} {rec['size']} {rec['dtype']}, {IMPL_TITLES.get(impl, impl)}: wrong result, "
                     f"rel. error {r.get('rel_err')} > {r.get('tol_rel')} {r.get('check', '')}")
        cell = f"{cell} WRONG [{len(notes)}]"
    return cell


def _cell_unheld(rec: dict[str, Any], impl: str) -> str:
    r = rec["impls"].get(impl) or {}
    t, held = r.get("device_unheld", {}).get("median_us"), _dev(rec, impl)
    return f"{t:,.1f} ({t / held:.2f})" if t and held else "—"


def _cell_latency(rec: dict[str, Any], impl: str) -> str:
    r = rec["impls"].get(impl)
    if r is None or r.get("error"):
        return "—" if r is None else "error"
    lat = r.get("latency", {})
    if not lat:
        return "—"
    cell = f"{lat['median_us']:,.1f} / {lat['pipelined_us']:,.1f}"
    return cell if r.get("ok") else cell + " WRONG"


def markdown(results: dict[str, Any]) -> str:
    m = results["meta"]
    hw = m.get("hardware", {})
    impls = m.get("impls", [])
    prov = provenance(results)
    bw = results.get("copy_bandwidth", {})
    lines = [f"## Benchmark run {m.get('date')} ({m.get('mode')})", ""]
    lines += [
        f"- Date: {m.get('date')}",
        f"- Hardware: {hw.get('gpu')}" + (f", {hw.get('sm_count')} SMs, L2 {hw.get('l2_bytes', 0) / 2**20:.0f} MiB"
                                          if hw.get("sm_count") else "") + f"; host {hw.get('cpu')}",
    ]
    if hw.get("nvidia_smi"):
        lines.append("- nvidia-smi: `" + hw["nvidia_smi"].replace("\n", " | ") + "`")
    lines += [
        f"- Software: python {hw.get('python')}, numpy {hw.get('numpy')}, cupy {hw.get('cupy', '—')}, "
        f"torch {hw.get('torch')}, stitchlab {hw.get('stitchlab')} (backend `{hw.get('stitchlab_backend')}`, "
        f"sl.explain {'present' if hw.get('stitchlab_has_explain') else 'absent: no stitching compiler yet, the cupy backend interprets op by op'})",
        f"- Commit: `{m.get('commit')}`",
        f"- Command: `{m.get('command')}`",
        f"- Copy bandwidth (the floor's denominator): {bw.get('bytes_per_s', 0) / 1e12:.3f} TB/s — {bw.get('method', '')}",
        f"- Timing: {m.get('timing')}",
        f"- Correctness: every implementation checked in the same run against a float64 NumPy reference; "
        f"relative L2 error tolerance {m.get('tolerance_rel_l2')}",
        "",
    ]
    tg = targets(results)
    if tg:
        lines += ["### Targets (issue 9)", "", "| target | bound | measured | status | by how much |",
                  "| --- | --- | --- | --- | --- |"]
        for t in tg:
            lines.append(f"| {t['name']} | {t['bound']} | {t['measured']} | {_status(t['ok'])} | {t['note']} |")
        lines += ["", f"_{prov}_", ""]
    notes: list[str] = []
    sizes = list(m.get("sizes", {}))
    for dtype in m.get("dtypes", []):
        for size in sizes:
            cases = _cases(results, size, dtype)
            if not cases:
                continue
            host_bound = any(c["impls"].get(i, {}).get("latency") for c in cases for i in impls)
            what = ("time per call back to back, µs (CUDA events; host-bound at this size, floor/time "
                    "meaningless)" if host_bound else "device time per call, µs (floor/time)")
            lines += [f"### {size} ({SIZE_TITLES.get(size, size)}) {dtype}: {what}", ""]
            head = ["workload", "floor µs"] + [IMPL_TITLES.get(i, i) for i in impls]
            if "stitchlab" in impls and "torch_compile" in impls:
                head.append("stitchlab ÷ torch.compile")
            if "stitchlab" in impls:
                head.append("kernels (stitchlab)")
            lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
            for c in cases:
                row = [c["workload"], f"{c['floor_us']:,.1f}"] + [_cell_device(c, i, notes) for i in impls]
                if "stitchlab" in impls and "torch_compile" in impls:
                    s, t = _dev(c, "stitchlab"), _dev(c, "torch_compile")
                    row.append(f"{s / t:.2f}" if s and t else "—")
                if "stitchlab" in impls:
                    row.append(str(c["impls"].get("stitchlab", {}).get("kernels", "n/a")))
                lines.append("| " + " | ".join(row) + " |")
            lines += ["", f"_{prov}_", ""]
            title = f"### {size} ({SIZE_TITLES.get(size, size)}) {dtype}: "
            for key, what, cell in (
                    ("device_unheld", "the same loops without the hold, µs per call (÷ the held time: above "
                     "1.00 where the host's cost per call exceeds the device's)", _cell_unheld),
                    ("latency", "per-call wall latency, µs (call + synchronize, median / pipelined host "
                     "cost per call)", _cell_latency)):
                if any(c["impls"].get(i, {}).get(key) for c in cases for i in impls):
                    head = ["workload"] + [IMPL_TITLES.get(i, i) for i in impls]
                    lines += [title + what, "", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
                    lines += ["| " + " | ".join([c["workload"]] + [cell(c, i) for i in impls]) + " |" for c in cases]
                    lines += ["", f"_{prov}_", ""]
    lc = results.get("latency_compare")
    if lc:
        lines += ["### One-kernel call latency: cached sl.jit vs bare cupy.RawKernel (64×512 float32, SiLU-gated product)", ""]
        if lc.get("error"):
            lines.append(f"error: {lc['error']}")
        else:
            lines += ["| call | median µs (call + sync) | p10 / p90 µs | pipelined µs/call | correct |",
                      "| --- | --- | --- | --- | --- |"]
            for name, r in lc["impls"].items():
                lat = r.get("latency")
                if lat:
                    lines.append(f"| {name} | {lat['median_us']:.1f} | {lat['p10_us']:.1f} / {lat['p90_us']:.1f} | "
                                 f"{lat['pipelined_us']:.1f} | {r.get('ok', '—')} |")
                else:
                    lines.append(f"| {name} | error: {r.get('error', '')[:200]} | | | |")
            k = lc.get("kernels_stitchlab", {})
            lines.append("")
            lines.append(f"stitchlab plan kernels: {k.get('kernels')} {k.get('kernels_note', '')}; "
                         f"ratio stitchlab / RawKernel: {lc.get('ratio_stitchlab_to_raw', float('nan')):.2f}; "
                         f"counters per sl.jit call: {lc['impls'].get('stitchlab_jit', {}).get('stats_per_call')}")
        lines += ["", f"_{prov}_", ""]
    su = results.get("startup")
    if su:
        lines += ["### Start-up (fresh processes, small size, float32)", ""]
        if su.get("error"):
            lines.append(f"error: {su['error']}")
        else:
            lines.append(su.get("method", ""))
            lines.append("")
            for nb in ("notebook_cold", "notebook_warm"):
                r = su.get(nb, {})
                if r.get("error"):
                    lines.append(f"- {nb}: error: {r['error'][-300:]}")
                else:
                    lines.append(f"- {nb}: spawn → first softmax result {r.get('spawn_to_first_result_s', 0) * 1e3:.0f} ms "
                                 f"(import stitchlab {r.get('import_s', 0) * 1e3:.0f} ms; backend {r.get('backend')})")
            lines += ["", "| workload | kernels | cold: first call ms | cold: NVRTC compiles | cold: ms/kernel compile | "
                      "warm: first call ms | warm: NVRTC compiles | warm: ms/kernel | steady ms |",
                      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
            cold, warm = su.get("cold", {}), su.get("warm", {})
            for ph in (cold, warm):
                if ph.get("error"):
                    lines.append(f"| error: {ph['error'][-300:]} |")
            for w, rc in cold.get("workloads", {}).items():
                rw = warm.get("workloads", {}).get(w, {})

                def f(v: Any) -> str:
                    return f"{v:.1f}" if isinstance(v, (int, float)) else str(v)

                lines.append(
                    f"| {w} | {rc.get('kernels')} | {rc['first_s'] * 1e3:.1f} | "
                    f"{rc['counters_first_call'].get('nvrtc_compiles')} | {f(rc.get('compile_ms_per_kernel'))} | "
                    f"{rw.get('first_s', float('nan')) * 1e3:.1f} | {rw.get('counters_first_call', {}).get('nvrtc_compiles')} | "
                    f"{f(rw.get('start_ms_per_kernel'))} | {rw.get('steady_s', float('nan')) * 1e3:.2f} |")
            for name, ph in (("cold", cold), ("warm", warm)):
                if ph.get("spawn_to_first_result_s") is not None:
                    lines.append("")
                    lines.append(f"{name} process: import {ph.get('import_s', 0) * 1e3:.0f} ms, CUDA context "
                                 f"{ph.get('context_s', 0) * 1e3:.0f} ms, first tiny evaluation (one-time "
                                 f"compiler/registry start, not charged to the workloads) "
                                 f"{ph.get('init_s', 0) * 1e3:.0f} ms, spawn → first result "
                                 f"{ph['spawn_to_first_result_s'] * 1e3:.0f} ms")
        lines += ["", f"_{prov}_", ""]
    if notes:
        lines += ["### Errors and wrong results", ""]
        lines += [f"{i}. {n}" for i, n in enumerate(notes, 1)]
        lines.append("")
    if results.get("skipped"):
        lines += ["### Skipped", ""]
        lines += [f"- {s['what']}: {s['why']}" for s in results["skipped"]]
        lines.append("")
    return "\n".join(lines)


def summary(results: dict[str, Any]) -> str:
    """A short plain-text table for a terminal (the device tool returns the output's tail)."""
    m = results["meta"]
    impls = m.get("impls", [])
    lines = [f"commit {m.get('commit')} {m.get('date')} {m.get('hardware', {}).get('gpu')}",
             f"copy bandwidth {results.get('copy_bandwidth', {}).get('bytes_per_s', 0) / 1e12:.3f} TB/s"]
    for dtype in m.get("dtypes", []):
        for size in m.get("sizes", {}):
            cases = _cases(results, size, dtype)
            if not cases:
                continue
            lines.append(f"[{size} {dtype}] device us/call")
            lines.append(f"  {'workload':14s} {'floor':>9s}  " + " ".join(f"{i[:13]:>13s}" for i in impls))
            for c in cases:
                cells = []
                for i in impls:
                    r = c["impls"].get(i, {})
                    t = r.get("device", {}).get("median_us")
                    cells.append(f"{'ERR' if r.get('error') else (f'{t:.1f}' + ('' if r.get('ok') else '!')) if t else '-':>13s}")
                lines.append(f"  {c['workload']:14s} {c['floor_us']:9.1f}  " + " ".join(cells))
    lc = results.get("latency_compare") or {}
    if lc.get("impls"):
        lines.append("latency (call+sync, median us): " + ", ".join(
            f"{k} {v.get('latency', {}).get('median_us', float('nan')):.1f}" for k, v in lc["impls"].items()))
    for t in targets(results):
        lines.append(f"target {_status(t['ok']):10s} {t['name']}: {t['measured']} {t['note']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="results.json written by benchmarks/run.py")
    p.add_argument("--out", default="", help="write the markdown here instead of stdout")
    p.add_argument("--png", default="", help="also draw the chart to this PNG (needs matplotlib)")
    args = p.parse_args(argv)
    results = json.loads(Path(args.results).read_text())
    text = markdown(results)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    if args.png:
        sys.path.append(str(Path(__file__).resolve().parents[1]))
        from benchmarks import chart

        print(chart.write_png(results, Path(args.png)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
