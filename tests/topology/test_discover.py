from pathlib import Path

import pytest
from stitchlab.topology import DocumentError
from stitchlab.topology import collectives as c
from stitchlab.topology.discovery import (
    cpu_topology,
    discover,
    parse_topo_matrix,
    topology_from_matrix,
)

FIXTURES = Path(__file__).parent / "fixtures"


def load(name):
    return parse_topo_matrix((FIXTURES / name).read_text())


def test_eight_gpu_nv18_becomes_an_nvswitch_fabric():
    m = load("smi_topo_8gpu_nvswitch.txt")
    assert m.gpus == [f"GPU{i}" for i in range(8)]
    assert m.conn[("GPU0", "GPU5")] == "NV18" and m.nics["NIC3"] == "mlx5_3"
    assert m.numa["GPU3"] == 0 and m.numa["GPU4"] == 1
    topo = topology_from_matrix(m)
    assert [s.kind for s in topo.switches if s.kind == "nvswitch"] == ["nvswitch"]
    assert topo.route("gpu0", "gpu7").bandwidth == 18 * 25e9
    # a ring over the eight GPUs costs what the DGX preset costs
    from stitchlab.topology import presets

    assert c.ring_allreduce(1e9, topo) == pytest.approx(c.ring_allreduce(1e9, presets.get("dgx-h100")))


def test_four_gpu_pcie_box_pix_phb_sys():
    topo = topology_from_matrix(load("smi_topo_4gpu_pcie.txt"))  # has colour codes in the header
    kinds = {s.id: s.kind for s in topo.switches}
    assert kinds == {"cpu0": "cpu", "cpu1": "cpu", "pcie0": "pcie"}
    assert len(topo.route("gpu0", "gpu1").hops) == 2  # PIX: through the PCIe switch
    assert len(topo.route("gpu0", "gpu2").hops) == 3  # PHB: switch, CPU
    sys_route = topo.route("gpu0", "gpu3")            # SYS: switch, CPU, UPI, CPU
    assert len(sys_route.hops) == 4
    # GPU0 and GPU1 share the switch uplink: two flows up to the CPU split it
    rates = topo.flow_rates([("gpu0", "gpu2"), ("gpu1", "gpu3")])
    assert [bw for _, bw in rates] == [12.5e9, 12.5e9]


def test_two_gpu_node_with_nvlink_bridge():
    m = load("smi_topo_2gpu.txt")
    gpus = [{"name": "NVIDIA A100 80GB PCIe", "flops": 312e12, "memory": 80 * 2**30}] * 2
    topo = topology_from_matrix(m, gpus, host="box")
    assert {ln.kind for ln in topo.links} == {"nvlink", "pcie"}
    assert topo.route("gpu0", "gpu1").bandwidth == 12 * 25e9
    assert topo.devices[0].name == "NVIDIA A100 80GB PCIe" and topo.devices[0].host == "box"


def test_bad_matrix_names_the_cell():
    text = (FIXTURES / "smi_topo_4gpu_pcie.txt").read_text().replace("PHB", "QQQ", 1)
    with pytest.raises(DocumentError, match=r":2:\d+: GPU0/GPU2: unknown connection 'QQQ'"):
        parse_topo_matrix(text)
    with pytest.raises(DocumentError, match="no header line with GPU0"):
        parse_topo_matrix("No devices were found\n")


def test_cpu_only_topology():
    topo = cpu_topology(flops=1e11, memory=2**34, host="h")
    assert len(topo.devices) == 1 and topo.devices[0].kind == "cpu" and not topo.links
    two = cpu_topology(2, flops=1e11, memory=2**34, bandwidth=2e9, latency=1e-5, host="h")
    assert [d.flops for d in two.devices] == [5e10, 5e10]
    assert c.ring_allreduce(1e6, two) == pytest.approx(c.ring_allreduce(1e6, 2, alpha=2e-5, beta=5e-10))


def test_discover_on_this_machine_gives_a_topology():
    topo = discover(use_torch=False)
    assert topo.devices and topo.devices[0].kind in ("cpu", "gpu")


class FakeNVML:
    """Enough of pynvml for discover(): eight H100s on PCIe Gen5 x16."""

    class NVMLError(Exception):
        pass

    def __init__(self, names):
        self.names = names
        self.shut = False

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        self.shut = True

    def nvmlDeviceGetCount(self):
        return len(self.names)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return self.names[h].encode()

    def nvmlDeviceGetMemoryInfo(self, h):
        return type("Mem", (), {"total": 81559 * 2**20})()

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        return 16


def test_discover_with_nvml_and_nvidia_smi(monkeypatch):
    import sys

    fake = FakeNVML(["NVIDIA H100 80GB HBM3"] * 8)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    topo = discover(smi_text=(FIXTURES / "smi_topo_8gpu_nvswitch.txt").read_text())
    assert fake.shut
    assert [d.name for d in topo.devices] == ["NVIDIA H100 80GB HBM3"] * 8
    assert topo.devices[0].flops == 989e12 and topo.devices[0].memory == 81559 * 2**20
    pcie = {ln.bandwidth for ln in topo.links if ln.kind == "pcie"}
    assert len(pcie) == 1 and pcie.pop() == pytest.approx(3.938e9 * 16)
    assert topo.route("gpu0", "gpu4").bandwidth == 450e9


def test_unknown_gpu_name_warns_and_uses_default(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(["Mystery Accelerator 9000"] * 2))
    with pytest.warns(UserWarning, match="no speed known for GPU 'Mystery Accelerator 9000'"):
        topo = discover(smi_text=(FIXTURES / "smi_topo_2gpu.txt").read_text())
    assert topo.devices[0].flops == 100e12
