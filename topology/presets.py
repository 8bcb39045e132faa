"""Topologies of common systems, shipped as JSON files in ``presets/`` and built by the functions
below (a test checks that the files and the builders agree; ``python -m
stitchlab.topology.presets`` rewrites the files).

Numbers are vendor figures, not measurements: ``flops`` is dense BF16 tensor-core peak, link
bandwidth is the nominal per-direction rate (NVLink 4: 18 × 25 GB/s; PCIe Gen4 x16: 25 GB/s
usable; InfiniBand NDR: 400 Gb/s = 50 GB/s; 100 GbE: 12.5 GB/s). Calibrate α and β
(:mod:`stitchlab.topology.calibrate`) before trusting absolute times.

Example:
    >>> from stitchlab.topology import presets
    >>> topo = presets.get("dgx-h200")
    >>> len(topo.devices), topo.devices[0].name
    (8, 'NVIDIA H200')
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources

from .devices import Device, DeviceTopology, Link, Switch
from .errors import TopologyError

MiB = 2**20

# name, dense BF16 FLOP/s, memory as nvidia-smi reports it
GPUS: dict[str, tuple[str, float, int]] = {
    "h200": ("NVIDIA H200", 989e12, 143771 * MiB),
    "h100": ("NVIDIA H100 80GB HBM3", 989e12, 81559 * MiB),
    "h100-pcie": ("NVIDIA H100 PCIe", 756e12, 81559 * MiB),
    "a100": ("NVIDIA A100-SXM4-80GB", 312e12, 81920 * MiB),
    "a6000": ("NVIDIA RTX A6000", 154.8e12, 49140 * MiB),
    "a10": ("NVIDIA A10", 125e12, 23028 * MiB),
}

NVLINK4 = 450e9
PCIE4 = 25e9
PCIE5 = 50e9
IB_NDR = 50e9
ETH_100G = 12.5e9
UPI = 40e9


def _gpu(ident: str, gpu: str, host: str) -> Device:
    name, flops, memory = GPUS[gpu]
    return Device(ident, "gpu", flops=flops, memory=memory, host=host, name=name)


def _nvswitch_node(host: str, gpu: str, n: int, prefix: str = "") -> tuple[list, list, list]:
    """``n`` GPUs on one NVSwitch fabric (each GPU: 18 NVLink 4 links)."""
    sw = Switch(f"{prefix}nvswitch", "nvswitch", host)
    devs = [_gpu(f"{prefix}gpu{i}", gpu, host) for i in range(n)]
    links = [Link(d.id, sw.id, NVLINK4, 1e-6, "nvswitch") for d in devs]
    return devs, [sw], links


def nvswitch_node(gpu: str = "h200", n: int = 8, name: str | None = None) -> DeviceTopology:
    """One host with ``n`` GPUs on NVSwitch (DGX/HGX)."""
    devs, sws, links = _nvswitch_node("node0", gpu, n)
    return DeviceTopology(devs, links, sws, name or f"{n}x {GPUS[gpu][0]} NVSwitch node",
                          f"{n} {GPUS[gpu][0]} GPUs, NVLink 4 through NVSwitch (450 GB/s per "
                          "direction per GPU)")


def dgx_cluster(nodes: int = 2, gpu: str = "h100") -> DeviceTopology:
    """``nodes`` 8-GPU NVSwitch nodes; every GPU has its own 400 Gb/s InfiniBand NDR card into one
    non-blocking fabric (rail-optimized DGX SuperPOD style)."""
    devs, sws, links = [], [Switch("ib", "network")], []
    for h in range(nodes):
        d, s, ln = _nvswitch_node(f"node{h}", gpu, 8, prefix=f"node{h}/")
        devs += d
        sws += s
        links += ln + [Link(x.id, "ib", IB_NDR, 2.5e-6, "network") for x in d]
    return DeviceTopology(devs, links, sws, f"{nodes}x 8 {GPUS[gpu][0]} over InfiniBand",
                          f"{nodes} NVSwitch nodes of 8 GPUs, one 400 Gb/s IB NDR card per GPU")


def pcie_workstation(gpu: str = "a6000") -> DeviceTopology:
    """4 GPUs, no NVLink: two per PCIe switch, both switches under one CPU (PIX inside a pair,
    PHB across); the two GPUs of a switch share its x16 uplink."""
    devs = [_gpu(f"gpu{i}", gpu, "ws0") for i in range(4)]
    sws = [Switch("cpu0", "cpu", "ws0"), Switch("plx0", "pcie", "ws0"),
           Switch("plx1", "pcie", "ws0")]
    links = [Link(f"gpu{i}", f"plx{i // 2}", PCIE4, 1e-6, "pcie") for i in range(4)]
    links += [Link(f"plx{j}", "cpu0", PCIE4, 1e-6, "pcie") for j in range(2)]
    return DeviceTopology(devs, links, sws, f"4x {GPUS[gpu][0]} PCIe workstation",
                          "4 GPUs on PCIe Gen4 x16: two per PCIe switch, switches under one CPU")


def hetero_eth() -> DeviceTopology:
    """4 fast GPUs (H100 SXM, NVSwitch) and 4 slow GPUs (A10, PCIe) in two hosts joined by one
    100 GbE card each: every cross-host flow shares that card."""
    devs, sws, links = _nvswitch_node("fast", "h100", 4, prefix="fast/")
    sws += [Switch("fast/cpu", "cpu", "fast"), Switch("slow/cpu", "cpu", "slow"),
            Switch("slow/plx0", "pcie", "slow"), Switch("eth", "network")]
    links += [Link(d.id, "fast/cpu", PCIE5, 1e-6, "pcie") for d in devs]
    slow = [_gpu(f"slow/gpu{i}", "a10", "slow") for i in range(4)]
    devs += slow
    links += [Link(d.id, "slow/plx0", PCIE4, 1e-6, "pcie") for d in slow]
    links += [Link("slow/plx0", "slow/cpu", PCIE4, 1e-6, "pcie"),
              Link("fast/cpu", "eth", ETH_100G, 10e-6, "network"),
              Link("slow/cpu", "eth", ETH_100G, 10e-6, "network")]
    return DeviceTopology(devs, links, sws, "4 fast + 4 slow GPUs over Ethernet",
                          "host 'fast': 4 H100 SXM on NVSwitch; host 'slow': 4 A10 on PCIe; one "
                          "100 GbE card per host")


_BUILDERS: dict[str, Callable[[], DeviceTopology]] = {
    "dgx-h200": lambda: nvswitch_node("h200", 8, "DGX H200"),
    "dgx-h100": lambda: nvswitch_node("h100", 8, "DGX H100"),
    "h200-2gpu": lambda: nvswitch_node("h200", 2, "2x H200 NVSwitch"),
    "pcie-4gpu": pcie_workstation,
    "2x-dgx-h100-ib": lambda: dgx_cluster(2, "h100"),
    "8x-dgx-h100-ib": lambda: dgx_cluster(8, "h100"),
    "hetero-4fast-4slow-eth": hetero_eth,
}


def names() -> list[str]:
    """The preset names, sorted."""
    return sorted(_BUILDERS)


def build(name: str) -> DeviceTopology:
    """Build preset ``name`` from code (what the shipped JSON file holds)."""
    _check(name)
    return _BUILDERS[name]()


def _check(name: str) -> None:
    if name not in _BUILDERS:
        raise TopologyError(f"unknown preset {name!r}; available: {', '.join(names())}")


def get(name: str) -> DeviceTopology:
    """Load preset ``name`` from its JSON file (a fresh object each call)."""
    _check(name)
    text = resources.files(__package__).joinpath("presets", f"{name}.json").read_text("utf-8")
    return DeviceTopology.from_json(text, source=f"presets/{name}.json")


def _write_all() -> None:
    folder = resources.files(__package__).joinpath("presets")
    for name in names():
        path = folder.joinpath(f"{name}.json")
        with open(str(path), "w", encoding="utf-8") as fh:
            fh.write(json.dumps(build(name).to_dict(), indent=2) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    _write_all()
