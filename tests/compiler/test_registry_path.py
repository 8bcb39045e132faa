"""Compile through the registry on the CPU: the second request compiles nothing."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.runtime import kernels as kreg

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")


def _kernel(rows: int, scale: float):
    x = sl.asarray(np.random.rand(rows, 96).astype(np.float32))
    e = sl.exp((x - x.max(axis=-1, keepdims=True)) * scale)
    (k,) = sl.explain(e / e.sum(axis=-1, keepdims=True)).kernels
    return k


def test_second_fetch_compiles_nothing() -> None:
    k = _kernel(32, 0.8125)
    before = sl.stats()
    key1, cubin1, hit1 = kreg.fetch(k, "sm_90")
    mid = sl.stats()
    key2, cubin2, hit2 = kreg.fetch(_kernel(32, 0.8125), "sm_90")
    after = sl.stats()
    assert mid["nvrtc_compiles"] == before["nvrtc_compiles"] + (0 if hit1 else 1)
    assert after["nvrtc_compiles"] == mid["nvrtc_compiles"]
    assert hit2 and key1 == key2 and cubin1 == cubin2
    assert after["registry_hits"] == mid["registry_hits"] + 1


def test_new_batch_size_hits_the_registry() -> None:
    # (both at least MANY_PER_SM rows an SM: planned for a very large batch, one kernel; fewer
    # rows are planned as they are, cost.choose_schedule)
    kreg.fetch(_kernel(300, 0.625), "sm_90")
    before = sl.stats()
    _, _, hit = kreg.fetch(_kernel(1000, 0.625), "sm_90")
    assert hit and sl.stats()["nvrtc_compiles"] == before["nvrtc_compiles"]


def test_key_components_name_what_the_kernel_depends_on() -> None:
    comps = kreg.components(_kernel(8, 1.5), "sm_90")
    for name in ("source_digest", "schedule", "launch", "dtypes", "shape_class", "gpu_arch",
                 "nvrtc_version", "codegen_version", "header_digest"):
        assert comps[name], name
    assert comps["gpu_arch"] == "sm_90" and "float32" in comps["dtypes"]


def test_the_registry_builds_a_kernel_once_per_key() -> None:
    from stitchlab.registry import KernelRegistry

    reg = KernelRegistry(memory_only=True)
    calls = []
    build = lambda: (calls.append(1) or b"cubin", {"name": "k"})  # noqa: E731
    e1 = reg.get_or_build({"a": "1"}, build)
    e2 = reg.get_or_build({"a": "1"}, build)
    assert (e1.hit, e2.hit, len(calls)) == (False, True, 1) and e1.key == e2.key and e2.blob == b"cubin"
