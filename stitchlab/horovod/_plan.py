"""Plans for the Horovod integration: accepting them, checking them against the model and the
world, and the automatic plan built from the compression cost model.

A plan is a :class:`stitchlab.topology.strategy.Strategy`, or any object carrying one as
``.strategy`` (the planner's ``Plan``). Checks happen before the first step, so a plan meant for
another model or world size is an error, never a silently wrong gradient.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from torch import nn

from stitchlab.compression.cost import SchemeCost, gathering_pays, sfb_cost, sparse_cost
from stitchlab.compression.placement import place_sfb
from stitchlab.topology.strategy import Strategy

#: used by :func:`auto_strategy` when nothing was measured: a 10 Gbit/s link, 20 µs per message,
#: 200 µs fixed cost per collective operation
DEFAULT_BANDWIDTH_BYTES_PER_S = 1.25e9
DEFAULT_LATENCY_S = 20e-6
DEFAULT_OP_OVERHEAD_S = 200e-6
#: and a CPU core's order of matrix-multiply throughput
DEFAULT_FLOPS_PER_S = 5e10


def as_strategy(plan: Any) -> Strategy:
    """The :class:`Strategy` of ``plan`` (a Strategy or an object with ``.strategy``)."""
    if isinstance(plan, Strategy):
        return plan
    inner = getattr(plan, "strategy", None)
    if isinstance(inner, Strategy):
        return inner
    raise TypeError(
        f"plan must be None, 'auto', a stitchlab.topology.strategy.Strategy or an object with a "
        f".strategy attribute holding one; got {type(plan).__name__}: {plan!r}"
    )


def even_strategy(world_size: int, batch_shares: list[int] | None = None) -> Strategy:
    """Flat all-reduce over ``world_size`` ranks (the plan when none is given)."""
    _check_world_size(world_size)
    shares = list(batch_shares) if batch_shares is not None else [1] * world_size
    return Strategy(devices=[f"rank{r}" for r in range(world_size)], batch_shares=shares)


def check_strategy(strategy: Strategy, model: nn.Module, world_size: int) -> None:
    """Raise ``ValueError`` when ``strategy`` cannot be applied to ``model`` on ``world_size`` ranks.

    Checks the world size, that every layer the plan names exists with the type its scheme needs,
    that bucket entries are parameters of the model, and that hierarchical layers have groups of
    equal size.
    """
    if strategy.world_size != world_size:
        raise ValueError(
            f"the plan is for {strategy.world_size} ranks (devices {strategy.devices}) but Horovod "
            f"runs {world_size}; re-plan for {world_size} ranks (plan='auto' or the planner) or "
            f"launch with -np {strategy.world_size}"
        )
    modules = dict(model.named_modules())
    tied = shared_weights(model)
    for layer, scheme in sorted(strategy.schemes.items()):
        if layer not in modules:
            near = sorted(n for n in modules if n and (layer in n or n in layer))[:5]
            raise ValueError(
                f"the plan names layer {layer!r} (scheme {scheme!r}) but the model has no such "
                f"module{'; similar names: ' + str(near) if near else ''}; the plan was made for "
                f"another model, re-plan for this one"
            )
        module = modules[layer]
        if scheme == "sfb" and not isinstance(module, nn.Linear):
            raise ValueError(
                f"the plan applies SFB to {layer!r}, a {type(module).__name__}; SFB is for "
                "nn.Linear layers only"
            )
        if scheme == "sparse" and not isinstance(module, nn.Embedding):
            raise ValueError(
                f"the plan applies sparse encoding to {layer!r}, a {type(module).__name__}; it is "
                "for nn.Embedding layers only"
            )
        if scheme in ("sfb", "sparse") and id(module.weight) in tied:
            raise ValueError(
                f"the plan applies {scheme!r} to {layer!r}, whose weight is shared with another module "
                "(tied weights): it would rebuild only this layer's part of the gradient and drop the "
                "rest; give that layer 'allreduce'"
            )
        if scheme in ("sfb", "sparse", "hierarchical"):
            if not any(p.requires_grad for p in module.parameters(recurse=False)):
                raise ValueError(
                    f"the plan gives {layer!r} scheme {scheme!r} but it has no trainable "
                    "parameters of its own"
                )
        if scheme == "hierarchical":
            if not strategy.groups:
                raise ValueError(
                    f"layer {layer!r} is 'hierarchical' but the plan has no groups; give "
                    "Strategy.groups (lists of ranks) or use 'allreduce'"
                )
            sizes = {len(g) for g in strategy.groups}
            if len(sizes) != 1:
                raise ValueError(
                    f"hierarchical reduction needs groups of equal size, got {strategy.groups}"
                )
            if isinstance(module, nn.Embedding) and module.sparse:
                raise ValueError(
                    f"layer {layer!r} is 'hierarchical' but is an nn.Embedding(sparse=True), whose "
                    "sparse gradient Horovod cannot all-reduce; give it 'sparse' or 'allreduce'"
                )
    if strategy.buckets:
        # with groups, Horovod all-reduces every parameter it reduces (even one outside all
        # buckets) through its grouped all-reduce, which takes dense tensors only
        for name, module in modules.items():
            if isinstance(module, nn.Embedding) and module.sparse \
                    and strategy.scheme(name) == "allreduce" and module.weight.requires_grad:
                raise ValueError(
                    f"{name!r} is an nn.Embedding(sparse=True) left to Horovod's all-reduce, "
                    f"which cannot reduce its sparse gradient once the plan has buckets "
                    f"({strategy.buckets}); give {name!r} the 'sparse' scheme or drop the buckets"
                )
    params = dict(model.named_parameters())
    seen: set[str] = set()
    for bucket in strategy.buckets:
        for name in bucket:
            if name not in params:
                raise ValueError(
                    f"the plan's bucket {bucket} names parameter {name!r}, which the model lacks; "
                    "the plan was made for another model"
                )
            if name in seen:
                raise ValueError(f"parameter {name!r} is in more than one bucket of the plan")
            seen.add(name)


def auto_strategy(
    model: nn.Module,
    world_size: int,
    *,
    batch_shares: list[int] | None = None,
    layer_tokens: Mapping[str, int] | None = None,
    embedding_rows: Mapping[str, int] | None = None,
    bandwidth_bytes_per_s: float = DEFAULT_BANDWIDTH_BYTES_PER_S,
    flops_per_s: float = DEFAULT_FLOPS_PER_S,
    latency_s: float = DEFAULT_LATENCY_S,
    op_overhead_s: float = DEFAULT_OP_OVERHEAD_S,
    memory_budget_bytes: float = math.inf,
    gather_overhead_s: float | None = None,
    gather_step_s: float = 0.0,
) -> tuple[Strategy, dict[str, str]]:
    """Build a strategy from the compression cost model (the planner will replace the internals).

    SFB goes to the linear layers where it saves time (traffic saved minus rebuild arithmetic
    minus the layer's fixed cost), chosen under the memory budget by the integer program of
    :func:`stitchlab.compression.placement.place_sfb`; sparse encoding goes to embeddings whose
    touched rows make the (index, value) all-gather save time over the dense all-reduce. Both
    are kept only when together they save more than ``gather_step_s``, what a step pays once for
    all-gathering at all (:func:`stitchlab.compression.cost.gathering_pays`). Layers not measured
    stay on all-reduce.

    Args:
        model: the model.
        world_size: ranks.
        batch_shares: samples per rank (default: even).
        layer_tokens: linear layer name -> rows of its input in one optimizer step, all ranks.
        embedding_rows: embedding name -> distinct rows touched in one step, summed over ranks.
        bandwidth_bytes_per_s, flops_per_s, latency_s, op_overhead_s: machine rates and the
            fixed cost of one more collective (measured by the profiler).
        memory_budget_bytes: extra memory SFB may hold per rank.
        gather_overhead_s: fixed cost one SFB or sparse layer adds to a step (the profiler's
            :func:`~stitchlab.horovod._profile.measure_gather`); replaces ``op_overhead_s`` for
            them. ``None``: not measured, ``op_overhead_s`` per extra collective instead.
        gather_step_s: fixed cost a step pays once when any layer all-gathers.

    Returns:
        ``(strategy, reasons)``: reasons maps each candidate layer to why it got its scheme.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    _check_world_size(world_size)
    for name, value, positive in (
        ("bandwidth_bytes_per_s", bandwidth_bytes_per_s, True),
        ("flops_per_s", flops_per_s, True),
        ("latency_s", latency_s, False),
        ("op_overhead_s", op_overhead_s, False),
        ("gather_step_s", gather_step_s, False),
    ) + ((("gather_overhead_s", gather_overhead_s, False),) if gather_overhead_s is not None else ()):
        _check_rate(name, value, positive)
    layer_tokens = _counts("layer_tokens", layer_tokens)
    embedding_rows = _counts("embedding_rows", embedding_rows)
    modules = dict(model.named_modules())
    for name, rows in embedding_rows.items():
        module = modules.get(name)
        if isinstance(module, nn.Embedding) and rows > world_size * module.num_embeddings:
            raise ValueError(
                f"embedding_rows[{name!r}]={rows} is more than the {module.num_embeddings} rows "
                f"of {name!r} times {world_size} ranks; give the distinct rows each rank touched "
                "in one step, summed over ranks"
            )
    reasons: dict[str, str] = {}
    schemes: dict[str, str] = {}
    candidates = {}
    saved_by: dict[str, float] = {}  # layers that all-gather: their time saved per step
    rates = (bandwidth_bytes_per_s, flops_per_s, latency_s, op_overhead_s, gather_overhead_s)
    tied = shared_weights(model)
    for name, module in model.named_modules():
        if isinstance(module, (nn.Linear, nn.Embedding)) and id(module.weight) in tied:
            reasons[name] = ("allreduce: its weight is shared with another module (tied weights), "
                             "whose part of the gradient SFB or sparse rows would drop")
            continue
        if isinstance(module, nn.Linear) and module.weight.requires_grad:
            if name not in layer_tokens:
                reasons[name] = "allreduce: not measured"
                continue
            cost = sfb_cost(
                module.in_features,
                module.out_features,
                layer_tokens[name],
                world_size,
                bias=module.bias is not None,
                itemsize=module.weight.element_size(),
            )
            saved = cost.time_saved(*rates)
            if world_size > 1 and saved > 0:
                candidates[name] = cost
                saved_by[name] = saved
            reasons[name] = (
                f"allreduce: SFB would move {_mb(cost.traffic_bytes)} instead of "
                f"{_mb(cost.baseline_bytes)} for {layer_tokens[name]} tokens, saving "
                f"{saved * 1e3:.3f} ms per step{_fixed(cost, op_overhead_s, gather_overhead_s)}"
            )
        elif isinstance(module, nn.Embedding) and module.weight.requires_grad:
            if name not in embedding_rows:
                reasons[name] = "allreduce: not measured"
                continue
            cost = sparse_cost(
                module.num_embeddings,
                module.embedding_dim,
                embedding_rows[name],
                world_size,
                itemsize=module.weight.element_size(),
            )
            density = embedding_rows[name] / (world_size * module.num_embeddings)
            saved = cost.time_saved(*rates)
            if world_size > 1 and saved > 0:
                schemes[name] = "sparse"
                saved_by[name] = saved
                verdict = "sparse"
            else:
                verdict = "allreduce"
            reasons[name] = (
                f"{verdict}: {density:.1%} of rows touched per rank, (index, value) all-gather "
                f"moves {_mb(cost.traffic_bytes)} against {_mb(cost.baseline_bytes)}, saving "
                f"{saved * 1e3:.3f} ms per step{_fixed(cost, op_overhead_s, gather_overhead_s)}"
            )
    chosen = place_sfb(candidates, memory_budget_bytes, *rates)
    for name in candidates:
        if name in chosen:
            schemes[name] = "sfb"
            reasons[name] = "sfb" + reasons[name][len("allreduce") :]
        else:
            reasons[name] += " (left off: over the memory budget)"
            del saved_by[name]
    if saved_by and not gathering_pays(saved_by.values(), gather_step_s):
        why = (
            f" (left off: the all-gathering layers together save "
            f"{sum(saved_by.values()) * 1e3:.3f} ms per step, not more than the "
            f"{gather_step_s * 1e3:.3f} ms a step pays once for all-gathering at all)"
        )
        for name in saved_by:
            scheme = schemes.pop(name)
            reasons[name] = "allreduce" + reasons[name][len(scheme) :] + why
    strategy = even_strategy(world_size, batch_shares)
    strategy.schemes = schemes
    return strategy, reasons


def _check_world_size(world_size: Any) -> None:
    if isinstance(world_size, bool) or not isinstance(world_size, numbers.Integral) or world_size < 1:
        raise ValueError(
            f"world_size must be a positive integer (the number of Horovod ranks, hvd.size()), "
            f"got {world_size!r}"
        )


def _check_rate(name: str, value: Any, positive: bool) -> None:
    low = "> 0" if positive else ">= 0"
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (value > 0 if positive else value >= 0)
        or math.isinf(value)
    ):
        raise ValueError(f"{name} must be a finite number {low}, got {value!r}")


