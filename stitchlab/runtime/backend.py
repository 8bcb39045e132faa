"""Backends: where arrays live and how a canonical graph is evaluated there.

A backend turns a :class:`~stitchlab.ir.graph.Graph` into an *executable* — a callable from the
input buffers (in slot order) to the output buffers — and caches it by the graph's structural key,
so evaluating the same structure again plans nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ..ir.graph import Graph
from . import stats

Executable = Callable[[Sequence[Any]], list[Any]]


class PerCall:
    """An input of a traced graph (``sl.jit``) whose buffer is made anew for every call:
    ``make()`` returns it (a random draw's position in its stream). It stands in a trace's
    binding where a captured buffer would."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class Backend:
    """Base class of the numpy and cupy backends."""

    name: str = ""
    #: how many planned graphs each backend keeps in memory
    cache_size: int = 512

    def __init__(self) -> None:
        self._executables: OrderedDict[str, Executable] = OrderedDict()
        self._lock = threading.Lock()

    # --- arrays --------------------------------------------------------------------------------
    def device(self) -> str:
        """The device new arrays of this backend are created on."""
        raise NotImplementedError

    def owns(self, obj: Any) -> bool:
        """True if ``obj`` is a buffer of this backend."""
        raise NotImplementedError

    def from_object(self, obj: Any, dtype: Any = None, copy: bool = False) -> Any:
        """Convert an array-like to a buffer of this backend."""
        raise NotImplementedError

    def to_numpy(self, buf: Any) -> Any:
        raise NotImplementedError

    # --- evaluation ------------------------------------------------------------------------------
    def plan(self, graph: Graph) -> Executable:
        """Build the executable of ``graph`` (no caching here)."""
        raise NotImplementedError

    def executable(self, graph: Graph) -> Executable:
        """The cached executable of ``graph``'s structure, planned on first use. Safe between
        threads: a lookup takes no lock, additions and evictions (least recently used) do."""
        exe = self._executables.get(graph.key)
        if exe is not None:
            try:
                self._executables.move_to_end(graph.key)
            except KeyError:  # another thread evicted it after the lookup: it still runs
                pass
            stats.bump("plan_cache_hits")
            return exe
        exe = self.plan(graph)
        stats.bump("plans")
        with self._lock:
            self._executables[graph.key] = exe
            while len(self._executables) > self.cache_size:
                self._executables.popitem(last=False)
        return exe

    def clear_cache(self) -> None:
        self._executables.clear()
