import pytest
from stitchlab.topology import TopologyError, presets


def test_preset_files_match_their_builders():
    for name in presets.names():
        assert presets.get(name).to_dict() == presets.build(name).to_dict(), name


def test_required_presets_exist():
    names = presets.names()
    for name in ["dgx-h200", "dgx-h100", "pcie-4gpu", "2x-dgx-h100-ib", "hetero-4fast-4slow-eth"]:
        assert name in names


def test_dgx_h200_is_eight_gpus_on_nvswitch():
    topo = presets.get("dgx-h200")
    assert [d.name for d in topo.devices] == ["NVIDIA H200"] * 8
    assert {ln.kind for ln in topo.links} == {"nvswitch"}
    assert topo.route("gpu0", "gpu7").bandwidth == 450e9


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(TopologyError, match=r"unknown preset 'dgx-z9'; available: .*dgx-h200"):
        presets.get("dgx-z9")


def test_import_does_not_pull_torch():
    import subprocess
    import sys

    code = "import sys, stitchlab, stitchlab.topology; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
