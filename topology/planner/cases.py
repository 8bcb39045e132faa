"""Generated topologies and model profiles: the planner's training set and its evaluation cases.

Profiles are *estimated* (times = FLOPs / (device FLOP/s × efficiency)) on a reference H100, so
they need no GPU. Families:

* ``mlp`` — wide fully connected layers at a small batch (SFB territory);
* ``transformer`` — an embedding and blocks of QKV/projection/MLP linears at batch × sequence
  tokens;
* ``recsys`` — large sparse embedding tables and a small MLP (sparse all-gather territory);
* ``cnn`` — convolutions (dense all-reduce only) and a classifier.

Evaluation cases (:func:`eval_cases`) are written out by hand below; training cases
(:func:`training_case`) are drawn from a seeded generator and any draw whose fingerprint equals an
evaluation case's is skipped, so training never sees an evaluation case.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .. import presets
from ..devices import Device, DeviceTopology, Link, Switch
from ..profile import LayerProfile, ModelProfile, ParamInfo

REF_FLOPS = 989e12  # reference device of the estimated profiles (H100 SXM, dense BF16)
EFFICIENCY = 0.4
GiB = 2**30
NVLINK = {"h200": 450e9, "h100": 450e9, "a100": 300e9}
NETWORKS = {"10GbE": 1.25e9, "25GbE": 3.125e9, "100GbE": 12.5e9, "IB-HDR": 25e9, "IB-NDR": 50e9}


# ----------------------------------------------------------------------------- models
def _t(flops: float) -> float:
    return flops / (REF_FLOPS * EFFICIENCY)


def _linear(name: str, m: int, k: int, tokens: int, bias: bool = True) -> LayerProfile:
    f = 2.0 * tokens * m * k
    params = [ParamInfo(f"{name}.weight", (k, m))] + ([ParamInfo(f"{name}.bias", (k,))]
                                                      if bias else [])
    return LayerProfile(name, "linear", params, _t(f), 2 * _t(f), activation_bytes=tokens * k * 4,
                        forward_flops=f, in_features=m, out_features=k, tokens=tokens)


def _embedding(name: str, rows: int, dim: int, lookups: int) -> LayerProfile:
    density = 1.0 - (1.0 - 1.0 / rows) ** lookups
    f = float(lookups * dim)
    return LayerProfile(name, "embedding", [ParamInfo(f"{name}.weight", (rows, dim))],
                        _t(f) + 5e-6, _t(f) + 5e-6, activation_bytes=lookups * dim * 4,
                        forward_flops=f, num_embeddings=rows, embedding_dim=dim,
                        grad_density=density)


def _norm(name: str, d: int, tokens: int) -> LayerProfile:
    f = 8.0 * tokens * d
    return LayerProfile(name, "norm", [ParamInfo(f"{name}.weight", (d,)),
                                       ParamInfo(f"{name}.bias", (d,))],
                        _t(f) * 4, _t(f) * 8, activation_bytes=tokens * d * 4, forward_flops=f)


def mlp_profile(layers: int = 4, width: int = 4096, batch: int = 32, name: str = "mlp") \
        -> ModelProfile:
    """A stack of ``width``×``width`` linear layers at ``batch`` samples."""
    ls = [_linear(f"fc{i}", width, width, batch) for i in range(layers)]
    ls.append(_linear("head", width, 1000, batch))
    return ModelProfile(name, batch, "H100 (estimated)", REF_FLOPS, ls, method="estimated")


def transformer_profile(layers: int = 4, d: int = 1024, seq: int = 128, batch: int = 8,
                        vocab: int = 32000, name: str = "transformer") -> ModelProfile:
    """An embedding, ``layers`` pre-norm blocks (QKV, projection, MLP 4×) and a norm."""
    t = seq * batch
    ls = [_embedding("embed", vocab, d, t)]
    for i in range(layers):
        # attention score/value matmuls have no parameters: charged to the QKV layer
        qkv = _linear(f"h{i}.qkv", d, 3 * d, t)
        attn = 4.0 * batch * seq * seq * d
        qkv.forward_time += _t(attn)
        qkv.backward_time += 2 * _t(attn)
        ls += [_norm(f"h{i}.ln1", d, t), qkv, _linear(f"h{i}.proj", d, d, t),
               _norm(f"h{i}.ln2", d, t), _linear(f"h{i}.fc1", d, 4 * d, t),
               _linear(f"h{i}.fc2", 4 * d, d, t)]
    ls.append(_norm("ln_f", d, t))
    return ModelProfile(name, batch, "H100 (estimated)", REF_FLOPS, ls, method="estimated")


def recsys_profile(tables: int = 4, rows: int = 2_000_000, dim: int = 64, batch: int = 256,
                   hidden: int = 1024, name: str = "recsys") -> ModelProfile:
    """``tables`` embedding tables looked up ``batch`` times each, then a 3-layer MLP."""
    ls = [_embedding(f"emb{i}", rows, dim, batch) for i in range(tables)]
    ls += [_linear("mlp0", tables * dim, hidden, batch), _linear("mlp1", hidden, hidden, batch),
           _linear("mlp2", hidden, 1, batch)]
    return ModelProfile(name, batch, "H100 (estimated)", REF_FLOPS, ls, method="estimated")


def cnn_profile(stages: int = 4, width: int = 64, image: int = 64, batch: int = 64,
                name: str = "cnn") -> ModelProfile:
    """A ResNet-like stack: per stage two 3×3 convolutions, width doubling, size halving."""
    ls = []
    c, s = width, image
    cin = 3
    for i in range(stages):
        for j in range(2):
            f = 2.0 * batch * s * s * 9 * cin * c
            ls.append(LayerProfile(f"s{i}.conv{j}", "conv",
                                   [ParamInfo(f"s{i}.conv{j}.weight", (c, cin, 3, 3))],
                                   _t(f), 2 * _t(f), activation_bytes=batch * c * s * s * 4 * 3,
                                   forward_flops=f))
            cin = c
        c, s = c * 2, max(s // 2, 1)
    ls.append(_linear("fc", cin, 1000, batch))
    return ModelProfile(name, batch, "H100 (estimated)", REF_FLOPS, ls, method="estimated")


# ----------------------------------------------------------------------------- topologies
def _gpu(ident: str, kind: str, host: str) -> Device:
    name, flops, memory = presets.GPUS[kind]
    return Device(ident, "gpu", flops=flops, memory=memory, host=host, name=name)


def cluster(hosts: list[tuple[str, int]], network: str = "100GbE", nic_per_gpu: bool = False,
            name: str = "") -> DeviceTopology:
    """Hosts of ``(gpu kind, count)``: NVSwitch inside hosts of NVLink GPUs, PCIe otherwise; one
    network card per host (or per GPU) into one switch of ``network`` speed."""
    bw = NETWORKS[network]
    devs: list[Device] = []
    links: list[Link] = []
    sws: list[Switch] = [Switch("net", "network")]
    for h, (kind, count) in enumerate(hosts):
        host = f"n{h}"
        ds = [_gpu(f"{host}/{kind}.{i}", kind, host) for i in range(count)]
        devs += ds
        cpu = Switch(f"{host}/cpu", "cpu", host)
        sws.append(cpu)
        if kind in NVLINK and count > 1:
            sw = Switch(f"{host}/nvswitch", "nvswitch", host)
            sws.append(sw)
            links += [Link(d.id, sw.id, NVLINK[kind], 1e-6, "nvswitch") for d in ds]
        links += [Link(d.id, cpu.id, presets.PCIE4, 1e-6, "pcie") for d in ds]
        if len(hosts) > 1:
            if nic_per_gpu:
                links += [Link(d.id, "net", bw, 5e-6, "network") for d in ds]
            else:
                links.append(Link(cpu.id, "net", bw, 5e-6, "network"))
    if len(hosts) == 1:
        sws = sws[1:]
    label = name or " + ".join(f"{c}x{k}" for k, c in hosts) + f" ({network})"
    return DeviceTopology(devs, links, sws, label)


def random_topology(rng: np.random.Generator, max_devices: int = 16) -> DeviceTopology:
    """A random cluster of 1–4 hosts of 2, 4 or 8 GPUs of one kind each, at most ``max_devices``."""
    kinds = list(presets.GPUS)
    hosts = []
    total = 0
    for _ in range(int(rng.integers(1, 5))):
        count = int(rng.choice([2, 4, 8]))
        if total + count > max_devices:
            break
        hosts.append((str(rng.choice(kinds)), count))
        total += count
    if not hosts:
        hosts = [(str(rng.choice(kinds)), 2)]
    net = str(rng.choice(list(NETWORKS)))
    return cluster(hosts, net, nic_per_gpu=bool(rng.random() < 0.3))


def random_profile(rng: np.random.Generator) -> ModelProfile:
    """A random model of one of the four families."""
    family = str(rng.choice(["mlp", "transformer", "recsys", "cnn"]))
    if family == "mlp":
        return mlp_profile(int(rng.integers(2, 7)), int(rng.choice([1024, 2048, 4096, 8192])),
                           int(rng.choice([8, 16, 32, 64, 128])), name="mlp")
    if family == "transformer":
        return transformer_profile(int(rng.integers(1, 5)), int(rng.choice([512, 1024, 2048])),
                                   int(rng.choice([64, 128, 256])), int(rng.choice([1, 2, 4, 8])),
                                   name="transformer")
    if family == "recsys":
        return recsys_profile(int(rng.integers(2, 7)), int(rng.choice([200_000, 1_000_000,
                                                                      4_000_000])),
                              int(rng.choice([32, 64, 128])), int(rng.choice([128, 512, 2048])),
                              name="recsys")
    return cnn_profile(int(rng.integers(2, 5)), int(rng.choice([32, 64])),
                       int(rng.choice([32, 64])), int(rng.choice([16, 32, 64])), name="cnn")


# ----------------------------------------------------------------------------- cases
@dataclass
class Case:
    """A planning problem: a name, a topology and a model profile."""

    name: str
    topo: DeviceTopology
    profile: ModelProfile
    heterogeneous: bool = True
    small: bool = False

    def fingerprint(self) -> str:
        return fingerprint(self.topo, self.profile)


def fingerprint(topo: DeviceTopology, profile: ModelProfile) -> str:
    text = json.dumps([topo.to_dict(), profile.to_dict()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def eval_cases() -> list[Case]:
    """The evaluation set: 12 heterogeneous pairs, 2 homogeneous ones and 4 small instances
    (exhaustive search over every SFB subset is feasible on them)."""
    het = presets.get("hetero-4fast-4slow-eth")
    c = [
        Case("hetero-eth/transformer", het, transformer_profile(4, 1024, 512, 16)),
        Case("hetero-eth/mlp", het, mlp_profile(4, 2048, 1024)),
        Case("hetero-eth/recsys", het, recsys_profile(4, 200_000, 64, 2048, 2048)),
        Case("a100+a10-25g/mlp", cluster([("a100", 4), ("a10", 4)], "25GbE"),
             mlp_profile(3, 4096, 512)),
        Case("h100+a100+a6000-100g/transformer",
             cluster([("h100", 4), ("a100", 4), ("a6000", 4)], "100GbE"),
             transformer_profile(3, 2048, 256, 16)),
        Case("h200+a10-ib/recsys", cluster([("h200", 8), ("a10", 8)], "IB-NDR", nic_per_gpu=True),
             recsys_profile(6, 500_000, 64, 2048, 2048)),
        Case("2h100+2a6000-100g/cnn",
             cluster([("h100", 8), ("h100", 8), ("a6000", 4), ("a6000", 4)], "100GbE"),
             cnn_profile(4, 64, 128, 64)),
        Case("ws-a6000+a10/mlp", cluster([("a6000", 2), ("a10", 2)], "10GbE"),
             mlp_profile(4, 2048, 512)),
        Case("4host-mix-25g/transformer",
             cluster([("h100", 2), ("a100", 2), ("a6000", 2), ("a10", 2)], "25GbE"),
             transformer_profile(2, 1024, 512, 8)),
        Case("h100+a100-ib/transformer", cluster([("h100", 4), ("a100", 4)], "IB-HDR"),
             transformer_profile(6, 1024, 512, 16)),
        Case("a100+a10-10g/recsys", cluster([("a100", 2), ("a10", 2)], "10GbE"),
             recsys_profile(3, 100_000, 64, 4096)),
        Case("64gpu-h100+a100-ib/transformer",
             cluster([("h100", 8)] * 4 + [("a100", 8)] * 4, "IB-NDR", nic_per_gpu=True),
             transformer_profile(4, 2048, 512, 8)),
        Case("dgx-h200/transformer", presets.get("dgx-h200"),
             transformer_profile(4, 1024, 512, 16), heterogeneous=False),
        Case("8x-dgx-h100-ib/mlp", presets.get("8x-dgx-h100-ib"), mlp_profile(4, 8192, 256),
             heterogeneous=False),
        Case("small/a100+a10/mlp", cluster([("a100", 1), ("a10", 1)], "25GbE"),
             mlp_profile(3, 4096, 256), small=True),
        Case("small/pcie-4gpu/mlp", presets.get("pcie-4gpu"), mlp_profile(3, 2048, 256),
             heterogeneous=False, small=True),
        Case("small/2h100+2a10/transformer", cluster([("h100", 2), ("a10", 2)], "100GbE"),
             transformer_profile(1, 1024, 256, 8), small=True),
        Case("small/h200-2gpu/recsys", presets.get("h200-2gpu"),
             recsys_profile(2, 1_000_000, 64, 1024), heterogeneous=False, small=True),
    ]
    return c


def training_cases(seed: int, count: int, max_devices: int = 16) -> Iterator[Case]:
    """``count`` random cases from ``seed`` that are not evaluation cases."""
    rng = np.random.default_rng(seed)
    banned = {c.fingerprint() for c in eval_cases()}
    made = 0
    while made < count:
        topo = random_topology(rng, max_devices)
        prof = random_profile(rng)
        case = Case(f"train{made}", topo, prof)
        if case.fingerprint() in banned:
            continue
        made += 1
        yield case
