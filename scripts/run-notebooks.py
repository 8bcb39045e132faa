"""Run notebooks top to bottom in a Jupyter kernel (nbclient + ipykernel), one kernel per notebook.

    python3 scripts/run-notebooks.py [--out DIR] [--expect-backend cupy] examples/*.ipynb

This is what CI does on the CPU (``tests/notebook/test_examples.py``), as a script for the GPU
machine: ``scripts/gpu-check.sh`` runs it when ``GPU_CHECK_NOTEBOOKS=1``, with the Jupyter packages
carried as wheels in ``.whl/`` (docs/gpu-check.md). The kernel is this interpreter's ``python3``
kernel and inherits this process's environment (``PYTHONPATH``, ``STITCHLAB_*``); it runs in the
notebook's folder, as in Jupyter. Widgets go through a real comm, and nbclient stores their state.

Two cells are added around each notebook's own (tagged ``run-notebooks``): the first prints the
kernel's interpreter, stitchlab's location and backend, and fails if the kernel is another
interpreter or, with ``--expect-backend``, the backend is another; the last prints the backend
again and fails if the interpreter's cached bytes ``b" "`` was overwritten (a C call writing into
an immutable bytes buffer does that, and then Python 3.12 compiles f-strings without their spaces).

``--out DIR`` writes each executed notebook (outputs and widget state) to ``DIR/<name>.ipynb``, a
failed one too. ``--in-process`` runs the same cells with ``exec`` in a fresh Python process per
notebook, the last expression of a cell rendered as IPython would: for a machine where no kernel
starts, to see what the code does (widgets are built but no front end is attached).

Exit status: 0 every notebook passed; 1 a notebook failed; 2 no kernel could be run (the Jupyter
packages are missing, or the kernel did not start), with the cause printed.
"""

from __future__ import annotations

import argparse
import ast
import json
import multiprocessing
import re
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the distributions a kernel run needs; their requirements are checked too
STACK = ("nbclient", "nbformat", "jupyter_client", "ipykernel", "ipython", "ipywidgets")
TAG = "run-notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

_START_CELL = '''\
# added by scripts/run-notebooks.py: the interpreter, stitchlab and backend of this kernel
def _run_notebooks_start(prefix, expected_backend):
    import json, os, sys
    import stitchlab
    info = {"python": sys.version.split()[0], "executable": sys.executable,
            "stitchlab": stitchlab.__file__, "backend": stitchlab.get_backend()}
    print("run-notebooks: start " + json.dumps(info))
    if prefix is not None and sys.prefix != prefix:
        raise RuntimeError(
            f"the kernel runs {sys.executable} (prefix {sys.prefix}), not the interpreter of "
            f"scripts/run-notebooks.py (prefix {prefix}): another 'python3' kernelspec is "
            "installed (`jupyter kernelspec list` shows where)")
    if expected_backend and info["backend"] != expected_backend:
        try:
            import cupy
            why = f"cupy {cupy.__version__} sees {cupy.cuda.runtime.getDeviceCount()} device(s)"
        except Exception as error:
            why = f"cupy is not usable: {type(error).__name__}: {error}"
        raise RuntimeError(
            f"stitchlab's backend is {info['backend']!r}, expected {expected_backend!r} "
            f"(STITCHLAB_BACKEND={os.environ.get('STITCHLAB_BACKEND', '')!r}; {why})")
'''

_END_CELL = '''\
# added by scripts/run-notebooks.py: the backend at the end; is the interpreter still sound?
def _run_notebooks_end():
    import json, sys
    stitchlab = sys.modules.get("stitchlab")
    info = {"backend": stitchlab.get_backend() if stitchlab else None}
    print("run-notebooks: end " + json.dumps(info))
    if " ".encode()[0] != 0x20:
        raise RuntimeError(
            f"the interpreter is corrupted: b' ' reads {' '.encode()!r}.\\nA C call wrote into an "
            "immutable bytes object (an output buffer made as b' ' * n, with n == 1, is the cached "
            "b' '); from then on every b' ' and ' '.encode() of the process is wrong, and Python "
            "3.12 compiles f-strings without their spaces. Give such calls a bytearray")
_run_notebooks_end()
del _run_notebooks_end
'''


def _start_cell(prefix: str | None, expected_backend: str | None) -> str:
    return (_START_CELL + f"_run_notebooks_start({prefix!r}, {expected_backend!r})\n"
            "del _run_notebooks_start\n")


@dataclass
class Result:
    """One notebook's outcome; ``status`` is "pass", "fail" or "no kernel"."""

    name: str
    status: str
    seconds: float
    backend: str | None = None
    where: str = ""      # "cell 9", "the added start cell", ...
    error: str = ""      # one line: the exception and its message
    widgets: str = ""    # "2 views, 31 models stored"
    written: str = ""    # the executed notebook's path

    def line(self) -> str:
        parts = [f"{'PASS' if self.status == 'pass' else 'FAIL'}  {self.name}",
                 f"backend={self.backend or '?'}", f"{self.seconds:.1f} s"]
        if self.widgets:
            parts.append(f"widgets: {self.widgets}")
        if self.status != "pass":
            parts.append(f"{self.status}: {self.where}: {self.error}" if self.where
                         else f"{self.status}: {self.error}")
        return "  ".join(parts)


