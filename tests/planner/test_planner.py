"""The planner's promises: deterministic, never slower than plain data parallelism, within 2% of
exhaustive search on small instances, JSON round trip, escaped views, and errors that name the
bad value. Budgets are small so the whole file runs in well under a minute on 2 cores."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from stitchlab.topology import (
    HOROVOD_DEFAULTS,
    Device,
    DeviceTopology,
    DoesNotFitError,
    LayerProfile,
    Link,
    ModelProfile,
    ParamInfo,
    presets,
    simulate,
)
from stitchlab.topology.planner import (
    Plan,
    PlanError,
    SearchSpace,
    exhaustive,
    greedy,
    mcts,
    plan,
    random_search,
)
from stitchlab.topology.planner.cases import (
    cluster,
    eval_cases,
    mlp_profile,
    recsys_profile,
    training_cases,
    transformer_profile,
)

HETERO = "hetero-4fast-4slow-eth"


@pytest.fixture(scope="module")
def hetero_plan() -> Plan:
    return plan(HETERO, transformer_profile(2, 1024, 256, 8), budget=24, seed=0)


def _without_seconds(p: Plan) -> dict:
    d = p.to_dict()
    d["search"].pop("seconds")
    return d


# ----------------------------------------------------------------------------- determinism
def test_same_seed_gives_the_same_plan(hetero_plan: Plan) -> None:
    again = plan(HETERO, transformer_profile(2, 1024, 256, 8), budget=24, seed=0)
    assert _without_seconds(again) == _without_seconds(hetero_plan)


def test_mcts_and_random_search_are_deterministic_with_a_seed() -> None:
    prof, topo = mlp_profile(3, 2048, 128), presets.get(HETERO)
    for search in (lambda s, seed: mcts(s, 20, None, seed),
                   lambda s, seed: random_search(s, 20, seed)):
        a = search(SearchSpace(topo, prof), 3)
        b = search(SearchSpace(topo, prof), 3)
        assert (a.assignment, a.trace) == (b.assignment, b.trace)


def test_training_is_deterministic_with_a_seed() -> None:
    torch = pytest.importorskip("torch")
    from stitchlab.topology.planner.train import fit, make_examples

    ex1, ex2 = make_examples(3, 3), make_examples(3, 3)
    assert [e.name for e in ex1] == [e.name for e in ex2]
    for a, b in zip(ex1, ex2, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a.targets, b.targets, strict=True))
    m1, _ = fit(ex1, seed=5, epochs=2)
    m2, _ = fit(ex2, seed=5, epochs=2)
    for (k, v), (_, w) in zip(m1.state_dict().items(), m2.state_dict().items(), strict=True):
        assert torch.equal(v, w), k


# ----------------------------------------------------------------------------- quality
@pytest.mark.parametrize("name", [
    "hetero-eth/mlp", "2h100+2a6000-100g/cnn", "dgx-h200/transformer",
    "small/pcie-4gpu/mlp", "small/h200-2gpu/recsys"])
def test_plan_is_never_slower_than_plain_data_parallel(name: str) -> None:
    case = next(c for c in eval_cases() if c.name == name)
    p = plan(case.topo, case.profile, budget=12, seed=1, explain=False)
    # re-simulate both from scratch: the plan's numbers are the simulator's, under Horovod's loop
    base = simulate(case.topo, case.profile,
                    SearchSpace(case.topo, case.profile).baseline(),
                    timeline=False, horovod=HOROVOD_DEFAULTS)
    mine = simulate(case.topo, case.profile, p.strategy, timeline=False,
                    horovod=HOROVOD_DEFAULTS)
    assert not mine.oom
    assert mine.step_time == pytest.approx(p.step_time)
    assert mine.step_time <= base.step_time
    assert p.speedup >= 1.0


def test_heterogeneous_devices_get_uneven_shares_that_weight_to_the_global_batch() -> None:
    topo = cluster([("h100", 2), ("a100", 2)], "IB-NDR", nic_per_gpu=True)
    prof = transformer_profile(2, 1024, 256, 8)
    space = SearchSpace(topo, prof)
    s = space.build(space.decode("balanced"))
    assert s is not None
    assert sum(s.batch_shares) == space.global_batch
    assert s.batch_shares[0] > s.batch_shares[-1]  # H100 ranks take more than A100 ranks
    assert math.fsum(s.weight(r) for r in range(s.world_size)) == pytest.approx(1.0)
    assert space.time(space.decode("balanced")) < space.time(space.baseline_assignment)


def test_small_instances_are_within_two_percent_of_exhaustive_search() -> None:
    for case in [c for c in eval_cases() if c.small]:
        p = plan(case.topo, case.profile, budget=40, seed=0, explain=False)
        best = exhaustive(SearchSpace(case.topo, case.profile), sfb_subsets=True).step_time
        assert p.step_time <= best * 1.02, case.name


def test_baselines_run_within_their_budget() -> None:
    prof, topo = mlp_profile(3, 2048, 128), presets.get(HETERO)
    for result in (greedy(SearchSpace(topo, prof), 15), random_search(SearchSpace(topo, prof), 15),
                   mcts(SearchSpace(topo, prof), 15)):
        assert result.sims <= 15
        assert math.isfinite(result.step_time)
        assert [t for _, t in result.trace] == sorted([t for _, t in result.trace], reverse=True)


def test_sfb_goes_where_the_integer_program_puts_it_and_respects_memory() -> None:
    prof, topo = mlp_profile(3, 4096, 64), presets.get("pcie-4gpu")
    space = SearchSpace(topo, prof)
    s = space.build(space.decode("SFB by integer program"))
    assert s is not None and any(v == "sfb" for v in s.schemes.values())
    assert space.time(space.decode("SFB by integer program")) < space.baseline_time()
    from stitchlab.topology.planner import sfb

    assert sfb.memory_budget(space, s.devices, s.batch_shares, extra_buffers=1e15) == 0.0
    assert sfb.place(space, s.devices, s.batch_shares, extra_buffers=1e15) == []


def test_sparse_embeddings_travel_by_allgather() -> None:
    prof = recsys_profile(2, 1_000_000, 64, 256)
    space = SearchSpace(presets.get("h200-2gpu"), prof)
    s = space.build(space.decode("sparse embeddings"))
    assert s is not None and s.schemes == {"emb0": "sparse", "emb1": "sparse"}
    assert not any(p.startswith("emb") for b in s.buckets for p in b)


def test_every_decision_is_explained_with_times_with_and_without(hetero_plan: Plan) -> None:
    keys = {d.decision for d in hetero_plan.decisions}
    assert {"devices", "shares", "buckets"} <= keys
    for d in hetero_plan.decisions:
        assert d.time_with == pytest.approx(hetero_plan.step_time)
        assert d.time_without >= d.time_with * (1 - 1e-9)  # each choice is at least as good
        assert d.choice in d.reason()
    text = hetero_plan.summary()
    assert "speed-up" in text and f"{hetero_plan.speedup:.2f}x" in text


def test_gnn_prior_is_a_distribution_per_decision() -> None:
    pytest.importorskip("torch")
    from stitchlab.topology.planner import gnn

    space = SearchSpace(presets.get(HETERO), transformer_profile(1))
    probs = gnn.prior(space)
    assert len(probs) == len(space.decisions)
    for p, d in zip(probs, space.decisions, strict=True):
        assert len(p) == len(d.options) and p.sum() == pytest.approx(1.0) and (p > 0).all()


def test_training_never_sees_an_evaluation_case() -> None:
    banned = {c.fingerprint() for c in eval_cases()}
    assert not any(c.fingerprint() in banned for c in training_cases(0, 40))


# ----------------------------------------------------------------------------- serialization
def test_plan_json_round_trip(hetero_plan: Plan, tmp_path: Path) -> None:
    assert Plan.from_json(hetero_plan.to_json()) == hetero_plan
    hetero_plan.save(tmp_path / "plan.json")
    assert Plan.load(tmp_path / "plan.json") == hetero_plan
    assert json.loads(hetero_plan.to_json())["speedup"] == pytest.approx(hetero_plan.speedup)


def test_plan_json_errors_name_the_problem() -> None:
    with pytest.raises(PlanError, match="format"):
        Plan.from_json('{"format": "something-else"}')
    with pytest.raises(PlanError, match="line 1"):
        Plan.from_json("{not json")


def test_views_escape_user_text() -> None:
    devs = [Device("<img src=x>", "gpu", 1e14, 16 * 2**30, host="<b>h</b>"),
            Device("d1", "gpu", 5e13, 16 * 2**30, host="h2")]
    topo = DeviceTopology(devs, [Link("<img src=x>", "d1", 1e9, 1e-5, "network")],
                          name="<script>alert(1)</script>")
    prof = mlp_profile(2, 512, 32, name="<svg onload=x>")
    p = plan(topo, prof, budget=8, prior="uniform")
    html, svg = p._repr_html_(), p.to_svg()
    for bad in ("<script>", "<img", "<b>h", "<svg onload"):
        assert bad not in html.replace('<svg xmlns', '') and bad not in svg
    assert "&lt;script&gt;" in html
    assert svg.startswith("<svg") and svg.endswith("</svg>")


def test_shipped_weights_load_without_pickle_and_are_small() -> None:
    pytest.importorskip("torch")
    from importlib import resources

    from stitchlab.topology.planner import gnn

    path = Path(str(resources.files("stitchlab.topology").joinpath("weights", gnn.WEIGHTS_NAME)))
    assert path.stat().st_size < 1_000_000
    with np.load(path, allow_pickle=False) as data:
        assert "training" in json.loads(str(data["__meta__"]))
    gnn.load(path)


def test_bad_weights_file_is_named(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from stitchlab.topology.planner import gnn

    bad = tmp_path / "w.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(PlanError, match="w.npz"):
        gnn.load(bad)
    with pytest.raises(PlanError, match="does not exist"):
        gnn.load(tmp_path / "missing.npz")


# ----------------------------------------------------------------------------- bad input
def test_unknown_preset_is_named() -> None:
    with pytest.raises(PlanError, match="'dgx-h900'.*hetero-4fast-4slow-eth"):
        plan("dgx-h900", mlp_profile(1, 256, 8), budget=4)


def test_missing_profile_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="nothere.json"):
        plan(HETERO, tmp_path / "nothere.json", budget=4)


def test_profile_that_does_not_fit_names_model_and_device() -> None:
    huge = mlp_profile(4, 65536, 8, name="giant")  # 4 x 16 GiB of weights, x4 with Adam
    with pytest.raises(DoesNotFitError, match="giant.*GiB"):
        plan("pcie-4gpu", huge, budget=4)


def test_bad_budget_prior_and_global_batch_are_named() -> None:
    prof = mlp_profile(1, 256, 8)
    with pytest.raises(PlanError, match="budget=0"):
        plan(HETERO, prof, budget=0)
    with pytest.raises(PlanError, match="prior='best'"):
        plan(HETERO, prof, prior="best")
    with pytest.raises(PlanError, match="global_batch=-3"):
        plan(HETERO, prof, global_batch=-3)


def test_plan_for_another_world_size_topology_or_model_is_refused(hetero_plan: Plan) -> None:
    n = hetero_plan.world_size
    hetero_plan.check(presets.get(HETERO), transformer_profile(2, 1024, 256, 8), n)
    with pytest.raises(PlanError, match=f"for {n} ranks.*has {n + 3}"):
        hetero_plan.check(world_size=n + 3)
    with pytest.raises(PlanError, match="fast/gpu0"):
        hetero_plan.check(topo=presets.get("dgx-h200"))
    with pytest.raises(PlanError, match="which model 'mlp' lacks"):
        hetero_plan.check(profile=mlp_profile(2, 512, 8))


# ----------------------------------------------------------------------------- packaging / CLI
def test_importing_the_planner_does_not_import_torch() -> None:
    code = ("import sys, stitchlab, stitchlab.topology, stitchlab.topology.planner, "
            "stitchlab.topology.plan_cli; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_prints_the_plan_and_its_speedup(tmp_path: Path) -> None:
    prof = tmp_path / "model.json"
    transformer_profile(1, 512, 128, 4).save(prof)
    out = subprocess.run([sys.executable, "-m", "stitchlab", "plan", "--topology", HETERO,
                          "--model", str(prof), "--budget", "10", "--out",
                          str(tmp_path / "p.json")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "estimated speed-up over plain data parallel" in out.stdout
    assert Plan.load(tmp_path / "p.json").speedup >= 1.0


def test_cli_bad_preset_exits_2_naming_it(tmp_path: Path) -> None:
    prof = tmp_path / "model.json"
    mlp_profile(1, 256, 8).save(prof)
    out = subprocess.run([sys.executable, "-m", "stitchlab", "plan", "--topology", "nope-42",
                          "--model", str(prof)], capture_output=True, text=True)
    assert out.returncode == 2
    assert "nope-42" in out.stderr


def test_cli_train_writes_loadable_weights(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from stitchlab.topology.planner import gnn

    out = tmp_path / "w.npz"
    res = subprocess.run([sys.executable, "-m", "stitchlab", "plan", "train", "--seed", "1",
                          "--cases", "3", "--epochs", "1", "--out", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    model, meta = gnn.load(out)
    assert meta["training"]["seed"] == 1 and meta["training"]["cases"] == 3
    p = plan(HETERO, mlp_profile(2, 512, 32), budget=8, weights=out)
    assert p.speedup >= 1.0


@pytest.mark.parametrize("module", ["space", "result", "planning", ""])
def test_docstring_examples_run(module: str) -> None:
    import doctest
    import importlib

    name = "stitchlab.topology.planner" + (f".{module}" if module else "")
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0


def _plan_cli(*argv: str) -> int:
    import argparse

    from stitchlab.topology import plan_cli

    parser = argparse.ArgumentParser(prog="stitchlab")
    plan_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["plan", *argv])
    return args.func(args)


@pytest.mark.parametrize(("extra", "message"), [
    (["--out", "{tmp}/no/such/folder/p.json"], "the folder"),
    (["--svg", "{tmp}/no/such/folder/p.svg"], "the folder"),
    (["--out", "{tmp}"], "is a directory"),
    (["--fusion-mib", "inf"], "fusion_bytes=inf"),
    (["--cycle-ms", "inf"], "cycle_time=inf"),
])
def test_cli_bad_outputs_and_infinite_loop_settings_exit_2_before_planning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    prof = tmp_path / "model.json"
    mlp_profile(1, 256, 8).save(prof)
    extra = [x.format(tmp=tmp_path) for x in extra]
    code = _plan_cli("--topology", HETERO, "--model", str(prof), "--budget", "3", *extra)
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err and captured.out == "", captured.err


@pytest.mark.parametrize(("cases", "epochs", "message"), [
    ("1", "1", "count=1 training cases"), ("-1", "1", "count=-1"), ("3", "0", "epochs=0")])
def test_cli_train_refuses_settings_that_leave_the_weights_untrained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cases: str, epochs: str, message: str
) -> None:
    out = tmp_path / "w.npz"
    code = _plan_cli("train", "--cases", cases, "--epochs", epochs, "--out", str(out))
    assert code == 2 and message in capsys.readouterr().err and not out.exists()


def test_planning_on_a_device_of_huge_but_finite_speed_does_not_overflow() -> None:
    """The spread of device speeds squared 1e308 (OverflowError: Numerical result out of range)."""
    topo = presets.get(HETERO)
    data = topo.to_dict()
    data["devices"][0]["flops"] = 1e308
    result = plan(DeviceTopology.from_dict(data), mlp_profile(1, 256, 8), budget=4, prior="uniform")
    assert result.strategy.devices


@pytest.mark.parametrize(("topology", "global_batch", "fewest"), [
    ("pcie-4gpu", 3, 4), (HETERO, 3, 4), (HETERO, 1, 4)])
def test_a_global_batch_smaller_than_every_device_set_is_named(topology, global_batch, fewest):
    """Before: 'no strategy found ... fits in memory within budget=3; raise the budget', which no
    budget could fix."""
    with pytest.raises(PlanError, match=f"global_batch={global_batch} is smaller than the "
                                        f"{fewest} devices .* give global_batch >= {fewest}"):
        plan(topology, mlp_profile(1, 256, 8), global_batch=global_batch, budget=3,
             prior="uniform")


def test_a_negative_seed_is_named() -> None:
    with pytest.raises(PlanError, match="seed=-1 must be a non-negative integer"):
        plan(HETERO, mlp_profile(1, 256, 8), budget=3, seed=-1, prior="uniform")


# ----------------------------------------------------------------------------- frozen layers
def _frozen(layer):
    layer.params = [dataclasses.replace(p, trainable=False) for p in layer.params]
    return layer


def test_frozen_layers_get_no_sfb_sparse_or_hierarchical_scheme() -> None:
    # a frozen embedding or linear layer has no gradient: SFB or sparse rows would only add
    # traffic, and stitchlab.horovod refuses any of the three schemes on a layer that trains
    # nothing. The integer program and the sparse test used to pick them, and small budgets kept
    # them in the plan.
    prof = transformer_profile(1, 1024, 128, 8)
    for layer in prof.layers:
        if layer.kind == "embedding" or layer.name in ("h0.fc1", "h0.ln1"):
            _frozen(layer)
    frozen = {"embed", "h0.fc1", "h0.ln1"}
    topo = cluster([("h100", 2), ("a100", 2)], "10GbE")
    space = SearchSpace(topo, prof)
    assert "h0.fc1" not in {ln.name for ln in space.sfb_candidates()}
    assert space.sparse_layers([8.0] * 4) == []
    strategy = space.build(space.decode("hierarchical by host", "sparse embeddings",
                                        "SFB by integer program"))
    assert strategy is not None and strategy.groups
    assert not frozen & set(strategy.schemes), strategy.schemes
    frozen_params = {q.name for ln in prof.layers for q in ln.params if not q.trainable}
    bucketed = space.build(space.decode("1 MiB buckets")).buckets
    assert bucketed and not frozen_params & {q for b in bucketed for q in b}
    for budget in (4, 8):
        p = plan(topo, prof, budget=budget, prior="uniform")
        assert not frozen & set(p.strategy.schemes), p.strategy.schemes


def test_frozen_weights_need_no_gradient_or_optimizer_memory() -> None:
    # a LoRA-like fine-tune: 20 GiB of frozen bf16 weights and a small trained adapter under
    # Adam need about 21 GiB per replica (the simulator's peak); the planner counted gradients
    # and optimizer state for the frozen weights too (80 GiB) and refused 48 GiB GPUs
    base = LayerProfile("base", "other", [ParamInfo("base.w", (10 * 2**30,), "bfloat16", False)],
                        5e-3, 5e-3, 2**30)
    adapter = LayerProfile("lora", "linear", [ParamInfo("lora.w", (64, 4096))], 1e-4, 2e-4, 2**20)
    prof = ModelProfile("lora", 8, "ref", 989e12, [base, adapter], optimizer_state_factor=2)
    topo = presets.get("pcie-4gpu")
    peak = simulate(topo, prof, SearchSpace(topo, prof).baseline()).memory_peak["gpu0"]
    assert 20 * 2**30 < peak < 22 * 2**30
    p = plan(topo, prof, budget=4, prior="uniform")
    assert p.world_size == 4 and math.isfinite(p.step_time)
