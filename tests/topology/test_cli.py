import json

import pytest
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


def test_output_and_input_files_that_cannot_be_used_are_error_lines(capsys, tmp_path):
    """No OSError/TypeError traceback: exit status 2 and a line naming the file."""
    assert main(["topology", "show", "pcie-4gpu", "--svg", str(tmp_path)]) == 2
    assert f"{tmp_path}: cannot write the SVG" in capsys.readouterr().err
    assert main(["topology", "show", "pcie-4gpu", "--svg", str(tmp_path / "no" / "t.svg")]) == 2
    assert "cannot write the SVG: No such file" in capsys.readouterr().err
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\xfe{}")
    assert main(["topology", "validate", str(binary)]) == 2
    assert f"{binary}: not UTF-8 text" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "message"), [
    (None, "cannot read the file"),
    ("{}", "missing the field(s) ['devices', 'batch_shares']"),
    ("[1]", "a Strategy is a JSON object"),
    ('{"devices": ["d0", "d1"], "batch_shares": [8, Infinity]}', "batch share inf must be"),
    ('{"devices": ["d0", "d1"], "batch_shares": [8, 8], "groups": [1]}', "Strategy.groups [1]"),
    ('{"devices": ["d0", "d1"], "batch_shares": [8, 8], "schemes": []}', "Strategy.schemes []"),
])
def test_a_bad_strategy_file_is_an_error_line_naming_it(capsys, tmp_path, text, message):
    prof = tmp_path / "p.json"
    tiny_profile().save(prof)
    strategy = tmp_path / "s.json"
    if text is not None:
        strategy.write_text(text)
    code = main(["topology", "simulate", "dgx-h200", str(prof), "--strategy", str(strategy)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: {strategy}") and message in err, err


def test_an_infinite_global_batch_is_refused(capsys, tmp_path):
    prof = tmp_path / "p.json"
    tiny_profile().save(prof)
    assert main(["topology", "simulate", "dgx-h200", str(prof), "--global-batch", "inf"]) == 2
    assert "global_batch=inf must be a positive finite number" in capsys.readouterr().err
