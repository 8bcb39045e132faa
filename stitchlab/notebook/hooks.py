"""Plan overrides: the user's choice of a candidate plan, honoured by the compiler.

The plan explorer (:class:`stitchlab.notebook.PlanExplorer`) lets a user pick one of the beam
search's candidate plans for a graph. The choice is stored here, keyed by the graph's
structural key (``plan.key`` / ``Graph.key``), and the compiler asks for it when it plans::

    from stitchlab.notebook.hooks import plan_override

    candidates = beam_search(graph)                 # the greedy plan is always among them
    choice = plan_override(graph.key)               # None, or an index into candidates
    plan = candidates[choice] if choice is not None and choice < len(candidates) else best

Because a cached plan may exist for the key already, the compiler should either look the
override up on every evaluation of a cached plan (one dict lookup), or register a listener
with :func:`on_override_change` that drops the cached plan of that key.

This module imports nothing beyond the standard library, so the compiler may import it freely.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_lock = threading.Lock()
_overrides: dict[str, int] = {}
_listeners: list[Callable[[str, int | None], None]] = []


def plan_override(graph_key: str) -> int | None:
    """Return the candidate index the user chose for ``graph_key``, or None (use the best)."""
    with _lock:
        return _overrides.get(graph_key)


def set_plan_override(graph_key: str, candidate: int | None) -> None:
    """Use candidate ``candidate`` (its index in ``plan.candidates``) for ``graph_key``.

    Args:
        graph_key: the graph's structural key.
        candidate: a candidate index, or None to go back to the planner's choice.

    Raises:
        ValueError: if ``graph_key`` is empty or ``candidate`` is negative.
    """
    if not isinstance(graph_key, str) or not graph_key:
        raise ValueError(f"graph_key {graph_key!r} must be a non-empty str (plan.key)")
    if candidate is not None and (isinstance(candidate, bool) or not isinstance(candidate, int) or candidate < 0):
        raise ValueError(f"candidate {candidate!r} must be a non-negative int index into plan.candidates, or None")
    with _lock:
        if candidate is None:
            _overrides.pop(graph_key, None)
        else:
            _overrides[graph_key] = candidate
        listeners = list(_listeners)
    for listener in listeners:
        listener(graph_key, candidate)


def clear_plan_overrides() -> None:
    """Forget every override (each listener hears ``(key, None)`` for each key)."""
    with _lock:
        keys = list(_overrides)
        _overrides.clear()
        listeners = list(_listeners)
    for key in keys:
        for listener in listeners:
            listener(key, None)


def plan_overrides() -> dict[str, int]:
    """A copy of every override, graph key -> candidate index."""
    with _lock:
        return dict(_overrides)


def on_override_change(listener: Callable[[str, int | None], None]) -> Callable[[], None]:
    """Call ``listener(graph_key, candidate_or_None)`` after each change; return an unsubscribe function."""
    with _lock:
        _listeners.append(listener)

    def unsubscribe() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return unsubscribe
