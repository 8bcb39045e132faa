"""Shared test setup: a private kernel-registry directory and the ``gpu`` marker."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

# Tests never touch the user's cache directory.
os.environ.setdefault("STITCHLAB_CACHE_DIR", tempfile.mkdtemp(prefix="stitchlab-test-cache-"))


def _gpu_usable() -> bool:
    from stitchlab.runtime import gpu_usable

    return gpu_usable()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any(item.get_closest_marker("gpu") for item in items) and not _gpu_usable():
        skip = pytest.mark.skip(reason="no CUDA GPU: GPU tests run on the GPU machine (make gpu-check)")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _gpu_memory_given_back(request: pytest.FixtureRequest):
    """After each GPU test, CuPy's and torch's cached device memory goes back to the driver:
    parallel workers (``pytest -n``) that each kept the largest pool a test of theirs grew ran an
    80 GB H100 out of memory (draws of 8.6 GB beside other workers' cached gigabytes)."""
    yield
    if request.node.get_closest_marker("gpu") is None:
        return
    if "cupy" in sys.modules:
        import cupy

        cupy.cuda.Device().synchronize()
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def _on_backend(name: str):
    import stitchlab as sl

    before = sl.get_backend()
    sl.set_backend(name)
    try:
        yield
    finally:
        sl.set_backend(before)


@pytest.fixture
def cupy_backend():
    """Run the test on the cupy backend and restore the previous backend after."""
    yield from _on_backend("cupy")


@pytest.fixture
def numpy_backend():
    """Run the test on the numpy backend and restore the previous backend after."""
    yield from _on_backend("numpy")
