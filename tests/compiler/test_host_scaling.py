"""Host work that must grow no faster than the program: the planner's and the code generator's
step counts at a size and at four times it (counts, not timings, so the machine's speed does not
matter)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from compiler.counting import counted, search_module  # tests/ is on sys.path (tests/conftest.py)


def _growth(calls: list[int], plan: Callable[[int], Any], n: int) -> float:
    """How many times more calls planning ``plan(4 * n)`` makes than planning ``plan(n)``."""
    counts = []
    for size in (n, 4 * n):
        calls[0] = 0
        plan(size)
        counts.append(calls[0])
    return counts[1] / counts[0]


def test_many_outputs_of_one_array_merge_in_quadratic_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # sl.compute of many values of x: every group reads x, and sibling fusion merges them one
    # pair at a time. It summed the whole plan's estimate for every pair at every step (G**4:
    # 100 values took 21 s to plan); a pair is weighed once now (G**2, x16 at four times G).
    x = sl.asarray(np.ones((64, 64), np.float32))
    calls = counted(monkeypatch, search_module._Evaluator, "cost")

    def plan(n: int) -> None:
        assert len(sl.explain(*[x * float(i) + 1.0 for i in range(n)]).kernels) == 1

    assert _growth(calls, plan, 20) < 40  # was 245


def test_analyzing_a_reduction_group_looks_at_the_group_not_the_whole_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    # the search analyzes a group for every node and option: a walk of the whole graph in each
    # (the phases of a group's reductions) made planning quadratic in the graph's size
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.groups import GraphView, analyze

    calls = counted(monkeypatch, GraphView, "is_real")

    def plan(n: int) -> None:
        x = sl.asarray(np.ones((64, 64), np.float32))
        for _ in range(n):  # a long chain, a free node (a transpose) in each step
            x = x.T * 1.001
        m = x - x.mean(axis=1, keepdims=True)
        view = GraphView(build_graph([m._node])[0])
        group = frozenset(id(n) for n in view.real if n.op in ("sum", "divide", "subtract") and n.shape[-1] != 64
                          or n is view.graph.outputs[0])
        calls[0] = 0
        assert analyze(view, group) is not None
        calls[0] += 1  # (never zero)

    assert _growth(calls, plan, 200) < 2  # was 4


def _stencil_steps(u: Any, steps: int) -> Any:
    for _ in range(steps):  # explicit time stepping, not evaluated in between
        u = u + 0.1 * (sl.roll(u, 1, axis=1) - 2 * u + sl.roll(u, -1, axis=1)) + 0.01 * sl.roll(u, 2, axis=0)
    return u


def test_a_loop_of_rolls_writes_a_kernel_that_grows_with_the_loop_not_its_paths() -> None:
    # a roll of a roll read its input at a position written from the first roll's, one text per
    # path to it: the kernel of 12 steps of u + roll(u, 1) - 2u + roll(u, -1) had 4 MB of source,
    # twice as much at each step; now a step's values at each offset are computed once
    def body_lines(steps: int) -> int:
        u = sl.asarray(np.ones((64, 64), np.float32))
        for _ in range(steps):
            u = u + 0.1 * (sl.roll(u, 1, axis=1) - 2 * u + sl.roll(u, -1, axis=1))
        (kernel,) = sl.explain(u).kernels
        return kernel.source.split('extern "C"')[-1].count("\n")

    assert body_lines(12) < 40 * body_lines(3)  # the offsets of 4 times the steps: 16 times the values


def test_a_loop_of_rolls_computes_numpys_values_in_host_cxx(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from stitchlab.codegen import elemental
    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.device import preset

    from .hostkernels import run_plan, unsupported

    if unsupported() is not None:
        pytest.skip(str(unsupported()))
    monkeypatch.setattr(elemental, "MAX_RECOMPUTE_SOURCE", elemental.MAX_SOURCE)  # (the ten steps in one kernel)
    host = np.random.default_rng(0).standard_normal((9, 7)).astype(np.float32)
    graph, sources = build_graph([_stencil_steps(sl.asarray(host), 10)._node])
    plan = build_plan(graph, preset("H200"))
    assert len(plan.kernels) == 1
    (got,) = run_plan(plan, sources, tmp_path)
    want = host.astype(np.float64)
    for _ in range(10):
        want = want + 0.1 * (np.roll(want, 1, 1) - 2 * want + np.roll(want, -1, 1)) + 0.01 * np.roll(want, 2, 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _padded_steps(xp: Any, u: Any, steps: int, modes: tuple[Any, ...]) -> Any:
    """``steps`` explicit steps of ``u + 0.1 * (second differences along each axis, padded back)``
    (``xp`` NumPy or stitchlab), the pad of axis ``a`` in ``modes[a]`` (None: that axis is not
    differenced; a tuple: its modes in turn, a step each)."""
    for step in range(steps):
        d = 0
        for axis, mode in enumerate(modes):
            if mode is None:
                continue

            def at(a: int | None, b: int | None, axis: int = axis, u: Any = u) -> Any:
                return u[(slice(None),) * axis + (slice(a, b),)]

            widths = [(0, 0)] * u.ndim
            widths[axis] = (1, 1)
            mode = mode[step % len(mode)] if isinstance(mode, tuple) else mode
            d = d + xp.pad(at(2, None) - 2 * at(1, -1) + at(None, -2), widths, mode=mode)
        u = u + 0.1 * d
    return u


@pytest.mark.parametrize(("modes", "steps", "most"), [((None, "constant"), (4, 8), 16),  # was 82
                                                      ((None, "edge"), (4, 8), 16),  # was 82
                                                      (("edge", "constant"), (3, 6), 30)])  # was 58
def test_a_loop_of_padded_stencils_writes_a_kernel_that_grows_with_its_positions_not_its_paths(
        modes: tuple[Any, ...], steps: tuple[int, int], most: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from stitchlab.codegen import elemental

    monkeypatch.setattr(elemental, "MAX_RECOMPUTE_SOURCE", elemental.MAX_SOURCE)  # (one kernel however long)
    # an edge pad (a constant pad's too) read at another's position plus a constant (a step's
    # slice of the last step's pad) wrote a clamp of that clamp, a new text per path to it: 3x the
    # source at each step (8 steps of u + 0.1 * pad(u[:, 2:] - 2u[:, 1:-1] + u[:, :-2]): 3.9 MB).
    # Now one text per clamp of the base position: per step, O(steps) offsets with their clamp
    # bounds near the edges, O(steps**2) positions
    def body_lines(steps: int) -> int:
        u = sl.asarray(np.ones((64, 64), np.float32))
        (kernel,) = sl.explain(_padded_steps(sl, u, steps, modes)).kernels
        return kernel.source.split('extern "C"')[-1].count("\n")

    assert body_lines(steps[1]) < most * body_lines(steps[0])


@pytest.mark.parametrize(("modes", "shape", "dtype", "steps"), [
    ((None, "constant"), (9, 7), "float32", 10),
    ((None, "edge"), (13, 5), "float32", 10),
    ((None, ("constant", "edge", "edge")), (9, 7), "float32", 9),
    (("constant", "constant"), (9, 7), "float32", 5),  # (8 steps: 4.6 MB of source, minutes of host compiling)
    (("edge", ("constant", "edge")), (13, 5), "float32", 5),
    ((None, "constant"), (13, 5), "float16", 8),
    (("edge", "constant"), (9, 7), "float16", 4)])
def test_a_loop_of_padded_stencils_computes_numpys_values_in_host_cxx(
        modes: tuple[Any, ...], shape: tuple[int, int], dtype: str, steps: int, tmp_path: Any) -> None:
    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.device import preset

    from .hostkernels import run_plan, unsupported

    if unsupported() is not None:
        pytest.skip(str(unsupported()))
    host = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    graph, sources = build_graph([_padded_steps(sl, sl.asarray(host), steps, modes)._node])
    plan = build_plan(graph, preset("H200"))
    # (one kernel, or where its source would pass MAX_SOURCE, the mixed edge and constant pads'
    # clamps near the edges, its parts, each written: program._kernels)
    assert len(plan.kernels) == 1 or (len(sl.explain(_padded_steps(sl, sl.asarray(host), steps, modes)).candidates[0].groups) == 1
                                      and all(k.source and k.error is None for k in plan.kernels))
    (got,) = run_plan(plan, sources, tmp_path)
    if dtype == "float16":  # NumPy's float16 steps (each op rounded to float16, as the kernel's)
        np.testing.assert_allclose(got, _padded_steps(np, host, steps, modes), rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(got, _padded_steps(np, host.astype(np.float64), steps, modes), rtol=1e-4, atol=1e-4)


def _values_of_one_array(n: int) -> list[Any]:
    x = sl.asarray(np.ones((64, 64), np.float32))
    return [(x * float(i) + 1.0, sl.exp(x * float(i)).sum(axis=1), (x - float(i)).max(axis=0))[i % 3] for i in range(n)]


def test_sibling_fusion_of_many_values_of_one_array_weighs_a_bounded_number_of_partners(monkeypatch: pytest.MonkeyPatch) -> None:
    # every pair of groups that read x was weighed (an analysis of their union each): G**2
    # analyses, 1,000 values of x took 79 s to plan. A group weighs the last SIBLING_PARTNERS
    # readers of x now: the analyses grow with G (and the merges' tree of sizes)
    calls = counted(monkeypatch, search_module, "analyze")

    def plan(n: int) -> None:
        sl.explain(*_values_of_one_array(n))

    assert _growth(calls, plan, 40) < 7  # was 13.8


def test_sibling_fusion_checks_cycles_near_the_merged_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    # the cycle check of a merge walked every group of the plan: O(G) per merge, O(G**2) in all
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.device import preset
    from stitchlab.plan.groups import GraphView

    class Counting(dict):  # the consumers of a node, each look-up counted
        looked = 0

        def __getitem__(self, key: Any) -> Any:
            Counting.looked += 1
            return super().__getitem__(key)

    def plan(n: int) -> int:
        view = GraphView(build_graph([v._node for v in _values_of_one_array(n)])[0])
        view.consumers = Counting(view.consumers)
        Counting.looked = 0
        search_module.search(view, preset("H200"))
        return Counting.looked

    assert plan(160) / plan(40) < 8  # was 16.1


def _rnn(n: int) -> Any:
    """``n`` steps of ``h = tanh(h @ W + x[t])`` on 16 x 16 arrays, not evaluated."""
    rng = np.random.default_rng(0)
    w = sl.asarray(rng.standard_normal((16, 16)).astype(np.float32))
    xs = sl.asarray(rng.standard_normal((n, 16, 16)).astype(np.float32))
    h = sl.asarray(np.zeros((16, 16), np.float32))
    for t in range(n):
        h = sl.tanh(h @ w + xs[t])
    return h


def _rnn_growth(count: list[int]) -> float:
    """How much ``count[0]`` grows from planning 25 steps of :func:`_rnn` to 100 (4 if linear)."""

    def steps(n: int) -> int:
        h = _rnn(n)
        count[0] = 0
        assert len(sl.explain(h).kernels) == 2 * n
        return count[0]

    return steps(100) / steps(25)


def test_a_long_loop_of_matmuls_plans_in_linear_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # an RNN-like loop, two kernels per step: each option of the search added up the estimates
    # of every group placed so far (O(G) per node); 100 steps took 4.3 s to plan
    costs = counted(monkeypatch, search_module._Evaluator, "cost")
    assert _rnn_growth(costs) < 6  # was 15.3


def test_the_beam_search_shares_its_partial_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    # each option of the beam search copied its partial plan into a new tuple of groups and made
    # a frozenset of them (to keep one plan per set of groups): O(G) per option, about 40 % of
    # planning a 1,000-step RNN-like loop. An option shares the groups before the first one it
    # merges now, and plans are told apart by a running hash of their groups
    import builtins

    members = [0]  # the members of the frozensets the search makes (of nodes or of groups)

    def counting(*args: Any) -> frozenset[Any]:
        made = builtins.frozenset(*args)
        members[0] += len(made)
        return made

    monkeypatch.setattr(search_module, "frozenset", counting, raising=False)
    assert _rnn_growth(members) < 6  # was 14.5


def test_the_kernels_of_a_long_loop_hash_each_node_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # the code generator orders commutative operands by a hash of each operand and everything
    # above it: each kernel of an RNN-like loop hashed the whole program before it again
    import hashlib

    hashes = counted(monkeypatch, hashlib, "sha256")

    def steps(n: int) -> int:
        h = _rnn(n)
        hashes[0] = 0
        sl.explain(h)
        return hashes[0]

    assert steps(100) / steps(25) < 6  # was 15.5


def _elementwise_rnn(n: int) -> Any:
    """``n`` steps of ``h = tanh(h * W + x[t])`` on 16 x 16 arrays, not evaluated."""
    rng = np.random.default_rng(0)
    w = sl.asarray(rng.standard_normal((16, 16)).astype(np.float32))
    xs = rng.standard_normal((n, 16, 16)).astype(np.float32)
    h = sl.asarray(np.zeros((16, 16), np.float32))
    for t in range(n):
        h = sl.tanh(h * w + sl.asarray(xs[t]))
    return h


def test_weighing_a_union_adds_the_bytes_of_its_new_reads_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # an elementwise RNN-like loop fuses into groups of up to MAX_GROUP_NODES members, each
    # reading an input of every step it holds; the cost model summed the bytes of every input
    # of every union it weighed (about 940,000 sizes for 1,000 steps). A union's bytes are
    # derived from its parts' now, so the sizes taken grow with the program
    from stitchlab.plan import cost, groups

    counts = [counted(monkeypatch, m, "nbytes") for m in (cost, groups) if hasattr(m, "nbytes")]

    def sizes(n: int) -> int:
        h = _elementwise_rnn(n)
        for c in counts:
            c[0] = 0
        assert len(sl.explain(h).kernels) == 1  # (3 n members: one group)
        return sum(c[0] for c in counts)

    assert sizes(100) / sizes(25) < 6  # was 11.7 (5,882 and 68,582 sizes; now 1,281 and 5,181)


def _diamonds(n: int) -> Any:
    """``n`` steps of ``x = sin(x) * cos(x) + x`` on a 64 x 64 array, not evaluated."""
    x = sl.asarray(np.ones((64, 64), np.float32))
    for _ in range(n):
        x = sl.sin(x) * sl.cos(x) + x
    return x


@pytest.mark.parametrize("where", ["io", "work"])
def test_weighing_a_merge_looks_at_its_new_members_not_the_whole_group(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    # the search weighs a union for every node and option, and each was analyzed from scratch:
    # what the group reads and stores (each member's operands and readers) and its work per
    # element (each member's op), O(members) per union, so O(steps**2) up to groups of
    # MAX_GROUP_NODES (a 1,000-step diamond: about 5 s to plan on a 2-CPU machine). A union's are
    # derived from its parts' now: the steps grow with the program
    from stitchlab.plan import cost, groups

    if where == "io":
        calls = counted(monkeypatch, groups.GraphView, "operand_reads")
    else:
        class Counting(dict):  # the op table of the analysis and the cost model, each look-up counted
            def __getitem__(self, key: Any) -> Any:
                calls[0] += 1
                return super().__getitem__(key)

        calls = [0]
        table = Counting(groups.OPS)
        monkeypatch.setattr(groups, "OPS", table)
        monkeypatch.setattr(cost, "OPS", table)

    def plan(n: int) -> None:
        assert len(sl.explain(_diamonds(n)).kernels) == 1  # (4 n members: within MAX_GROUP_NODES)

    assert _growth(calls, plan, 25) < 6  # was 13.8 (both)


def test_planning_pauses_the_cyclic_collector_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """``build_plan`` runs with Python's cyclic collector off (a fifth of planning a 1,000-step
    loop was its passes) and leaves it as it found it, on or off."""
    import gc

    from stitchlab.codegen import program

    seen, real = [], program._build_plan
    monkeypatch.setattr(program, "_build_plan", lambda *args: seen.append(gc.isenabled()) or real(*args))
    x = sl.asarray(np.ones((8, 8), np.float32))
    try:
        for start in (True, False):
            (gc.enable if start else gc.disable)()
            sl.explain(sl.exp(x) * (2 + start))
            assert gc.isenabled() == start
    finally:
        gc.enable()
    assert seen == [False, False]
