import json

import pytest
from stitchlab.topology import (
    Device,
    DeviceTopology,
    DocumentError,
    Link,
    Switch,
    TopologyError,
    collectives,
    presets,
)
from stitchlab.topology._schema import schema_errors
from stitchlab.topology.devices import SCHEMA

from .conftest import pair, two_hosts


def test_unknown_device_kind_is_named():
    with pytest.raises(TopologyError, match=r"'tpu9'.*expected one of gpu, cpu"):
        Device("x", "tpu9", 1e12, 1)


@pytest.mark.parametrize("bw", [0, -5.0, float("inf")])
def test_bad_bandwidth_is_named(bw):
    with pytest.raises(TopologyError, match=rf"link 'a'-'b' bandwidth is {bw!r}"):
        Link("a", "b", bw, 0.0, "pcie")


def test_unknown_link_kind_and_self_link():
    with pytest.raises(TopologyError, match="'infiniband'"):
        Link("a", "b", 1e9, 0.0, "infiniband")
    with pytest.raises(TopologyError, match="itself"):
        Link("a", "a", 1e9, 0.0, "pcie")


def test_disconnected_topology_names_the_cut_devices():
    devs = [Device(f"g{i}", "gpu", 1e12, 2**30) for i in range(3)]
    with pytest.raises(TopologyError, match=r"disconnected: device\(s\) 'g2' cannot reach 'g0'"):
        DeviceTopology(devs, [Link("g0", "g1", 1e9)])


def test_link_to_unknown_node_and_duplicate_ids():
    d = [Device("g0", "gpu", 1e12, 2**30)]
    with pytest.raises(TopologyError, match="unknown node 'ghost'"):
        DeviceTopology(d, [Link("g0", "ghost", 1e9)])
    with pytest.raises(TopologyError, match="duplicate node id 'g0'"):
        DeviceTopology(d + d, [])


def test_route_prefers_widest_path_and_sums_latency():
    topo = presets.get("2x-dgx-h100-ib")
    inside = topo.route("node0/gpu0", "node0/gpu5")
    assert inside.bandwidth == 450e9 and inside.latency == pytest.approx(2e-6)
    across = topo.route("node0/gpu0", "node1/gpu0")
    assert across.bandwidth == 50e9 and across.latency == pytest.approx(5e-6)


