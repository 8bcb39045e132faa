"""Fixtures for the registry tests: fresh directories, a fresh default registry, real cubins."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from registry_helpers import KERNEL_SOURCES, compile_cubin
from stitchlab.registry import KernelRegistry, RegistryWarning, reset_default_registry


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test touches the real user cache, and the default registry is fresh each time."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("STITCHLAB_CACHE_DIR", raising=False)
    monkeypatch.delenv("STITCHLAB_REGISTRY", raising=False)
    monkeypatch.delenv("STITCHLAB_CACHE_MAX_SIZE", raising=False)
    reset_default_registry()
    yield
    reset_default_registry()


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """A registry directory that does not exist yet."""
    return tmp_path / "registry"


@pytest.fixture
def registry(cache_dir: Path) -> KernelRegistry:
    """A disk registry that must not warn while the test uses it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegistryWarning)
        return KernelRegistry(cache_dir)


@pytest.fixture(scope="session")
def cubins() -> list[bytes]:
    """Real sm_90 cubins compiled by NVRTC (no GPU needed)."""
    nvrtc = pytest.importorskip(
        "cuda.bindings.nvrtc", reason="cuda-bindings is not installed (pip install '.[nvrtc]')"
    )
    return [compile_cubin(nvrtc, source) for source in KERNEL_SOURCES]
