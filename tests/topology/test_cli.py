import json

from stitchlab.topology import presets
from stitchlab.topology.cli import main

from .conftest import tiny_profile


def test_presets_and_show(capsys, tmp_path):
    assert main(["topology", "presets"]) == 0
    assert "dgx-h200" in capsys.readouterr().out
    svg = tmp_path / "t.svg"
    assert main(["topology", "show", "pcie-4gpu", "--svg", str(svg)]) == 0
    assert "PCIe workstation" in capsys.readouterr().out and svg.read_text().startswith("<svg")
    assert main(["topology", "show", "dgx-h200", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "stitchlab.topology/1"


def test_validate_reports_the_place(capsys, tmp_path):
    good = tmp_path / "good.json"
    presets.get("dgx-h200").save(good)
    assert main(["topology", "validate", str(good)]) == 0
    data = json.loads(good.read_text())
    data["links"][2]["kind"] = "carrier-pigeon"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["topology", "validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "$.links[2].kind" in err and "carrier-pigeon" in err


def test_validate_and_simulate_a_profile(capsys, tmp_path):
    prof = tmp_path / "p.json"
    tiny_profile().save(prof)
    assert main(["topology", "validate", str(prof)]) == 0
    assert "valid model profile, 2 layers" in capsys.readouterr().out
    assert main(["topology", "simulate", "dgx-h200", str(prof)]) == 0
    assert "step" in capsys.readouterr().out


def test_unknown_topology_spec(capsys):
    assert main(["topology", "show", "no-such-thing"]) == 2
    assert "neither a preset" in capsys.readouterr().err
