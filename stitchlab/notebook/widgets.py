"""ipywidgets views: the plan explorer and the registry browser.

This module imports ipywidgets; ``import stitchlab`` and ``import stitchlab.notebook`` do not
(``stitchlab.notebook.PlanExplorer`` loads this module on first use). Each view keeps its
widgets as attributes and its actions as methods, so it can be driven and tested without a
browser: ``explorer.choice.value = 1`` is what a click on the second candidate does.

Both views display as their widget in Jupyter, with a static HTML table as the fallback
for viewers without a widget manager (nbconvert, the documentation site).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

import ipywidgets as W

from . import hooks
from .adapter import CandidateView, PlanView, plan_view
from .html import _CSS, _fmt_bytes, candidates_html
from .svg import _fmt_us, plan_svg

Measure = Callable[[Any], float]


def _gpu_backend() -> bool:
    try:
        import stitchlab

        return stitchlab.get_backend() == "cupy"
    except Exception:
        return False


def _default_measure(candidate: Any) -> float:
    """Seconds per run of a candidate plan, via its own ``measure()`` (the compiler's)."""
    measure = getattr(candidate, "measure", None)
    if measure is None:
        raise RuntimeError("this candidate plan has no measure() method; pass measure= to PlanExplorer")
    return float(measure())


class _Displayable:
    widget: W.Widget

    def _static_html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self._static_html()
        return bundle


class PlanExplorer(_Displayable):
    """The beam search's candidate plans side by side; choose the one the compiler uses.

    Args:
        target: a plan (``sl.explain(...)``'s result) or a lazy array / tuple of lazy arrays
            (explained here).
        measure: ``measure(candidate) -> seconds`` for the "measure" button; by default the
            candidate's own ``measure()``. Measuring needs the cupy backend (a GPU).

    The choice is stored with :func:`stitchlab.notebook.hooks.set_plan_override` under the
    plan's graph key; choosing the planner's own plan again removes the override.

    Examples:
        >>> explorer = PlanExplorer(sl.explain(z))    # doctest: +SKIP
        >>> explorer              # shows the cards        # doctest: +SKIP
        >>> explorer.choose(1)    # same as clicking       # doctest: +SKIP
    """

    def __init__(self, target: Any, *, measure: Measure | None = None) -> None:
        self.plan = _as_plan(target)
        self._runner = _Runner.of(target)
        self.view: PlanView = plan_view(self.plan)
        self.graph_key = self.view.graph_key
        self.measure_fn = measure
        self.candidates: list[CandidateView] = list(self.view.candidates) or [
            CandidateView(0, "chosen", len(self.view.kernels), self.view.estimated_us, None, True, self.plan)
        ]
        self.default_index = next((c.index for c in self.candidates if c.chosen), 0)
        self.measured: dict[int, float] = {}
        current = hooks.plan_override(self.graph_key) if self.graph_key else None
        selected = current if current is not None and current < len(self.candidates) else self.default_index

        self.choice = W.ToggleButtons(
            options=[(c.label, c.index) for c in self.candidates],
            value=selected,
            description="use plan:",
            style={"button_width": "auto"},
        )
        self.choice.observe(self._on_choice, names="value")
        can_measure = measure is not None or (
            _gpu_backend() and (self._runner is not None or any(hasattr(c.plan, "measure") for c in self.candidates))
        )
        self.measure_button = W.Button(
            description="measure on the GPU",
            icon="stopwatch",
            disabled=not can_measure,
            tooltip="runs each candidate" if can_measure else "needs the cupy backend (a GPU)",
        )
        self.measure_button.on_click(lambda _: self.measure())
        self.status = W.HTML()
        self.cards = W.HBox(layout=W.Layout(overflow="auto", align_items="flex-start"))
        self._render_cards()
        self._set_status()
        self.widget = W.VBox([self.cards, W.HBox([self.choice, self.measure_button]), self.status])

    # -- actions ------------------------------------------------------------------------------
    @property
    def chosen(self) -> int:
        """Index of the candidate in use."""
        return int(self.choice.value)

    def choose(self, index: int) -> None:
        """Use candidate ``index`` (as a click on its button does)."""
        if not 0 <= index < len(self.candidates):
            raise IndexError(f"candidate {index} does not exist; this plan has {len(self.candidates)} candidates")
        self.choice.value = index

    def measure(self, repeats: int = 20) -> dict[int, float]:
        """Measure every candidate (seconds per run); update the cards; return ``{index: seconds}``.

        With ``measure=`` given, that function times each candidate. Otherwise, for an explorer
        made from lazy arrays, each candidate is run through the plan-override hook (see
        :meth:`_Runner.time`); for one made from a plan, each candidate's own ``measure()``.
        """
        for c in self.candidates:
            try:
                if self.measure_fn is not None:
                    seconds = float(self.measure_fn(c.plan))
                elif self._runner is not None:
                    seconds = self._runner.time(c, self.default_index, repeats)
                else:
                    seconds = _default_measure(c.plan)
            except Exception as error:
                self.status.value = (
                    f"{_CSS}<div class='sl-repr' style='color:#b91c1c'>measuring {escape(c.label)} failed: "
                    f"{escape(type(error).__name__)}: {escape(str(error))}</div>"
                )
                break
            self.measured[c.index] = seconds
        self._render_cards()
        return dict(self.measured)

    # -- rendering ---------------------------------------------------------------------------
    def _on_choice(self, change: dict[str, Any]) -> None:
        index = int(change["new"])
        if self.graph_key:
            hooks.set_plan_override(self.graph_key, None if index == self.default_index else index)
        self._render_cards()
        self._set_status()

    def _set_status(self) -> None:
        if not self.graph_key:
            self.status.value = "<i>this plan has no graph key; the choice cannot be stored</i>"
            return
        override = hooks.plan_override(self.graph_key)
        which = (
            "the planner’s choice"
            if override is None
            else f"“{self.candidates[override].label}” (override)" if override < len(self.candidates)
            else f"candidate {override} (override)"
        )
        self.status.value = (
            f"{_CSS}<div class='sl-repr'>graph <code>{escape(self.graph_key[:12])}</code>: "
            f"the next evaluation uses {escape(which)}</div>"
        )

    def _card_html(self, c: CandidateView) -> str:
        try:
            svg = plan_svg(plan_view(c.plan, _candidates=False), scale=0.62) if c.plan is not None else ""
        except Exception as error:  # a candidate that cannot be drawn still gets its card
            svg = f"<i>cannot draw: {escape(str(error))}</i>"
        measured = self.measured.get(c.index)
        if measured is None and c.measured_us is not None:
            measured = c.measured_us / 1e6
        selected = c.index == self.chosen if hasattr(self, "choice") else c.chosen
        border = "3px solid #2563eb" if selected else "1px solid #d1d5db"
        return (
            f"{_CSS}<div class='sl-repr' style='border:{border};border-radius:6px;padding:6px;margin:3px;min-width:220px'>"
            f"<div class='sl-title'>{escape(c.label)}{' · the planner’s choice' if c.chosen else ''}</div>"
            f"<div>{c.kernels} kernel{'s' * (c.kernels != 1)} · estimated {escape(_fmt_us(c.estimated_us))}"
            f" · measured {escape(_fmt_us(measured * 1e6)) if measured is not None else '—'}</div>"
            f"<div class='sl-svg-wrap'>{svg}</div></div>"
        )

    def _render_cards(self) -> None:
        self.cards.children = [W.HTML(self._card_html(c)) for c in self.candidates]

    def _static_html(self) -> str:
        table = candidates_html(self.view) or "<i>this plan has no other candidates</i>"
        return f"{_CSS}<div class='sl-repr'><div class='sl-title'>plan explorer (static view)</div>{table}</div>"


class _Runner:
    """Runs one graph with a chosen candidate plan, for measuring (made from lazy arrays).

    The graph and its input buffers are captured when the explorer is made, so evaluating the
    arrays later does not change what is measured. A candidate runs through the same path as
    any evaluation: the plan override is set for the graph's key, the backend's executable
    cache is cleared, and the backend plans the graph again (the compiler reads the override).
    The executable's plan is checked against the candidate, so a compiler that ignores
    overrides gives an error instead of a misleading time.
    """

    def __init__(self, graph: Any, inputs: list[Any], device: str | None) -> None:
        self.graph, self.inputs, self.device = graph, inputs, device

    @classmethod
    def of(cls, target: Any) -> _Runner | None:
        if hasattr(target, "kernels"):
            return None
        from ..ir.graph import build_graph

        arrays = target if isinstance(target, (tuple, list)) else (target,)
        try:
            graph, sources = build_graph([a._node for a in arrays])
        except Exception:
            return None
        if any(s.value is None for s in sources):
            return None
        device = next((n.device for n in graph.nodes if n.device is not None), None)
        return cls(graph, [s.value for s in sources], device)

    def time(self, candidate: CandidateView, default_index: int, repeats: int) -> float:
        from .. import runtime
        from .adapter import _group_sets

        backend = runtime.for_device(self.device)
        key = self.graph.key
        before = hooks.plan_override(key)
        try:
            hooks.set_plan_override(key, None if candidate.index == default_index else candidate.index)
            backend.clear_cache()
            run = backend.executable(self.graph)
            used = getattr(run, "plan", None)
            if used is not None and candidate.plan is not None and _group_sets(used) != _group_sets(candidate.plan):
                raise RuntimeError(
                    f"the compiler did not use candidate {candidate.label!r} (it does not honour plan overrides yet)"
                )
            return _seconds_per_run(lambda: run(self.inputs), repeats, gpu=str(self.device or "").startswith("cuda"))
        finally:
            hooks.set_plan_override(key, before)
            backend.clear_cache()


def _seconds_per_run(fn: Callable[[], Any], repeats: int, gpu: bool) -> float:
    """Median seconds of ``fn()`` after two warm-up runs (CUDA events on the GPU)."""
    import statistics

    for _ in range(2):
        fn()
    times = []
    if gpu:
        import cupy

        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        for _ in range(repeats):
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    else:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _as_plan(target: Any) -> Any:
    if hasattr(target, "kernels"):
        return target
    import stitchlab

    explain = getattr(stitchlab, "explain", None)
    if explain is None:
        raise RuntimeError("PlanExplorer needs sl.explain (the stitching compiler), which is not available")
    arrays = target if isinstance(target, (tuple, list)) else (target,)
    return explain(*arrays)


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


class RegistryBrowser(_Displayable):
    """Browse the kernel registry: entries with size, hits, key components and age; evict, clear.

    Args:
        registry: a :class:`stitchlab.registry.KernelRegistry` (default: ``default_registry()``).

    Clearing takes two clicks (the first arms the button). The methods :meth:`refresh`,
    :meth:`evict` and :meth:`clear` do what the buttons do.
    """

    def __init__(self, registry: Any = None) -> None:
        if registry is None:
            from stitchlab.registry import default_registry

            registry = default_registry()
        self.registry = registry
        self.entries: list[dict[str, Any]] = []
        self.summary = W.HTML()
        self.table = W.HTML()
        self.select = W.Select(options=[], rows=8, description="entry:", layout=W.Layout(width="60%"))
        self.select.observe(lambda _: self._show_details(), names="value")
        self.details = W.HTML()
        self.refresh_button = W.Button(description="refresh", icon="refresh")
        self.evict_button = W.Button(description="evict selected", icon="trash", button_style="warning")
        self.clear_button = W.Button(description="clear all", icon="times", button_style="danger")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.evict_button.on_click(lambda _: self.evict())
        self.clear_button.on_click(lambda _: self._clear_clicked())
        self._clear_armed = False
        self.status = W.HTML()
        self.widget = W.VBox([
            self.summary,
            self.table,
            W.HBox([self.select, self.details]),
            W.HBox([self.refresh_button, self.evict_button, self.clear_button]),
            self.status,
        ])
        self.refresh()

    def refresh(self) -> None:
        """Read the entries again and redraw."""
        self.entries = list(self.registry.entries())
        self.entries.sort(key=lambda e: e.get("last_access") or 0.0, reverse=True)
        stats = self.registry.stats()
        self.summary.value = (
            f"{_CSS}<div class='sl-repr'><span class='sl-title'>kernel registry</span> "
            f"<span class='sl-muted'>{escape(str(stats.get('path') or 'in memory only'))}</span><br>"
            f"{stats.get('entries', len(self.entries))} entries, {escape(_fmt_bytes(int(stats.get('bytes', 0) or 0)))}"
            f" of {escape(_fmt_bytes(int(stats.get('max_size', 0) or 0)))} · this process: "
            f"{stats.get('hits', 0)} hits, {stats.get('misses', 0)} misses, {stats.get('builds', 0)} builds</div>"
        )
        self.table.value = self.table_html()
        keys = [e["key"] for e in self.entries]
        previous = self.select.value
        self.select.options = [(self._label(e), e["key"]) for e in self.entries]
        self.select.value = previous if previous in keys else (keys[0] if keys else None)
        self._show_details()

    def evict(self, key: str | None = None) -> bool:
        """Evict ``key`` (default: the selected entry); return True if it was there."""
        key = key if key is not None else self.select.value
        if not key:
            self.status.value = "<i>nothing selected</i>"
            return False
        found = bool(self.registry.evict(key))
        self.status.value = f"evicted <code>{escape(key[:16])}</code>" if found else f"<code>{escape(key[:16])}</code> was not stored"
        self.refresh()
        return found

    def clear(self) -> int:
        """Remove every entry; return how many were removed."""
        count = int(self.registry.clear() or 0)
        self._clear_armed = False
        self.clear_button.description = "clear all"
        self.status.value = f"cleared {count} entries"
        self.refresh()
        return count

    def _clear_clicked(self) -> None:
        if not self._clear_armed:
            self._clear_armed = True
            self.clear_button.description = f"really clear {len(self.entries)}?"
            self.status.value = "click again to remove every entry"
            return
        self.clear()

    # -- rendering ---------------------------------------------------------------------------
    @staticmethod
    def _what(e: dict[str, Any]) -> str:
        if e.get("kind") == "record":
            rec = e.get("record") or {}
            return f"record {rec.get('kind', '?')}/{rec.get('name', '?')}"
        comps = e.get("components") or {}
        if comps.get("name"):
            return str(comps["name"])
        what = []
        try:  # the compiler stores its schedule as JSON: show the family ("row_warp")
            what.append(str(json.loads(comps.get("schedule", "")).get("family", "")))
        except (ValueError, AttributeError):
            what.append(str(comps.get("schedule", ""))[:24])
        dtypes = sorted({d.split(":")[-1] for d in str(comps.get("dtypes", "")).split(",") if d})
        what.append(",".join(dtypes))
        what.append(str(comps.get("gpu_arch", "")))
        return " ".join(w for w in what if w) or "kernel"

    def _label(self, e: dict[str, Any]) -> str:
        return f"{e['key'][:12]}  {self._what(e)}  {_fmt_bytes(int(e.get('size', 0) or 0))}"

    def table_html(self, entries: Sequence[dict[str, Any]] | None = None) -> str:
        """The entries as an HTML table (key, what, size, hits, age, components)."""
        now = time.time()
        rows = []
        for e in self.entries if entries is None else entries:
            comps = e.get("components") or {}
            comp_text = ", ".join(f"{k}={v if len(str(v)) <= 16 else str(v)[:12] + '…'}" for k, v in sorted(comps.items()))
            created = e.get("created") or 0.0
            rows.append(
                f"<tr><td><code>{escape(e['key'][:12])}</code></td><td>{escape(self._what(e))}</td>"
                f"<td>{escape(_fmt_bytes(int(e.get('size', 0) or 0)))}</td><td>{int(e.get('hits', 0) or 0)}</td>"
                f"<td>{escape(_age(max(0.0, now - created)) if created else '—')}</td>"
                f"<td>{escape(str(e.get('location', '')))}</td><td style='font-size:11px'>{escape(comp_text)}</td></tr>"
            )
        if not rows:
            return f"{_CSS}<div class='sl-repr sl-note'>the registry is empty</div>"
        return (
            f"{_CSS}<div class='sl-repr'><table class='sl-table'><tr><th>key</th><th>what</th><th>size</th>"
            f"<th>hits</th><th>age</th><th>where</th><th>key components</th></tr>{''.join(rows)}</table></div>"
        )

    def _show_details(self) -> None:
        entry = next((e for e in self.entries if e["key"] == self.select.value), None)
        if entry is None:
            self.details.value = ""
            return
        comps = entry.get("components") or entry.get("record") or {}
        rows = "".join(f"<tr><th>{escape(str(k))}</th><td><code>{escape(str(v))}</code></td></tr>" for k, v in sorted(comps.items()))
        self.details.value = (
            f"{_CSS}<div class='sl-repr'><div class='sl-title'><code>{escape(entry['key'])}</code></div>"
            f"<table class='sl-table'>{rows}</table></div>"
        )

    def _static_html(self) -> str:
        return self.summary.value + self.table.value
