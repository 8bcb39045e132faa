"""The benchmark harness on the CPU: every workload builds and matches its float64 NumPy reference
on the numpy backend, start-up phases run in fresh processes, and the report states the targets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks import report, run  # noqa: E402
from benchmarks.workloads import WORKLOADS  # noqa: E402


@pytest.fixture(scope="module")
def cpu_results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import stitchlab as sl

    before = sl.get_backend()
    out = tmp_path_factory.mktemp("bench")
    with pytest.MonkeyPatch.context() as mp:  # --cpu sets STITCHLAB_BACKEND: restore it after
        mp.setenv("STITCHLAB_BACKEND", "numpy")
        try:
            run.main(["--cpu", "--out", str(out), "--impls", "stitchlab,stitchlab_eager,numpy",
                      "--dtypes", "float32,float16,bfloat16", "--samples", "2", "--reps", "5",
                      "--no-startup", "--no-png"])
        finally:
            sl.set_backend(before)
    results = json.loads((out / "results.json").read_text())
    results["_out"] = str(out)
    return results


def test_every_workload_matches_its_float64_reference_on_the_numpy_backend(cpu_results: dict) -> None:
    cases = cpu_results["cases"]
    assert {(c["workload"], c["dtype"]) for c in cases} == {(w, d) for w in WORKLOADS for d in ("float32", "float16", "bfloat16")}
    for c in cases:
        for impl in ("stitchlab", "stitchlab_eager", "numpy"):
            r = c["impls"][impl]
            assert r.get("ok"), (c["workload"], c["dtype"], impl, r)
            assert r["rel_err"] <= r["tol_rel"]
            assert r["device"]["median_us"] > 0
        assert c["bytes_min"] > 0 and c["floor_us"] > 0


def test_there_are_at_least_twelve_workloads_with_the_named_ones() -> None:
    named = {"softmax", "layernorm", "rmsnorm", "bias_gelu", "add_layernorm", "colnorm", "adam", "logsumexp"}
    assert named <= set(WORKLOADS) and len(WORKLOADS) >= 12


def test_bfloat16_runs_with_bfloat16_outputs(cpu_results: dict) -> None:
    cases = [c for c in cpu_results["cases"] if c["dtype"] == "bfloat16"]
    assert cases and not any("bfloat16" in s["what"] for s in cpu_results["skipped"])
    for c in cases:  # every output of the stitchlab path is bfloat16 (cross-entropy's loss too)
        assert set(c["impls"]["stitchlab"]["out_dtypes"]) == {"bfloat16"}, (c["workload"], c["impls"]["stitchlab"])


def test_run_writes_json_with_provenance_and_markdown(cpu_results: dict) -> None:
    meta = cpu_results["meta"]
    for key in ("date", "command", "commit", "hardware"):
        assert meta[key]
    text = (Path(cpu_results["_out"]) / "results.md").read_text()
    assert "tiny (16×64) float32" in text and meta["commit"] in text and meta["command"] in text


def test_report_cli_turns_results_json_into_markdown(cpu_results: dict, tmp_path: Path) -> None:
    dst = tmp_path / "section.md"
    assert report.main([str(Path(cpu_results["_out"]) / "results.json"), "--out", str(dst)]) == 0
    assert "## Benchmark run" in dst.read_text()


def _synthetic(sl_us: float, tc_us: float, cupy_us: float, floor_us: float) -> dict:
    def impl(t: float) -> dict:
        return {"ok": True, "device": {"median_us": t}}

    cases = [{"workload": w, "size": "large", "dtype": "float32", "floor_us": floor_us, "bytes_min": 1,
              "impls": {"stitchlab": impl(sl_us), "torch_compile": impl(tc_us), "cupy": impl(cupy_us)}}
             for w in ("softmax", "logsumexp", "colnorm", "layernorm")]
    return {"meta": {"date": "d", "command": "c", "commit": "abc", "mode": "gpu", "dtypes": ["float32"],
                     "sizes": {"large": [8192, 4096]}, "impls": ["stitchlab", "cupy", "torch_compile"],
                     "hardware": {"gpu": "H200"}},
            "cases": cases, "skipped": [],
            "latency_compare": {"ratio_stitchlab_to_raw": 2.6, "impls": {}, "kernels_stitchlab": {"kernels": 1}}}


def test_targets_report_missed_ones_with_the_ratio() -> None:
    res = _synthetic(sl_us=200.0, tc_us=100.0, cupy_us=400.0, floor_us=100.0)
    by_name = {t["name"]: t for t in report.targets(res)}
    every = by_name["large float32: stitchlab time ≤ torch.compile on every workload"]
    assert every["ok"] is False and "2.000×" in every["note"]
    assert by_name["large float32: geometric mean of floor/time (stitchlab)"]["ok"] is False
    assert "2.00×" in by_name["large float32: ≥ 8× faster than CuPy eager (geometric mean)"]["measured"]
    lat = by_name["small: cached one-kernel sl.jit call ≤ 1.3× bare RawKernel launch + allocation"]
    assert lat["ok"] is False and "2.00×" in lat["note"]
    md = report.markdown(res)
    assert "**missed**" in md and "commit `abc`" in md


def test_targets_are_met_when_the_numbers_are_good() -> None:
    res = _synthetic(sl_us=100.0, tc_us=150.0, cupy_us=900.0, floor_us=95.0)
    res["latency_compare"]["ratio_stitchlab_to_raw"] = 1.1
    assert all(t["ok"] for t in report.targets(res))


def test_startup_phases_run_in_fresh_processes() -> None:
    su = run.startup(["softmax", "silu_gate"], cpu=True)
    for phase in ("cold", "warm"):
        assert set(su[phase]["workloads"]) == {"softmax", "silu_gate"}, su[phase]
        assert su[phase]["spawn_to_first_result_s"] > 0
    assert su["warm"]["workloads"]["softmax"]["counters_first_call"]["nvrtc_compiles"] == 0
    assert su["notebook_cold"]["max_abs_err"] < 1e-6


def test_report_shows_the_loops_without_the_hold_and_holds_that_ran_out() -> None:
    res = _synthetic(sl_us=20.0, tc_us=30.0, cupy_us=400.0, floor_us=16.0)
    tc = res["cases"][0]["impls"]["torch_compile"]
    tc["device"].update(samples=10, held_loops_timed_out=3)
    tc["device_unheld"] = {"median_us": 75.0}
    md = report.markdown(res)
    assert "the same loops without the hold" in md
    assert "| softmax | — | — | 75.0 (2.50) |" in md  # stitchlab and cupy have no unheld time here
    assert "30.0 (0.53) [1]" in md and "the hold ran out before 3 of 10 loops were queued" in md
    res["cases"][1]["impls"]["stitchlab"]["device"]["hold_refused"] = "a call waited for the device"
    assert "logsumexp large float32, stitchlab: timed in plain loops, not held: a call waited" in report.markdown(res)
    assert "without the hold" not in report.markdown(_synthetic(sl_us=20.0, tc_us=30.0, cupy_us=400.0, floor_us=16.0))
