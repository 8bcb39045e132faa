"""Discovering the topology of the machine we run on.

Sources, in order: NVML (``nvidia-ml-py``, imported lazily) for the GPUs' names, memory and PCIe
link speed; ``nvidia-smi topo -m`` for how they connect (parsed by :func:`parse_topo_matrix`);
``torch.cuda`` when NVML is missing; and, on a machine without GPUs, a CPU-only topology whose
one device is the host's cores (:func:`cpu_topology`).

How the connection matrix becomes a graph (:func:`topology_from_matrix`):

* ``NV#`` — # bonded NVLinks of ``nvlink_bandwidth`` (25 GB/s per direction) each. When three or
  more GPUs are all pairwise ``NV#`` with the same #, they sit on an NVSwitch fabric: one switch
  node, one link of #×25 GB/s per GPU (pairwise links would let a GPU send # links' worth to every
  peer at once). Otherwise each pair gets a direct ``nvlink`` link.
* ``PIX``/``PXB`` — the GPUs share a PCIe switch (a ``pcie`` switch node under their CPU).
* ``PHB``/``NODE`` — they meet at the CPU (host bridge) of their NUMA node.
* ``SYS`` — different NUMA nodes: their CPUs are joined by a ``host`` link (UPI/QPI, 40 GB/s).

NICs in the matrix are parsed but not added (a discovered topology is one host; join hosts with
``network`` links yourself, or use a preset).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import warnings
from dataclasses import dataclass, field
from typing import Any

from .devices import Device, DeviceTopology, Link, Switch
from .errors import DocumentError

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CODES = ("X", "SYS", "NODE", "PHB", "PXB", "PIX")
_NV = re.compile(r"^NV(\d+)$")
PCIE_GBPS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
DEFAULT_GPU_FLOPS = 100e12


@dataclass
class TopoMatrix:
    """The parsed output of ``nvidia-smi topo -m``.

    Attributes:
        gpus: GPU row names in order (``GPU0``, ...).
        nics: NIC column names -> device name from the NIC legend (``NIC0`` -> ``mlx5_0``).
        conn: ``(row, column)`` -> connection code (``NV18``, ``PIX``, ``SYS``, ...).
        cpu_affinity, numa: per GPU, the text of those columns (``None`` when absent).
    """

    gpus: list[str]
    nics: dict[str, str] = field(default_factory=dict)
    conn: dict[tuple[str, str], str] = field(default_factory=dict)
    cpu_affinity: dict[str, str | None] = field(default_factory=dict)
    numa: dict[str, int | None] = field(default_factory=dict)


def parse_topo_matrix(text: str, source: str = "nvidia-smi topo -m") -> TopoMatrix:
    """Parse ``nvidia-smi topo -m`` output (tabs or spaces, with or without colour codes).

    Raises:
        DocumentError: no header, an unknown connection code, or a row of the wrong length; the
            message names the line and the cell.
    """
    lines = [_ANSI.sub("", ln).rstrip() for ln in text.splitlines()]
    header_at = next((i for i, ln in enumerate(lines) if re.search(r"\bGPU0\b", ln)), None)
    if header_at is None:
        raise DocumentError("no header line with GPU0 found; is this `nvidia-smi topo -m` output?",
                            source=source)
    header = lines[header_at].split()
    cols = []
    for tok in header:
        if tok == "CPU":
            break
        cols.append(tok)
    extra = [c.strip() for c in re.split(r"\t+|\s{2,}", lines[header_at].strip())
             if c.strip() and c.strip() not in cols]
    matrix = TopoMatrix(gpus=[c for c in cols if c.startswith("GPU")])
    rows_seen = set()
    for lineno in range(header_at + 1, len(lines)):
        ln = lines[lineno]
        if not ln.strip():
            break
        toks = ln.split()
        name, cells = toks[0], toks[1:]
        if len(cells) < len(cols):
            raise DocumentError(
                f"row {name!r} has {len(cells)} cells, expected {len(cols)} (columns "
                f"{' '.join(cols)})", line=lineno + 1, column=1, source=source)
        for col, code in zip(cols, cells, strict=False):
            if code not in _CODES and not _NV.match(code):
                raise DocumentError(
                    f"{name}/{col}: unknown connection {code!r}; expected X, NV#, PIX, PXB, PHB, "
                    "NODE or SYS", line=lineno + 1, column=ln.find(code) + 1, source=source)
            matrix.conn[(name, col)] = code
        rows_seen.add(name)
        if name.startswith("GPU"):
            rest = dict(zip(extra, cells[len(cols):], strict=False))
            matrix.cpu_affinity[name] = rest.get("CPU Affinity")
            numa = rest.get("NUMA Affinity")
            matrix.numa[name] = int(numa) if numa is not None and numa.isdigit() else None
    missing = [g for g in matrix.gpus if g not in rows_seen]
    if missing:
        raise DocumentError(f"no row for {', '.join(missing)}", source=source)
    for ln in lines:
        m = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", ln)
        if m:
            matrix.nics[m.group(1)] = m.group(2)
    for c in cols:
        if not c.startswith("GPU"):
            matrix.nics.setdefault(c, c)
    return matrix


def _numa_nodes(m: TopoMatrix) -> dict[str, int]:
    """NUMA node per GPU: the NUMA column, else groups of GPUs not ``SYS`` to each other."""
    if all(m.numa.get(g) is not None for g in m.gpus):
        return {g: int(m.numa[g]) for g in m.gpus}  # type: ignore[arg-type]
    node: dict[str, int] = {}
    for g in m.gpus:
        for h, k in node.items():
            if m.conn.get((g, h)) != "SYS":
                node[g] = k
                break
        else:
            node[g] = len(set(node.values()))
    return node


def topology_from_matrix(
    m: TopoMatrix,
    gpus: list[dict[str, Any]] | None = None,
    host: str = "localhost",
    nvlink_bandwidth: float = 25e9,
    pcie_bandwidth: float | list[float] = 25e9,
    cpu_link_bandwidth: float = 40e9,
    latency: float = 1e-6,
) -> DeviceTopology:
    """Build a :class:`DeviceTopology` from a parsed matrix (see the module docstring).

    Args:
        m: from :func:`parse_topo_matrix`.
        gpus: per GPU ``{"name", "flops", "memory"}`` (from NVML); default: unknown GPUs of
            ``DEFAULT_GPU_FLOPS`` and 16 GiB.
        host: host name for the devices.
        nvlink_bandwidth: bytes/s per direction of one NVLink.
        pcie_bandwidth: bytes/s per direction of a GPU's PCIe link (one value or one per GPU).
        cpu_link_bandwidth: between NUMA nodes.
        latency: seconds per hop.
    """
    n = len(m.gpus)
    info = gpus or [{"name": "unknown GPU", "flops": DEFAULT_GPU_FLOPS, "memory": 16 * 2**30}] * n
    if len(info) != n:
        raise DocumentError(f"{len(info)} GPU descriptions for the {n} GPUs of the matrix")
    pcie = pcie_bandwidth if isinstance(pcie_bandwidth, list) else [pcie_bandwidth] * n
    ids = [f"gpu{i}" for i in range(n)]
    devices = [Device(ids[i], "gpu", float(info[i]["flops"]), int(info[i]["memory"]), host,
                      str(info[i].get("name", ""))) for i in range(n)]
    switches: list[Switch] = []
    links: list[Link] = []

    numa = _numa_nodes(m)
    cpus = sorted(set(numa.values()))
    for c in cpus:
        switches.append(Switch(f"cpu{c}", "cpu", host))
    for a_i, a in enumerate(cpus):
        for b in cpus[a_i + 1:]:
            links.append(Link(f"cpu{a}", f"cpu{b}", cpu_link_bandwidth, latency, "host"))

    # PCIe switches: GPUs joined by PIX/PXB
    group = list(range(n))

    def find(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if m.conn.get((m.gpus[i], m.gpus[j])) in ("PIX", "PXB"):
                group[find(j)] = find(i)
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(find(i), []).append(i)
    for k, idx in enumerate(sorted(members.values())):
        cpu = f"cpu{numa[m.gpus[idx[0]]]}"
        if len(idx) == 1:
            links.append(Link(ids[idx[0]], cpu, pcie[idx[0]], latency, "pcie"))
            continue
        sw = f"pcie{k}"
        switches.append(Switch(sw, "pcie", host))
        links.append(Link(sw, cpu, max(pcie[i] for i in idx), latency, "pcie"))
        links += [Link(ids[i], sw, pcie[i], latency, "pcie") for i in idx]

    # NVLink: a clique of equal NV# over >= 3 GPUs is an NVSwitch fabric
    nv: dict[tuple[int, int], int] = {}
    for i in range(n):
        for j in range(i + 1, n):
            hit = _NV.match(m.conn.get((m.gpus[i], m.gpus[j]), ""))
            if hit:
                nv[(i, j)] = int(hit.group(1))
    on_nv = sorted({i for pair in nv for i in pair})
    counts = set(nv.values())
    clique = len(on_nv) >= 3 and len(counts) == 1 and len(nv) == len(on_nv) * (len(on_nv) - 1) // 2
    if clique:
        switches.append(Switch("nvswitch", "nvswitch", host))
        per_gpu = counts.pop() * nvlink_bandwidth
        links += [Link(ids[i], "nvswitch", per_gpu, latency, "nvswitch") for i in on_nv]
    else:
        links += [Link(ids[i], ids[j], c * nvlink_bandwidth, latency, "nvlink")
                  for (i, j), c in sorted(nv.items())]
    return DeviceTopology(devices, links, switches, f"{n} GPUs on {host}",
                          "discovered from nvidia-smi topo -m")


# substrings of GPU names -> preset GPU table key; first match wins, so longer names come first
_NAME_KEYS = [("H200", "h200"), ("H100 PCIe", "h100-pcie"), ("H100", "h100"), ("A100", "a100"),
              ("A6000", "a6000"), ("A10", "a10")]


def _gpu_flops(name: str) -> float:
    """Dense BF16 FLOP/s of a GPU by its name (the preset table), else a default and a warning."""
    from .presets import GPUS

    for part, key in _NAME_KEYS:
        if part in name:
            return GPUS[key][1]
    warnings.warn(f"no speed known for GPU {name!r}; assuming {DEFAULT_GPU_FLOPS / 1e12:g} "
                  "TFLOP/s — set Device.flops yourself", stacklevel=3)
    return DEFAULT_GPU_FLOPS


def nvml_gpus() -> list[dict[str, Any]] | None:
    """Name, memory, speed and PCIe bandwidth of each GPU from NVML, or None without NVML."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None
    try:
        out = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            name = name.decode() if isinstance(name, bytes) else name
            info: dict[str, Any] = {"name": name, "memory": int(pynvml.nvmlDeviceGetMemoryInfo(h).total),
                                    "flops": _gpu_flops(name)}
            try:
                gen = pynvml.nvmlDeviceGetMaxPcieLinkGeneration(h)
                width = pynvml.nvmlDeviceGetMaxPcieLinkWidth(h)
                info["pcie"] = PCIE_GBPS_PER_LANE.get(gen, 1.969) * width * 1e9
            except Exception:
                pass
            out.append(info)
        return out
    finally:
        pynvml.nvmlShutdown()


