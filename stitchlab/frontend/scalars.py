"""Python scalar arguments of an :func:`~stitchlab.jit` function read when it runs.

Once an ``int`` or ``float`` argument has changed value between calls, the function is traced
with a :class:`TracedScalar` in its place: Python arithmetic on it records how each derived
number is computed from the arguments (``1 - 0.9 ** t``), and where one meets an array it becomes
a 0-d input of the graph (:meth:`TracedScalar.node`), of the dtype NumPy's weak-scalar rules give
it there. Each call computes those numbers from its own arguments, with Python's arithmetic, and
converts each to its dtype as NumPy converts a Python scalar, so the result is the one a trace
with the literal values would give (but that a divisor read at run time divides exactly, where a
literal one is a multiply by its reciprocal).

A NumPy scalar argument is read at run time from the first call (:meth:`Recorder.numpy_scalar`):
a 0-d input of its own dtype, as NumPy's scalars are not weak.

Anything that needs the value while tracing (``bool()``, ``int()``, a shape or an index, a
comparison in Python, an exponent, which NumPy computes by value) raises :class:`ValueNeeded`;
the function is then traced once per value of that argument, as before.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir.node import Node


class ValueNeeded(Exception):
    """Tracing needed the value of a scalar argument that is read at run time."""


class Recorder:
    """What one trace reads at run time: its 0-d inputs in the order made, each ``(node, fn,
    kind, dtype)`` (``fn(args)`` computes the number from the call's arguments, which must then
    be a ``kind``; the input is of ``dtype``), and the argument positions whose value tracing
    needed."""

    __slots__ = ("inputs", "needed")

    def __init__(self) -> None:
        self.inputs: list[tuple[Node, Callable[[tuple[Any, ...]], Any], type, np.dtype]] = []
        self.needed: set[int] = set()

    def numpy_scalar(self, position: int, dtype: np.dtype) -> Node:
        """The 0-d input of ``dtype`` holding the NumPy scalar argument at ``position`` (an array
        argument of its own dtype, as NumPy's scalars are, read at run time from each call's)."""
        node = Node("input", (), (), dtype)
        self.inputs.append((node, operator.itemgetter(position), dtype.type, dtype))
        return node


def _operand(x: Any) -> tuple[Callable[[tuple[Any, ...]], Any], frozenset[int], type] | None:
    """(computation, argument positions, kind) of an operand of scalar arithmetic; None: not one."""
    if isinstance(x, TracedScalar):
        return x.fn, x.positions, x.kind
    if type(x) in (int, float, bool):
        return (lambda args: x), frozenset(), float if type(x) is float else int
    return None


def _is_array(x: Any) -> bool:
    """Whether ``x`` is a stitchlab array (its reflected operation then takes the number)."""
    return hasattr(x, "_node")


def _arith(op: Callable[[Any, Any], Any], true_division: bool = False) -> tuple[Any, Any]:
    def make(a: TracedScalar, b: Any, swap: bool) -> Any:
        other = _operand(b)
        if other is None:
            return NotImplemented if _is_array(b) else a._need(f"{op.__name__} with {type(b).__name__}")
        f, positions, kind = other
        if isinstance(b, TracedScalar) and b.recorder is not a.recorder:
            a._need("arithmetic with a scalar of another trace")
        left, right = (f, a.fn) if swap else (a.fn, f)
        made = TracedFloat if true_division or float in (kind, a.kind) else TracedInt
        return made(lambda args: op(left(args), right(args)), a.positions | positions, a.recorder)

    return (lambda a, b: make(a, b, False)), (lambda a, b: make(a, b, True))


def _needs(what: str) -> Any:
    """A method that raises :class:`ValueNeeded` saying ``what`` needed the value."""
    def method(self: TracedScalar, *args: Any, **kwargs: Any) -> Any:
        return self._need(what)

    return method


class TracedScalar:
    """A Python ``int`` or ``float`` computed from arguments of the function being traced."""

    __slots__ = ("fn", "positions", "recorder", "_nodes")
    kind: type = float
    __array_ufunc__ = None  # NumPy defers: np.float32(2) * s calls s.__rmul__, which refuses
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, fn: Callable[[tuple[Any, ...]], Any], positions: frozenset[int], recorder: Recorder) -> None:
        self.fn = fn
        self.positions = positions
        self.recorder = recorder
        self._nodes: dict[np.dtype, Node] = {}

    def node(self, dtype: np.dtype) -> Node:
        """The 0-d input holding this number converted to ``dtype`` at each call."""
        made = self._nodes.get(dtype)
        if made is None:
            made = self._nodes[dtype] = Node("input", (), (), dtype)
            self.recorder.inputs.append((made, self.fn, self.kind, dtype))
        return made

    def _need(self, what: str) -> Any:
        self.recorder.needed |= self.positions
        raise ValueNeeded(f"{what} needs the value of argument {sorted(self.positions)} while tracing")

    def __repr__(self) -> str:
        return f"<traced {self.kind.__name__} argument {sorted(self.positions)}>"

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        """The Python type it stands for: ``isinstance(s, int)``, ``isinstance(s, numbers.Number)``
        and ``np.isscalar(s)`` answer as for the number (``type(s)`` still tells it apart)."""
        return self.kind

    # what needs the value itself
    __bool__ = _needs("bool()")
    __int__ = _needs("int()")
    __float__ = _needs("float()")
    __complex__ = _needs("complex()")
    __index__ = _needs("an index or a shape")
    __round__ = _needs("round()")
    __trunc__ = _needs("math.trunc()")
    __floor__ = _needs("math.floor()")
    __ceil__ = _needs("math.ceil()")
    __array__ = _needs("a NumPy array")

    def _compare(self, other: Any) -> Any:
        return NotImplemented if _is_array(other) else self._need("a comparison")

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _compare  # type: ignore[assignment]

    __add__, __radd__ = _arith(operator.add)
    __sub__, __rsub__ = _arith(operator.sub)
    __mul__, __rmul__ = _arith(operator.mul)
    __truediv__, __rtruediv__ = _arith(operator.truediv, true_division=True)
    __floordiv__, __rfloordiv__ = _arith(operator.floordiv)
    __mod__, __rmod__ = _arith(operator.mod)
    # int ** int is a float for a negative exponent: the kind recorded is checked at each call
    __pow__, __rpow__ = _arith(operator.pow)

    def _unary(self, op: Callable[[Any], Any]) -> TracedScalar:
        g = self.fn
        return type(self)(lambda args: op(g(args)), self.positions, self.recorder)

    def __neg__(self) -> TracedScalar:
        return self._unary(operator.neg)

    def __pos__(self) -> TracedScalar:
        return self._unary(operator.pos)

    def __abs__(self) -> TracedScalar:
        return self._unary(operator.abs)


class TracedInt(TracedScalar):
    __slots__ = ()
    kind = int


class TracedFloat(TracedScalar):
    __slots__ = ()
    kind = float


def argument(position: int, kind: type, recorder: Recorder) -> TracedScalar:
    """The traced scalar standing for argument ``position`` (a Python ``kind``)."""
    return (TracedFloat if kind is float else TracedInt)(operator.itemgetter(position), frozenset((position,)), recorder)
