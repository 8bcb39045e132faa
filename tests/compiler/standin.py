"""The cupy backend on the CPU (the ``standin`` fixture in ``conftest.py``): a stand-in ``cupy``
module (``benchmarks/fake_cupy.py``: arrays are shapes and dtypes), kernels that record their
launches instead of running, NVRTC replaced by a function that returns a placeholder cubin, a
private kernel registry and the H200 profile.

Nothing computes values: tests on this stand-in check what would be launched (kernels, grids,
argument lists, counters), the call path and the plan cache. Numerics are checked on the GPU.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks import fake_cupy  # noqa: E402


@dataclass
class Launch:
    name: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: tuple[Any, ...]
    shared_mem: int


@dataclass
class StandIn:
    """What a test sees of the stand-in GPU."""

    cupy: Any
    registry: Any
    launches: list[Launch] = field(default_factory=list)
    copies: list[Any] = field(default_factory=list)  # arrays ascontiguousarray was asked to copy
    compiled: list[str] = field(default_factory=list)  # kernel names "compiled"
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)  # kernel name -> extra NVRTC options

    def array(self, shape: tuple[int, ...], dtype: Any = "float32") -> Any:
        return fake_cupy.ndarray(shape, dtype)


def fresh_backend(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A new cupy backend (no executables in memory), as in a new process."""
    from stitchlab import runtime
    from stitchlab.runtime.cupy_backend import CupyBackend

    backend = CupyBackend()
    monkeypatch.setitem(runtime._instances, "cupy", backend)
    return backend
