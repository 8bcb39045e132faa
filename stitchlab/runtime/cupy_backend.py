"""The cupy backend: arrays on a CUDA GPU through CuPy.

A graph is planned by the stitching compiler (:func:`stitchlab.codegen.build_plan`), its kernels
come from the kernel registry (NVRTC on a miss) and run on the current CuPy stream with outputs
from CuPy's memory pool (:mod:`stitchlab.runtime.launch`). What the executable needs is kept in the
registry too (:mod:`stitchlab.runtime.plan_cache`), so a new process skips planning. With ``STITCHLAB_FUSE=0`` graphs run op
by op through the reference interpreter with CuPy instead (the path a group also takes when its
kernel cannot be built).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir.dtypes import is_bfloat16
from ..ir.graph import Graph
from . import stats
from .backend import Backend, Executable
from .interpreter import interpret

log = logging.getLogger("stitchlab.runtime")


def _cupy() -> Any:
    import cupy

    return cupy


class CupyBackend(Backend):
    name = "cupy"
    compiles_kernels = True

    def device(self) -> str:
        return f"cuda:{_cupy().cuda.Device().id}"

    def owns(self, obj: Any) -> bool:
        return type(obj).__module__.startswith("cupy") and hasattr(obj, "__cuda_array_interface__")

    def numbers(self, dtypes: Sequence[Any], shared: bool = True) -> Any:
        if not shared:
            return super().numbers(dtypes, shared)
        from .scratch import Numbers

        return Numbers(_cupy(), dtypes, self.scalar)

    def scalar(self, value: Any, dtype: Any) -> Any:
        # a fill kernel, not a copy from the host: it can be captured into a CUDA graph
        if is_bfloat16(dtype):  # (filled as its bits)
            bits = np.array(value, dtype).view(np.uint16).item()
            return _cupy().full((), bits, np.uint16).view(dtype)
        return _cupy().full((), value, dtype)

    def from_object(self, obj: Any, dtype: Any = None, copy: bool = False) -> Any:
        cp = _cupy()
        return cp.array(obj, dtype=dtype, copy=True) if copy else cp.asarray(obj, dtype=dtype)

    def to_numpy(self, buf: Any) -> Any:
        return buf.get()

    def plan(self, graph: Graph) -> Executable:
        """The fused executable of ``graph``: from its recipe in the plan cache when one is stored
        (:mod:`stitchlab.runtime.plan_cache`), else planned, compiled and then stored there."""
        self._follow_overrides()
        if os.environ.get("STITCHLAB_FUSE", "1") == "0":
            return self.plan_unfused(graph)
        from ..plan.device import current_profile
        from . import plan_cache
        from .launch import build_executable, executable_from_recipe

        dev = current_profile(True)
        cacheable = not plan_cache.overridden(graph.key)  # a notebook's chosen candidate bypasses it
        if cacheable:
            recipe = plan_cache.load(graph, dev)
            if recipe is not None:
                exe = executable_from_recipe(graph, recipe, dev)
                if exe is not None:
                    stats.bump("plans_loaded")
                    log.debug("plan of graph %s from the plan cache (%d kernels)", graph.key[:12], len(recipe["kernels"]))
                    return exe
        from ..codegen.program import build_plan

        exe = build_executable(build_plan(graph, dev))
        if cacheable and exe.recipe is not None:
            plan_cache.store(graph, dev, exe.recipe)
        return exe

    def _follow_overrides(self) -> None:
        """Drop a graph's cached executable when a user picks another candidate plan for it."""
        if getattr(self, "_listening", False):
            return
        self._listening = True
        try:
            from ..notebook.hooks import on_override_change
        except ImportError:
            return
        on_override_change(lambda key, _choice: self._executables.pop(key, None))

    def plan_unfused(self, graph: Graph) -> Executable:
        """Op-by-op execution with CuPy (the reference for fused-versus-unfused checks)."""
        cp = _cupy()

        def run(buffers: Sequence[Any]) -> list[Any]:
            # (ascontiguousarray would turn a 0-d result into shape (1,))
            return [o if o.flags.c_contiguous else cp.ascontiguousarray(o).reshape(o.shape) for o in interpret(graph, buffers, cp)]

        return run


def gpu_usable() -> bool:
    """True if CuPy imports and sees at least one CUDA device (never raises)."""
    try:
        cp = _cupy()
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False