def _label(index: int, own_cells: int) -> str:
    """The name of cell ``index`` of the run (the added start cell is index 0)."""
    if index == 0:
        return "the added start cell"
    if index == own_cells + 1:
        return "the added end cell"
    return f"cell {index - 1}"


def _one_line(text: str) -> str:
    """The first non-blank line of ``text``, without colour codes, at most 300 characters."""
    lines = [ln for ln in _ANSI.sub("", text).splitlines() if ln.strip()]
    return lines[0].strip()[:300] if lines else ""


# --------------------------------------------------------------------------------- the stack
def stack_report() -> tuple[list[str], list[str], str]:
    """(missing, mismatched, versions) of the Jupyter packages and all they require.

    ``missing`` names each distribution that is not installed and who needs it; ``mismatched``
    each installed one whose version is outside a requirement (a warning: it often still works).
    """
    from importlib import metadata

    try:
        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name
    except ImportError:
        return ["packaging (needed to check the others, and by ipykernel) is not installed"], [], ""
    missing: list[str] = []
    mismatched: list[str] = []
    seen: set[str] = set()
    todo: list[tuple[str, str]] = [(name, "") for name in STACK]
    while todo:
        name, needed_by = todo.pop(0)
        key = canonicalize_name(name)
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(f"{name} (needed by {needed_by})" if needed_by else name)
            continue
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            who = f"{dist.metadata['Name']} {dist.version}"
            try:
                version = metadata.version(req.name)
            except metadata.PackageNotFoundError:
                todo.append((req.name, who))
                continue
            if not req.specifier.contains(version, prereleases=True):
                mismatched.append(f"{req.name} {version} is installed; {who} asks for {req}")
            todo.append((req.name, who))
    versions = []
    for name in ("nbclient", "nbformat", "jupyter_client", "ipykernel", "ipython", "ipywidgets",
                 "comm", "pyzmq", "tornado", "traitlets"):
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return missing, mismatched, ", ".join(versions)


# ---------------------------------------------------------------------------- in a kernel
def run_in_kernel(path: Path, out: Path | None, expected_backend: str | None,
                  timeout: int, startup_timeout: int) -> Result:
    """Execute ``path`` in a fresh ``python3`` kernel; write it to ``out`` if given."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    book = nbformat.read(path, as_version=4)
    own = len(book.cells)
    book.cells.insert(0, nbformat.v4.new_code_cell(_start_cell(sys.prefix, expected_backend),
                                                   metadata={"tags": [TAG]}))
    book.cells.append(nbformat.v4.new_code_cell(_END_CELL, metadata={"tags": [TAG]}))
    clock: dict[str, Any] = {"index": None, "t": 0.0}

    def on_start(cell: Any, cell_index: int) -> None:
        clock.update(index=cell_index, t=time.perf_counter())

    def on_executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        content = execute_reply["content"]
        took = time.perf_counter() - clock["t"]
        print(f"  {_label(cell_index, own):22s} {content['status']:5s} {took:7.2f} s", flush=True)
        if content["status"] == "error":
            print(_ANSI.sub("", "\n".join(content.get("traceback", []))), flush=True)

    client = NotebookClient(
        book, kernel_name="python3", timeout=timeout, startup_timeout=startup_timeout,
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_start=on_start, on_cell_executed=on_executed,
    )
    result = Result(path.name, "pass", 0.0)
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        result.status, result.error = "fail", f"{exc.ename}: {_one_line(exc.evalue) or exc.ename}"
        result.where = _label(clock["index"], own)
    except CellTimeoutError:
        result.status, result.error = "fail", f"no reply within --timeout {timeout} s"
        result.where = _label(clock["index"], own)
    except DeadKernelError as exc:
        result.status, result.error = "fail", f"the kernel died ({exc}); its stderr is above"
        result.where = _label(clock["index"], own) if clock["index"] is not None else ""
    except Exception as exc:
        if client.code_cells_executed == 0:  # the kernel did not start, or did not answer
            result.status = "no kernel"
            result.error = f"{type(exc).__name__}: {_one_line(str(exc)) or repr(exc)}"
            traceback.print_exc()
        else:
            result.status, result.error = "fail", f"{type(exc).__name__}: {exc}"
            result.where = _label(clock["index"], own)
    result.seconds = time.perf_counter() - start
    result.backend = _probe(book, "end") or _probe(book, "start")
    views = sum(1 for cell in book.cells for output in cell.get("outputs", [])
                if WIDGET_VIEW in output.get("data", {}))
    models = len(book.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {}))
    if views or models:
        result.widgets = f"{views} view(s), {models} model(s) stored"
    if out is not None and result.status != "no kernel":
        out.mkdir(parents=True, exist_ok=True)
        nbformat.write(book, out / path.name)
        result.written = str(out / path.name)
    return result


def _probe(book: Any, which: str) -> str | None:
    """The backend printed by the added start or end cell, if it ran."""
    cell = book.cells[0] if which == "start" else book.cells[-1]
    for output in cell.get("outputs", []):
        for line in str(output.get("text", "")).splitlines():
            if line.startswith(f"run-notebooks: {which} "):
                return json.loads(line.split(" ", 2)[2]).get("backend")
    return None


# ------------------------------------------------------------------------------- in-process
def _display(value: Any) -> None:
    """What IPython's display does with a cell's last value: build its rich representations."""
    if value is None:
        return
    if hasattr(value, "_repr_mimebundle_"):
        value._repr_mimebundle_()
    elif hasattr(value, "_repr_html_"):
        value._repr_html_()
    print(repr(value)[:2000], flush=True)


def exec_notebook(path: str, expected_backend: str | None) -> Result:
    """Execute the notebook's code cells (plus the added two) in this process, in one namespace."""
    book = json.loads(Path(path).read_text(encoding="utf-8"))
    own = len(book["cells"])
    sources = [_start_cell(None, expected_backend)]
    sources += ["".join(c["source"]) if c["cell_type"] == "code" else "" for c in book["cells"]]
    sources.append(_END_CELL)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    result = Result(Path(path).name, "pass", 0.0)
    start = time.perf_counter()
    for index, source in enumerate(sources):
        if not source.strip():
            continue
        name = f"{path} [{_label(index, own)}]"
        try:
            tree = ast.parse(source, name)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, name, "exec", dont_inherit=True), namespace)
            if last is not None:
                _display(eval(compile(ast.Expression(last.value), name, "eval", dont_inherit=True),
                              namespace))
        except BaseException as exc:
            print(f"FAIL {name}:\n{traceback.format_exc()}", flush=True)
            result.status, result.where = "fail", _label(index, own)
            result.error = f"{type(exc).__name__}: {_one_line(str(exc))}"
            break
    result.seconds = time.perf_counter() - start
    stitchlab = sys.modules.get("stitchlab")
    result.backend = stitchlab.get_backend() if stitchlab else None
    return result


