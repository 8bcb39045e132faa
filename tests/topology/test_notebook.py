"""examples/topology.ipynb runs top to bottom on the CPU and is stored without outputs."""

import json
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "topology.ipynb"


def test_stored_without_outputs():
    book = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for cell in book["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.slow
def test_runs(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("torch")
    book = nbformat.read(NOTEBOOK, as_version=4)
    book.cells.insert(0, nbformat.v4.new_code_cell(
        f"import sys; assert sys.prefix == {sys.prefix!r}, sys.executable"))
    nbclient.NotebookClient(book, kernel_name="python3", timeout=120,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/svg+xml" in o.get("data", {}) for o in outputs)
