"""The numpy backend: the reference interpreter on the CPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir.graph import Graph
from .backend import Backend, Executable
from .interpreter import interpret


class NumpyBackend(Backend):
    name = "numpy"

    def device(self) -> str:
        return "cpu"

    def owns(self, obj: Any) -> bool:
        return isinstance(obj, np.ndarray)

    def scalar(self, value: Any, dtype: Any) -> np.ndarray:
        return np.full((), value, dtype)

    def from_object(self, obj: Any, dtype: Any = None, copy: bool = False) -> np.ndarray:
        if hasattr(obj, "__cuda_array_interface__") and not isinstance(obj, np.ndarray):
            raise TypeError(
                f"cannot make a CPU array from a GPU object of type {type(obj).__name__}; "
                f"copy it to the host first (e.g. x.get()) or use set_backend('cupy')"
            )
        return np.array(obj, dtype=dtype, copy=True) if copy else np.asarray(obj, dtype=dtype)

    def to_numpy(self, buf: np.ndarray) -> np.ndarray:
        return buf

    def plan(self, graph: Graph) -> Executable:
        inputs = {id(n) for n in graph.inputs}
        owned_outputs = [id(o) not in inputs for o in graph.outputs]

        def run(buffers: Sequence[Any]) -> list[Any]:
            outs = interpret(graph, buffers, np)
            result = []
            for out, owned in zip(outs, owned_outputs, strict=False):
                if owned and (out.base is not None or not out.flags.c_contiguous):
                    out = np.array(out, order="C")  # a view of an input: own the result
                if owned:
                    out.flags.writeable = False  # results are shared by lazy arrays: never mutate
                result.append(out)
            return result

        return run
