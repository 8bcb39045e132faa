"""The joint graph the GNN reads: model layers (or layer groups) and devices, as numpy arrays.

Nodes:

* **layer nodes** — one per layer, or per group of consecutive layers when the model has more than
  :data:`MAX_LAYER_NODES` (sums of times and bytes): log forward/backward time, log parameter and
  activation bytes, kind (one-hot), log SFB traffic ratio ``T(m+k) / 2mk`` (0 when not linear),
  embedding gradient density, position in the model;
* **device nodes** — log FLOP/s, log memory, mean and minimum log bandwidth to the other devices,
  devices in its host.

Edges (both directions; features ``[layer-layer, device-device, layer-device, x, y]``):

* layer → next layer: ``x`` = log activation bytes passed on;
* device ↔ device (same host, or the same local index on another host, so 64 devices stay
  sparse): ``x`` = log route bandwidth, ``y`` = log route latency;
* layer ↔ device: ``x`` = log of the layer's compute time on that device, ``y`` = log of its
  gradient bytes over the device's slowest route.

The option features of each decision (:class:`~.space.Option`) come from the space itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..profile import LAYER_KINDS
from .space import DECISIONS, N_OPTION_FEATURES, SearchSpace

MAX_LAYER_NODES = 24
LAYER_FEATURES = 6 + len(LAYER_KINDS)
DEVICE_FEATURES = 5
EDGE_FEATURES = 5


def _lg(x: float, scale: float = 1.0) -> float:
    return math.log10(max(x * scale, 1e-9))


@dataclass
class JointGraph:
    """Arrays of one problem's joint graph (all float32 / int64)."""

    layer_x: np.ndarray  # (L, LAYER_FEATURES)
    device_x: np.ndarray  # (D, DEVICE_FEATURES)
    src: np.ndarray  # (E,) node index; layers first, then devices
    dst: np.ndarray  # (E,)
    edge_x: np.ndarray  # (E, EDGE_FEATURES)
    option_x: np.ndarray  # (O, N_OPTION_FEATURES)
    option_decision: np.ndarray  # (O,) decision index in DECISIONS
    option_slices: list[tuple[int, int]]  # per decision of the space: [start, end) into options


def build_graph(space: SearchSpace) -> JointGraph:
    """The joint graph of ``space`` (its topology, profile and decisions)."""
    prof, topo = space.profile, space.topo
    layers = prof.layers
    n_groups = min(len(layers), MAX_LAYER_NODES)
    bounds = np.linspace(0, len(layers), n_groups + 1).round().astype(int)
    lx, grad_bytes, times, acts = [], [], [], []
    p = len(space.order)
    total_tokens_scale = space.global_batch / prof.batch_size
    for g in range(n_groups):
        group = layers[bounds[g]:bounds[g + 1]]
        kind = np.zeros(len(LAYER_KINDS))
        ratios, density = [], 0.0
        for ln in group:
            kind[LAYER_KINDS.index(ln.kind)] += 1.0 / len(group)
            if ln.in_features and ln.out_features and ln.tokens:
                t = ln.tokens * total_tokens_scale
                m, k = ln.in_features, ln.out_features
                ratios.append(math.log10(max(t * (m + k) / (2 * m * k), 1e-6)) / 3)
            if ln.grad_density is not None:
                density = max(density, ln.grad_density)
        sfb_ratio = min(ratios) if ratios else 0.0
        fwd = sum(ln.forward_time for ln in group)
        bwd = sum(ln.backward_time for ln in group)
        pb = sum(ln.param_bytes for ln in group)
        ab = sum(ln.activation_bytes for ln in group)
        lx.append([_lg(fwd, 1e3) / 3, _lg(bwd, 1e3) / 3, _lg(pb, 1e-6) / 3, _lg(ab, 1e-6) / 3,
                   sfb_ratio, density, *kind, g / max(n_groups - 1, 1)][:LAYER_FEATURES])
        grad_bytes.append(pb)
        acts.append(ab)
        times.append(fwd + bwd)
    ids = space.order
    devs = [topo.device(d) for d in ids]
    host_size = {h: len(v) for h, v in topo.hosts().items()}
    bw = np.ones((p, p)) * np.inf
    lat = np.zeros((p, p))
    # routes from every device to a few others (all when small)
    partners: list[list[int]] = []
    local_index = {}
    by_host: dict[str, list[int]] = {}
    for i, d in enumerate(devs):
        local_index[i] = len(by_host.setdefault(d.host, []))
        by_host[d.host].append(i)
    for i, d in enumerate(devs):
        if p <= 16:
            part = [j for j in range(p) if j != i]
        else:
            part = [j for j in by_host[d.host] if j != i]
            part += [j for j in range(p) if devs[j].host != d.host
                     and local_index[j] == local_index[i]]
        partners.append(part)
        for j in part:
            r = topo.route(d.id, ids[j])
            bw[i, j], lat[i, j] = r.bandwidth, r.latency
    dx = []
    for i, d in enumerate(devs):
        b = [bw[i, j] for j in partners[i]] or [1e12]
        dx.append([d.flops / 1e15, _lg(d.memory / 2**30) / 3,
                   float(np.mean([_lg(x, 1e-9) for x in b])) / 3, _lg(min(b), 1e-9) / 3,
                   host_size[d.host] / 8])
    L = n_groups
    src, dst, ex = [], [], []

    def add(a: int, b: int, feats: list[float]) -> None:
        src.extend([a, b])
        dst.extend([b, a])
        ex.extend([feats, feats])

    for g in range(L - 1):
        add(g, g + 1, [1, 0, 0, _lg(acts[g], 1e-6) / 3, 0])
    for i in range(p):
        for j in partners[i]:
            if j > i:
                add(L + i, L + j, [0, 1, 0, _lg(bw[i, j], 1e-9) / 3, _lg(lat[i, j], 1e6) / 3])
    ratio = prof.device_flops
    for g in range(L):
        for i, d in enumerate(devs):
            slow = min([bw[i, j] for j in partners[i]] or [1e12])
            t = times[g] * ratio / d.flops * space.global_batch / prof.batch_size / p
            add(g, L + i, [0, 0, 1, _lg(t, 1e3) / 3, _lg(grad_bytes[g] / slow, 1e3) / 3])
    ox, od, slices = [], [], []
    for d in space.decisions:
        start = len(ox)
        for o in d.options:
            ox.append(list(o.features)[:N_OPTION_FEATURES])
            od.append(DECISIONS.index(d.key))
        slices.append((start, len(ox)))
    f32 = np.float32
    return JointGraph(np.asarray(lx, f32), np.asarray(dx, f32), np.asarray(src, np.int64),
                      np.asarray(dst, np.int64), np.asarray(ex, f32).reshape(-1, EDGE_FEATURES),
                      np.asarray(ox, f32), np.asarray(od, np.int64), slices)
