"""Recompute in the cost model: a kernel that fuses a time-stepping stencil over ``k`` steps
evaluates step ``k - j`` at every offset its reach spans (``2j² + 2j + 1`` positions of a 2-d
5-point stencil), so its work grows as ``k³``. The search places nodes without counting that; its
finished plans are weighed again counting it (``stitchlab.plan.groups.recomputed``) and a group
splits at a step where that lowers the estimate (``stitchlab.plan.search._split_recomputed``).
Planning is checked by plans and call counts, not timings; there is no GPU timing of it yet."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from compiler.counting import counted, search_module  # tests/ is on sys.path (tests/conftest.py)


def _steps(xp: Any, u: Any, steps: int) -> Any:
    """``steps`` explicit steps of the 5-point stencil with periodic edges (NumPy or stitchlab)."""
    for _ in range(steps):
        u = u + 0.1 * (xp.roll(u, 1, 0) + xp.roll(u, -1, 0) + xp.roll(u, 1, 1) + xp.roll(u, -1, 1) - 4 * u)
    return u


def test_a_stencil_fused_over_many_steps_splits_where_its_recompute_outweighs_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # 8 steps on 8192 x 4096 float32 were one kernel of 649 KB of source estimated at 67 us,
    # counting each step once; it evaluates 2,408 values an element (2 ms at the model's compute
    # rate). Counted, four kernels of two steps each (each evaluates the first at 5 positions),
    # each bound by its pass over memory
    calls = counted(monkeypatch, search_module, "recomputed")
    u = sl.asarray(np.zeros((8192, 4096), np.float32))
    plan = sl.explain(_steps(sl, u, 8), device="H200")
    assert len(plan.kernels) == 4
    assert [max(k.info.evaluated.values()) for k in plan.kernels] == [5] * 4
    assert 200e-6 < plan.estimated_time < 300e-6
    assert sum(len(k.source) for k in plan.kernels) < 300_000
    # (16: the groups counted and the kernels'; the parts of a cut are counted from a group
    # counted before: 48 when each was counted again)
    assert calls[0] <= 20


def test_sixteen_steps_of_a_small_grid_split_in_two(monkeypatch: pytest.MonkeyPatch) -> None:
    # 256 x 256: launches weigh more than passes, so two kernels of eight steps (3.4 MB of source
    # in one kernel before, 1.5 MB now); the weighing stays a bounded number of groups: a step's
    # cut is counted once for the five plans, the parts after it from the group they are cut
    # from (94 counts when each part of each plan's cuts was counted again; 40 steps took 10 s)
    from stitchlab.codegen import elemental

    monkeypatch.setattr(elemental, "MAX_RECOMPUTE_SOURCE", elemental.MAX_SOURCE)  # (the search's plan, not cut for length)
    calls = counted(monkeypatch, search_module, "recomputed")
    u = sl.asarray(np.zeros((256, 256), np.float32))
    plan = sl.explain(_steps(sl, u, 16), device="H200")
    assert len(plan.kernels) == 2
    assert [max(k.info.evaluated.values()) for k in plan.kernels] == [2 * 7 * 7 + 2 * 7 + 1] * 2
    assert calls[0] <= 30  # (22)


def test_the_parts_of_a_cut_take_the_counts_of_the_group_they_are_cut_from(monkeypatch: pytest.MonkeyPatch) -> None:
    # a part that holds every reader of its members in a group counted before (the part after a
    # cut, or a plan's group less some of what it depends on) takes that group's counts
    # (groups.recomputed_within): the same as counting it
    from stitchlab.plan import groups

    from .test_host_scaling import _padded_steps

    taken: list[dict[int, int]] = []

    def checked(view: Any, info: Any, whole: Any) -> dict[int, int]:
        got = groups.recomputed_within(view, info, whole)
        assert got == groups.recomputed(view, info)
        taken.append(got)
        return got

    monkeypatch.setattr(search_module, "recomputed_within", checked)
    sl.explain(_steps(sl, sl.asarray(np.zeros((256, 256), np.float32)), 12), device="H200")
    sl.explain(_padded_steps(sl, sl.asarray(np.zeros((64, 64), np.float32)), 8, ("edge", "constant")), device="H200")
    assert len(taken) > 40 and sum(map(bool, taken)) > 20


def _whole_group(lazy: Any) -> tuple[Any, Any]:
    """The planner's view of ``lazy``'s graph and the analysis of all its real nodes as one group."""
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.groups import GraphView, analyze

    view = GraphView(build_graph([lazy._node])[0])
    return view, analyze(view, frozenset(id(n) for n in view.real))


def test_counting_a_stencils_recompute_steps_through_its_maps_not_its_positions() -> None:
    # each position of a member read through a slice or a pad was mapped to its producer's by a
    # new tuple of tuples (a generator each): the work of the positions, O(steps**3). A map that
    # moves each axis by a constant adds one int to each packed position now, in one comprehension
    import sys

    from stitchlab.plan.groups import recomputed

    def frames(steps: int) -> int:
        view, info = _whole_group(_steps(sl, sl.asarray(np.zeros((64, 64), np.float32)), steps))
        entered = [0]

        def profile(frame: Any, event: str, arg: Any) -> None:
            entered[0] += event == "call"

        sys.setprofile(profile)
        try:
            counts = recomputed(view, info)
        finally:
            sys.setprofile(None)
        assert max(counts.values()) == 2 * (steps - 1) ** 2 + 2 * (steps - 1) + 1
        return entered[0]

    assert frames(16) / frames(8) < 3  # (Python frames entered; was 6.4: 19,145 positions against 2,401)


@pytest.mark.parametrize("program", ["roll", "pads", "strided", "transposed"])
def test_packed_positions_count_as_many_as_tuples(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    from stitchlab.plan import groups

    from .test_host_scaling import _padded_steps

    u = sl.asarray(np.random.default_rng(0).standard_normal((12, 10)).astype(np.float32))
    if program == "roll":
        lazy = _steps(sl, u, 5)
    elif program == "pads":
        lazy = _padded_steps(sl, u, 4, (("edge", "reflect"), ("constant", "wrap", "symmetric")))
    elif program == "strided":  # (a slice of step 2: a map that is no move)
        lazy = u
        for _ in range(3):
            lazy = lazy + sl.pad(lazy[:, ::2], ((0, 0), (0, 5)), mode="edge") * sl.roll(lazy, 1, axis=0)
    else:
        lazy = u[:, :10]
        for _ in range(3):
            lazy = sl.roll(lazy.T, 1, axis=1).T * 0.5 + sl.roll(lazy, -1, axis=0) + lazy[0] * 0.25
    view, info = _whole_group(lazy)
    assert info is not None and groups.shifted_members(view, {id(n) for n in info.members})
    packed, tuples = groups._recomputed(view, info, packed=True), groups._recomputed(view, info, packed=False)
    assert packed == tuples and list(packed) == list(tuples) and packed
    # offsets past what a packed position holds: counted as tuples, the same
    monkeypatch.setattr(groups, "_BIAS", 2)
    with pytest.raises(groups._Overflow):
        groups._recomputed(view, info, packed=True)
    assert groups.recomputed(view, info) == tuples


def test_assignment_chains_are_not_weighed_for_recompute(monkeypatch: pytest.MonkeyPatch) -> None:
    # rows and elements read at constant positions are not work per element: a chain of
    # assignments counts no recompute, so no group of it is weighed for a cut (counting positions
    # in every group the search weighs made this chain plan for over 15 minutes)
    from stitchlab.frontend import array

    from .test_literal_positions_host import _element_chain

    monkeypatch.setattr(array, "ASSIGNMENTS_PENDING", 1 << 30)
    counted: list[dict[int, int]] = []
    original = search_module.recomputed
    monkeypatch.setattr(search_module, "recomputed", lambda *a: counted.append(original(*a)) or counted[-1])
    lazy, want = _element_chain(40, (64, 33))
    assert len(sl.explain(lazy, device="H200").kernels) == 3  # (436 nodes: MAX_GROUP_NODES parts, as before)
    assert len(counted) <= 50  # (38: the final groups and sibling pairs, once each)
    assert not any(counted)
    np.testing.assert_array_equal(lazy.get(), want)


def test_a_split_stencil_computes_numpys_values_in_host_cxx(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan import cost
    from stitchlab.plan.device import preset

    from .hostkernels import run_plan, unsupported

    if unsupported() is not None:
        pytest.skip(str(unsupported()))
    # a compute rate that makes a 13 x 9 grid weigh its recompute as a large one does: four
    # kernels of two steps, each reading the last one's result at the shifts of a step
    monkeypatch.setattr(cost, "COMPUTE_RATE", 4e9)
    host = np.random.default_rng(0).standard_normal((13, 9)).astype(np.float32)
    graph, sources = build_graph([_steps(sl, sl.asarray(host), 8)._node])
    plan = build_plan(graph, preset("H200"))
    assert [max(k.info.evaluated.values()) for k in plan.kernels] == [5] * 4
    (got,) = run_plan(plan, sources, tmp_path)
    np.testing.assert_allclose(got, _steps(np, host.astype(np.float64), 8), rtol=1e-5, atol=1e-5)


def _padded_steps(xp: Any, u: Any, steps: int) -> Any:
    """The same steps with the edges held: ``np.pad`` (constant) of the interior's update, so
    every step reads the masks of one ``where`` per side, nodes that all the steps share."""
    for _ in range(steps):
        u = u + 0.1 * xp.pad(u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1], 1)
    return u


def test_padded_stencil_steps_cut_with_their_masks_in_a_kernel_of_their_own() -> None:
    # Every cut of the padded form made the part before it store the shared masks (8192 x 1 and
    # 4096 bools) beside its 8192 x 4096 values, which no kernel does: 8 steps were a kernel of
    # one step and one of seven, estimated at 2.86 ms (evaluating step 1 at 85 positions). Cuts
    # now move the masks to a kernel of their own: it and four kernels of two steps, within a
    # few percent of the periodic form's estimate
    u = sl.asarray(np.zeros((8192, 4096), np.float32))
    plan = sl.explain(_padded_steps(sl, u, 8), device="H200")
    masks, *steps = plan.kernels
    assert {n.op for n in masks.nodes} == {"less", "greater_equal"}
    assert [max(k.info.evaluated.values()) for k in steps] == [5] * 4
    assert plan.estimated_time < 1.05 * sl.explain(_steps(sl, u, 8), device="H200").estimated_time
    assert sum(len(k.source) for k in plan.kernels) < 320_000


def test_a_split_padded_stencil_computes_numpys_values_in_host_cxx(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan import cost
    from stitchlab.plan.device import preset

    from .hostkernels import run_plan, unsupported

    if unsupported() is not None:
        pytest.skip(str(unsupported()))
    monkeypatch.setattr(cost, "COMPUTE_RATE", 4e9)  # (as a large grid weighs its recompute)
    host = np.random.default_rng(1).standard_normal((13, 9)).astype(np.float32)
    graph, sources = build_graph([_padded_steps(sl, sl.asarray(host), 8)._node])
    plan = build_plan(graph, preset("H200"))
    assert [k.schedule.family for k in plan.kernels] == ["packed"] + ["pointwise"] * 4  # (the masks packed)
    (got,) = run_plan(plan, sources, tmp_path)
    np.testing.assert_allclose(got, _padded_steps(np, host.astype(np.float64), 8), rtol=1e-5, atol=1e-5)


def _reflected_steps(xp: Any, u: Any, steps: int) -> Any:
    """The steps with reflecting edges: ``np.pad(..., mode="reflect")`` of the interior's update."""
    for _ in range(steps):
        u = u + 0.1 * xp.pad(u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1], 1, mode="reflect")
    return u