def _counts(name: str, counts: Mapping[str, Any] | None) -> dict[str, float]:
    """``layer_tokens``/``embedding_rows``: layer name -> a finite count >= 0."""
    if counts is None:
        return {}
    if not isinstance(counts, Mapping):
        raise TypeError(f"{name} must map layer names to counts, e.g. {{'fc1': 4096}}; got "
                        f"{type(counts).__name__}")
    for layer, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not 0 <= value < math.inf:
            raise ValueError(f"{name}[{layer!r}] must be a finite number >= 0, got {value!r}")
    return dict(counts)


def shared_weights(model: nn.Module) -> set[int]:
    """The ids of the parameters that more than one module of ``model`` holds (tied weights)."""
    holders: dict[int, int] = {}
    for module in model.modules():
        for p in module.parameters(recurse=False):
            holders[id(p)] = holders.get(id(p), 0) + 1
    return {pid for pid, n in holders.items() if n > 1}


def _fixed(cost: SchemeCost, op_overhead_s: float, gather_overhead_s: float | None) -> str:
    """The fixed cost in a reason, when there is one."""
    fixed = cost.fixed_cost_s(op_overhead_s, gather_overhead_s)
    if not fixed:
        return ""
    measured = cost.gathers and gather_overhead_s is not None
    what = "measured all-gather cost" if measured else "cost of its extra collective"
    return f" after the {what} of {fixed * 1e3:.3f} ms"


def _mb(nbytes: float) -> str:
    return f"{nbytes / 1e6:.3g} MB"