def run_in_process(path: Path, expected_backend: str | None) -> Result:
    """:func:`exec_notebook` in a fresh interpreter, so one notebook cannot disturb the next."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            return pool.submit(exec_notebook, str(path), expected_backend).result()
        except Exception as exc:  # the process died (a crash in C code, out of memory)
            return Result(path.name, "fail", 0.0, error=f"the process running it ended: {exc!r}")


# ------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, help="write the executed notebooks to this folder")
    parser.add_argument("--expect-backend", choices=("numpy", "cupy"),
                        help="fail a notebook whose stitchlab backend is another")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (300)")
    parser.add_argument("--startup-timeout", type=int, default=120,
                        help="seconds for a kernel to start (120)")
    parser.add_argument("--in-process", action="store_true",
                        help="exec the cells in a fresh Python process per notebook, no kernel")
    args = parser.parse_args(argv)

    if args.in_process:
        print(f"running {len(args.notebooks)} notebook(s) in-process (exec, no kernel) with "
              f"{sys.executable}", flush=True)
    else:
        missing, mismatched, versions = stack_report()
        for text in mismatched:
            print(f"warning: {text}", flush=True)
        if missing:
            print("cannot run a Jupyter kernel: not installed: " + "; ".join(missing) + ".\n"
                  "On the GPU machine they travel as wheels in .whl/ (docs/gpu-check.md, "
                  "section 1 lists the command that fetches them).", flush=True)
            return 2
        print(f"running {len(args.notebooks)} notebook(s) in Jupyter kernels of {sys.executable}"
              f" ({versions})", flush=True)

    results: list[Result] = []
    for path in args.notebooks:
        print(f"\n--- {path}", flush=True)
        if args.in_process:
            result = run_in_process(path, args.expect_backend)
        else:
            result = run_in_kernel(path, args.out, args.expect_backend, args.timeout,
                                   args.startup_timeout)
        results.append(result)
        print(result.line() + (f"  -> {result.written}" if result.written else ""), flush=True)
        if result.status == "no kernel":
            print("no kernel started, so the other notebooks are not tried", flush=True)
            break

    print("\nsummary:", flush=True)
    for result in results:
        print(result.line(), flush=True)
    passed = sum(r.status == "pass" for r in results)
    print(f"{passed} passed, {len(args.notebooks) - passed} failed", flush=True)
    if any(r.status == "no kernel" for r in results):
        return 2
    return 0 if passed == len(args.notebooks) else 1


if __name__ == "__main__":
    sys.exit(main())