def torch_gpus() -> list[dict[str, Any]] | None:
    """The same from ``torch.cuda`` (imported here), or None without CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    out = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        out.append({"name": p.name, "memory": int(p.total_memory), "flops": _gpu_flops(p.name)})
    return out


def run_nvidia_smi_topo() -> str | None:
    """Output of ``nvidia-smi topo -m``, or None when the binary is missing or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "topo", "-m"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def host_memory() -> int:
    """Physical memory of this host in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def cpu_flops(seconds: float = 0.2) -> float:
    """FLOP/s of this host's float32 matrix products through numpy (all cores)."""
    import time

    import numpy as np

    a = np.random.default_rng(0).standard_normal((512, 512), dtype=np.float32)
    a @ a
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ a
        reps += 1
    return 2.0 * 512**3 * reps / (time.perf_counter() - start)


def cpu_topology(
    processes: int = 1,
    flops: float | None = None,
    memory: int | None = None,
    host: str | None = None,
    bandwidth: float = 5e9,
    latency: float = 25e-6,
) -> DeviceTopology:
    """A CPU-only topology: the host's cores as one device, or split over ``processes``
    (data-parallel processes on one machine, each a device with its share of speed and memory)
    joined through a ``cpu`` switch by ``host`` links.

    The default link numbers are placeholders: a ring step between two processes crosses two links,
    so set ``bandwidth = 1/β`` and ``latency = α/2`` from :mod:`stitchlab.topology.calibrate`
    (``calibrate.cpu_topology_from_fit`` does that).
    """
    host = host or socket.gethostname()
    flops = flops if flops is not None else cpu_flops()
    memory = memory if memory is not None else host_memory()
    cores = os.cpu_count() or 1
    devs = [Device(f"cpu{i}", "cpu", flops / processes, memory // processes, host,
                   f"{cores}-core CPU" if processes == 1 else f"CPU process {i}")
            for i in range(processes)]
    if processes == 1:
        return DeviceTopology(devs, [], [], f"CPU of {host}", "CPU-only: the cores as one device")
    sw = Switch("cpu", "cpu", host)
    links = [Link(d.id, "cpu", bandwidth, latency, "host") for d in devs]
    return DeviceTopology(devs, links, [sw], f"{processes} CPU processes on {host}",
                          "CPU-only: data-parallel processes exchanging through shared memory/loopback")


