"""HTML reprs: lazy arrays (``LazyArray._repr_html_``) and plans (``sl.explain(...)``).

Nothing here evaluates an array. Every piece of text that comes from the user or the
compiler (names, values, shapes, sources, error messages) goes through :func:`html.escape`.
"""

from __future__ import annotations

from dataclasses import replace
from html import escape
from typing import Any

from .adapter import PlanView, explain_or_graph, graph_view, plan_view
from .svg import _fmt_us, kernel_colour, plan_svg

#: Lazy arrays with more operations than this are not planned for their repr (planning a big
#: graph takes seconds); the repr says so, and ``sl.explain`` still plans them.
REPR_PLAN_MAX_OPS = 150

_CSS = """<style>
.sl-repr{font-family:ui-sans-serif,system-ui,sans-serif;font-size:13px;line-height:1.4;color:#111827}
.sl-repr table.sl-table{border-collapse:collapse;margin:4px 0 8px 0}
.sl-repr table.sl-table th,.sl-repr table.sl-table td{border:1px solid #d1d5db;padding:3px 8px;text-align:left;vertical-align:top}
.sl-repr table.sl-table th{background:#f3f4f6;font-weight:600}
.sl-repr .sl-title{font-weight:600;font-size:14px}
.sl-repr .sl-muted{color:#6b7280}
.sl-repr .sl-swatch{display:inline-block;width:11px;height:11px;border:1px solid #6b7280;border-radius:2px;margin-right:5px;vertical-align:-1px}
.sl-repr details{margin:2px 0}
.sl-repr details>summary{cursor:pointer}
.sl-repr pre.sl-source{max-height:420px;overflow:auto;background:#f9fafb;border:1px solid #e5e7eb;padding:6px;font-size:11.5px;margin:4px 0}
.sl-repr .sl-svg-wrap{overflow-x:auto;max-width:100%}
.sl-repr .sl-note{color:#6b7280;font-style:italic}
.sl-repr .sl-chosen{font-weight:600}
</style>"""


def _fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _cached_text(view: PlanView) -> str:
    if not view.planned:
        return "not planned"
    if not view.kernels:
        return "no kernels needed"
    flags = [k.cached for k in view.kernels]
    if all(f is True for f in flags):
        return "yes, all kernels in the registry"
    if all(f is False for f in flags):
        return "no (compiled at first evaluation)"
    if any(f is None for f in flags):
        known = [f for f in flags if f is not None]
        if not known:
            return "unknown"
        return f"{sum(known)} of {len(known)} known kernels cached"
    return f"{sum(bool(f) for f in flags)} of {len(flags)} kernels cached"


def _rows(rows: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows)


def array_html(array: Any) -> str:
    """The HTML repr of a lazy array: shape, dtype, bytes, "N ops → K kernels", cache status.

    The array is not evaluated. K comes from the planner (``sl.explain``) when the compiler is
    available; otherwise the line says "not planned".
    """
    shape, dtype = tuple(array.shape), str(array.dtype)
    rows = [
        ("shape", escape(_shape_text(shape))),
        ("dtype", escape(dtype)),
        ("bytes", escape(f"{_fmt_bytes(int(array.nbytes))} ({array.nbytes:,})")),
    ]
    try:
        device = str(array.device)
    except Exception:  # a backend that cannot be reached must not break the repr
        device = "unknown"
    rows.append(("device", escape(device)))
    if getattr(array, "is_materialized", False):
        rows.append(("state", "materialized (no pending work)"))
        body = _rows(rows) + _value_row(array)
    else:
        view = graph_view(array)
        if view.op_count > REPR_PLAN_MAX_OPS:
            view = replace(view, note=f"not planned here (over {REPR_PLAN_MAX_OPS} ops: sl.explain(x) plans it)")
        else:
            view = explain_or_graph(array)
        if view.planned:
            kernels = f"{len(view.kernels)} kernel{'s' * (len(view.kernels) != 1)}"
            est = view.estimated_us
            if est is not None:
                kernels += f" (estimated {escape(_fmt_us(est))})"
        else:
            kernels = escape(view.note or "not planned")
        rows.append(("work", f"{view.op_count} op{'s' * (view.op_count != 1)} → {kernels}"))
        cached = _cached_text(view)
        if device == "cpu" and cached.startswith("no ("):
            cached = "no (the numpy backend runs the graph without compiling kernels)"
        rows.append(("cached", escape(cached)))
        body = _rows(rows)
    return (
        f'{_CSS}<div class="sl-repr sl-array"><div class="sl-title">stitchlab.LazyArray '
        f'<span class="sl-muted">(lazy)</span></div><table class="sl-table">{body}</table></div>'
    )


def array_text(array: Any) -> str:
    """The plain-text repr Jupyter shows next to the HTML one: values only if already computed."""
    if getattr(array, "is_materialized", False):
        return repr(array)
    return f"<stitchlab.LazyArray shape={tuple(array.shape)} dtype={array.dtype}: not evaluated yet>"


def array_mimebundle(array: Any) -> dict[str, str]:
    """``LazyArray._repr_mimebundle_``: HTML and plain text, neither of which evaluates the array.

    Jupyter asks for the mime bundle before any other repr; without it, the plain-text
    ``__repr__`` (which prints values, so evaluates) would run before the HTML repr.
    """
    return {"text/html": array_html(array), "text/plain": array_text(array)}


