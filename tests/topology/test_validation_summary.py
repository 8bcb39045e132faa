"""validation.summarize: the simulation half of the validation, from workers' raw output (the
form ``--raw`` keeps in the JSON), so the model can be re-checked against old measurements."""

from __future__ import annotations

import pytest
from stitchlab.topology import collectives as c
from stitchlab.topology.validation import _calibrated, simulate_step, summarize

from .conftest import tiny_profile


def _raw(step_s: float, alpha: float = 2e-5, beta: float = 1 / 200e9, steps: int = 4) -> dict:
    prof = tiny_profile().to_dict()
    points = [(n, c.ring_allreduce(n, 2, alpha=alpha, beta=beta)) for n in (4096, 2**20, 32 * 2**20)]
    return {"step_times": [step_s] * steps, "points": points, "profiles": [prof, prof],
            "per_step_profiles": [[prof] * steps, [prof] * steps]}


def test_summary_fits_the_points_and_compares_with_the_simulated_step():
    raw = _raw(step_s=0.01)
    res = summarize(raw, np=2, batch=8, backend="nccl", topology="h200-2gpu")
    assert res["alpha_us"] == pytest.approx(20.0, rel=1e-6)
    assert res["bandwidth_gbs"] == pytest.approx(200.0, rel=1e-6)
    assert res["backend"] == "torch-ddp-nccl" and "raw" not in res
    # what the simulator says for this profile on the calibrated preset
    from stitchlab.topology.calibrate import fit_ring_allreduce
    from stitchlab.topology.profile import ModelProfile

    base = _calibrated("nccl", 2, fit_ring_allreduce(raw["points"], 2), "h200-2gpu")
    sim = simulate_step([ModelProfile.from_dict(p) for p in raw["profiles"]], base, 8, False)
    assert res["simulated_ms"] == pytest.approx(sim.step_time * 1e3)
    assert res["error"] == pytest.approx((sim.step_time - 0.01) / 0.01)
    # every step equal and profiled the same: the paired error is the error
    assert res["paired_error"] == pytest.approx(res["error"])


def test_summary_keeps_the_raw_output_on_request():
    raw = _raw(step_s=0.02)
    res = summarize(raw, np=2, batch=8, horovod=True, backend="nccl", keep_raw=True)
    assert res["raw"] is raw and res["backend"] == "horovod-nccl"
