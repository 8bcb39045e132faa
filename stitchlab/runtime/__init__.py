"""Runtime: backends, evaluation and counters."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..ir.graph import Graph, build_graph
from ..ir.node import Node
from . import stats
from .backend import Backend, PerCall
from .cupy_backend import CupyBackend, gpu_usable
from .numpy_backend import NumpyBackend
from .scratch import keep_alive

BACKENDS = ("numpy", "cupy")
_instances: dict[str, Backend] = {}
_current: str | None = None


def _instance(name: str) -> Backend:
    if name not in _instances:
        _instances[name] = NumpyBackend() if name == "numpy" else CupyBackend()
    return _instances[name]


def _check_name(name: str) -> str:
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    return name


def default_backend_name() -> str:
    """``$STITCHLAB_BACKEND`` if set, else "cupy" where a GPU is usable, else "numpy"."""
    env = os.environ.get("STITCHLAB_BACKEND")
    if env:
        return _check_name(env)
    return "cupy" if gpu_usable() else "numpy"


def get_backend() -> str:
    """The name of the backend new arrays are created on ("numpy" or "cupy")."""
    global _current
    if _current is None:
        _current = default_backend_name()
    return _current


def set_backend(name: str) -> None:
    """Create new arrays on backend ``name`` ("numpy" or "cupy").

    Existing arrays keep their device; arrays of different devices cannot be combined.
    """
    global _current
    _check_name(name)
    if name == "cupy" and not gpu_usable():
        raise RuntimeError(
            "set_backend('cupy'): no usable CUDA GPU (CuPy is missing or sees no device); "
            "install stitchlab[cuda13] on a machine with a GPU, or stay on 'numpy'"
        )
    _current = name


def current() -> Backend:
    return _instance(get_backend())


def for_device(device: str | None) -> Backend:
    """The backend that owns arrays on ``device`` (None: the current backend)."""
    if device is None:
        return current()
    return _instance("numpy" if device == "cpu" else "cupy")


class TracedValueError(RuntimeError):
    """A traced array (inside ``sl.jit``) was asked for its values, which it does not have yet."""


def source_buffers(backend: Backend, sources: Sequence[Node]) -> list[Any]:
    """The buffer of each source of a graph: an input's own, or for a constant the graph reads at
    run time (``stitchlab.ir.graph.read_constants_at_run_time``) a 0-d buffer of its value."""
    return [leaf.value if leaf.op == "input" else backend.constant(leaf) for leaf in sources]


def evaluate(nodes: Sequence[Node]) -> list[Any]:
    """Evaluate ``nodes`` (all on one device) in one graph; materialize them; return buffers."""
    pending = [n for n in nodes if n.op != "input"]
    graph, sources = build_graph(pending) if pending else (None, [])
    if any(leaf.value is None and leaf.op == "input" for leaf in sources) or any(n.op == "input" and n.value is None for n in nodes):
        raise TracedValueError(
            "cannot materialize a traced array inside sl.jit (bool(), .get(), np.asarray, print, "
            "a NumPy function without a lazy version, or similar on a traced value); move "
            "data-dependent code out of the jitted function"
        )
    if graph is not None:
        device = next((n.device for n in graph.nodes if n.device is not None), None)
        backend = for_device(device)
        buffers = source_buffers(backend, sources)
        outs = backend.executable(graph)(buffers)
        made = [b for leaf, b in zip(sources, buffers, strict=True) if leaf.op != "input"]
        if made:  # the 0-d buffers of constants: as long as the outputs (a captured graph reads them)
            keep_alive(outs, made)
        stats.bump("evaluations")
        for node, buf in zip(pending, outs, strict=False):
            node.materialize(buf)
    return [n.value for n in nodes]


__all__ = [
    "Backend", "Graph", "PerCall", "TracedValueError", "build_graph", "evaluate", "for_device", "current",
    "get_backend", "set_backend", "default_backend_name", "gpu_usable", "stats",
]
