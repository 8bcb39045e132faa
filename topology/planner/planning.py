"""``plan()``: the planner's entry point — GNN prior, tree search, SFB pruning, explanations.

Steps:

1. :class:`~.space.SearchSpace` of the topology and profile (raises when the model cannot fit);
   every strategy is simulated under Horovod's loop (``horovod``), as the plan will run;
2. the prior: the shipped GNN's (``prior="gnn"``), or uniform (``prior="uniform"``);
3. :func:`~.search.mcts` with ``budget`` simulator calls; SFB placement by the integer program
   happens inside, for every strategy whose ``sfb`` decision is on;
4. last step: :func:`~.search.prune_compression` drops SFB layers the simulator finds useless;
5. the plan is never slower than plain data parallelism: if the search found nothing better the
   plan *is* plain data parallelism;
6. each decision is explained by simulating the plan without it.
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
from .search import mcts, prune_compression, uniform_prior
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
        budget: simulator calls for the search (the baseline's included).
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
        PlanError: unknown preset or missing file, bad budget or prior.
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
    result = mcts(space, budget, probs, seed, method=f"mcts+{prior}")
    assignment = result.assignment
    sfb, best = prune_compression(space, assignment)
    strategy = space.build(assignment, sfb)
    search_sims = space.sims
    base = space.evaluate_strategy(space.baseline())
    if not math.isfinite(best):
        raise DoesNotFitError(
            f"no strategy found for model {prof.name!r} on {topo.name or 'the topology'!r} fits "
            f"in memory within budget={budget}; raise the budget or lower global_batch "
            f"(now {space.global_batch})")
    if strategy is None or best >= base.step_time:
        strategy, best = base.strategy, base.step_time
        assignment, sfb = space.baseline_assignment, []
    else:
        assignment = _normalize(space, assignment, sfb, strategy)
    records = _explain(space, assignment, sfb, best) if explain else []
    return Plan(
        strategy=strategy, step_time=best, baseline_time=base.step_time, decisions=records,
        topology=topo.name or "topology", model=prof.name, global_batch=space.global_batch,
        search={"method": "mcts", "prior": prior, "budget": budget, "seed": seed,
                "simulator_calls": search_sims, "explain_calls": space.sims - search_sims,
                "space_size": space.size(),
                "horovod": dataclasses.asdict(horovod) if horovod is not None else None,
                "seconds": round(time.perf_counter() - t_start, 3)},
        hosts={d: topo.device(d).host for d in topo.ids})


def _normalize(space: SearchSpace, assignment: tuple[int, ...], sfb: list[str],
               strategy: object) -> tuple[int, ...]:
    """Put back the plain option of every decision that changes nothing in ``strategy`` (an SFB
    decision whose layers were all pruned, a hierarchy over one group...)."""
    out = list(assignment)
    for k, d in enumerate(space.decisions):
        if out[k] == d.default:
            continue
        trial = out.copy()
        trial[k] = d.default
        keep = sfb if d.key != "sfb" else []
        if space.build(tuple(trial), keep) == strategy:
            out = trial
    return tuple(out)


def _explain(space: SearchSpace, assignment: tuple[int, ...], sfb: list[str],
             best: float) -> list[DecisionRecord]:
    out: list[DecisionRecord] = []
    strategy = space.build(assignment, sfb)
    assert strategy is not None
    sparse = sorted(n for n, s in strategy.schemes.items() if s == "sparse")
    sfb_k = [x.key for x in space.decisions].index("sfb")

    def time_of(k: int, o: int) -> float:
        """The plan with decision ``k`` set to option ``o`` (pruned SFB layers kept if SFB
        stays on)."""
        alt = list(assignment)
        alt[k] = o
        keep_sfb = sfb if k != sfb_k and alt[sfb_k] else None
        return space.evaluate(tuple(alt), keep_sfb).step_time

    for k, d in enumerate(space.decisions):
        if len(d.options) < 2:
            continue
        chosen = assignment[k]
        if chosen != d.default:
            alt_o = d.default
        else:
            others = [o for o in range(len(d.options)) if o != chosen]
            alt_o = min(others, key=lambda o, k=k: time_of(k, o))
        out.append(DecisionRecord(d.key, d.options[chosen].label, d.options[alt_o].label, best,
                                  time_of(k, alt_o)))
    for name in sfb:
        t = space.evaluate(assignment, [n for n in sfb if n != name]).step_time
        out.append(DecisionRecord("sfb layer", f"{name}: sfb", f"{name}: all-reduce", best, t))
    for name in sparse:
        t = space.evaluate(assignment, sfb, [n for n in sparse if n != name]).step_time
        out.append(DecisionRecord("sparse layer", f"{name}: sparse", f"{name}: all-reduce",
                                  best, t))
    return out
