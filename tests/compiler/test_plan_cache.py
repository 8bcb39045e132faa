"""The plan cache (``stitchlab.runtime.plan_cache``): recipes from plans, their JSON round trip and
validation, and the cupy backend skipping the plan search when a recipe is stored (CPU stand-in,
see ``standin.py``; the GPU tests check a real warm process)."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.codegen import program
from stitchlab.ir.graph import build_graph
from stitchlab.plan import preset
from stitchlab.runtime import plan_cache
from stitchlab.runtime.plan_cache import RecipeError

from .standin import StandIn, fresh_backend
from .workloads import WORKLOADS, make_args

KEY = "ab" * 32


def _graph(outs: list[sl.LazyArray]) -> tuple[Any, list[Any]]:
    graph, sources = build_graph([o._node for o in outs])
    return graph, [s.value for s in sources]


def _split_rows() -> list[sl.LazyArray]:
    y = sl.asarray(np.ones((3, 70000), np.float32))
    return [y / y.sum(axis=-1, keepdims=True), sl.logsumexp(y, axis=1)]


def _split_args() -> list[sl.LazyArray]:
    """Split argmax/argmin: workspaces of (value, position) pairs, 8 and 16 bytes a pair."""
    y = sl.asarray(np.ones((3, 70000), np.float32))
    z = sl.asarray(np.ones((2, 50000), np.float64))
    return [y.argmax(-1), z.argmin(-1)]


def _split_column_args() -> list[sl.LazyArray]:
    """Column argmax/argmin of tall, narrow arrays, split over blocks: workspaces of pairs."""
    y = sl.asarray(np.ones((100_003, 7), np.float32))
    z = sl.asarray(np.ones((50_000, 5), np.float64))
    return [y.argmax(0), z.argmin(0), y.sum(0)]


def _split_small_ints() -> list[sl.LazyArray]:
    """Split reductions whose partial results are bool, int8 or uint16 (a bool max, any, all:
    their recipes were refused, so such graphs were planned again in every process)."""
    b = sl.asarray(np.ones((3, 70000), bool))
    i = sl.asarray(np.ones((2, 60000), np.int8))
    u = sl.asarray(np.ones((100_003, 7), np.uint16))
    return [b.any(-1), b.max(-1), i.max(-1), u.min(0), b.all(-1)]


def _empty_results() -> list[sl.LazyArray]:
    """Reductions of empty arrays over their non-empty axes: no results, but K of 128 or 96
    (the recipe's sizes were bounded by the graph's element counts, all 0: refused, so planned
    again in every process)."""
    x = sl.asarray(np.ones((128, 0), np.float32))
    y = sl.asarray(np.ones((0, 96), np.int32))
    return [x.sum(axis=0), x.max(axis=0), y.min(axis=1), y.argmax(axis=1)]


def _packed() -> list[sl.LazyArray]:
    a = sl.asarray(np.ones((7, 33), np.float32))
    b = sl.asarray(np.ones(100, np.float64))
    return [sl.exp(a) * 2, sl.sin(b) + 1, a.reshape(33, 7)]


CASES = {name: (lambda b=build, k=kinds: b(*make_args(k, 64, 96))) for name, (build, _, kinds) in WORKLOADS.items()}
CASES["split_rows"] = _split_rows
CASES["packed_and_view"] = _packed
CASES["split_args"] = _split_args
CASES["split_column_args"] = _split_column_args
CASES["split_small_ints"] = _split_small_ints
CASES["empty_results"] = _empty_results


@pytest.mark.parametrize("name", sorted(CASES))
def test_recipe_of_every_workload_survives_json_and_fits_its_graph(name: str) -> None:
    graph, _ = _graph(CASES[name]())
    plan = program.build_plan(graph, preset("H200"))
    recipe = plan_cache.lower(plan, [KEY] * len(plan.kernels))
    back = json.loads(json.dumps(recipe))
    assert back == recipe
    plan_cache.validate(back, graph)
    assert [k["name"] for k in back["kernels"]] == [k.name for k in plan.kernels]
    for kern, k in zip(back["kernels"], plan.kernels, strict=True):
        assert len(kern["params"]) == len(k.params)
        assert tuple(kern["grid"]) == k.launch.grid and tuple(kern["block"]) == k.launch.block


def _library_steps() -> list[sl.LazyArray]:
    """Kernels around steps of the array library: a matrix product, a sort, a cumulative sum."""
    x = sl.asarray(np.ones((64, 96), np.float32))
    w = sl.asarray(np.ones((96, 32), np.float32))
    h = sl.tanh(x @ w + 1)
    return [h / h.sum(-1, keepdims=True), sl.sort(x * 2, axis=1) + 1, sl.cumsum(x, axis=0)]


def test_a_plan_with_steps_of_the_array_library_has_a_recipe() -> None:
    graph, _ = _graph(_library_steps())
    plan = program.build_plan(graph, preset("H200"))
    families = [k.schedule.family for k in plan.kernels]
    assert families.count("interpreted") == 3 and len(families) > 3, families
    recipe = plan_cache.lower(plan, [KEY] * len(plan.kernels))
    back = json.loads(json.dumps(recipe))
    plan_cache.validate(back, graph)
    steps = [k for k in back["kernels"] if "interpret" in k]
    assert [k["name"] for k in steps] == [k.name for k in plan.kernels if k.schedule.family == "interpreted"]
    assert {graph.nodes[k["interpret"][0]].op for k in steps} == {"matmul", "sort", "cumsum"}


def _step_mutations() -> dict[str, Any]:
    def step(r: dict[str, Any]) -> dict[str, Any]:
        return next(k for k in r["kernels"] if "interpret" in k)

    def first_step_first(r: dict[str, Any]) -> None:  # the step before the kernel that stores its input
        k = r["kernels"]
        i = next(j for j, e in enumerate(k) if "interpret" in e and j > 0)
        k.insert(0, k.pop(i))

    return {
        "extra field": lambda r: step(r).update(grid=[1, 1, 1]),
        "no nodes": lambda r: step(r).update(interpret=[]),
        "stores another node": lambda r: step(r).update(stores=[step(r)["interpret"][0] - 1]),
        "an input as its node": lambda r: step(r).update(interpret=[0], stores=[0]),
        "node out of range": lambda r: step(r).update(interpret=[10_000]),
        "reads before it is stored": first_step_first,
        "not a list": lambda r: step(r).update(stores=3),
    }


@pytest.mark.parametrize("what", sorted(_step_mutations()))
def test_a_library_step_that_does_not_fit_is_refused(what: str) -> None:
    graph, _ = _graph(_library_steps())
    plan = program.build_plan(graph, preset("H200"))
    recipe = plan_cache.lower(plan, [KEY] * len(plan.kernels))
    bad = copy.deepcopy(recipe)
    _step_mutations()[what](bad)
    with pytest.raises(RecipeError):
        plan_cache.validate(bad, graph)


def _mutations() -> dict[str, Any]:
    def kernel0(r: dict[str, Any]) -> dict[str, Any]:
        return r["kernels"][0]

    def param(r: dict[str, Any], role: str) -> list[Any]:
        return next(p for p in kernel0(r)["params"] if p[0] == role)

    return {
        "not a dict": lambda r: [r],
        "version": lambda r: r.update(version=99),
        "other graph": lambda r: r.update(graph="0" * 64),
        "node count": lambda r: r.update(nodes=r["nodes"] + 1),
        "no kernels": lambda r: r.update(kernels=[]),
        "kernel name": lambda r: kernel0(r).update(name="k(); evil"),
        "registry key": lambda r: kernel0(r).update(key="../../etc"),
        "grid length": lambda r: kernel0(r).update(grid=[1, 1]),
        "block too large": lambda r: kernel0(r).update(block=[2048, 1, 1]),
        "bool as int": lambda r: kernel0(r).update(shared_mem=True),
        "store out of range": lambda r: kernel0(r)["stores"].append(10_000),
        "store an input": lambda r: kernel0(r).update(stores=[0]),
        "input position out of range": lambda r: param(r, "in").__setitem__(1, -1),
        "input dtype": lambda r: param(r, "in").__setitem__(2, "float64"),
        "output not stored": lambda r: param(r, "out").__setitem__(1, 0),
        "size too large": lambda r: param(r, "R").__setitem__(2, 10**12),
        "size type": lambda r: param(r, "R").__setitem__(1, "float32"),
        "unknown role": lambda r: kernel0(r)["params"].append(["evil", 0, 0]),
        "param shape": lambda r: kernel0(r)["params"].append(["in", 0]),
        "output count": lambda r: r["outputs"].append([0, None]),
        "output reshape": lambda r: r["outputs"][0].__setitem__(1, [1, 2, 3]),
        "output position": lambda r: r["outputs"][0].__setitem__(0, 0),
    }


@pytest.mark.parametrize("what", sorted(_mutations()))
def test_a_recipe_that_does_not_fit_is_refused(what: str) -> None:
    x, w, b = make_args("mvv", 16, 64)
    graph, _ = _graph(WORKLOADS["layernorm"][0](x, w, b))
    plan = program.build_plan(graph, preset("H200"))
    recipe = plan_cache.lower(plan, [KEY] * len(plan.kernels))
    plan_cache.validate(copy.deepcopy(recipe), graph)
    bad = copy.deepcopy(recipe)
    result = _mutations()[what](bad)
    if isinstance(result, list):
        bad = result
    with pytest.raises(RecipeError):
        plan_cache.validate(bad, graph)


def test_record_names_change_with_what_the_plan_depends_on() -> None:
    from stitchlab.codegen import schedules

    h200, h100 = preset("H200"), preset("H100")
    base = plan_cache.record_name(plan_cache.components("g" * 64, h200))
    assert base == plan_cache.record_name(plan_cache.components("g" * 64, h200))
    assert base != plan_cache.record_name(plan_cache.components("h" * 64, h200))
    assert base != plan_cache.record_name(plan_cache.components("g" * 64, h100))
    with schedules.switches(reciprocal=not schedules.OPTIONS["reciprocal"]):
        assert base != plan_cache.record_name(plan_cache.components("g" * 64, h200))
    assert len(plan_cache.compiler_digest()) == 16


# --- the cupy backend with the plan cache (stand-in GPU) ----------------------------------------
def _layernorm_graph() -> tuple[Any, list[Any]]:
    x, w, b = (sl.asarray(a) for a in (np.ones((64, 768), np.float32), np.ones(768, np.float32), np.ones(768, np.float32)))
    return _graph(WORKLOADS["layernorm"][0](x, w, b))


def _stand_in_buffers(standin: StandIn, graph: Any) -> list[Any]:
    return [standin.array(n.shape, n.dtype) for n in graph.inputs]


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts build_plan calls (the backend imports it at call time)."""
    calls: list[int] = []
    real = program.build_plan

    def counting(graph: Any, dev: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(graph, dev, *args, **kwargs)

    monkeypatch.setattr(program, "build_plan", counting)
    return calls


def _no_planning(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("build_plan ran although a recipe is stored")

    monkeypatch.setattr(program, "build_plan", refuse)


def test_a_new_process_runs_a_stored_recipe_without_planning(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    graph, _ = _layernorm_graph()
    bufs = _stand_in_buffers(standin, graph)
    exe = fresh_backend(monkeypatch).executable(graph)
    assert exe.recipe is not None and exe.plan is not None
    outs = exe(bufs)
    first = standin.launches[-1]
    assert standin.compiled == [k.name for k in exe.plan.kernels]

    _no_planning(monkeypatch)
    before = sl.stats()
    warm = fresh_backend(monkeypatch).executable(graph)
    again = warm(bufs)
    after = sl.stats()
    assert after["plans_loaded"] == before["plans_loaded"] + 1
    assert after["nvrtc_compiles"] == before["nvrtc_compiles"]
    assert after["registry_hits"] == before["registry_hits"] + len(warm.recipe["kernels"])
    second = standin.launches[-1]
    assert (second.name, second.grid, second.block, second.shared_mem) == (first.name, first.grid, first.block, first.shared_mem)
    assert [type(a) for a in second.args] == [type(a) for a in first.args]
    for x, y in zip(first.args, second.args, strict=True):
        if isinstance(x, np.generic):
            assert x == y and x.dtype == y.dtype
        elif x in bufs:
            assert y is x
        else:
            assert (x.shape, x.dtype) == (y.shape, y.dtype)
    assert [(o.shape, o.dtype) for o in again] == [(o.shape, o.dtype) for o in outs]


def test_split_reductions_of_small_ints_are_stored_and_loaded(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workspaces of bool, int8 and uint16 partial results: the recipe is stored, and a new
    process runs it without planning (before, store() declined it and every process planned)."""
    graph, _ = _graph(_split_small_ints())
    bufs = _stand_in_buffers(standin, graph)
    fresh_backend(monkeypatch).executable(graph)(bufs)
    _no_planning(monkeypatch)
    before = sl.stats()["plans_loaded"]
    fresh_backend(monkeypatch).executable(graph)(bufs)
    assert sl.stats()["plans_loaded"] == before + 1


def test_the_plan_of_a_recipe_executable_is_planned_on_request(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                                planned: list[int]) -> None:
    graph, _ = _layernorm_graph()
    keys = [k.key for k in fresh_backend(monkeypatch).executable(graph).plan.kernels]
    warm = fresh_backend(monkeypatch).executable(graph)
    assert len(planned) == 1
    assert [k.key for k in warm.plan.kernels] == keys and len(planned) == 2


def test_a_recipe_whose_kernel_was_evicted_is_planned_again(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                             planned: list[int]) -> None:
    graph, _ = _layernorm_graph()
    exe = fresh_backend(monkeypatch).executable(graph)
    for kern in exe.recipe["kernels"]:
        assert standin.registry.evict(kern["key"])
    before = sl.stats()
    again = fresh_backend(monkeypatch).executable(graph)
    assert len(planned) == 2 and sl.stats()["plans_loaded"] == before["plans_loaded"]
    assert sl.stats()["nvrtc_compiles"] == before["nvrtc_compiles"] + len(again.plan.kernels)
    fresh_backend(monkeypatch).executable(graph)
    assert len(planned) == 2 and sl.stats()["plans_loaded"] == before["plans_loaded"] + 1


@pytest.mark.parametrize("damage", ["garbage", "wrong components", "does not fit"])
def test_a_damaged_record_is_planned_again_and_replaced(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                        planned: list[int], damage: str) -> None:
    graph, bufs = _layernorm_graph()
    fresh_backend(monkeypatch).executable(graph)
    dev = preset("H200")
    comps = plan_cache.components(graph.key, dev)
    name = plan_cache.record_name(comps)
    record = standin.registry.get_record("plan", name)
    if damage == "garbage":
        record = {"recipe": "rm -rf /"}
    elif damage == "wrong components":
        record["components"]["device"] = "{}"
    else:
        record["recipe"]["kernels"][0]["stores"] = [0]
    standin.registry.put_record("plan", name, record)
    assert plan_cache.load(graph, dev) is None
    exe = fresh_backend(monkeypatch).executable(graph)
    assert len(planned) == 2
    exe([standin.array(n.shape, n.dtype) for n in graph.inputs])
    assert plan_cache.load(graph, dev) == exe.recipe  # replaced by the new plan's recipe
    from stitchlab.registry import KernelRegistry

    assert KernelRegistry(standin.registry.path).get_record("plan", name)["recipe"] == exe.recipe  # on disk


def test_a_chosen_candidate_bypasses_the_plan_cache(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                    planned: list[int]) -> None:
    from stitchlab.notebook import hooks

    x = sl.asarray(np.ones((64, 512), np.float32))
    graph, _ = _graph([x - x.max(axis=-1, keepdims=True), sl.exp(x).sum(axis=-1)])
    dev = preset("H200")
    cands = program.build_plan(graph, dev).candidates
    other = next(k for k, c in enumerate(cands) if c.kernels != len(cands[0].groups) or k > 0)
    planned.clear()
    fresh_backend(monkeypatch).executable(graph)  # stores the recipe of the planner's choice
    stored = plan_cache.load(graph, dev)
    assert len(planned) == 1 and stored is not None
    try:
        hooks.set_plan_override(graph.key, other)
        exe = fresh_backend(monkeypatch).executable(graph)
        assert len(planned) == 2
        assert sorted(map(sorted, (k.members for k in exe.plan.kernels))) == \
            sorted(sorted(graph.index(n) for n in g) for g in cands[other].groups)
    finally:
        hooks.set_plan_override(graph.key, None)
    assert plan_cache.load(graph, dev) == stored  # the chosen candidate was not stored
    fresh_backend(monkeypatch).executable(graph)
    assert len(planned) == 2


def test_a_kernel_that_fails_to_build_runs_unfused_and_is_not_cached(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                                     planned: list[int]) -> None:
    from stitchlab.runtime import kernels, nvrtc

    def broken(kernel: Any, arch: str) -> Any:
        raise nvrtc.CompileError("injected failure")

    monkeypatch.setattr(kernels, "build_cubin", broken)
    x = sl.asarray(np.ones((33, 65), np.float32))
    graph, _ = _graph([sl.exp(x * 1.25) - 0.5])
    with pytest.warns(RuntimeWarning, match="registry key"):
        exe = fresh_backend(monkeypatch).executable(graph)
    assert exe.recipe is None
    assert plan_cache.load(graph, preset("H200")) is None
    with pytest.warns(RuntimeWarning, match="registry key"):
        fresh_backend(monkeypatch).executable(graph)
    assert len(planned) == 2


def test_a_plan_with_library_steps_is_loaded_without_planning(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                             planned: list[int]) -> None:
    graph, _ = _graph(_library_steps())
    cold = fresh_backend(monkeypatch).executable(graph)
    assert cold.recipe is not None and any("interpret" in k for k in cold.recipe["kernels"])
    before = sl.stats()
    warm = fresh_backend(monkeypatch).executable(graph)
    after = sl.stats()
    assert len(planned) == 1 and after["plans_loaded"] == before["plans_loaded"] + 1
    kernels = [k for k in warm.recipe["kernels"] if "interpret" not in k]
    assert after["registry_hits"] == before["registry_hits"] + len(kernels)
    assert [k.name for k in warm.plan.kernels] == [k.name for k in cold.plan.kernels]  # planned on request


def test_a_memory_only_registry_keeps_recipes_for_the_process(standin: StandIn, monkeypatch: pytest.MonkeyPatch,
                                                              planned: list[int]) -> None:
    from stitchlab.registry import KernelRegistry

    from stitchlab.runtime import kernels

    reg = KernelRegistry(":memory:")
    monkeypatch.setattr(kernels, "registry", lambda: reg)
    graph, _ = _layernorm_graph()
    fresh_backend(monkeypatch).executable(graph)
    fresh_backend(monkeypatch).executable(graph)
    assert len(planned) == 1 and reg.mode == "memory"


def test_sl_explain_gives_the_full_plan_when_a_recipe_is_stored(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    x = sl.asarray(standin.array((64, 768)))
    y = sl.exp(x - x.max(axis=-1, keepdims=True))
    graph, _ = _graph([y])
    fresh_backend(monkeypatch).executable(graph)
    assert plan_cache.load(graph, preset("H200")) is not None
    plan = sl.explain(y)
    assert plan.kernels[0].source and plan.kernels[0].info is not None and plan.candidates


#: The start of a child process of the plan-cache tests: fake cupy, the H200 preset, NVRTC
#: replaced by a counter, and (argument ``warm``) planning refused.
CHILD_PRELUDE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
from benchmarks import fake_cupy
cp = fake_cupy.install()
import numpy as np
import stitchlab as sl
from stitchlab.codegen import program
from stitchlab.plan import device
from stitchlab.runtime import nvrtc, stats

device._current = device.preset("H200")

def compile_cubin(source, name, arch="sm_90", extra=()):
    stats.bump("nvrtc_compiles")
    return b"cubin of " + name.encode(), ""

def refuse(*args, **kwargs):
    raise AssertionError("a warm process planned a graph")

nvrtc.compile_cubin = compile_cubin
if sys.argv[1] == "warm":
    program.build_plan = refuse
"""

_CHILD = CHILD_PRELUDE + r"""
f = sl.jit(lambda x, w: (x - x.mean(axis=-1, keepdims=True)) * w)
f(cp.empty((64, 768), np.float32), cp.empty(768, np.float32))
print(json.dumps(sl.stats()))
"""


def test_a_new_process_finds_the_recipes_an_exited_one_planned(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, STITCHLAB_CACHE_DIR=str(tmp_path / "registry"), STITCHLAB_BACKEND="cupy")
    runs = {}
    for mode in ("cold", "warm"):
        res = subprocess.run([sys.executable, "-c", _CHILD, mode, root], env=env, capture_output=True, text=True,
                             timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        runs[mode] = json.loads(res.stdout.strip().splitlines()[-1])
    assert runs["cold"]["nvrtc_compiles"] == 1 and runs["cold"]["plans_loaded"] == 0
    assert runs["warm"]["nvrtc_compiles"] == 0 and runs["warm"]["plans_loaded"] == 1
    assert runs["warm"]["registry_hits"] == 1 and runs["warm"]["launches"] == 1
