import xml.etree.ElementTree as ET

from stitchlab.topology import Device, DeviceTopology, Link, presets


def test_svg_is_well_formed_and_has_a_legend():
    svg = presets.get("hetero-4fast-4slow-eth")._repr_svg_()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "12.5 GB/s (network)" in svg and "450 GB/s (nvswitch)" in svg
    assert svg.count("<line") >= len(presets.get("hetero-4fast-4slow-eth").links)


def test_user_text_is_escaped():
    evil = "<script>alert(1)</script>"
    topo = DeviceTopology(
        [Device(evil, "gpu", 1e12, 2**30, host=evil, name=evil),
         Device("ok", "gpu", 1e12, 2**30, host=evil)],
        [Link(evil, "ok", 1e9, 0.0, "pcie")], name=evil, description=evil)
    for text in (topo._repr_svg_(), topo._repr_html_()):
        assert "<script>" not in text
        assert "&lt;script&gt;" in text
    ET.fromstring(topo._repr_svg_())


def test_big_topology_renders():
    svg = presets.get("8x-dgx-h100-ib")._repr_svg_()
    ET.fromstring(svg)
    assert svg.count("node7/gpu7") >= 1
