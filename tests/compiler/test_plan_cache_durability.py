"""The plan cache keeps its recipes when a process dies: a recipe is in the disk registry as soon
as the graph has been planned, so a Jupyter kernel killed with SIGKILL (OOM, a forced restart)
or a crashed process loses nothing, and the next process plans nothing. A registry that cannot
be written (read-only, full) costs a warning, never the computation.

The processes here run the cupy backend on the CPU stand-in (``benchmarks/fake_cupy.py``).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import stitchlab as sl
from stitchlab.plan import preset
from stitchlab.runtime import plan_cache

from .standin import StandIn, fresh_backend
from .test_plan_cache import CHILD_PRELUDE, _graph, _layernorm_graph

ROOT = str(Path(__file__).resolve().parents[2])

#: A process that runs three new signatures through ``sl.jit`` and prints its counters; then it
#: waits to be killed (``cold``) or exits (``once``). ``warm`` refuses to plan.
_CHILD = CHILD_PRELUDE + r"""
center = sl.jit(lambda x, w: (x - x.mean(axis=-1, keepdims=True)) * w)
softmax = sl.jit(lambda x: sl.exp(x - x.max(axis=-1, keepdims=True)) / sl.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True))
center(cp.empty((64, 768), np.float32), cp.empty(768, np.float32))
center(cp.empty((8, 96), np.float64), cp.empty(96, np.float64))
softmax(cp.empty((32, 512), np.float32))
print(json.dumps(sl.stats()), flush=True)
if sys.argv[1] == "cold":
    time.sleep(600)  # an idle kernel, until it is killed
