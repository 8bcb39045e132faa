"""The cupy backend: arrays on a CUDA GPU through CuPy.

Until the stitching compiler plans a graph, graphs run op by op through the reference
interpreter with CuPy (the same path a group takes when its fused kernel cannot be built).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ir.graph import Graph
from .backend import Backend, Executable
from .interpreter import interpret


def _cupy() -> Any:
    import cupy

    return cupy


class CupyBackend(Backend):
    name = "cupy"

    def device(self) -> str:
        return f"cuda:{_cupy().cuda.Device().id}"

    def owns(self, obj: Any) -> bool:
        return type(obj).__module__.startswith("cupy") and hasattr(obj, "__cuda_array_interface__")

    def from_object(self, obj: Any, dtype: Any = None, copy: bool = False) -> Any:
        cp = _cupy()
        return cp.array(obj, dtype=dtype, copy=True) if copy else cp.asarray(obj, dtype=dtype)

    def to_numpy(self, buf: Any) -> Any:
        return buf.get()

    def plan(self, graph: Graph) -> Executable:
        cp = _cupy()

        def run(buffers: Sequence[Any]) -> list[Any]:
            return [cp.ascontiguousarray(o) for o in interpret(graph, buffers, cp)]

        return run


def gpu_usable() -> bool:
    """True if CuPy imports and sees at least one CUDA device (never raises)."""
    try:
        cp = _cupy()
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False
