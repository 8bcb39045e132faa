"""Horovod's background loop in the simulator (HorovodCycle) and its calibration
(fit_horovod_cycle): hand-computed small cases, then the stored 2 x H200 runs re-simulated."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from stitchlab.topology import HorovodCycle, Strategy, simulate
from stitchlab.topology.calibrate import (
    cpu_topology_from_fit,
    fit_horovod_cycle,
    fit_ring_allreduce,
)
from stitchlab.topology.collectives import AlphaBeta
from stitchlab.topology.profile import LayerProfile, ModelProfile, ParamInfo
from stitchlab.topology.validation import _calibrated, simulate_step, summarize

from .conftest import pair, tiny_profile

KiB, MiB = 2**10, 2**20
MS = 1e-3
FWD = 1 * MS  # forward time of every profile below


def ring2(nbytes: float) -> float:  # ring all-reduce over 2 ranks on pair(): 10 µs, 1 GB/s
    return 2 * 1e-5 + nbytes * 1e-9


def chain(*backward: tuple[float, float]) -> ModelProfile:
    """A profile whose layers, in backward order, are (KiB of gradient, backward seconds): one
    float32 parameter each, forward 1 ms in all, no optimizer time."""
    layers = [LayerProfile(f"l{i}", "other", [ParamInfo(f"l{i}.w", (kib * KiB // 4,))],
                           forward_time=FWD / len(backward), backward_time=bwd)
              for i, (kib, bwd) in enumerate(backward)]
    return ModelProfile("chain", 8, "ref", 1e12, list(reversed(layers)))


def run(profile: ModelProfile, cycle: HorovodCycle, **kw):
    return simulate(pair(), profile, Strategy(["d0", "d1"], [8, 8]), horovod=cycle, **kw)


def test_tensors_ready_within_one_cycle_cost_one_cycle_plus_one_fused_transfer():
    prof = chain((1024, 0.2 * MS), (1024, 0.2 * MS), (1024, 0.2 * MS))  # ready 1.2, 1.4, 1.6 ms
    res = run(prof, HorovodCycle(1 * MS))
    assert len(res.comm) == 1
    (rec,) = res.comm
    assert rec.nbytes == 3 * MiB and rec.layers == ("l0", "l1", "l2")
    first_ready = FWD + 0.2 * MS
    assert rec.tick == pytest.approx(first_ready + 1 * MS)
    assert rec.start == pytest.approx(first_ready + 1 * MS)
    assert rec.end == pytest.approx(first_ready + 1 * MS + ring2(3 * MiB))
    assert res.step_time == pytest.approx(rec.end)
    # the same tensors without the loop: three collectives, each paying the link's α
    plain = simulate(pair(), prof, Strategy(["d0", "d1"], [8, 8]), bucket_bytes=MiB)
    assert len(plain.comm) == 3


def test_tensors_ready_in_different_cycles_go_at_one_tick_each():
    # ready at 1.2 ms, then 2.7 and 2.8 ms: ticks every cycle from 2.2 ms, so the first goes at
    # 2.2 ms alone and the other two are fused at 3.2 ms (100 KiB take 0.1 ms over 1 GB/s)
    prof = chain((100, 0.2 * MS), (100, 1.5 * MS), (200, 0.1 * MS))
    res = run(prof, HorovodCycle(1 * MS))
    assert [r.nbytes for r in res.comm] == [100 * KiB, 300 * KiB]
    assert [r.tick for r in res.comm] == pytest.approx([2.2 * MS, 3.2 * MS])
    assert res.comm[0].start == pytest.approx(2.2 * MS)
    assert res.comm[0].end == pytest.approx(2.2 * MS + ring2(100 * KiB))
    assert res.comm[1].start == pytest.approx(3.2 * MS)
    assert res.step_time == pytest.approx(3.2 * MS + ring2(300 * KiB))
    # each round waits for its own tick: later than one round carrying everything would end
    one_round = run(prof, HorovodCycle(1 * MS), overlap=False)
    assert one_round.step_time == pytest.approx(2.8 * MS + 1 * MS + ring2(400 * KiB))


def test_a_round_queues_behind_the_transfers_of_the_rounds_before_it():
    # 8 MiB take 8 ms over 1 GB/s: the second round's tick (2.2 ms) comes long before the queue
    # is free, and no further cycle is paid when it is
    prof = chain((8 * 1024, 0.2 * MS), (1024, 1.5 * MS))
    res = run(prof, HorovodCycle(1 * MS))
    first, second = res.comm
    assert second.tick == pytest.approx(3.2 * MS)
    assert second.start == pytest.approx(first.end)
    assert res.step_time == pytest.approx(2.2 * MS + ring2(8 * MiB) + ring2(MiB))


def test_first_tick_sets_the_wait_of_the_first_round():
    prof = chain((1024, 0.2 * MS))
    half = run(prof, HorovodCycle(1 * MS, first_tick=0.5))
    assert half.comm[0].start == pytest.approx(FWD + 0.2 * MS + 0.5 * MS)
    assert run(prof, HorovodCycle(1 * MS)).step_time - half.step_time == pytest.approx(0.5 * MS)


def test_round_overhead_is_paid_after_the_tick():
    prof = chain((1024, 0.2 * MS))
    res = run(prof, HorovodCycle(1 * MS, overhead=0.1 * MS))
    assert res.comm[0].start == pytest.approx(FWD + 0.2 * MS + 1.1 * MS)


def test_one_tick_fuses_in_ready_order_up_to_the_threshold_like_horovod():
    # all four ready within one cycle; a buffer takes the first tensor left, then every later one
    # that still fits: [100], [30, 50], [200] (alone: above the threshold)
    prof = chain(*[(mib * 1024, 0.1 * MS) for mib in (100, 30, 50, 200)])
    res = run(prof, HorovodCycle(1 * MS, fusion_bytes=128 * MiB))
    assert [r.nbytes / MiB for r in res.comm] == [100, 80, 200]
    assert len({r.tick for r in res.comm}) == 1
    unfused = run(prof, HorovodCycle(1 * MS, fusion_bytes=0))
    assert [r.nbytes / MiB for r in unfused.comm] == [100, 30, 50, 200]


def test_a_group_goes_when_its_last_tensor_is_ready_and_is_fused_up_to_the_threshold():
    # a Horovod group (a strategy bucket) submits its tensors together once the last is ready;
    # the loop then fuses them like any others: 60 + 60 MiB fit 128 MiB, the third does not
    prof = chain((60 * 1024, 0.2 * MS), (60 * 1024, 1.5 * MS), (60 * 1024, 0.1 * MS))
    grouped = Strategy(["d0", "d1"], [8, 8], buckets=[["l2.w", "l1.w", "l0.w"]])
    res = simulate(pair(), prof, grouped, horovod=HorovodCycle(1 * MS))
    assert [r.nbytes / MiB for r in res.comm] == [120, 60]
    last_ready = FWD + 1.8 * MS  # the group waits for its last tensor, l0's
    # the group is the first submission: its tick comes a cycle later, for all three
    assert [r.tick for r in res.comm] == pytest.approx([last_ready + 1 * MS] * 2)
    assert res.comm[0].ready == pytest.approx(last_ready)
    # ungrouped, the first tensor goes a tick earlier, alone
    alone = run(prof, HorovodCycle(1 * MS))
    assert alone.comm[0].tick == pytest.approx(FWD + 0.2 * MS + 1 * MS)
    assert alone.step_time < res.step_time


def test_one_rank_under_horovod_sends_nothing_and_waits_for_no_tick():
    # Horovod's DistributedOptimizer registers no gradient hooks at size 1
    prof = chain((1024, 0.2 * MS), (1024, 0.3 * MS))
    one = Strategy(["d0"], [8])
    res = simulate(pair(), prof, one, horovod=HorovodCycle(1 * MS))
    assert res.step_time == pytest.approx(FWD + 0.5 * MS)
    assert all(r.duration == 0 and r.tick is None for r in res.comm)


def test_without_overlap_everything_is_one_round_after_backward():
    prof = chain((100, 0.2 * MS), (100, 1.5 * MS), (200, 0.1 * MS))
    res = run(prof, HorovodCycle(1 * MS), overlap=False)
    (rec,) = res.comm
    backward_end = FWD + 1.8 * MS
    assert rec.tick == pytest.approx(backward_end + 1 * MS)
    assert res.step_time == pytest.approx(backward_end + 1 * MS + ring2(400 * KiB))


def test_no_cycle_sends_each_tensor_when_ready():
    prof = chain((100, 0.2 * MS), (100, 1.5 * MS))
    res = run(prof, HorovodCycle(0.0))
    assert [r.start for r in res.comm] == pytest.approx([1.2 * MS, 2.7 * MS])


def test_the_cycle_model_is_deterministic_and_keeps_gathers_apart():
    prof = tiny_profile()
    st = Strategy(["d0", "d1"], [8, 8], schemes={"fc1": "sfb"})
    a = simulate(pair(), prof, st, horovod=HorovodCycle(1 * MS))
    b = simulate(pair(), prof, st, horovod=HorovodCycle(1 * MS))
    assert a == b
    assert {r.scheme for r in a.comm} == {"allreduce", "sfb"} and len(a.comm) == 2


@pytest.mark.parametrize("kw, match", [
    ({"cycle_time": -1.0}, "must be >= 0"),
    ({"cycle_time": 1e-3, "fusion_bytes": -1}, "fusion_bytes"),
    ({"cycle_time": 1e-3, "first_tick": 0.0}, r"in \(0, 1\]"),
    ({"cycle_time": float("inf")}, "cycle_time=inf.*and finite"),
    ({"cycle_time": 1e-3, "overhead": float("inf")}, "overhead=inf.*and finite"),
    ({"cycle_time": 1e-3, "fusion_bytes": float("inf")}, "fusion_bytes=inf.*and finite"),
])
def test_bad_cycles_name_the_value(kw, match):
    with pytest.raises(ValueError, match=match):
        HorovodCycle(**kw)


# ---------------------------------------------------------------- calibration

def test_fit_reads_the_cycle_and_the_bandwidth_of_flat_horovod_times():
    pts = [(n, 1.0e-3 + n / 300e9) for n in (4096, MiB, 4 * MiB, 64 * MiB, 256 * MiB)]
    fit = fit_horovod_cycle(pts, 2)
    assert fit.cycle == pytest.approx(1.0e-3) and fit.bandwidth == pytest.approx(300e9)
    assert fit.overhead == 0 and fit.missed_ticks == () and fit.residual == pytest.approx(0, abs=1e-12)


def test_a_probe_one_cycle_late_is_a_missed_tick_and_is_left_out():
    pts = [(n, 1.0e-3 + n / 300e9) for n in (4096, MiB, 4 * MiB, 32 * MiB)]
    pts.insert(2, (16 * MiB, 2.0e-3 + 16 * MiB / 300e9))
    fit = fit_horovod_cycle(pts, 2)
    assert fit.missed_ticks == (16 * MiB,)
    assert fit.cycle == pytest.approx(1.0e-3) and fit.bandwidth == pytest.approx(300e9)


def test_a_recorded_cycle_time_leaves_the_rest_of_the_intercept_as_overhead():
    pts = [(n, 1.1e-3 + n / 300e9) for n in (4096, MiB, 32 * MiB)]
    fit = fit_horovod_cycle(pts, 2, cycle_time=1e-3)
    assert fit.cycle == 1e-3 and fit.overhead == pytest.approx(0.1e-3)


def test_noisy_but_sloped_probes_keep_all_points():
    # gloo-like: the bytes dominate, the deviations stay within half a cycle
    pts = [(4096, 1.2e-3), (MiB, 3.1e-3), (4 * MiB, 8.7e-3), (32 * MiB, 70e-3)]
    fit = fit_horovod_cycle(pts, 2)
    ab = fit_ring_allreduce(pts, 2)
    assert fit.missed_ticks == ()
    assert fit.intercept == pytest.approx(2 * ab.alpha) and fit.beta == pytest.approx(ab.beta)


def test_a_fitted_bandwidth_above_the_presets_links_is_capped_at_them():
    topo = _calibrated("nccl", 2, AlphaBeta(0.0, 1 / 5e12), "h200-2gpu", keep_latency=True)
    assert {ln.bandwidth for ln in topo.links} == {450e9}
    assert {ln.latency for ln in topo.links} == {1e-6}  # the preset's own
    topo = _calibrated("nccl", 2, AlphaBeta(2e-5, 1 / 300e9), "h200-2gpu")
    assert {ln.bandwidth for ln in topo.links} == {300e9}


def _raw(points, step_s=0.01, steps=3, env=None):
    prof = tiny_profile().to_dict()
    raw = {"step_times": [step_s] * steps, "points": points, "profiles": [prof, prof],
           "per_step_profiles": [[prof] * steps, [prof] * steps]}
    if env is not None:
        raw["horovod_env"] = env
    return raw


def test_summary_of_a_horovod_run_reports_the_cycle_and_uses_a_recorded_one():
    pts = [(n, 1.05e-3 + n / 300e9) for n in (4096, MiB, 32 * MiB)]
    res = summarize(_raw(pts), np=2, batch=8, horovod=True, backend="nccl")
    assert res["cycle_us"] == pytest.approx(1050.0) and res["cycle_from"] == "flat all-reduce time"
    assert res["bandwidth_gbs"] == pytest.approx(300.0) and not res["bandwidth_capped"]
    assert res["fusion_mib"] == 128 and res["missed_tick_sizes"] == []
    env = {"HOROVOD_CYCLE_TIME": "1", "HOROVOD_FUSION_THRESHOLD": str(64 * MiB)}
    res = summarize(_raw(pts, env=env), np=2, batch=8, horovod=True, backend="nccl")
    assert res["cycle_us"] == pytest.approx(1000.0) and res["cycle_from"] == "HOROVOD_CYCLE_TIME"
    assert res["round_overhead_us"] == pytest.approx(50.0) and res["fusion_mib"] == 64


def test_on_cpus_the_cycle_model_is_the_old_single_fusion_buffer():
    # no overlap on CPUs: every gradient is ready when backward ends, one round carries all of
    # them in one buffer, and it costs the fitted intercept plus the transfer — 2α + n·β, what
    # the Horovod/Gloo validation simulated before the cycle model
    pts = [(4096, 1.2e-3), (MiB, 3.1e-3), (4 * MiB, 8.7e-3), (32 * MiB, 70e-3)]
    res = summarize(_raw(pts, step_s=0.05), np=2, batch=8, horovod=True, backend="gloo")
    base = cpu_topology_from_fit(fit_ring_allreduce(pts, 2), 2, 1e10)
    old = simulate(base, tiny_profile(), Strategy(base.ids, [8, 8]), bucket_bytes=128 * MiB)
    assert len(old.comm) == 1
    assert res["simulated_ms"] == pytest.approx(old.step_time * 1e3, rel=1e-12)


# ---------------------------------------------------------------- the stored 2 x H200 runs

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
HOROVOD_RUNS = RESULTS / "2026-11-30-h200x2-7f63af0-validation-horovod.json"
DDP_RUNS = RESULTS / "2026-11-30-h200x2-61d7309-validation-ddp.json"


def _stored(path: Path) -> list[dict]:
    if not path.exists():
        pytest.skip(f"{path.name} is not in this checkout")
    return json.loads(path.read_text())


def test_stored_h200_horovod_runs_are_resimulated_with_the_cycle_per_round():
    for run_ in _stored(HOROVOD_RUNS):
        raw = run_["raw"]
        res = summarize(raw, np=2, batch=run_["batch_per_rank"], horovod=True, backend="nccl")
        # the error is reported, against the stored measurement
        assert math.isfinite(res["error"]) and math.isfinite(res["paired_error"])
        assert res["measured_ms"] == pytest.approx(run_["measured_ms"])
        # the cycle is the flat time of a lone all-reduce: within the probes' range
        times = [t for _, t in raw["points"]]
        assert min(times) * 1e6 <= res["cycle_us"] <= max(times) * 1e6
        assert res["cycle_from"] == "flat all-reduce time" and res["fusion_mib"] == 128

        fit = fit_horovod_cycle(raw["points"], 2)
        cycle = HorovodCycle(fit.cycle)
        base = _calibrated("nccl", 2, AlphaBeta(0.0, fit.beta), "h200-2gpu", keep_latency=True)
        profiles = [ModelProfile.from_dict(p) for p in raw["profiles"]]
        sim = simulate_step(profiles, base, run_["batch_per_rank"], cycle)
        assert sim.step_time * 1e3 == pytest.approx(res["simulated_ms"])
        # one negotiation round per tick, several buffers per round: the cycle is paid per round
        ticks = sorted({r.tick for r in sim.comm})
        assert len(ticks) < len(sim.comm)
        for a, b in zip(ticks, ticks[1:], strict=False):
            assert (b - a) / fit.cycle == pytest.approx(round((b - a) / fit.cycle))
        # every weight gradient (256 MiB, above the 128 MiB threshold) goes alone; the biases
        # of a round are fused
        assert sum(r.nbytes == 256 * MiB for r in sim.comm) == 8
        assert sum(r.nbytes for r in sim.comm) == pytest.approx(profiles[0].trainable_bytes)
        # a buffer starts at or after its tick and after its data; the queue runs one at a time
        for r in sim.comm:
            assert r.start >= r.tick - 1e-12 and r.start >= r.ready - 1e-12
        for a, b in zip(sim.comm, sim.comm[1:], strict=False):
            assert b.start >= a.end - 1e-12
        # compute alone is a lower bound; a cycle per buffer (the old model) an upper one
        compute = max(sim.compute.values())
        per_buffer = len(sim.comm) * fit.cycle + sum(r.duration for r in sim.comm)
        assert compute < sim.step_time < compute + per_buffer


def test_stored_h200_ddp_runs_are_unchanged_by_the_horovod_model():
    for run_ in _stored(DDP_RUNS):
        res = summarize(run_["raw"], np=2, batch=run_["batch_per_rank"], backend="nccl")
        assert res["simulated_ms"] == pytest.approx(run_["simulated_ms"], rel=1e-9)
        assert "cycle_us" not in res


def test_stored_runs_are_resimulated_from_the_command_line(tmp_path, capsys):
    from stitchlab.topology.validation import main, resimulate

    pts = [(n, 1.05e-3 + n / 300e9) for n in (4096, MiB, 32 * MiB)]
    hvd = summarize(_raw(pts), np=2, batch=8, horovod=True, backend="nccl", keep_raw=True)
    summary_only = {k: v for k, v in hvd.items() if k != "raw"}
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([hvd, summary_only]))
    (again,) = resimulate(json.loads(path.read_text()))
    assert again["simulated_ms"] == pytest.approx(hvd["simulated_ms"])
    assert main(["--resimulate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 runs kept their raw output" in out and "horovod-nccl     run 1" in out