"""

SIGNATURES = 3


def _env(cache: Path) -> dict[str, str]:
    return dict(os.environ, STITCHLAB_CACHE_DIR=str(cache), STITCHLAB_BACKEND="cupy")


def _killed_cold_process(cache: Path) -> subprocess.Popen[str]:
    """Start a cold process; the caller reads its counters and kills it."""
    return subprocess.Popen([sys.executable, "-c", _CHILD, "cold", ROOT], env=_env(cache),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _counters_then_sigkill(proc: subprocess.Popen[str]) -> dict[str, int]:
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            pytest.fail(f"the cold process ended early: {proc.communicate(timeout=60)[1][-3000:]}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL  # no atexit hook ran
    return json.loads(line)


def _warm_process(cache: Path) -> dict[str, int]:
    res = subprocess.run([sys.executable, "-c", _CHILD, "warm", ROOT], env=_env(cache), capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_recipes_of_a_killed_process_are_found_by_the_next_one(tmp_path: Path) -> None:
    cache = tmp_path / "registry"
    cold = _counters_then_sigkill(_killed_cold_process(cache))
    assert cold["plans"] == SIGNATURES and cold["plans_loaded"] == 0 and cold["nvrtc_compiles"] >= SIGNATURES
    warm = _warm_process(cache)  # build_plan raises there: it plans nothing
    assert warm["plans"] == SIGNATURES and warm["plans_loaded"] == SIGNATURES
    assert warm["nvrtc_compiles"] == 0 and warm["registry_misses"] == 0
    assert warm["registry_hits"] == cold["nvrtc_compiles"]


def test_processes_killed_while_sharing_one_directory_leave_usable_recipes(tmp_path: Path) -> None:
    cache = tmp_path / "registry"
    procs = [_killed_cold_process(cache) for _ in range(3)]  # the same graphs, planned at once
    for proc in procs:
        assert _counters_then_sigkill(proc)["plans"] == SIGNATURES
    warm = _warm_process(cache)
    assert warm["plans_loaded"] == SIGNATURES and warm["nvrtc_compiles"] == 0


# --- in this process (stand-in GPU) ---------------------------------------------------------------
def test_a_recipe_is_on_disk_when_its_graph_has_been_planned(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    graph, _ = _layernorm_graph()
    exe = fresh_backend(monkeypatch).executable(graph)
    name = plan_cache.record_name(plan_cache.components(graph.key, preset("H200")))
    from stitchlab.registry import KernelRegistry

    other = KernelRegistry(standin.registry.path)  # another process's view: no memory front
    assert other.get_record("plan", name)["recipe"] == exe.recipe


@pytest.mark.parametrize("failure", [
    sqlite3.OperationalError("attempt to write a readonly database"),
    OSError(errno.ENOSPC, "No space left on device"),
], ids=["read-only", "full"])
def test_a_directory_that_cannot_take_a_recipe_warns_once_and_keeps_going(
        standin: StandIn, monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    """The directory turns read-only (or fills up) after the kernels were written: the recipe's
    write is the one that fails."""
    from stitchlab.registry import RegistryWarning, _store

    real = _store.DiskStore.put

    def no_records(self: Any, key: str, value: bytes, tag: dict[str, Any], only_if_absent: bool = False) -> bool:
        if tag.get("kind") == "record":
            raise failure
        return real(self, key, value, tag, only_if_absent)

    monkeypatch.setattr(_store.DiskStore, "put", no_records)
    graphs = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for rows in (16, 32, 48):
            x = sl.asarray(standin.array((rows, 256)))
            graph, _ = _graph([sl.exp(x - x.max(axis=-1, keepdims=True))])
            outs = fresh_backend(monkeypatch).executable(graph)([standin.array(n.shape, n.dtype) for n in graph.inputs])
            assert outs[0].shape == (rows, 256)
            graphs.append(graph)
    assert [type(w.message) for w in caught] == [RegistryWarning], [str(w.message) for w in caught]
    assert str(failure) in str(caught[0].message) and standin.registry.mode == "memory"
    for graph in graphs:  # this process still finds its recipes
        assert plan_cache.load(graph, preset("H200")) is not None


def _immutable(directory: Path, on: bool) -> bool:
    """``chattr +i``: a directory even root cannot add files to (False where that is not possible)."""
    try:
        res = subprocess.run(["chattr", "+i" if on else "-i", str(directory)], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0


@pytest.mark.parametrize("populated", [False, True], ids=["empty", "populated"])
def test_a_process_on_a_read_only_directory_computes_with_one_warning(tmp_path: Path, populated: bool) -> None:
    """Tests run as root, which ignores permissions; an immutable directory is read-only for root too."""
    cache = tmp_path / "registry"
    cache.mkdir()
    if populated:
        res = subprocess.run([sys.executable, "-c", _CHILD, "once", ROOT], env=_env(cache), capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
    if not _immutable(cache, True):
        pytest.skip("chattr +i is not available here")
    try:
        res = subprocess.run([sys.executable, "-c", _CHILD, "once", ROOT], env=_env(cache), capture_output=True,
                             text=True, timeout=300)
    finally:
        _immutable(cache, False)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout.strip().splitlines()[-1])["plans"] == SIGNATURES
    assert res.stderr.count("Warning") == 1, res.stderr[-3000:]


def test_an_unexpected_write_error_warns_once_and_keeps_going(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("injected failure")

    monkeypatch.setattr(standin.registry, "put_record", broken)
    monkeypatch.setattr(plan_cache, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for rows in (16, 32):
            x = sl.asarray(standin.array((rows, 256)))
            graph, _ = _graph([sl.sin(x) * 2])
            outs = fresh_backend(monkeypatch).executable(graph)([standin.array(n.shape, n.dtype) for n in graph.inputs])
            assert outs[0].shape == (rows, 256)
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    assert "plan cache" in str(caught[0].message) and "injected failure" in str(caught[0].message)


def test_a_recipe_is_written_once_per_new_graph(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """Executing a planned graph again writes nothing."""
    writes: list[str] = []
    real = standin.registry.put_record

    def counting(kind: str, name: str, data: dict[str, Any]) -> None:
        writes.append(name)
        real(kind, name, data)

    monkeypatch.setattr(standin.registry, "put_record", counting)
    graph, _ = _layernorm_graph()
    backend = fresh_backend(monkeypatch)
    bufs = [standin.array(n.shape, n.dtype) for n in graph.inputs]
    for _ in range(5):
        backend.executable(graph)(bufs)
    assert len(writes) == 1
