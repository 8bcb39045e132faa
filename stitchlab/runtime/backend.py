"""Backends: where arrays live and how a canonical graph is evaluated there.

A backend turns a :class:`~stitchlab.ir.graph.Graph` into an *executable* — a callable from the
input buffers (in slot order) to the output buffers — and caches it by the graph's structural key,
so evaluating the same structure again plans nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ..ir.graph import Graph, read_constants_at_run_time
from . import stats

Executable = Callable[[Sequence[Any]], list[Any]]


class PerCall:
    """An input of a traced graph (``sl.jit``) whose buffer is made anew for every call:
    ``make()`` returns it (a random draw's position in its stream). It stands in a trace's
    binding where a captured buffer would."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


#: After planning this many graphs that differ only in their scalar constants, a backend that
#: compiles kernels reads the constants that changed at run time from then on, where it can, and
#: says so once (:class:`ConstantsWarning`).
CONSTANT_VARIANTS_WARN = 8


class ConstantsWarning(UserWarning):
    """The same expression was compiled again and again for new values of its Python scalars."""


class Backend:
    """Base class of the numpy and cupy backends."""

    name: str = ""
    #: how many planned graphs each backend keeps in memory
    cache_size: int = 512
    #: whether planning a graph compiles kernels (then plans that differ only in constants warn)
    compiles_kernels: bool = False

    def __init__(self) -> None:
        self._executables: OrderedDict[str, Executable] = OrderedDict()
        self._lock = threading.Lock()
        # graph template -> (keys planned for it, the first graph's constants, the positions of
        # constants that changed since), the most recent templates; None once it has warned
        self._variants: OrderedDict[str, tuple[set[str], tuple[Any, ...], set[int]] | None] = OrderedDict()

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
        if self.compiles_kernels and graph.template and graph.template != graph.key:
            self._note_constants(graph)
        return exe

    def _note_constants(self, graph: Graph) -> None:
        """Count the plans of ``graph``'s template (one per set of constant values). When they
        reach :data:`CONSTANT_VARIANTS_WARN`, the constants that changed are read at run time
        from then on (where that gives the same bits, ``read_constants_at_run_time``) and the
        user is told once."""
        with self._lock:
            seen = self._variants.get(graph.template, ())
            if seen is None:
                return
            if not seen:
                seen = self._variants[graph.template] = (set(), graph.constants, set())
            self._variants.move_to_end(graph.template)
            while len(self._variants) > self.cache_size:
                self._variants.popitem(last=False)
            keys, first, changed = seen
            keys.add(graph.key)
            if len(first) == len(graph.constants):
                changed.update(k for k, (a, b) in enumerate(zip(first, graph.constants, strict=True)) if repr(a) != repr(b))
            if len(keys) < CONSTANT_VARIANTS_WARN:
                return
            self._variants[graph.template] = None
        read_constants_at_run_time(graph.template, changed)
        values = ", ".join(str(n.dtype.type(n.attr("value"))) for n in graph.nodes if n.op == "const")
        warnings.warn(
            f"stitchlab planned and compiled one expression for {len(keys)} sets of scalar constants "
            f"(now {values}): a Python number is a constant of the kernel. From now on, the float and integer "
            "constants of this expression that changed and that are only added, subtracted, multiplied or "
            "compared (t in x * t + 1, k in labels == k) are read when the kernel runs, so their new values "
            "compile nothing; other changing numbers (divisors, exponents) still compile new kernels. Pass a value that "
            "changes between evaluations as a NumPy scalar of the array's dtype or a 0-d array "
            "(x * np.float32(t), sl.asarray(t)): it is then an input from the start. (An sl.jit function "
            "reads its int and float arguments at run time once their value changes.)",
            ConstantsWarning, stacklevel=_user_level())

    def constant(self, node: Any) -> Any:
        """A 0-d buffer holding the value of the ``const`` node ``node`` (a constant that the
        graph reads at run time, ``stitchlab.ir.graph.read_constants_at_run_time``)."""
        return self.scalar(node.attr("value"), node.dtype)

    def scalar(self, value: Any, dtype: Any) -> Any:
        """A 0-d buffer of ``dtype`` holding ``value`` (a Python number of that dtype's values)."""
        raise NotImplementedError

    def numbers(self, dtypes: Sequence[Any], shared: bool = True) -> Callable[[Sequence[Any]], tuple[tuple[Any, ...], bool]]:
        """For the numbers an ``sl.jit`` call reads at run time, of ``dtypes``: a function that
        takes one call's numbers (converted to their dtypes' values) and gives their 0-d buffers,
        and whether those are the call's own (to be kept as long as its outputs). ``shared``:
        the buffers may be ones that every call rewrites (none of them is returned); here, as
        where it is False, each call's are new."""
        return lambda values: (tuple(self.scalar(v, dt) for v, dt in zip(values, dtypes, strict=True)), False)

    def clear_cache(self) -> None:
        self._executables.clear()


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_level() -> int:
    """``stacklevel`` for a warning raised here that names the first caller outside stitchlab
    (the line of the user's code that asked for the evaluation)."""
    level, frame = 2, sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level