def test_the_kernels_of_a_loops_steps_write_one_source() -> None:
    # each kernel of a cut loop keys its operands' order by its inputs' types, not by the steps
    # before them, so kernels of the same steps write the same source and compile once (57 steps
    # on 256 x 256: 8 kernels were 8 sources, 81 s of NVRTC on the CPU machine; now 2, 29 s)
    for steps, shape in ((16, (8192, 4096)), (8, (8192, 4096)), (24, (256, 256))):
        u = sl.asarray(np.zeros(shape, np.float32))
        for program in (_steps, _padded_steps):
            ks = [k for k in sl.explain(program(sl, u, steps), device="H200").kernels if len(k.nodes) > 4]  # (not the masks)
            assert len(ks) > 1 and len({k.source for k in ks}) == 1, (program.__name__, steps, shape)


def test_a_kernel_too_long_to_write_is_cut_where_its_steps_meet() -> None:
    # 8 reflecting steps on 256 x 256 are one kernel by the estimate (launches outweigh the
    # recompute), but near the edges each step's reflections of the last step's positions are
    # new positions: the code generator wrote 193 MB of source in 107 s. It stops at MAX_SOURCE
    # and the group is cut (search.cut_in_two) until its parts are short enough
    from stitchlab.codegen import elemental

    u = sl.asarray(np.zeros((256, 256), np.float32))
    plan = sl.explain(_reflected_steps(sl, u, 8), device="H200")
    assert len(plan.candidates[0].groups) == 1 < len(plan.kernels)
    assert all(k.source and len(k.source) < elemental.MAX_RECOMPUTE_SOURCE + 60_000 for k in plan.kernels)  # (+ the preamble)
    # a stencil's fused steps stop at MAX_RECOMPUTE_SOURCE (NVRTC's time grows fastest there):
    # 16 periodic steps were two kernels of eight (740 KB, 17 s of NVRTC on the CPU machine),
    # now four of four steps, one source (0.2 s)
    plan = sl.explain(_steps(sl, u, 16), device="H200")
    assert len(plan.candidates[0].groups) == 2 and len(plan.kernels) == 4 and len({k.source for k in plan.kernels}) == 1
    assert len(plan.kernels[0].source) < elemental.MAX_RECOMPUTE_SOURCE + 60_000


