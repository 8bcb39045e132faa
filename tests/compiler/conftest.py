"""Fixtures of the compiler tests: ``standin``, the cupy backend on the CPU (see ``standin.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .standin import Launch, StandIn, fake_cupy


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[StandIn]:
    from stitchlab.registry import KernelRegistry

    from stitchlab import runtime
    from stitchlab.plan import device
    from stitchlab.runtime import kernels, nvrtc, plan_cache, stats
    from stitchlab.runtime.cupy_backend import CupyBackend

    monkeypatch.setattr(runtime, "_current", runtime.get_backend())  # decided before cupy is replaced
    cp = fake_cupy.make_module()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cp.cuda)
    reg = KernelRegistry(tmp_path / "registry")
    box = StandIn(cp, reg)

    def ascontiguousarray(a: Any, dtype: Any = None) -> Any:
        box.copies.append(a)
        return fake_cupy.ascontiguousarray(a, dtype)

    cp.ascontiguousarray = ascontiguousarray

    def compile_cubin(source: str, name: str, arch: str = "sm_90", extra: tuple[str, ...] = ()) -> tuple[bytes, str]:
        stats.bump("nvrtc_compiles")
        box.compiled.append(name)
        box.options[name] = extra
        return b"cubin of " + name.encode(), ""

    def load(key: str, cubin: bytes, name: str) -> Any:
        assert cubin == b"cubin of " + name.encode(), f"kernel {name}: wrong cubin {cubin[:40]!r}"

        def launch(grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], shared_mem: int = 0,
                   stream: Any = None) -> None:
            assert type(grid) is tuple and type(block) is tuple and type(args) is tuple
            box.launches.append(Launch(name, grid, block, args, shared_mem))

        return launch

    monkeypatch.setattr(nvrtc, "compile_cubin", compile_cubin)
    monkeypatch.setattr(kernels, "load", load)
    monkeypatch.setattr(kernels, "registry", lambda: reg)
    monkeypatch.setattr(device, "_current", device.preset("H200"))
    monkeypatch.setitem(runtime._instances, "cupy", CupyBackend())
    yield box
    plan_cache.flush()  # recipes still pending go to this test's registry, not at exit
