"""Nodes of the expression graph."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .ops import OPS, Kind

Shape = tuple[int, ...]
Attrs = tuple[tuple[str, Any], ...]

_ids = itertools.count()


class Node:
    """One operation in the expression graph.

    A node is immutable while it is part of a graph being built. Once evaluated, the front end
    calls :meth:`materialize`, which turns it into an ``input`` leaf that holds its buffer (and
    drops its inputs so they can be freed), so later graphs read the value instead of recomputing.

    Attributes:
        op: op name, a key of :data:`stitchlab.ir.ops.OPS`.
        inputs: input nodes.
        shape: static shape.
        dtype: NumPy dtype of the result.
        attrs: sorted ``(name, value)`` pairs: axes, shapes, scalar values.
        value: the buffer of an ``input`` node (None for a tracing placeholder).
        device: ``"cpu"``, ``"cuda:N"``, or None for constants (compatible with any device).
        serial: creation counter; breaks ties so that ordering never depends on ``id()``.
        leaf_part: a constant's (any leaf but an input's) part of graph fingerprints
            (``stitchlab.ir.graph``), made when first needed: its attributes' ``repr`` is the
            costly part, and a Python scalar's constant is shared between expressions.
    """

    __slots__ = ("op", "inputs", "shape", "dtype", "attrs", "value", "device", "serial", "leaf_part",
                 "__weakref__")

    def __init__(
        self,
        op: str,
        inputs: tuple[Node, ...],
        shape: Shape,
        dtype: np.dtype,
        attrs: Attrs = (),
        *,
        value: Any = None,
        device: str | None = None,
    ) -> None:
        self.op = op
        self.inputs = inputs
        self.shape = shape
        self.dtype = dtype
        self.attrs = attrs
        self.value = value
        self.device = device
        self.serial = next(_ids)
        self.leaf_part: tuple[Any, ...] | None = None

    @property
    def kind(self) -> Kind:
        return OPS[self.op].kind

    def attr(self, name: str, default: Any = None) -> Any:
        for key, val in self.attrs:
            if key == name:
                return val
        return default

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def is_leaf(self) -> bool:
        return not self.inputs

    def materialize(self, value: Any) -> None:
        """Turn this node into an ``input`` leaf holding ``value``."""
        self.op = "input"
        self.inputs = ()
        self.attrs = ()
        self.value = value
        self.leaf_part = None

    def __repr__(self) -> str:
        attrs = "".join(f", {k}={v!r}" for k, v in self.attrs)
        return f"Node({self.op}, shape={self.shape}, dtype={self.dtype}{attrs})"


def make_attrs(**kw: Any) -> Attrs:
    """Attributes as a sorted tuple of pairs (hashable, order-independent)."""
    return tuple(sorted(kw.items())) if len(kw) > 1 else tuple(kw.items())
