"""Widgets driven through their models and callbacks, without a browser."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")

from stitchlab.registry import KernelRegistry  # noqa: E402

from stitchlab.notebook import PlanExplorer, RegistryBrowser, on_override_change, plan_override  # noqa: E402

from .conftest import FakePlan, fake_plan, softmax  # noqa: E402

SCRIPT = "<script>alert('x')</script>"


def _plan_with_candidates(x):
    z = softmax(x)
    one = fake_plan(z, name="one")
    two = fake_plan(z, split_after_reduce=0, name="two")
    three = fake_plan(z, split_after_reduce=1, name="three")
    two.label, three.label = "greedy", SCRIPT
    one.candidates = [one, two, three]
    return one


def test_plan_explorer_shows_every_candidate_side_by_side(x):
    explorer = PlanExplorer(_plan_with_candidates(x))
    assert len(explorer.cards.children) == 3
    assert [c.kernels for c in explorer.candidates] == [1, 2, 2]
    assert explorer.chosen == 0  # the planner's own plan
    assert all("<svg" in card.value for card in explorer.cards.children)
    assert all(SCRIPT not in card.value for card in explorer.cards.children)


def test_choosing_a_candidate_sets_the_override_the_compiler_reads(x):
    plan = _plan_with_candidates(x)
    heard = []
    unsubscribe = on_override_change(lambda key, choice: heard.append((key, choice)))
    try:
        explorer = PlanExplorer(plan)
        explorer.choice.value = 2  # what a click on the third button does
        assert plan_override(plan.key) == 2
        assert "override" in explorer.status.value
        explorer.choose(0)  # the planner's choice again: no override left
        assert plan_override(plan.key) is None
    finally:
        unsubscribe()
    assert heard == [(plan.key, 2), (plan.key, None)]
    with pytest.raises(IndexError, match="3 candidates"):
        explorer.choose(7)


def test_a_new_explorer_shows_the_stored_choice(x):
    plan = _plan_with_candidates(x)
    PlanExplorer(plan).choose(1)
    assert PlanExplorer(plan).chosen == 1


def test_measuring_fills_in_each_candidates_time(x):
    explorer = PlanExplorer(_plan_with_candidates(x), measure=lambda cand: 1e-6 * len(cand.kernels))
    assert not explorer.measure_button.disabled
    explorer.measure_button.click()
    assert explorer.measured == {0: 1e-6, 1: 2e-6, 2: 2e-6}
    assert "measured 1.00 µs" in explorer.cards.children[0].value


def test_measuring_is_off_without_a_gpu(x, numpy_backend):
    assert PlanExplorer(_plan_with_candidates(x)).measure_button.disabled


def test_plan_explorer_displays_as_a_widget_with_a_static_fallback(x):
    bundle = PlanExplorer(_plan_with_candidates(x))._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "candidate" in bundle["text/html"] and SCRIPT not in bundle["text/html"]


def test_a_plan_without_candidates_is_its_own_only_candidate(x):
    explorer = PlanExplorer(fake_plan(softmax(x)))
    assert len(explorer.candidates) == 1 and explorer.chosen == 0


def _registry_with(n: int) -> KernelRegistry:
    reg = KernelRegistry(memory_only=True)
    for i in range(n):
        reg.put({"source_digest": f"{i:04x}", "gpu_arch": "sm_90", "name": f"k{i}"}, b"x" * (100 * (i + 1)), {})
    return reg


def test_registry_browser_lists_entries_with_size_hits_components_and_age():
    browser = RegistryBrowser(_registry_with(3))
    assert len(browser.entries) == 3
    assert len(browser.select.options) == 3
    table = browser.table.value
    assert table.count("<tr>") == 4  # header + 3
    assert "sm_90" in table and "source_digest" in table and " s</td>" in table
    assert "3 entries" in browser.summary.value
    assert browser.select.value and browser.select.value in browser.details.value


def test_evict_button_removes_the_selected_entry():
    reg = _registry_with(3)
    browser = RegistryBrowser(reg)
    key = browser.select.options[1][1]
    browser.select.value = key
    browser.evict_button.click()
    assert key not in {e["key"] for e in reg.entries()}
    assert len(browser.entries) == 2 and "evicted" in browser.status.value


def test_clear_takes_two_clicks():
    reg = _registry_with(2)
    browser = RegistryBrowser(reg)
    browser.clear_button.click()
    assert len(reg.entries()) == 2 and "really" in browser.clear_button.description
    browser.clear_button.click()
    assert reg.entries() == [] and browser.entries == []
    assert "empty" in browser.table.value


def test_registry_browser_escapes_component_values():
    reg = KernelRegistry(memory_only=True)
    reg.put({"source_digest": "ab", "gpu_arch": SCRIPT}, b"x", {})
    browser = RegistryBrowser(reg)
    html = browser.table.value + browser.details.value + browser._repr_mimebundle_()["text/html"]
    assert "<script" not in html and "&lt;script&gt;" in html


def test_fake_plan_helper_is_plan_like(x):
    assert isinstance(fake_plan(softmax(x)), FakePlan)


def test_candidates_given_as_groups_of_node_ids_are_drawn(x):
    from dataclasses import dataclass

    @dataclass
    class Candidate:  # the planner's search result: groups of id() of nodes, cost in seconds
        groups: tuple
        cost: float
        label: str

        @property
        def kernels(self) -> int:
            return len(self.groups)

    plan = fake_plan(softmax(x))
    work = [n for n in plan.graph.nodes if n.op not in ("input", "const", "broadcast")]
    one = Candidate((frozenset(id(n) for n in work),), 12.5e-6, "greedy")
    two = Candidate((frozenset(id(n) for n in work[:1]), frozenset(id(n) for n in work[1:])), 30e-6, "beam #1")
    plan.candidates = [one, two]
    explorer = PlanExplorer(plan)
    assert [c.kernels for c in explorer.candidates] == [1, 2]
    assert explorer.chosen == 0
    assert "estimated 30.0 µs" in explorer.cards.children[1].value
    assert explorer.cards.children[1].value.count('class="sl-kernel"') == 2


def test_an_explorer_made_from_arrays_measures_each_candidate_through_the_override(x, numpy_backend):
    import stitchlab as sl

    if not hasattr(sl, "explain"):
        pytest.skip("needs the stitching compiler")
    z = softmax(x)
    explorer = PlanExplorer(z)
    assert explorer._runner is not None
    z.get()  # evaluating the arrays afterwards does not change what is measured
    times = explorer.measure(repeats=2)
    if len(times) == len(explorer.candidates):  # the numpy backend's plan is not the compiler's:
        assert all(t > 0 for t in times.values())
    else:  # a candidate the backend did not use is reported, not timed
        assert "did not use candidate" in explorer.status.value
    assert plan_override(explorer.graph_key) is None  # the user's choice is left as it was


def test_measuring_refuses_a_plan_the_compiler_did_not_use(x, monkeypatch):
    import stitchlab as sl
    from stitchlab import runtime

    z = softmax(x)
    plan = _plan_with_candidates(x)
    monkeypatch.setattr(sl, "explain", lambda *arrays: plan, raising=False)

    class Backend:  # ignores overrides: always runs the planner's choice
        cleared = 0

        def clear_cache(self):
            Backend.cleared += 1

        def executable(self, graph):
            def run(inputs):
                return []

            run.plan = plan
            return run

    monkeypatch.setattr(runtime, "for_device", lambda device: Backend())
    explorer = PlanExplorer(z)
    times = explorer.measure(repeats=1)
    assert list(times) == [0]  # the planner's own plan is timed; the next one is refused
    assert "did not use candidate" in explorer.status.value and "plan overrides" in explorer.status.value
    assert Backend.cleared >= 2 and plan_override(explorer.graph_key) is None
