"""``DistributedOptimizer``: Horovod's optimizer wrapper, applying a plan.

Layers the plan gives ``"sfb"``, ``"sparse"`` or ``"hierarchical"`` are reduced by this module's
reducers (:mod:`._layers`); every other parameter goes through
``horovod.torch.DistributedOptimizer`` with the plan's buckets as Horovod ``groups``. The two
paths never overlap: the reducers' parameters are hidden from Horovod while it registers its
hooks (Horovod hooks only the parameters that require grad at construction).

Gradients are weighted by the plan's batch shares, ``share_r / Σ shares``, so uneven shares give
the gradient of the whole global batch when each rank's loss is the mean over its own samples.
With even shares the Horovod path is plain ``op=Average``, bit for bit what Horovod does.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import horovod.torch as hvd
import torch
from torch import nn

from stitchlab.topology.strategy import Strategy

from ._layers import HierarchicalReducer, SFBReducer, SparseReducer, scale_hooks
from ._plan import as_strategy, auto_strategy, check_strategy, even_strategy
from ._profile import PlanChange, Profile, StepProfiler, notify

#: (profile, current strategy, model) -> (new strategy, reasons per layer)
Planner = Callable[[Profile, Strategy, nn.Module], tuple[Strategy, dict[str, str]]]

_PROCESS_SETS: dict[tuple[int, ...], Any] = {}


def default_planner(
    profile: Profile, current: Strategy, model: nn.Module, memory_budget_bytes: float = math.inf
) -> tuple[Strategy, dict[str, str]]:
    """Re-plan from a profile with :func:`auto_strategy`, keeping the current devices, batch
    shares, groups and buckets, and the current hierarchical layers that auto leaves alone."""
    auto, reasons = auto_strategy(
        model,
        current.world_size,
        batch_shares=current.batch_shares,
        # a layer whose forward never ran in the profile is not measured (nn.MultiheadAttention
        # uses its out_proj's weight directly): 0 tokens would make SFB look free
        layer_tokens={
            n: p.tokens for n, p in profile.layers.items() if p.kind == "linear" and p.tokens > 0
        },
        embedding_rows={
            n: p.rows for n, p in profile.layers.items() if p.kind == "embedding" and p.rows > 0
        },
        bandwidth_bytes_per_s=profile.bandwidth_bytes_per_s,
        flops_per_s=profile.flops_per_s,
        latency_s=profile.latency_s,
        op_overhead_s=profile.op_overhead_s,
        memory_budget_bytes=memory_budget_bytes,
        gather_overhead_s=profile.gather_overhead_s,
        gather_step_s=profile.gather_step_s,
    )
    schemes = {n: s for n, s in current.schemes.items() if s == "hierarchical"}
    schemes.update(auto.schemes)
    new = Strategy(
        devices=list(current.devices),
        batch_shares=list(current.batch_shares),
        groups=[list(g) for g in current.groups],
        buckets=[list(b) for b in current.buckets],
        schemes=schemes,
    )
    return new, reasons


class DistributedOptimizer(torch.optim.Optimizer):
    """Data-parallel optimizer applying a stitchlab plan on top of Horovod.

    Args:
        optimizer: the local torch optimizer (its state is kept across re-plans).
        model: the model whose parameters ``optimizer`` updates; the plan's layer names refer to
            ``model.named_modules()``.
        plan: ``None`` (plain all-reduce), ``"auto"`` (all-reduce, then after ``profile_steps``
            steps the cost model's plan: SFB where it pays, sparse for low-density embeddings),
            a :class:`~stitchlab.topology.strategy.Strategy`, or an object with ``.strategy``.
        compression: Horovod compression for the all-reduce path (e.g.
            ``hvd.Compression.fp16``); the SFB and sparse paths are lossless.
        backward_passes_per_step: backward passes accumulated locally before communicating.
        local_batch_size: this rank's samples per step, for uneven shares without a plan (all
            ranks must pass it); with a plan it must equal the plan's share for this rank.
        profile_steps: profile this many steps, then re-plan and apply (default 3 for
            ``"auto"``, else 0: no re-planning).
        memory_budget_bytes: extra memory SFB may hold per rank when planning.
        callbacks: objects with any of ``on_profile``, ``on_plan``, ``on_apply``.
        planner: replaces :func:`default_planner`.

    With ``"hierarchical"`` layers, a step's last all-reduces run over process sets, and ranks
    return from ``step()`` at different times: call ``hvd.barrier()`` before the script exits,
    or the first ranks to exit shut Horovod down under the others' pending all-reduce.

    Example (under ``horovodrun``)::

        hvd.init()
        opt = DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, plan="auto")
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        for x, y in data:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        model: nn.Module,
        plan: Any = None,
        *,
        compression: Any = None,
        backward_passes_per_step: int = 1,
        local_batch_size: int | None = None,
        profile_steps: int | None = None,
        memory_budget_bytes: float = math.inf,
        callbacks: Sequence[Any] = (),
        planner: Planner | None = None,
    ) -> None:
        if not hvd.is_initialized():
            raise RuntimeError(
                "Horovod is not initialised: call horovod.torch.init() before creating "
                "stitchlab.horovod.DistributedOptimizer"
            )
        if isinstance(optimizer, DistributedOptimizer) or hasattr(optimizer, "skip_synchronize"):
            raise TypeError(
                "optimizer is already a distributed optimizer; pass the local torch optimizer"
            )
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}"
            )
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if not _whole(backward_passes_per_step, 1):
            raise ValueError(
                f"backward_passes_per_step must be a positive integer, got {backward_passes_per_step!r}"
            )
        if local_batch_size is not None and not _whole(local_batch_size, 0):
            raise ValueError(
                f"local_batch_size must be a non-negative integer, got {local_batch_size!r}"
            )
        if profile_steps is not None and not _whole(profile_steps, 0):
            raise ValueError(f"profile_steps must be a non-negative integer, got {profile_steps!r}")
        if (
            isinstance(memory_budget_bytes, bool)
            or not isinstance(memory_budget_bytes, int | float)
            or not memory_budget_bytes >= 0
        ):
            raise ValueError(
                f"memory_budget_bytes must be a number of bytes >= 0 (math.inf: no limit), got "
                f"{memory_budget_bytes!r}"
            )
        if isinstance(callbacks, str | bytes) or not isinstance(callbacks, Sequence):
            raise TypeError(
                f"callbacks must be a list of objects with on_profile/on_plan/on_apply, got "
                f"{type(callbacks).__name__}; wrap a single one in a list"
            )
        if planner is not None and not callable(planner):
            raise TypeError(
                f"planner must be a function (profile, strategy, model) -> "
                f"(strategy, reasons), got {type(planner).__name__}"
            )
        if compression is not None and not (
            hasattr(compression, "compress") and hasattr(compression, "decompress")
        ):
            raise TypeError(
                f"compression must be a Horovod compression such as hvd.Compression.fp16, got "
                f"{type(compression).__name__}: {compression!r}"
            )
        named = list(model.named_parameters())
        model_ids = {id(p) for _, p in named}
        stray = [
            tuple(p.shape)
            for g in optimizer.param_groups
            for p in g["params"]
            if id(p) not in model_ids
        ]
        if stray:
            raise ValueError(
                f"the optimizer updates {len(stray)} tensor(s) that are not parameters of the model "
                f"(shapes {stray[:5]}); build the optimizer from model.parameters()"
            )
        self._base = optimizer
        self._model = model
        self._named = named
        self._compression = compression if compression is not None else hvd.Compression.none
        self.backward_passes_per_step = int(backward_passes_per_step)
        self._callbacks = list(callbacks)
        self._planner = planner
        self._memory_budget = memory_budget_bytes
        self.history: list[PlanChange] = []
        self.profile: Profile | None = None

        size = hvd.size()
        shares = None
        if local_batch_size is not None:
            shares = [int(s) for s in hvd.allgather_object(int(local_batch_size))]
        if plan is None or (isinstance(plan, str) and plan == "auto"):
            strategy = even_strategy(size, shares)
        elif isinstance(plan, str):
            raise ValueError(
                f"plan must be None, 'auto', a Strategy or a Plan; got the string {plan!r}"
            )
        else:
            strategy = as_strategy(plan)
            if (
                shares is not None
                and strategy.world_size == size
                and shares != strategy.batch_shares
            ):
                raise ValueError(
                    f"local_batch_size gives shares {shares} but the plan says "
                    f"{strategy.batch_shares}; feed each rank its plan share "
                    f"(optimizer.batch_share) or drop local_batch_size"
                )
        check_strategy(strategy, model, size)
        _check_same_everywhere(strategy)
        if profile_steps is None:
            profile_steps = 3 if isinstance(plan, str) else 0
        self._profile_steps = int(profile_steps)
        self._profiler = StepProfiler(model) if self._profile_steps > 0 else None

        self._hvd: Any = None
        self._reducers: list[Any] = []
        self._removers: list[Callable[[], None]] = []
        self._should_synchronize = True
        self._synchronized = False
        self._sync_seconds = 0.0
        self.steps = 0
        self.strategy = strategy
        self._apply(strategy, state=optimizer.state)

    # ----------------------------------------------------------------- torch.optim.Optimizer face
    @property
    def param_groups(self) -> list[dict[str, Any]]:  # type: ignore[override]
        return self._hvd.param_groups

    @param_groups.setter
    def param_groups(self, value: list[dict[str, Any]]) -> None:
        self._hvd.param_groups = value

    @property
    def state(self) -> Any:  # type: ignore[override]
        return self._hvd.state

    @property
    def defaults(self) -> dict[str, Any]:  # type: ignore[override]
        return self._hvd.defaults

    def __getattr__(self, name: str) -> Any:
        # torch.optim.Optimizer internals (hook dicts, flags) live on the Horovod optimizer
        inner = self.__dict__.get("_hvd")
        if inner is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(inner, name)

    def __repr__(self) -> str:
        schemes = {
            s: sum(v == s for v in self.strategy.schemes.values())
            for s in set(self.strategy.schemes.values())
        }
        return (
            f"stitchlab.horovod.DistributedOptimizer({type(self._base).__name__}, "
            f"world={self.strategy.world_size}, shares={self.strategy.batch_shares}, "
            f"schemes={schemes or 'all allreduce'})"
        )

    def state_dict(self) -> dict[str, Any]:
        return self._hvd.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._hvd.load_state_dict(state_dict)
        for r in self._reducers:
            r.passes, r.launched = 0, False

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        raise NotImplementedError(
            "add_param_group after wrapping is not supported: add the group to the local "
            "optimizer, then wrap it again"
        )

    def zero_grad(self, set_to_none: bool = True) -> None:
        busy = [r.name for r in self._reducers if r.pending]
        if busy or self._hvd._handles:
            raise RuntimeError(
                "zero_grad() was called after backward() but before step() or synchronize() "
                f"(layers with gradients in flight: {busy or 'Horovod all-reduce'}); call step() "
                "first"
            )
        torch.optim.Optimizer.zero_grad(self._hvd, set_to_none=set_to_none)

    # ----------------------------------------------------------------- Horovod face
    @property
    def batch_share(self) -> int:
        """Samples this rank should process per step according to the plan."""
        return self.strategy.batch_shares[hvd.rank()]

    def synchronize(self) -> None:
        """Finish all gradient communication (Horovod's and the plan's own layers)."""
        start = time.perf_counter()
        self._hvd.synchronize()
        for r in self._reducers:
            r.finish()
        self._sync_seconds += time.perf_counter() - start
        self._synchronized = True

    @contextmanager
    def skip_synchronize(self) -> Iterator[None]:
        """Use around ``step()`` after calling ``synchronize()`` yourself (gradient clipping)."""
        self._should_synchronize = False
        try:
            yield
        finally:
            self._should_synchronize = True

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        if self._should_synchronize:
            if self._synchronized:
                warnings.warn(
                    "optimizer.step() called without optimizer.skip_synchronize() after "
                    "optimizer.synchronize(); gradients are not communicated twice, but wrap "
                    "step() in skip_synchronize()",
                    stacklevel=2,
                )
            else:
                self.synchronize()
        self._synchronized = False
        with self._hvd.skip_synchronize():
            loss = self._hvd.step(closure)
        self.steps += 1
        self._after_step()
        return loss

    # ----------------------------------------------------------------- planning
    def replan(
        self, strategy: Any, trigger: str = "user", reasons: dict[str, str] | None = None
    ) -> None:
        """Switch to another plan between steps, keeping the optimizer state (collective: every
        rank must call it with the same plan)."""
        new = as_strategy(strategy)
        check_strategy(new, self._model, hvd.size())
        _check_same_everywhere(new)
        change = PlanChange(trigger, self.strategy, new, dict(reasons or {}), self.profile)
        self.history.append(change)
        notify(self._callbacks, "on_plan", change)
        self._apply(new, state=self._hvd.state)

    def on_reset(self) -> None:
        """Re-plan for the current world size; register with Horovod elastic:
        ``state.register_reset_callbacks([optimizer.on_reset])``."""
        size = hvd.size()
        old = self.strategy
        if old.world_size == size:
            return
        new = even_strategy(size)
        keep = {n: s for n, s in old.schemes.items() if s in ("sfb", "sparse")}
        reasons = {n: f"{s}: kept from the previous plan" for n, s in keep.items()}
        if self.profile is not None:
            self.profile.world_size = size
            new, reasons = self._plan_from_profile(new)
        else:
            new.schemes = keep
        new.buckets = [list(b) for b in old.buckets]
        self.replan(
            new, trigger=f"world size changed from {old.world_size} to {size}", reasons=reasons
        )

    def _plan_from_profile(self, current: Strategy) -> tuple[Strategy, dict[str, str]]:
        assert self.profile is not None
        if hvd.rank() == 0:
            if self._planner is not None:
                new, reasons = self._planner(self.profile, current, self._model)
            else:
                new, reasons = default_planner(
                    self.profile, current, self._model, self._memory_budget
                )
            payload = json.dumps({"strategy": new.to_dict(), "reasons": reasons})
        else:
            payload = None
        payload = hvd.broadcast_object(payload, root_rank=0, name="stitchlab.replan")
        data = json.loads(payload)
        return Strategy.from_dict(data["strategy"]), data["reasons"]

    def _after_step(self) -> None:
        if self._profiler is None:
            return
        self._profiler.end_step(self._sync_seconds)
        self._sync_seconds = 0.0
        if self._profiler.steps < self._profile_steps:
            return
        profiler, self._profiler = self._profiler, None
        self.profile = profiler.finish()
        notify(self._callbacks, "on_profile", self.profile)
        new, reasons = self._plan_from_profile(self.strategy)
        self.replan(
            new, trigger=f"profile of the first {self._profile_steps} step(s)", reasons=reasons
        )

    def _apply(self, strategy: Strategy, state: Any) -> None:
        """Build the reducers and the Horovod optimizer for ``strategy``; keep ``state``."""
        k = self.backward_passes_per_step
        weight = strategy.weight(hvd.rank())
        modules = dict(self._model.named_modules())
        for r in self._reducers:
            r.remove()
        for remove in self._removers:
            remove()
        self._reducers, self._removers = [], []
        if self._hvd is not None:
            # Horovod cannot unregister its hooks: make the old optimizer's hooks inert
            # (its countdown never reaches zero, so it never launches an all-reduce).
            self._hvd._allreduce_delay = {p: math.inf for p in self._hvd._allreduce_delay}
            self._hvd._handles.clear()

        inner = outer = None
        if "hierarchical" in strategy.schemes.values():
            inner, outer = _hierarchy_sets(strategy.groups, hvd.rank())
        own: dict[int, nn.Parameter] = {}
        for layer, scheme in sorted(strategy.schemes.items()):
            module = modules[layer]
            if scheme == "sfb":
                self._reducers.append(SFBReducer(layer, module, k, weight))
            elif scheme == "sparse":
                self._reducers.append(SparseReducer(layer, module, k, weight))
            elif scheme == "hierarchical":
                self._reducers.append(HierarchicalReducer(layer, module, k, weight, inner, outer))
            else:
                continue
            own.update((id(p), p) for p in module.parameters(recurse=False))

        params = dict(self._named)
        groups = None
        if strategy.buckets:
            groups = [[params[n] for n in b if id(params[n]) not in own] for b in strategy.buckets]
            groups = [g for g in groups if g] or None
        even = len(set(strategy.batch_shares)) == 1
        if not even:
            rest = [p for _, p in self._named if id(p) not in own and p.requires_grad]
            self._removers = scale_hooks(rest, weight)

        hidden = [p for p in own.values() if p.requires_grad]
        for p in hidden:
            p.requires_grad_(False)
        try:
            self._hvd = hvd.DistributedOptimizer(
                self._base,
                named_parameters=self._named,
                compression=self._compression,
                backward_passes_per_step=k,
                op=hvd.Average if even else hvd.Sum,
                groups=groups,
            )
        finally:
            for p in hidden:
                p.requires_grad_(True)
        self._hvd.state = state
        self.strategy = strategy
        notify(self._callbacks, "on_apply", self, strategy)


