"""``plan()``: the planner's entry point — GNN prior, tree search, SFB pruning, explanations.

Steps:

1. :class:`~.space.SearchSpace` of the topology and profile (raises when the model cannot fit);
   every strategy is simulated under Horovod's loop (``horovod``), as the plan will run;
2. the prior: the shipped GNN's (``prior="gnn"``), or uniform (``prior="uniform"``);
3. :func:`~.search.mcts` with ``budget`` simulator calls; SFB placement by the integer program
   happens inside, for every strategy whose ``sfb`` decision is on;
4. within the same budget, the polish (:data:`~.search.POLISH_SHARE` of it kept back from the
   tree): coordinate descent from the tree's best over every decision's other options and every
   SFB / sparse layer switched back to all-reduce, moving while the simulator finds a single
   change faster (SFB layers the simulator finds useless are dropped here);
5. the plan is never slower than plain data parallelism: if the search found nothing better the
   plan *is* plain data parallelism;
6. each decision is explained by simulating the plan without it: the same alternatives the
   polish tried, so after a polish that finished they are simulated already (``explain_calls``
   counts those that were not; they come on top of the budget and change nothing in the plan).
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

from .. import presets
from ..devices import DeviceTopology
from ..errors import DoesNotFitError
from ..profile import ModelProfile
from ..simulator import HOROVOD_DEFAULTS, HorovodCycle
from .result import DecisionRecord, Plan
from .search import (
    POLISH_SHARE,
    Point,
    compressed_layers,
    mcts,
    uniform_prior,
    with_option,
    without_layer,
)
from .space import PlanError, SearchSpace

PRIORS = ("gnn", "uniform")


def resolve_topology(topology: DeviceTopology | str | Path) -> DeviceTopology:
    """A topology, a preset name or a topology JSON file."""
    if isinstance(topology, DeviceTopology):
        return topology
    text = str(topology)
    if text in presets.names():
        return presets.get(text)
    path = Path(text)
    if path.suffix == ".json" or path.exists():
        if not path.exists():
            raise PlanError(f"topology file {text!r} does not exist; give a topology JSON file "
                            f"or a preset name: {', '.join(presets.names())}")
        return DeviceTopology.load(path)
    raise PlanError(f"unknown topology {text!r}: not a preset ({', '.join(presets.names())}) and "
                    "not a file")


def resolve_profile(profile: ModelProfile | str | Path) -> ModelProfile:
    """A profile or a profile JSON file."""
    if isinstance(profile, ModelProfile):
        return profile
    path = Path(profile)
    if not path.exists():
        raise PlanError(f"model profile file {str(profile)!r} does not exist; write one with "
                        "ModelProfile.save(path) (ModelProfile.from_module(...) measures a model)")
    return ModelProfile.load(path)


def plan(topology: DeviceTopology | str | Path, profile: ModelProfile | str | Path, *,
         global_batch: int | None = None, budget: int = 200, seed: int = 0,
         prior: str = "gnn", weights: str | Path | None = None, explain: bool = True,
         all_devices: bool = False, horovod: HorovodCycle | None = HOROVOD_DEFAULTS) -> Plan:
    """Plan data-parallel training of ``profile`` on ``topology``.

    Args:
        topology: a :class:`DeviceTopology`, a preset name or a topology JSON file.
        profile: a :class:`ModelProfile` or a profile JSON file.
        global_batch: samples per step over all ranks (default: the profile's batch on every
            device).
        budget: simulator calls for the search: the tree, the polish and the baseline's (the
            explanations' calls come on top, ``Plan.search["explain_calls"]``).
        seed: the search's seed; the same inputs and seed give the same plan.
        prior: ``"gnn"`` (the shipped or ``weights`` network) or ``"uniform"`` (plain MCTS).
        weights: a weights file from ``stitchlab plan train`` instead of the shipped one.
        explain: simulate each decision away to say what it is worth (a few more calls).
        all_devices: keep every device of the topology (for a job of fixed world size).
        horovod: Horovod's loop, under which every strategy is simulated (the model validated
            against Horovod runs, docs/topology.md): Horovod's defaults (1 ms cycle, 128 MiB
            fusion threshold) unless a calibration gives one
            (``fit_horovod_cycle(...).cycle_model()``); ``None``: fixed buckets sent when ready,
            as DDP. Recorded in ``Plan.search["horovod"]``.

    Returns:
        The :class:`Plan`.

    Raises:
        PlanError: unknown preset or missing file, bad budget, seed or prior, a global batch
            smaller than the fewest devices a strategy may use.
        DoesNotFitError: the model does not fit the devices.

    Example:
        >>> from stitchlab.topology.planner.cases import mlp_profile
        >>> p = plan("pcie-4gpu", mlp_profile(2, 1024, 64), budget=16, prior="uniform")
        >>> p.step_time <= p.baseline_time
        True
    """
    if prior not in PRIORS:
        raise PlanError(f"prior={prior!r}; expected one of {PRIORS}")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise PlanError(f"budget={budget!r} must be a positive number of simulator calls")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PlanError(f"seed={seed!r} must be a non-negative integer")
    t_start = time.perf_counter()
    topo = resolve_topology(topology)
    prof = resolve_profile(profile)
    space = SearchSpace(topo, prof, global_batch, all_devices, horovod)
    if prior == "gnn":
        from . import gnn

        model = gnn.load(weights)[0] if weights is not None else None
        probs = gnn.prior(space, model)
    else:
        probs = uniform_prior(space)
    result = mcts(space, budget, probs, seed, method=f"mcts+{prior}", polish_share=POLISH_SHARE)
    point, best = result.point, result.step_time
    strategy = space.build(point.assignment, point.sfb, point.sparse)
    search_sims = space.sims
    base = space.evaluate_strategy(space.baseline())
    if not math.isfinite(best):
        raise DoesNotFitError(
            f"no strategy found for model {prof.name!r} on {topo.name or 'the topology'!r} fits "
            f"in memory within budget={budget}; raise the budget or lower global_batch "
            f"(now {space.global_batch})")
    if strategy is None or best >= base.step_time:
        strategy, best = base.strategy, base.step_time
        point = Point(space.baseline_assignment)
    else:
        point = _normalize(space, point, strategy)
    records = _explain(space, point, best) if explain else []
    return Plan(
        strategy=strategy, step_time=best, baseline_time=base.step_time, decisions=records,
        topology=topo.name or "topology", model=prof.name, global_batch=space.global_batch,
        search={"method": "mcts", "prior": prior, "budget": budget, "seed": seed,
                "simulator_calls": search_sims, "polish_calls": result.polish_sims,
                "explain_calls": space.sims - search_sims,
                "space_size": space.size(),
                "horovod": dataclasses.asdict(horovod) if horovod is not None else None,
                "seconds": round(time.perf_counter() - t_start, 3)},
        hosts={d: topo.device(d).host for d in topo.ids})


def _normalize(space: SearchSpace, point: Point, strategy: object) -> Point:
    """Put back the plain option of every decision that changes nothing in ``strategy`` (an SFB
    decision whose layers were all dropped, a hierarchy over one group...)."""
    for k, d in enumerate(space.decisions):
        if point.assignment[k] == d.default:
            continue
        # the alternative as explained, else the same layers named one by one
        alt = with_option(space, point, k, d.default)
        sfb = () if d.key == "sfb" else tuple(compressed_layers(space, point, "sfb"))
        sparse = () if d.key == "sparse" else tuple(compressed_layers(space, point, "sparse"))
        for trial in (alt, Point(alt.assignment, sfb, sparse)):
            if space.build(trial.assignment, trial.sfb, trial.sparse) == strategy:
                point = trial
                break
    return point


def _explain(space: SearchSpace, point: Point, best: float) -> list[DecisionRecord]:
    """Each decision against its alternative (the plain option, or the best other one when the
    plan keeps the plain one) and each compressed layer against all-reduce, all simulated."""
    out: list[DecisionRecord] = []

    def time_of(p: Point) -> float:
        return space.evaluate(p.assignment, p.sfb, p.sparse).step_time

    for k, d in enumerate(space.decisions):
        if len(d.options) < 2:
            continue
        chosen = point.assignment[k]
        if chosen != d.default:
            alt_o = d.default
        else:
            others = [o for o in range(len(d.options)) if o != chosen]
            alt_o = min(others, key=lambda o, k=k: time_of(with_option(space, point, k, o)))
        out.append(DecisionRecord(d.key, d.options[chosen].label, d.options[alt_o].label, best,
                                  time_of(with_option(space, point, k, alt_o))))
    for scheme in ("sfb", "sparse"):
        for name in compressed_layers(space, point, scheme):
            t = time_of(without_layer(space, point, scheme, name))
            out.append(DecisionRecord(f"{scheme} layer", f"{name}: {scheme}",
                                      f"{name}: all-reduce", best, t))
    return out
