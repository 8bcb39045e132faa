"""Notebook views of stitchlab: HTML reprs, the plan picture, widgets, progress bars.

Light to import: the widgets (and so ipywidgets) load on first use of :class:`PlanExplorer`
or :class:`RegistryBrowser`, tqdm on the first progress bar.

* :func:`array_html`, :func:`plan_html`: the HTML reprs (``LazyArray._repr_html_``, ``Plan._repr_html_``);
* :func:`show`: the plan picture of lazy arrays or of a plan, as a displayable object;
* :class:`PlanExplorer`: candidate plans side by side, choose the one used (see :mod:`.hooks`);
* :class:`RegistryBrowser`: the kernel registry's entries; evict and clear;
* :func:`progress`: a progress bar for batches of compiles (``with progress(n, "compiling") as bar``).

What the compiler calls (so the views show its work):

* ``Plan._repr_html_`` returns :func:`plan_html` (``from ..notebook.html import plan_html``), so
  ``sl.explain(...)`` draws itself as the plan picture;
* ``build_plan`` uses candidate ``plan_override(graph.key)`` when it is not None, and the
  backend's executable cache drops a graph's entry when :func:`on_override_change` reports it;
* the runtime wraps a batch of compiles in ``with progress(n, "compiling kernels") as bar`` and
  reports each with ``stitchlab._log.log_compile(name, key, outcome, seconds)`` (and
  ``log_recompile(name, reason)``, ``log_source(name, source)``).

Examples:
    >>> import numpy as np, stitchlab as sl
    >>> from stitchlab.notebook import show
    >>> x = sl.asarray(np.ones((4, 8), np.float32))
    >>> "<svg" in show(sl.exp(x) + 1)._repr_html_()
    True
"""

from __future__ import annotations

from typing import Any

from .adapter import PlanView, graph_view, plan_view
from .hooks import clear_plan_overrides, on_override_change, plan_override, set_plan_override
from .html import array_html, graph_html, plan_html, view_html
from .progress import progress


class Picture:
    """Something Jupyter displays as HTML (what :func:`show` returns)."""

    def __init__(self, html: str) -> None:
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


def show(*targets: Any) -> Picture:
    """The plan picture of a plan (``sl.explain(...)``) or of lazy arrays (planned if possible)."""
    if len(targets) == 1 and hasattr(targets[0], "kernels"):
        return Picture(plan_html(targets[0]))
    return Picture(graph_html(*targets))


def __getattr__(name: str) -> Any:
    if name in ("PlanExplorer", "RegistryBrowser"):
        from . import widgets

        return getattr(widgets, name)
    raise AttributeError(f"module 'stitchlab.notebook' has no attribute {name!r}")


__all__ = [
    "PlanExplorer", "PlanView", "Picture", "RegistryBrowser", "array_html", "clear_plan_overrides",
    "graph_html", "graph_view", "on_override_change", "plan_html", "plan_override", "plan_view",
    "progress", "set_plan_override", "show", "view_html",
]
