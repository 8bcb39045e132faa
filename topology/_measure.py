"""Profiling a torch ``nn.Module`` into a :class:`ModelProfile` (torch imported here only).

Measured profiles time real training steps on the real device with hooks:

* forward: a forward pre-hook on every *layer* (a module owning parameters) stamps the clock; the
  time until the next layer starts (or the loss is computed) is charged to it, so parameter-free
  modules and functions count with the layer before them and the sums equal the measured forward;
* backward: a post-accumulate-grad hook on every parameter stamps when its gradient is ready (what
  DDP and Horovod react to); a layer's backward time is the time from the previous layer's
  gradients to its own, so the prefix sums the simulator builds are the measured ready times.
  Layers are listed in reverse order of readiness — forward order for a sequential model — which
  also places a module used only through its weights (``out_proj`` of ``nn.MultiheadAttention``)
  where its gradient becomes ready; frozen parameters are marked ``trainable=False``;
* activations: a saved-tensors hook counts the bytes autograd keeps for backward while each layer
  runs (parameters and repeats of one storage excluded);
* linear layers: ``in_features``, ``out_features`` and the rows of their input (tokens);
  embeddings: the fraction of table rows the batch touches (gradient density).

Estimated profiles (``estimate=True``) run one forward under
``torch.utils.flop_counter.FlopCounterMode`` and divide each layer's FLOPs by the device speed
(backward: twice the forward FLOPs); FLOPs outside any layer are spread over the layers in
proportion to their own. Memory-bound layers (embeddings, norms) come out near zero: an estimate
is a lower bound, use measured profiles where you can.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from .profile import LayerProfile, ModelProfile, ParamInfo


def _torch():
    import torch

    return torch


def measure_matmul_flops(device: Any = "cpu", n: int = 512, seconds: float = 0.2) -> float:
    """FLOP/s of float32 ``n×n`` matrix products on ``device`` (a quick speed yardstick, used as
    ``device_flops`` of measured profiles and of discovered CPU devices)."""
    torch = _torch()
    device = torch.device(device)
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    a @ b
    sync()
    reps, start = 0, time.perf_counter()
    while True:
        a @ b
        reps += 1
        if reps % 4 == 0:
            sync()
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return 2.0 * n**3 * reps / elapsed


def _layer_kind(module: Any) -> str:
    nn = _torch().nn
    if isinstance(module, nn.Linear):
        return "linear"
    if isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
        return "embedding"
    if isinstance(module, nn.modules.conv._ConvNd):
        return "conv"
    norms = (nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._NormBase,
             getattr(nn, "RMSNorm", nn.LayerNorm))
    if isinstance(module, norms):
        return "norm"
    return "other"


def _first_tensor(value: Any) -> Any:
    torch = _torch()
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for v in value:
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


def _default_loss(output: Any) -> Any:
    out = _first_tensor(output)
    if out is None:
        raise TypeError("the model returned no tensor; pass loss_fn=(output -> scalar tensor)")
    return out.float().mean()


def _call(model: Any, sample: Any) -> Any:
    if isinstance(sample, dict):
        return model(**sample)
    if isinstance(sample, (list, tuple)):
        return model(*sample)
    return model(sample)


def _to(sample: Any, device: Any) -> Any:
    torch = _torch()
    if isinstance(sample, torch.Tensor):
        return sample.to(device)
    if isinstance(sample, dict):
        return {k: _to(v, device) for k, v in sample.items()}
    if isinstance(sample, (list, tuple)):
        return type(sample)(_to(v, device) for v in sample)
    return sample


class _Recorder:
    """Hooks that stamp forward starts, gradient-ready times and saved activation bytes."""

    def __init__(self, model: Any, layers: dict[str, Any], sync: Callable[[], None]) -> None:
        torch = _torch()
        self.sync = sync
        self.layers = layers
        self.forward_events: list[tuple[str, float]] = []
        self.ready: dict[str, float] = {}
        self.saved: dict[str, int] = {}
        self.tokens: dict[str, int] = {}
        self.touched: dict[str, Any] = {}
        self.order: list[str] = []
        self.current: str | None = None
        self.seen_storage: set[tuple[int, tuple[int, ...]]] = set()
        self.param_ptrs = {p.data_ptr() for p in model.parameters()}
        self.handles = []
        for name, module in layers.items():
            self.handles.append(module.register_forward_pre_hook(self._pre(name, module)))
            for p in module.parameters(recurse=False):
                if p.requires_grad:
                    self.handles.append(p.register_post_accumulate_grad_hook(self._grad(name)))
        self.saved_hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t)

    def _pre(self, name: str, module: Any):
        def hook(mod: Any, args: tuple) -> None:
            self.sync()
            self.forward_events.append((name, time.perf_counter()))
            self.current = name
            if name not in self.order:
                self.order.append(name)
            x = _first_tensor(args)
            kind = _layer_kind(module)
            if x is not None and kind == "linear":
                self.tokens[name] = self.tokens.get(name, 0) + x.numel() // module.in_features
            if x is not None and kind == "embedding":
                idx = x.detach().reshape(-1).unique()
                prev = self.touched.get(name)
                self.touched[name] = idx if prev is None else _torch().cat([prev, idx]).unique()
        return hook

    def _grad(self, name: str):
        def hook(param: Any) -> None:
            self.sync()
            self.ready[name] = time.perf_counter()
        return hook

    def _pack(self, t: Any) -> Any:
        if self.current is not None and t.data_ptr() not in self.param_ptrs:
            key = (t.data_ptr(), tuple(t.shape))
            if key not in self.seen_storage:
                self.seen_storage.add(key)
                self.saved[self.current] = self.saved.get(self.current, 0) + \
                    t.numel() * t.element_size()
        return t

    def reset(self) -> None:
        self.forward_events.clear()
        self.ready.clear()
        self.saved.clear()
        self.tokens.clear()
        self.touched.clear()
        self.seen_storage.clear()
        self.current = None

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _layers_of(model: Any) -> dict[str, Any]:
    """Modules that own parameters directly, by qualified name; a shared parameter belongs to the
    first module that owns it."""
    layers, seen = {}, set()
    for name, module in model.named_modules():
        own = [p for p in module.parameters(recurse=False) if id(p) not in seen]
        if own:
            seen.update(id(p) for p in own)
            layers[name or type(model).__name__] = module
    return layers


def _params(model: Any, layers: dict[str, Any]) -> dict[str, list[ParamInfo]]:
    names = {id(p): n for n, p in model.named_parameters()}
    out: dict[str, list[ParamInfo]] = {}
    taken: set[int] = set()
    for lname, module in layers.items():
        out[lname] = []
        for p in module.parameters(recurse=False):
            if id(p) in taken:
                continue
            taken.add(id(p))
            out[lname].append(ParamInfo(names[id(p)], tuple(p.shape),
                                        str(p.dtype).removeprefix("torch."),
                                        trainable=bool(p.requires_grad)))
    return out


def profile_module(
    model: Any,
    sample_input: Any,
    device: Any = None,
    steps: int = 3,
    estimate: bool = False,
    *,
    loss_fn: Callable[[Any], Any] | None = None,
    optimizer: Any = None,
    batch_size: int | None = None,
    device_flops: float | None = None,
    name: str | None = None,
    warmup: int = 1,
) -> ModelProfile:
    """Profile ``model`` on ``sample_input``.

    Args:
        model: a torch ``nn.Module`` (moved to ``device`` when given; its ``.grad`` are left
            ``None`` afterwards).
        sample_input: a tensor, a tuple of positional tensors or a dict of keyword tensors: one
            batch.
        device: torch device to run on (default: where the model's parameters are), or a
            topology :class:`~stitchlab.topology.Device` whose ``flops`` an estimate divides by.
        steps: timed steps (after ``warmup`` untimed ones); per-layer times are the median.
        estimate: estimate times from FLOPs instead of timing.
        loss_fn: ``output -> scalar`` (default: mean of the first output tensor).
        optimizer: a torch optimizer over the model's parameters: its ``step()`` is timed and its
            state size sets ``optimizer_state_factor`` (default: Adam's 2, time 0).
        batch_size: samples in ``sample_input`` (default: first dimension of its first tensor).
        device_flops: speed of the device in FLOP/s (default: measured with a matmul, or the
            topology device's ``flops``).
        name: profile name (default: the model's class name).

    Returns:
        A :class:`ModelProfile`.

    Example:
        >>> import torch
        >>> net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
        >>> prof = profile_module(net, torch.randn(4, 8), steps=1, device_flops=1e10)
        >>> [(l.name, l.in_features, l.out_features, l.tokens) for l in prof.layers]
        [('0', 8, 16, 4), ('2', 16, 2, 4)]
    """
    torch = _torch()
    from .devices import Device

    topo_device = device if isinstance(device, Device) else None
    if topo_device is not None:
        device = None
        if device_flops is None:
            device_flops = topo_device.flops
    if device is not None:
        model = model.to(device)
    first = next(model.parameters(), None)
    tdev = torch.device(device) if device is not None else (
        first.device if first is not None else torch.device("cpu"))
    sample = _to(sample_input, tdev)
    if batch_size is None:
        t = _first_tensor(sample)
        if t is None or t.dim() == 0:
            raise TypeError("cannot tell the batch size from sample_input; pass batch_size=")
        batch_size = int(t.shape[0])
    loss_fn = loss_fn or _default_loss
    sync = torch.cuda.synchronize if tdev.type == "cuda" else (lambda: None)
    layers = _layers_of(model)
    params = _params(model, layers)
    if device_flops is None:
        device_flops = measure_matmul_flops(tdev)
    dev_name = topo_device.name or topo_device.id if topo_device is not None else (
        torch.cuda.get_device_name(tdev) if tdev.type == "cuda" else "cpu")

    rec = _Recorder(model, layers, sync)
    fwd_runs: dict[str, list[float]] = {n: [] for n in layers}
    bwd_runs: dict[str, list[float]] = {n: [] for n in layers}
    opt_runs: list[float] = []
    try:
        for i in range(warmup + (1 if estimate else steps)):
            rec.reset()
            model.zero_grad(set_to_none=True)
            sync()
            t0 = time.perf_counter()
            with rec.saved_hooks:
                loss = loss_fn(_call(model, sample))
            sync()
            t_fwd = time.perf_counter()
            rec.current = None
            loss.backward()
            sync()
            t_bwd = time.perf_counter()
            if optimizer is not None:
                optimizer.step()
                sync()
                opt_runs.append(time.perf_counter() - t_bwd)
            if i < warmup and not estimate:
                continue
            _charge_forward(rec, t0, t_fwd, fwd_runs)
            _charge_backward(rec, t_fwd, t_bwd, bwd_runs)
        # layers in reverse order of gradient readiness (forward order for a sequential model);
        # this also places layers whose module is never called (an attention block's out_proj,
        # used through its weight) where their gradients actually become ready
        ready = sorted(rec.ready, key=rec.ready.__getitem__)
        order = list(reversed(ready)) + [n for n in rec.order if n not in rec.ready]
        order += [n for n in layers if n not in order]
        tokens, saved = dict(rec.tokens), dict(rec.saved)
        touched = {k: int(v.numel()) for k, v in rec.touched.items()}
    finally:
        rec.remove()
        model.zero_grad(set_to_none=True)

    flops_fwd: dict[str, float] = {}
    flops_bwd: dict[str, float] = {}
    if estimate:
        flops_fwd, flops_bwd = _count_flops(model, sample, loss_fn, layers)

    out = []
    for n in order:
        module = layers[n]
        kind = _layer_kind(module)
        lp = LayerProfile(n, kind, params[n], activation_bytes=saved.get(n, 0))
        if estimate:
            lp.forward_time = flops_fwd.get(n, 0.0) / device_flops
            lp.backward_time = flops_bwd.get(n, 0.0) / device_flops
            lp.forward_flops = flops_fwd.get(n, 0.0)
        else:
            lp.forward_time = statistics.median(fwd_runs[n]) if fwd_runs[n] else 0.0
            lp.backward_time = statistics.median(bwd_runs[n]) if bwd_runs[n] else 0.0
        if kind == "linear":
            lp.in_features, lp.out_features = module.in_features, module.out_features
            lp.tokens = tokens.get(n)
            if not estimate:
                lp.forward_flops = 2.0 * (lp.tokens or 0) * lp.in_features * lp.out_features
        if kind == "embedding":
            lp.num_embeddings, lp.embedding_dim = module.num_embeddings, module.embedding_dim
            if n in touched:
                lp.grad_density = touched[n] / module.num_embeddings
        out.append(lp)

    factor = 2.0
    if optimizer is not None:
        state = sum(v.numel() * v.element_size() for s in optimizer.state.values()
                    for v in s.values() if torch.is_tensor(v) and v.dim() > 0)
        total = sum(p.numel() * p.element_size() for p in model.parameters())
        factor = state / total if total else 0.0
    return ModelProfile(
        name=name or type(model).__name__,
        batch_size=batch_size,
        device=dev_name,
        device_flops=float(device_flops),
        layers=out,
        optimizer_time=statistics.median(opt_runs[warmup:] or opt_runs) if opt_runs else 0.0,
        optimizer_state_factor=factor,
        method="estimated" if estimate else "measured",
    )


def _charge_forward(rec: _Recorder, t0: float, t_end: float, runs: dict[str, list[float]]) -> None:
    spent: dict[str, float] = {}
    events = rec.forward_events
    for k, (name, t) in enumerate(events):
        start = t0 if k == 0 else t
        end = events[k + 1][1] if k + 1 < len(events) else t_end
        spent[name] = spent.get(name, 0.0) + end - start
    for name, value in spent.items():
        runs[name].append(value)


def _charge_backward(rec: _Recorder, t0: float, t_end: float,
                     runs: dict[str, list[float]]) -> None:
    """Backward time of each layer: the gap from the previous layer's gradients being ready (in
    the order they became ready) to its own, so that running sums give each layer's ready time;
    the time after the last gradient goes to the last layer."""
    last = t0
    order = sorted(rec.ready, key=rec.ready.__getitem__)
    for k, name in enumerate(order):
        end = t_end if k == len(order) - 1 else rec.ready[name]
        runs[name].append(max(0.0, end - last))
        last = end


def _count_flops(model: Any, sample: Any, loss_fn: Callable, layers: dict[str, Any]):
    """Forward and backward FLOPs per layer (exclusive of nested layers)."""
    from torch.utils.flop_counter import FlopCounterMode

    root = type(model).__name__

    def per_module(flop_counts: dict) -> dict[str, float]:
        counts = {k: float(sum(v.values())) for k, v in flop_counts.items()}
        total = counts.get("Global", 0.0)
        own = {}
        for n in layers:
            key = root if n == root else f"{root}.{n}"
            own[n] = counts.get(key, 0.0)
        exclusive = {}
        for n in layers:  # subtract nested layers
            inner = [m for m in layers if m != n and (n == root or m.startswith(n + "."))]
            exclusive[n] = max(0.0, own[n] - sum(own[m] for m in inner
                                                 if not any(m.startswith(o + ".") for o in inner
                                                            if o != m)))
        rest = total - sum(exclusive.values())
        s = sum(exclusive.values())
        if rest > 0 and s > 0:
            exclusive = {n: v + rest * v / s for n, v in exclusive.items()}
        return exclusive

    # FlopCounterMode attributes backward ops to the wrong modules (its module tracker is off
    # across parameter-free modules), so backward is taken as 2x forward: grad input + grad weight.
    with FlopCounterMode(display=False) as counter:
        loss_fn(_call(model, sample))
    forward = per_module(counter.get_flop_counts())
    backward = {n: 2.0 * v for n, v in forward.items()}
    model.zero_grad(set_to_none=True)
    return forward, backward