def test_parts_cut_for_length_compute_numpys_values_and_an_uncuttable_group_is_written_whole(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from stitchlab.codegen import elemental
    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.device import preset

    from .hostkernels import run_plan, unsupported

    if unsupported() is not None:
        pytest.skip(str(unsupported()))
    for limit in ("MAX_SOURCE", "MAX_RECOMPUTE_SOURCE"):  # (a 13 x 9 grid's kernels are short)
        monkeypatch.setattr(elemental, limit, 12_000)
    host = np.random.default_rng(2).standard_normal((13, 9)).astype(np.float32)
    for program in (_reflected_steps, _padded_steps, _steps):
        graph, sources = build_graph([program(sl, sl.asarray(host), 4)._node])
        plan = build_plan(graph, preset("H200"))
        assert len(plan.kernels) > 1 and all(k.source and k.error is None for k in plan.kernels), program.__name__
        (got,) = run_plan(plan, sources, tmp_path)
        np.testing.assert_allclose(got, program(np, host.astype(np.float64), 4), rtol=1e-5, atol=1e-5, err_msg=program.__name__)
    monkeypatch.setattr(elemental, "MAX_SOURCE", 300)  # no shifted read to cut at: the kernel is written whole
    graph, sources = build_graph([(sl.asarray(host) * 2 + 1)._node])
    plan = build_plan(graph, preset("H200"))
    (k,) = plan.kernels
    assert len(k.source) > 300 and k.error is None
    np.testing.assert_array_equal(run_plan(plan, sources, tmp_path)[0], host * 2 + 1)


def _searched(lazy: Any) -> Any:
    """The planner's view of ``lazy``'s graph, planned (the search only, no code)."""
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.device import preset
    from stitchlab.plan.groups import GraphView

    view = GraphView(build_graph([lazy._node])[0])
    search_module.search(view, preset("H200"))
    return view


def test_the_parts_of_every_cut_cost_about_one_count_of_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    # the cut search counted the part before each cut of a k-step stencil on its own, O(j**3)
    # positions for the part of j steps: O(k**4) for the group (57 steps: 12.7 million positions,
    # 3.4 s). The parts share their sets of positions now (groups.PositionMemo): each is made
    # once, the whole group's count, and a part costs a walk of its edges. Python lines executed
    # in each count (the positions are moved in comprehensions), all against the largest
    import sys

    lines: list[int] = []
    original = search_module.recomputed

    def traced(*args: Any) -> Any:
        lines.append(0)

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            lines[-1] += event == "line"
            return tracer

        sys.settrace(tracer)
        try:
            return original(*args)
        finally:
            sys.settrace(None)

    monkeypatch.setattr(search_module, "recomputed", traced)
    _searched(_steps(sl, sl.asarray(np.zeros((256, 256), np.float32)), 24))
    assert len(lines) > 20  # (the whole group, the part before each cut of it, the parts' cuts)
    assert sum(lines) < 3 * max(lines)  # (1.98; was 9.1, 10.9 at 32 steps)


def test_the_cut_search_walks_each_members_maps_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # which members of a part read another through a slice or a pad (groups.shifted_members)
    # walked the free maps of every member of every part of every cut: O(k**2) for k steps.
    # Each member's walk is kept now (GraphView.shift_reads). Calls of GraphView.is_real in the
    # cut search, at 12 and 24 steps
    from stitchlab.plan.groups import GraphView

    calls, on = [0], [False]
    is_real, split = GraphView.is_real, search_module._split_recomputed

    def counting(self: Any, n: Any) -> bool:
        calls[0] += on[0]
        return is_real(self, n)

    def splitting(*args: Any) -> Any:
        on[0] = True
        try:
            return split(*args)
        finally:
            on[0] = False

    monkeypatch.setattr(GraphView, "is_real", counting)
    monkeypatch.setattr(search_module, "_split_recomputed", splitting)

    def walked(steps: int) -> int:
        calls[0] = 0
        _searched(_steps(sl, sl.asarray(np.zeros((256, 256), np.float32)), steps))
        return calls[0]

    assert walked(24) / walked(12) < 3  # (2.0; was 4.1)


@pytest.mark.parametrize("program", ["roll", "pad constant", "pad edge", "pads", "strided"])
def test_shared_sets_of_positions_count_as_the_walk_does(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    # groups.PositionMemo against groups._recomputed on every group the search counts: the same
    # counts in the same order (a member stored and read at other positions keeps its own too;
    # a constant pad's mask, a row broadcast over the columns, is read through a map that is no
    # move)
    from stitchlab.plan import groups

    from .test_host_scaling import _padded_steps

    shared, walks = [0], [0]
    count = groups.PositionMemo.count

    def checked(self: Any, view: Any, info: Any) -> Any:
        try:
            got = count(self, view, info)
        except groups._Overflow:
            got = "overflow"
        try:
            want = groups._recomputed(view, info, packed=True)
        except groups._Overflow:
            want = "overflow"
        if got is None:
            walks[0] += 1
            return None
        shared[0] += 1
        assert got == want and list(got) == list(want)
        return got

    monkeypatch.setattr(groups.PositionMemo, "count", checked)
    u = sl.asarray(np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32))
    if program == "roll":
        lazy = _steps(sl, u, 12)
    elif program.startswith("pad "):
        lazy = _padded_steps(sl, u[:64, :64], 8, (None, program[4:]))
    elif program == "pads":
        lazy = _padded_steps(sl, u[:64, :64], 5, (("edge", "reflect"), ("constant", "wrap", "symmetric")))
    else:  # (a slice of step 2: a map that is no move)
        lazy = u
        for _ in range(3):
            lazy = lazy + sl.pad(lazy[:, ::2], ((0, 0), (0, 128)), mode="edge") * sl.roll(lazy, 1, axis=0)
    _searched(lazy)
    assert shared[0] > 0
