"""scripts/run-notebooks.py, the GPU machine's notebook runner, on small notebooks on the CPU.

Each notebook runs in its own Jupyter kernel; the runner names the failing cell, checks the
backend and the interpreter's soundness, writes the executed notebook, and says why when no
kernel can run (exit 2).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "run-notebooks.py"


@pytest.fixture(scope="module")
def runner():
    spec = importlib.util.spec_from_file_location("run_notebooks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_notebooks"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("run_notebooks", None)


@pytest.fixture(autouse=True)
def _cpu(monkeypatch, tmp_path):
    monkeypatch.setenv("STITCHLAB_BACKEND", "numpy")
    monkeypatch.setenv("STITCHLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("STITCHLAB_PROGRESS", "0")


def notebook(path: Path, *sources: str) -> Path:
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(book, path)
    return path


def test_a_notebook_runs_in_a_kernel_and_is_written_with_its_outputs(runner, tmp_path, capsys):
    nb = notebook(tmp_path / "ok.ipynb", "import stitchlab as sl\nx = 20", "print('hello')", "x + 1")
    assert runner.main([str(nb), "--out", str(tmp_path / "out"), "--expect-backend", "numpy"]) == 0
    log = capsys.readouterr().out
    assert "PASS  ok.ipynb  backend=numpy" in log and "1 passed, 0 failed" in log
    done = nbformat.read(tmp_path / "out" / "ok.ipynb", as_version=4)
    assert [c.metadata.get("tags") for c in (done.cells[0], done.cells[-1])] == [["run-notebooks"]] * 2
    assert '"backend": "numpy"' in done.cells[0].outputs[0]["text"]
    assert done.cells[2].outputs[0]["text"] == "hello\n"
    assert done.cells[3].outputs[0]["data"]["text/plain"] == "21"


def test_the_failing_cell_is_named_with_its_error(runner, tmp_path, capsys):
    nb = notebook(tmp_path / "bad.ipynb", "1", "raise ValueError('boom')", "2")
    assert runner.main([str(nb), "--out", str(tmp_path / "out")]) == 1
    log = capsys.readouterr().out
    assert "FAIL  bad.ipynb" in log and "fail: cell 1: ValueError: boom" in log
    assert (tmp_path / "out" / "bad.ipynb").exists()  # the partial run is kept


def test_a_notebook_on_another_backend_fails_with_the_reason(runner, tmp_path, capsys):
    nb = notebook(tmp_path / "cpu.ipynb", "1")
    assert runner.main([str(nb), "--expect-backend", "cupy"]) == 1
    log = capsys.readouterr().out
    assert "the added start cell: RuntimeError: stitchlab's backend is 'numpy', expected 'cupy'" in log
    assert "STITCHLAB_BACKEND='numpy'" in log


def test_a_notebook_that_overwrites_the_cached_bytes_b_space_fails(runner, tmp_path, capsys):
    # what an NVRTC log buffer made as b" " * 1 does when NVRTC writes its terminating NUL into it
    corrupt = "import ctypes, sys\nb = b' '\nctypes.memset(id(b) + sys.getsizeof(b) - 2, 0, 1)"
    nb = notebook(tmp_path / "corrupt.ipynb", corrupt)
    assert runner.main([str(nb)]) == 1
    log = capsys.readouterr().out
    assert "the added end cell: RuntimeError: the interpreter is corrupted: b' ' reads b'\\x00'" in log


def test_a_missing_jupyter_package_is_named_and_the_exit_status_is_2(runner, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "STACK", ("nbclient", "no-such-distribution"))
    assert runner.main([str(notebook(tmp_path / "a.ipynb", "1"))]) == 2
    assert "not installed: no-such-distribution" in capsys.readouterr().out


def test_a_kernel_that_does_not_start_gives_exit_2_and_the_cause(runner, tmp_path, capsys, monkeypatch):
    from nbclient import NotebookClient

    async def no_kernel(self, **kwargs):
        raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(NotebookClient, "async_start_new_kernel", no_kernel)
    first, second = notebook(tmp_path / "a.ipynb", "1"), notebook(tmp_path / "b.ipynb", "1")
    assert runner.main([str(first), str(second)]) == 2
    log = capsys.readouterr().out
    assert "no kernel: RuntimeError: Kernel died before replying to kernel_info" in log
    assert "the other notebooks are not tried" in log and "b.ipynb" not in log.split("summary:")[1]


def test_in_process_runs_each_cell_once_and_renders_the_last_value(tmp_path):
    nb = notebook(tmp_path / "count.ipynb",
                  "import stitchlab as sl, numpy as np\nruns = []",
                  "runs.append(1)\nsl.asarray(np.ones(3)) + 1",
                  "assert runs == [1], runs")
    done = subprocess.run([sys.executable, str(SCRIPT), "--in-process", "--expect-backend", "numpy", str(nb)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  count.ipynb  backend=numpy" in done.stdout