def _whole(value: Any, minimum: int) -> bool:
    """``value`` is a whole number >= ``minimum`` (an int, or a float such as 2.0; not a bool)."""
    return (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and int(value) == value
        and value >= minimum
    )


def _check_same_everywhere(strategy: Strategy) -> None:
    """Raise on every rank when the ranks were given different plans."""
    text = strategy.to_json()
    texts = hvd.allgather_object(text)
    odd = [r for r, t in enumerate(texts) if t != texts[0]]
    if odd:
        raise ValueError(
            f"ranks {odd} were given a different plan than rank 0; every rank must apply the "
            f"same plan (rank 0's: {texts[0]}, rank {odd[0]}'s: {texts[odd[0]]})"
        )


def _hierarchy_sets(groups: list[list[int]], rank: int) -> tuple[Any, Any]:
    """Horovod process sets for this rank's group and for its position across groups."""
    position = {r: (gi, i) for gi, g in enumerate(groups) for i, r in enumerate(g)}
    gi, i = position[rank]
    sets = {}
    # every rank registers every set, in the same order (Horovod requires it)
    wanted = [sorted(g) for g in groups] + [
        sorted(g[j] for g in groups) for j in range(len(groups[0]))
    ]
    for ranks in wanted:
        key = tuple(ranks)
        if key not in _PROCESS_SETS:
            if len(ranks) == hvd.size():
                _PROCESS_SETS[key] = hvd.global_process_set
            else:
                try:
                    _PROCESS_SETS[key] = hvd.add_process_set(list(ranks))
                except Exception as err:  # Horovod raises ValueError / HorovodInternalError
                    raise RuntimeError(
                        f"cannot create the Horovod process set {list(ranks)} the plan's groups "
                        f"{groups} need ({err}); start Horovod with "
                        "hvd.init(process_sets='dynamic') or HOROVOD_DYNAMIC_PROCESS_SETS=1"
                    ) from err
        sets[key] = _PROCESS_SETS[key]
    inner = sets[tuple(sorted(groups[gi]))]
    outer = sets[tuple(sorted(g[i] for g in groups))]
    return inner, outer
