import pytest
from stitchlab.topology import Device, DeviceTopology, Link, Switch
from stitchlab.topology.profile import LayerProfile, ModelProfile, ParamInfo

GiB = 2**30


def two_hosts(order_nic_bw: float = 10e9) -> DeviceTopology:
    """Hosts A and B, two GPUs each behind one network card per host."""
    devs = [Device(f"{h}{i}", "gpu", 1e12, 16 * GiB, host=h) for h in "AB" for i in range(2)]
    sws = [Switch("A/cpu", "cpu", "A"), Switch("B/cpu", "cpu", "B"), Switch("net", "network")]
    links = [Link(d.id, f"{d.host}/cpu", 100e9, 0.0, "pcie") for d in devs]
    links += [Link("A/cpu", "net", order_nic_bw, 0.0, "network"),
              Link("B/cpu", "net", order_nic_bw, 0.0, "network")]
    return DeviceTopology(devs, links, sws, "two hosts")


def pair(bw: float = 1e9, lat: float = 1e-5, flops=(1e12, 1e12), memory=16 * GiB):
    """Two devices joined by one link."""
    devs = [Device("d0", "gpu", flops[0], memory), Device("d1", "gpu", flops[1], memory)]
    return DeviceTopology(devs, [Link("d0", "d1", bw, lat, "nvlink")], name="pair")


def tiny_profile(layers=None, batch=8, flops=1e12, **kw) -> ModelProfile:
    if layers is None:
        layers = [
            LayerProfile("fc1", "linear", [ParamInfo("fc1.weight", (256, 128)),
                                           ParamInfo("fc1.bias", (256,))],
                         forward_time=1e-3, backward_time=2e-3, activation_bytes=8 * 256 * 4,
                         in_features=128, out_features=256, tokens=batch),
            LayerProfile("fc2", "linear", [ParamInfo("fc2.weight", (10, 256)),
                                           ParamInfo("fc2.bias", (10,))],
                         forward_time=0.5e-3, backward_time=1e-3, activation_bytes=8 * 10 * 4,
                         in_features=256, out_features=10, tokens=batch),
        ]
    return ModelProfile("tiny", batch, "ref", flops, layers, **kw)


@pytest.fixture
def profile():
    return tiny_profile()
