"""HTML reprs and the plan picture: what they show, that they evaluate nothing, that they escape."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.notebook import array_html, graph_view, plan_html, plan_view, show
from stitchlab.notebook.svg import plan_svg

from .conftest import FakeKernel, FakePlan, fake_plan, softmax

SCRIPT = "<script>alert('x')</script>"


def _svg(html: str) -> ET.Element:
    match = re.search(r"<svg.*?</svg>", html, re.S)
    assert match, "no <svg> in the output"
    return ET.fromstring(match.group(0))  # well-formed XML or this raises


def test_lazy_array_repr_shows_shape_dtype_bytes_and_work_without_evaluating(x):
    z = softmax(x)
    before = sl.stats()["evaluations"]
    html = z._repr_html_()
    assert sl.stats()["evaluations"] == before
    assert not z.is_materialized
    assert "(4, 8)" in html and "float32" in html and "128 B" in html
    assert re.search(r"\d+ ops → (\d+ kernels?|not planned)", html)
    assert "cached" in html


def test_lazy_array_repr_counts_kernels_from_the_planner(x, monkeypatch):
    monkeypatch.setattr(sl, "explain", lambda *arrays: fake_plan(*arrays, split_after_reduce=0), raising=False)
    html = array_html(softmax(x))
    assert "→ 2 kernels" in html


def test_materialized_array_repr_shows_values(x):
    html = array_html(x)
    assert "materialized" in html and "31." in html


def test_planner_error_is_shown_escaped_not_raised(x, monkeypatch):
    def broken(*arrays):
        raise RuntimeError(SCRIPT)

    monkeypatch.setattr(sl, "explain", broken, raising=False)
    html = array_html(softmax(x))
    assert SCRIPT not in html
    assert "&lt;script&gt;" in html


def test_plan_repr_escapes_every_compiler_text(x):
    plan = fake_plan(softmax(x))
    k = plan.kernels[0]
    k.name, k.schedule, k.source = SCRIPT, SCRIPT, SCRIPT + " a < b"
    k.launch = {"grid": SCRIPT}
    plan.candidates = [FakePlan(plan.kernels, plan.graph, plan.key, label=SCRIPT), plan]
    html = plan_html(plan)
    assert "<script" not in html
    assert html.count("&lt;script&gt;") >= 5
    _svg(html)


def test_plan_picture_groups_each_kernels_nodes_and_labels_schemes(x):
    z = softmax(x)
    plan = fake_plan(z, split_after_reduce=0)
    view = plan_view(plan)
    assert [k.index for k in view.kernels] == [0, 1]
    assert {n.kernel for n in view.nodes if n.kind not in ("input", "const")} == {0, 1}
    schemes = {e.scheme for e in view.edges}
    assert "memory" in schemes  # kernel 0 -> kernel 1 goes through GPU memory
    assert "warp" in schemes    # schedule row_reduce_warp: reduce -> consumer is a warp shuffle
    assert "load" in schemes
    svg = _svg(plan_html(plan))
    ns = "{http://www.w3.org/2000/svg}"
    regions = [g for g in svg.iter(f"{ns}g") if g.get("class") == "sl-kernel"]
    assert [g.get("data-kernel") for g in regions] == ["0", "1"]
    drawn = {p.get("data-scheme") for p in svg.iter(f"{ns}path")}
    assert {"memory", "warp", "load"} <= drawn


def test_given_edge_schemes_win_over_inferred_ones(x):
    z = softmax(x)
    plan = fake_plan(z)
    k = plan.kernels[0]
    reduce_node = next(n for n in k.nodes if n.kind.value == "reduce")
    user = next(n for n in k.nodes if reduce_node in n.inputs)
    k.edge_schemes = {(reduce_node, user): "shared"}
    view = plan_view(plan)
    assert "shared" in {e.scheme for e in view.edges}


def test_plan_shows_estimates_sources_collapsed_and_cache_state(x):
    plan = fake_plan(softmax(x), split_after_reduce=0)
    plan.kernels[0].cached, plan.kernels[1].cached = True, False
    html = plan_html(plan)
    assert html.count("<details class=\"sl-source\"") == 2
    assert "open" not in re.findall(r"<details[^>]*>", html)[0]
    assert "12.5 µs" in html and "25.0 µs" in html  # per kernel, and the total
    assert "a &lt; b &amp;&amp; c &gt; d" in html
    assert "sl-kernels" in html


def test_constants_are_folded_into_their_users_label(x):
    view = graph_view((x - 1.5) * 2)
    labels = [n.label for n in view.nodes]
    assert not any(n.kind == "const" for n in view.nodes)
    assert "subtract (1.5)" in labels and "multiply (2)" in labels


def test_unplanned_graph_still_draws(x):
    html = show(softmax(x))._repr_html_()
    _svg(html)
    assert "exp" in html


def test_huge_graphs_are_not_drawn(x):
    y = x
    for _ in range(300):
        y = y + 1
    assert "not drawn" in plan_svg(graph_view(y))


def test_plan_without_nodes_or_graph_does_not_break_the_repr():
    plan = FakePlan([FakeKernel("k", nodes=[])], graph=None, key="")
    assert "k" in plan_html(plan)
    assert "cannot draw" in plan_html(object.__new__(_Broken))


class _Broken:
    @property
    def kernels(self):
        raise RuntimeError(SCRIPT)


def test_import_stitchlab_stays_light():
    code = (
        "import sys, numpy as np, stitchlab as sl, stitchlab.notebook, stitchlab._log\n"
        "heavy = [m for m in ('ipywidgets', 'tqdm', 'torch', 'cupy', 'IPython') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "x = sl.asarray(np.ones((2, 3), np.float32)); (x + 1)._repr_html_()\n"
        "heavy = [m for m in ('ipywidgets', 'tqdm', 'torch', 'IPython') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float64"])
def test_repr_works_for_every_dtype(dtype):
    a = sl.asarray(np.zeros((3, 2), dtype=dtype))
    html = array_html(a.astype(dtype) if dtype == "bool" else a + a)
    assert np.dtype(dtype).name in html or "bool" in html


def test_jupyter_display_does_not_evaluate_a_lazy_array(x):
    pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter

    z = softmax(x)
    before = sl.stats()["evaluations"]
    data, _ = DisplayFormatter().format(z)
    assert sl.stats()["evaluations"] == before and not z.is_materialized
    assert "not evaluated yet" in data["text/plain"] and "(4, 8)" in data["text/html"]
    z.get()
    data, _ = DisplayFormatter().format(z)
    assert "array(" in data["text/plain"] and "materialized" in data["text/html"]


def _real_explain():
    explain = getattr(sl, "explain", None)
    if explain is None:
        pytest.skip("the stitching compiler (sl.explain) is not available")
    return explain


def test_the_compilers_softmax_plan_draws_as_one_kernel_with_stitched_edges(x):
    plan = _real_explain()(softmax(x))
    view = plan_view(plan)
    assert len(view.kernels) == 1
    ops = {n.op for n in view.nodes if n.kernel == 0}
    assert {"max", "exp", "sum", "divide"} <= ops
    assert {e.scheme for e in view.edges} & {"warp", "shared"}  # the reductions are stitched
    assert view.graph_key == plan.graph.key
    html = plan_html(plan)
    svg = _svg(html)
    ns = "{http://www.w3.org/2000/svg}"
    assert [g.get("data-kernel") for g in svg.iter(f"{ns}g") if g.get("class") == "sl-kernel"] == ["0"]
    assert html.count('<details class="sl-source"') == 1 and "__global__" in html


def test_the_compilers_candidates_are_listed_with_the_used_one_marked(x):
    plan = _real_explain()(softmax(x))
    view = plan_view(plan)
    if len(plan.candidates) > 0:
        assert sum(c.chosen for c in view.candidates) == 1
        assert [c.label for c in view.candidates] == [c.label for c in plan.candidates]


def test_lazy_array_repr_uses_the_compilers_kernel_count(x):
    _real_explain()
    assert "→ 1 kernel" in array_html(softmax(x))


def test_big_graphs_are_not_planned_for_a_repr(x, monkeypatch):
    def explain(*arrays):
        raise AssertionError("a repr must not plan a graph this big")

    monkeypatch.setattr(sl, "explain", explain, raising=False)
    y = x
    for _ in range(200):
        y = y * 1.01
    html = array_html(y)
    assert "200 ops → not planned here (over 150 ops" in html
