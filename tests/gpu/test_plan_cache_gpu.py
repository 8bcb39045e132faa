"""The plan cache and the replayed ``sl.jit`` call on a real GPU.

* A new process over a registry an earlier process filled plans nothing (``build_plan`` raises
  there), compiles nothing (NVRTC raises there) and gives the same results.
* The replayed call (a cached signature with CuPy arguments) is correct with non-contiguous
  arguments, scalars, captured arrays and nested outputs.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu -q``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.gpu

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHILD = HERE / "plan_cache_child.py"


def _child_module() -> Any:
    spec = importlib.util.spec_from_file_location("stitchlab_plan_cache_child", CHILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(mode: str, cache: pathlib.Path, out: pathlib.Path) -> dict[str, int]:
    env = dict(os.environ, STITCHLAB_CACHE_DIR=str(cache), STITCHLAB_BACKEND="cupy")
    # the repository last: where stitchlab is installed (or, on the GPU machine, a package shim
    # of the tree is on PYTHONPATH) that must win over the unmapped stitchlab/ folder
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), str(ROOT)) if p)
    res = subprocess.run([sys.executable, str(CHILD), mode, str(out)], env=env, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, f"{mode} process failed:\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"
    return json.loads(res.stdout.strip().splitlines()[-1])


def _reference(build: Any, host: list[np.ndarray]) -> list[np.ndarray]:
    before = sl.get_backend()
    sl.set_backend("numpy")
    try:
        with np.errstate(all="ignore"):
            return [o.get() for o in build(*[a.astype(np.float64) for a in host])]
    finally:
        sl.set_backend(before)


def test_a_warm_process_plans_nothing_compiles_nothing_and_agrees(tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "registry"
    cold = _run("cold", cache, tmp_path / "cold.npz")
    warm = _run("warm", cache, tmp_path / "warm.npz")
    assert cold["nvrtc_compiles"] > 0 and cold["fallbacks"] == 0 and cold["plans_loaded"] == 0
    assert warm["nvrtc_compiles"] == 0 and warm["registry_misses"] == 0 and warm["fallbacks"] == 0
    assert warm["plans_loaded"] == warm["plans"] == cold["plans"]
    assert warm["launches"] == cold["launches"]
    got_cold, got_warm = np.load(tmp_path / "cold.npz"), np.load(tmp_path / "warm.npz")
    assert sorted(got_cold.files) == sorted(got_warm.files)
    for name in got_cold.files:
        np.testing.assert_allclose(got_warm[name], got_cold[name], rtol=1e-6, atol=0, err_msg=name)
    for case, (build, host) in _child_module().cases().items():
        for k, ref in enumerate(_reference(build, host)):
            got = got_warm[f"{case}/{k}"].astype(np.float64)
            scale = max(1.0, float(np.abs(ref).max()))
            np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5 * scale, err_msg=f"{case} output {k}")


def test_a_corrupt_recipe_in_a_warm_registry_is_planned_again(tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "registry"
    _run("cold", cache, tmp_path / "cold.npz")
    from stitchlab.registry import KernelRegistry

    reg = KernelRegistry(cache)
    plans = [e for e in reg.entries() if e["kind"] == "record" and e["record"]["kind"] == "plan"]
    assert plans, "the cold process stored no recipe"
    for e in plans:
        record = reg.get_record("plan", e["record"]["name"])
        record["recipe"]["kernels"][0]["key"] = "0" * 64  # a kernel that is not there
        reg.put_record("plan", e["record"]["name"], record)
    reg.close()
    again = _run("cold", cache, tmp_path / "again.npz")
    assert again["plans_loaded"] == 0 and again["nvrtc_compiles"] == 0 and again["fallbacks"] == 0
    got, ref = np.load(tmp_path / "again.npz"), np.load(tmp_path / "cold.npz")
    for name in ref.files:
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-6, atol=0, err_msg=name)
    warm = _run("warm", cache, tmp_path / "warm.npz")  # the recipes were stored again
    assert warm["plans_loaded"] == warm["plans"]


def test_replayed_calls_with_views_scalars_captures_and_nested_outputs() -> None:
    import cupy as cp

    before = sl.get_backend()
    sl.set_backend("cupy")
    try:
        rng = np.random.default_rng(7)
        x = rng.standard_normal((96, 200)).astype(np.float32)
        w = rng.standard_normal(200).astype(np.float32)
        wd = sl.asarray(cp.asarray(w))

        @sl.jit
        def f(a: Any, s: float) -> Any:
            e = sl.exp(a - a.max(axis=-1, keepdims=True)) * s
            return {"soft": e / e.sum(axis=-1, keepdims=True), "pair": (a * wd, (a * wd).sum(axis=-1))}

        def ref(a: np.ndarray, s: float) -> dict[str, Any]:
            e = np.exp(a - a.max(-1, keepdims=True)) * s
            return {"soft": e / e.sum(-1, keepdims=True), "pair": (a * w, (a * w).sum(-1))}

        xd = cp.asarray(x)
        xt = cp.asarray(np.ascontiguousarray(x.T)).T  # the same values, not C-contiguous
        assert not xt.flags.c_contiguous
        for a, s in [(xd, 2.0), (xd, 2.0), (xt, 2.0), (xd, 3.0), (xt, 3.0)]:
            out = f(a, s)
            r = ref(x, s)
            np.testing.assert_allclose(out["soft"].get(), r["soft"], rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(out["pair"][0].get(), r["pair"][0], rtol=1e-6)
            np.testing.assert_allclose(out["pair"][1].get(), r["pair"][1], rtol=1e-4, atol=1e-4)
        assert len(f.traces) == 2 and len(f._replays) == 2
        s0 = sl.stats()
        f(xd, 2.0)
        s1 = sl.stats()
        assert s1["traces"] == s0["traces"] and s1["evaluations"] == s0["evaluations"] + 1
        assert s1["nvrtc_compiles"] == s0["nvrtc_compiles"]
        cp.cuda.Device().synchronize()
    finally:
        sl.set_backend(before)