def _value_row(array: Any) -> str:
    """For a materialized array: a short preview of the values (no computation needed)."""
    if array.size > 10_000:
        return ""
    try:
        import numpy as np

        text = np.array2string(array.get(), threshold=40, edgeitems=3, precision=4)
    except Exception:
        return ""
    return f'<tr><th>values</th><td><pre style="margin:0">{escape(text)}</pre></td></tr>'


def kernel_table(view: PlanView) -> str:
    """The table of kernels: colour, name, schedule, launch, nodes, estimated time, cached."""
    head = "<tr><th></th><th>kernel</th><th>schedule</th><th>launch</th><th>ops</th><th>estimated</th><th>measured</th><th>cached</th></tr>"
    rows = []
    for k in view.kernels:
        ops = [n for n in view.nodes if n.id in set(k.nodes)]
        op_text = ", ".join(n.op for n in ops[:8]) + (f", … ({len(ops)})" if len(ops) > 8 else "")
        cached = {True: "yes", False: "no", None: "—"}[k.cached]
        rows.append(
            f'<tr data-kernel="{k.index}"><td style="white-space:nowrap"><span class="sl-swatch" style="background:{kernel_colour(k.index)}"></span>{k.index}</td>'
            f"<td><code>{escape(k.name)}</code></td><td>{escape(k.schedule or '—')}</td>"
            f"<td><code>{escape(k.launch or '—')}</code></td><td>{escape(op_text)}</td>"
            f"<td>{escape(_fmt_us(k.estimated_us))}</td>"
            f"<td>{escape(_fmt_us(k.measured_us)) if k.measured_us is not None else '—'}</td><td>{cached}</td></tr>"
        )
    return f'<table class="sl-table sl-kernels">{head}{"".join(rows)}</table>'


def sources_html(view: PlanView) -> str:
    """Each kernel's CUDA source in a collapsed ``<details>`` block."""
    out = []
    for k in view.kernels:
        if not k.source:
            continue
        lines = k.source.count("\n") + 1
        out.append(
            f'<details class="sl-source" data-kernel="{k.index}"><summary>'
            f'<span class="sl-swatch" style="background:{kernel_colour(k.index)}"></span>'
            f"CUDA source of <code>{escape(k.name)}</code> <span class=\"sl-muted\">({lines} lines)</span></summary>"
            f'<pre class="sl-source"><code>{escape(k.source)}</code></pre></details>'
        )
    return "".join(out)


def candidates_html(view: PlanView) -> str:
    """The beam search's candidate plans, one row each (the chosen one in bold)."""
    if not view.candidates:
        return ""
    rows = []
    for c in view.candidates:
        cls = ' class="sl-chosen"' if c.chosen else ""
        rows.append(
            f"<tr{cls}><td>{c.index}</td><td>{escape(c.label)}</td><td>{c.kernels}</td>"
            f"<td>{escape(_fmt_us(c.estimated_us))}</td>"
            f"<td>{escape(_fmt_us(c.measured_us)) if c.measured_us is not None else '—'}</td>"
            f"<td>{'✓ used' if c.chosen else ''}</td></tr>"
        )
    return (
        '<details class="sl-candidates"><summary>candidate plans of the beam search '
        f'<span class="sl-muted">({len(view.candidates)})</span></summary><table class="sl-table">'
        "<tr><th>#</th><th>candidate</th><th>kernels</th><th>estimated</th><th>measured</th><th></th></tr>"
        + "".join(rows)
        + "</table></details>"
    )


def view_html(view: PlanView, title: str = "stitchlab plan") -> str:
    """The full picture of a view: summary line, SVG graph, kernel table, sources, candidates."""
    if view.planned:
        n = len(view.kernels)
        summary = f"{view.op_count} ops → {n} kernel{'s' * (n != 1)}"
        if view.estimated_us is not None:
            summary += f", estimated {_fmt_us(view.estimated_us)}"
    else:
        summary = f"{view.op_count} ops, {view.note or 'not planned'}"
    key = f' <span class="sl-muted">graph {escape(view.graph_key[:12])}</span>' if view.graph_key else ""
    parts = [
        _CSS,
        '<div class="sl-repr sl-plan">',
        f'<div class="sl-title">{escape(title)}: {escape(summary)}{key}</div>',
        f'<div class="sl-svg-wrap">{plan_svg(view)}</div>',
    ]
    if view.kernels:
        parts.append(kernel_table(view))
        parts.append(sources_html(view))
    parts.append(candidates_html(view))
    parts.append("</div>")
    return "".join(parts)


def plan_html(plan: Any) -> str:
    """The HTML repr of a compiler plan: the plan picture, kernel table, sources and candidates.

    ``Plan._repr_html_`` should return this::

        def _repr_html_(self) -> str:
            from ..notebook.html import plan_html
            return plan_html(self)
    """
    try:
        view = plan_view(plan)
    except Exception as error:  # a repr must not raise; show what went wrong instead
        return (
            f'{_CSS}<div class="sl-repr"><span class="sl-note">cannot draw this plan: '
            f"{escape(type(error).__name__)}: {escape(str(error))}</span></div>"
        )
    return view_html(view)


def graph_html(*arrays: Any) -> str:
    """The picture of lazy ``arrays``: their plan if the compiler is there, else their graph."""
    return view_html(explain_or_graph(*arrays))