def discover(smi_text: str | None = None, use_torch: bool = True) -> DeviceTopology:
    """The topology of this machine.

    Args:
        smi_text: ``nvidia-smi topo -m`` output to use instead of running it.
        use_torch: fall back to ``torch.cuda`` when NVML is unavailable.

    Returns:
        GPUs and their links when there are GPUs, else :func:`cpu_topology`.
    """
    host = socket.gethostname()
    gpus = nvml_gpus()
    if gpus is None and use_torch:
        gpus = torch_gpus()
    if not gpus:
        return cpu_topology(host=host)
    text = smi_text if smi_text is not None else run_nvidia_smi_topo()
    if text is None:
        # no matrix: assume every GPU on its own PCIe link to one CPU
        text = "\t" + "\t".join(f"GPU{i}" for i in range(len(gpus))) + "\n" + "\n".join(
            f"GPU{i}\t" + "\t".join(" X " if i == j else "PHB" for j in range(len(gpus)))
            for i in range(len(gpus))) + "\n"
    matrix = parse_topo_matrix(text)
    if len(matrix.gpus) != len(gpus):
        warnings.warn(f"nvidia-smi shows {len(matrix.gpus)} GPUs but NVML/torch {len(gpus)}; "
                      "using the first ones of both", stacklevel=2)
        gpus = gpus[: len(matrix.gpus)]
        matrix.gpus = matrix.gpus[: len(gpus)]
    pcie = [g.get("pcie", 25e9) for g in gpus]
    topo = topology_from_matrix(matrix, gpus, host=host, pcie_bandwidth=pcie)
    topo.name = f"discovered on {host}"
    return topo
