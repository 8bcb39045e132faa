"""The example notebooks run top to bottom on the CPU (numpy backend) and are stored clean."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = ["quickstart.ipynb", "softmax_layernorm_one_kernel.ipynb", "kernel_registry.ipynb", "stencil_time_steps.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_without_outputs(name):
    book = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    for cell in book["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"{name}: clear the outputs"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_on_the_cpu(name, tmp_path, monkeypatch):
    monkeypatch.setenv("STITCHLAB_BACKEND", "numpy")
    monkeypatch.setenv("STITCHLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("STITCHLAB_PROGRESS", "0")
    monkeypatch.delenv("STITCHLAB_LOG", raising=False)
    book = nbformat.read(EXAMPLES / name, as_version=4)
    # the kernel must be this interpreter (jupyter_client starts "python" as sys.executable)
    book.cells.insert(0, nbformat.v4.new_code_cell(
        f"import sys; assert sys.prefix == {sys.prefix!r}, sys.executable"
    ))
    client = nbclient.NotebookClient(
        book, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(EXAMPLES)}}
    )
    client.execute()
    errors = [
        out for cell in book.cells if cell.cell_type == "code"
        for out in cell.get("outputs", []) if out.get("output_type") == "error"
    ]
    assert not errors