def test_route_takes_the_lowest_latency_among_equally_wide_paths():
    # a0 reaches host B at the network's 12.5 GB/s directly or through its NVLink neighbour a1;
    # a1's faster PCIe link used to win the search part way, giving a longer path of the same
    # bandwidth (and one sharing a1's PCIe link), so a faster link made the all-reduce slower
    def topo(a1_pcie):
        devs = [Device("a0", "gpu", 1e14, 2**34, "A"), Device("a1", "gpu", 1e14, 2**34, "A"),
                Device("b0", "gpu", 1e14, 2**34, "B")]
        sws = [Switch("cpuA", "cpu", "A"), Switch("cpuB", "cpu", "B"), Switch("net", "network")]
        links = [Link("a0", "a1", 300e9, 1e-6, "nvlink"),
                 Link("a0", "cpuA", 25e9, 1e-6, "pcie"), Link("a1", "cpuA", a1_pcie, 1e-6, "pcie"),
                 Link("b0", "cpuB", 25e9, 1e-6, "pcie"),
                 Link("cpuA", "net", 12.5e9, 5e-6, "network"),
                 Link("cpuB", "net", 12.5e9, 5e-6, "network")]
        return DeviceTopology(devs, links, sws)

    for a1_pcie in (25e9, 50e9):
        t = topo(a1_pcie)
        r = t.route("a0", "b0")
        assert [(t.links[k // 2].a, t.links[k // 2].b) for k in r.hops] == [
            ("a0", "cpuA"), ("cpuA", "net"), ("cpuB", "net"), ("b0", "cpuB")]
        assert (r.bandwidth, r.latency) == (12.5e9, pytest.approx(12e-6))
        assert collectives.ring_allreduce(0.0, t, ["a0", "b0"]) == pytest.approx(24e-6)


def test_flows_through_one_network_card_share_it():
    topo = two_hosts(10e9)
    rates = topo.flow_rates([("A0", "B0"), ("A1", "B1")])
    assert [bw for _, bw in rates] == [5e9, 5e9]
    # opposite directions do not contend (full duplex)
    rates = topo.flow_rates([("A0", "B0"), ("B1", "A1")])
    assert [bw for _, bw in rates] == [10e9, 10e9]


def test_hosts_and_islands():
    topo = presets.get("hetero-4fast-4slow-eth")
    assert list(topo.hosts()) == ["fast", "slow"]
    islands = sorted(topo.islands(), key=len)
    assert len(islands[-1]) == 4 and all(d.startswith("fast/") for d in islands[-1])
    assert len(islands) == 5  # the NVSwitch island + 4 lone A10s


def test_save_load_round_trip(tmp_path):
    topo = presets.get("pcie-4gpu")
    path = tmp_path / "t.json"
    topo.save(path)
    again = DeviceTopology.load(path)
    assert again.to_dict() == topo.to_dict()
    assert DeviceTopology.from_json(topo.to_json()).to_dict() == topo.to_dict()


def test_syntax_error_reports_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "format": "stitchlab.topology/1",\n  "devices": [,]\n}\n')
    with pytest.raises(DocumentError) as err:
        DeviceTopology.load(path)
    assert (err.value.line, err.value.column) == (3, 15)
    assert f"{path}:3:15" in str(err.value)


def test_schema_error_reports_path_inside_document():
    data = presets.get("dgx-h200").to_dict()
    data["links"][3]["bandwidth"] = -1
    with pytest.raises(DocumentError, match=r"at \$\.links\[3\]\.bandwidth: -1 must be greater"):
        DeviceTopology.from_dict(data)
    data = presets.get("dgx-h200").to_dict()
    data["devices"][1]["kind"] = "fpga"
    with pytest.raises(DocumentError, match=r"\$\.devices\[1\]\.kind: \"fpga\" is not one of"):
        DeviceTopology.from_dict(data)
    data["devices"][1]["kind"] = "gpu"
    data["devices"][1]["colour"] = "red"
    with pytest.raises(DocumentError, match=r"\$\.devices\[1\]\.colour: unknown property"):
        DeviceTopology.from_dict(data)


def test_disconnected_file_is_a_topology_error():
    data = pair().to_dict()
    data["links"] = []
    with pytest.raises(TopologyError, match="disconnected"):
        DeviceTopology.from_dict(data)


def test_own_validator_agrees_with_jsonschema():
    jsonschema = pytest.importorskip("jsonschema")
    good = presets.get("hetero-4fast-4slow-eth").to_dict()
    jsonschema.validate(good, SCHEMA)
    assert schema_errors(good, SCHEMA) == []
    bad = json.loads(json.dumps(good))
    bad["links"][0]["latency"] = -1
    bad["devices"][0].pop("memory")
    ours = schema_errors(bad, SCHEMA)
    theirs = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(bad))
    assert len(ours) == len(theirs) == 2


def test_with_link_params_replaces_only_the_kind_asked():
    topo = presets.get("2x-dgx-h100-ib").with_link_params(kind="network", bandwidth=25e9)
    assert {ln.bandwidth for ln in topo.links if ln.kind == "network"} == {25e9}
    assert {ln.bandwidth for ln in topo.links if ln.kind == "nvswitch"} == {450e9}


def test_switch_kind_checked():
    with pytest.raises(TopologyError, match="'router'"):
        Switch("s", "router")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"devices": None, "links": []}, "devices None must be a list"),
    ({"devices": ["gpu0"], "links": []}, "'gpu0' is a str, not a Device"),
    ({"devices": [Device("a", "gpu", 1e12, 2**30)], "links": [("a", "b")]},
     r"\('a', 'b'\) is a tuple, not a Link"),
])
def test_topology_parts_of_the_wrong_type_are_named(kwargs, match):
    with pytest.raises(TopologyError, match=match):
        DeviceTopology(**kwargs)
