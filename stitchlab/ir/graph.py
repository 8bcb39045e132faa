"""Canonical form of an expression graph and its structural hash.

:func:`build_graph` takes the nodes to evaluate and returns a :class:`Graph`:

* common subexpressions merged (two nodes with the same op, attributes and canonical inputs are
  one node; inputs that hold the same buffer are one input; equal constants are one constant);
* inputs of commutative ops sorted by their structural hash, so ``a + b`` and ``b + a`` agree;
* nodes in a deterministic topological order, input leaves numbered by first use ("slots");
* ``key``: a SHA-256 over that listing, with leaves named by slot, shape and dtype — the same for
  the same computation in any process (no ``id()``, no ``hash()`` of strings).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .node import Node
from .ops import OPS


@dataclass(eq=False)
class Graph:
    """A canonical expression graph.

    Attributes:
        nodes: every node once, inputs before their users.
        inputs: the ``input`` leaves in slot order.
        outputs: the canonical node of each requested output (may repeat).
        key: structural hash (hex), stable across processes.
        template: a hash of the structure without the values of the ``const`` leaves (and
            without which inputs are the same buffer): graphs that differ only in their scalar
            constants (``x * 0.5`` and ``x * 0.25``) share it.
        constants: the values of the caller's ``const`` leaves, in the order of their first use
            (what differs between the graphs of one template).
    """

    nodes: tuple[Node, ...]
    inputs: tuple[Node, ...]
    outputs: tuple[Node, ...]
    key: str
    template: str = ""
    constants: tuple[Any, ...] = ()
    _index: dict[int, int] = field(default_factory=dict, repr=False)

    def index(self, node: Node) -> int:
        """Position of ``node`` in :attr:`nodes`."""
        if not self._index:
            self._index.update((id(n), i) for i, n in enumerate(self.nodes))
        return self._index[id(node)]

    def consumers(self) -> dict[int, list[Node]]:
        """Map ``id(node)`` to the nodes that use it (once per use)."""
        users: dict[int, list[Node]] = {id(n): [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                users[id(i)].append(n)
        return users

    def __len__(self) -> int:
        return len(self.nodes)


def postorder(roots: Sequence[Node]) -> list[Node]:
    """Unique nodes reachable from ``roots``, inputs first, each input in order before its user
    (iterative: deep chains are fine). The walk of :func:`_order_and_fingerprint`."""
    return _order_and_fingerprint(roots)[0]


def _digest(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _leaf_key(node: Node) -> tuple[Any, ...]:
    if node.op == "input":
        ident = id(node.value) if node.value is not None else ("placeholder", node.serial)
        return ("input", ident, node.shape, node.dtype.str)
    return (node.op, node.dtype.str, node.shape, repr(node.attrs))


# Graphs built before, by fingerprint (see _order_and_fingerprint): an expression evaluated again (the same
# eager code in a loop or a notebook cell run twice) skips the canonicalization and its hashing.
# Reads take no lock (a dict lookup is atomic); additions and evictions (the oldest first) do.
_MEMO_SIZE = 512
_memo: dict[tuple[Any, ...], tuple[Graph, tuple[int, ...]]] = {}
_memo_lock = threading.Lock()


def _leaf_part(node: Node, k: int, buffers: dict[tuple[Any, ...], int]) -> tuple[Any, ...]:
    """A leaf's part of a fingerprint (:func:`_order_and_fingerprint`; ``k``: its position)."""
    if node.op == "input":
        return (node.dtype, node.shape, node.device, buffers.setdefault(_leaf_key(node), k))
    part = node.leaf_part
    if part is None:
        part = node.leaf_part = (node.op, node.dtype, node.shape, repr(node.attrs), node.device)
    return part


def _order_and_fingerprint(outputs: Sequence[Node]) -> tuple[list[Node], tuple[Any, ...]]:
    """The postorder of ``outputs`` (:func:`postorder`) and, in the same walk, its fingerprint:
    everything :func:`build_graph` reads from those nodes, with inputs named by position and
    leaves holding the same buffer by the position of the first of them. Equal fingerprints give
    the same canonical graph. Constants and other leaves are compared by the ``repr`` of their
    attributes, as the canonical graph tells them apart (``0.0`` and ``-0.0``, ``1`` and ``True``
    are equal Python values). (One walk, not two: this runs at every eager evaluation.)"""
    pos: dict[Node, int] = {}  # (nodes hash by identity); -1 while a node's inputs are walked
    order: list[Node] = []
    parts: list[tuple[Any, ...]] = []
    buffers: dict[tuple[Any, ...], int] = {}
    emit, add = order.append, parts.append
    for root in outputs:
        if root in pos:
            continue
        if not root.inputs:
            pos[root] = len(order)
            add(_leaf_part(root, len(order), buffers))
            emit(root)
            continue
        pos[root] = -1
        stack = [(root, iter(root.inputs))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child in pos:
                    continue
                if child.inputs:
                    pos[child] = -1
                    stack.append((child, iter(child.inputs)))
                    break
                k = pos[child] = len(order)  # a leaf goes straight into the order
                add(_leaf_part(child, k, buffers))
                emit(child)
            else:
                stack.pop()
                ins = node.inputs
                pos[node] = len(order)
                add((node.op, node.dtype, node.shape, node.attrs, node.device,
                     (pos[ins[0]],) if len(ins) == 1 else tuple([pos[i] for i in ins])))
                emit(node)
    return order, (tuple(parts), tuple([pos[o] for o in outputs]))


def build_graph(outputs: Sequence[Node]) -> tuple[Graph, tuple[Node, ...]]:
    """Canonicalize the graph that computes ``outputs``.

    The graph is made of fresh nodes (so evaluating, which materializes the caller's nodes, never
    changes a graph a backend has cached) and its inputs hold no buffers. A graph is never changed
    once built, so the same expression built again returns the same :class:`Graph` object.

    Returns:
        ``(graph, sources)``: ``sources[k]`` is the caller's leaf node bound to input slot ``k``
        (it holds the buffer, or is a tracing placeholder).
    """
    order, fingerprint = _order_and_fingerprint(outputs)
    hit = _memo.get(fingerprint)
    if hit is not None:
        graph, slots = hit
        return graph, tuple([order[k] for k in slots])
    graph, sources = _canonicalize(order, outputs)
    lift = _read_at_run_time.get(graph.template)
    if lift:  # constants that changed from graph to graph of this template: inputs instead
        graph, sources = _canonicalize(order, outputs, lift)
    at = {id(n): k for k, n in enumerate(order)}
    with _memo_lock:
        _memo[fingerprint] = (graph, tuple(at[id(s)] for s in sources))
        while len(_memo) > _MEMO_SIZE:
            del _memo[next(iter(_memo))]
    return graph, sources


# Templates whose graphs read some of their constants at run time: template -> the positions of
# those constants among the ``const`` leaves in first-use order (Graph.constants), set by
# read_constants_at_run_time.
_read_at_run_time: dict[str, frozenset[int]] = {}

#: ops that give the same bits whether an operand is a literal of the kernel or a value read at
#: run time (the code generator specializes no other use of a constant's value for these)
_VALUE_BLIND = frozenset({"add", "subtract", "multiply", "maximum", "minimum", "fmax", "fmin", "equal", "not_equal",
                          "less", "less_equal", "greater", "greater_equal", "where"})
#: constants that may be read at run time: floats of the three IEEE widths (a bfloat16 or float16
#: literal is written through its bits) and integers (signed and unsigned, every width: integer
#: sums, products and compares wrap and compare alike for a literal and a value read)
_LIFTABLE_DTYPES = frozenset({np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)}
                             | {np.dtype(f"{k}int{b}") for k in ("", "u") for b in (8, 16, 32, 64)})


def read_constants_at_run_time(template: str, positions: Iterable[int]) -> None:
    """From now on, build the graphs of ``template`` with the constants at ``positions`` (indices
    into :attr:`Graph.constants`) as 0-d inputs: new values then share one graph key, one plan
    and one set of kernels. Only float16/32/64 and integer constants used by value-blind ops (``_VALUE_BLIND``,
    through broadcasts and reshapes) are read so; the others stay literals. Their source nodes
    are the ``const`` nodes themselves: the runtime makes a 0-d buffer of the value."""
    _read_at_run_time[template] = frozenset(positions)


def _value_blind_uses(order: Sequence[Node]) -> set[int]:
    """ids of the nodes every use of which (through broadcasts and reshapes) is a value-blind op."""
    users: dict[int, list[Node]] = {}
    for n in order:
        for i in n.inputs:
            users.setdefault(id(i), []).append(n)
    blind: set[int] = set()
    for n in reversed(order):  # users before what they use
        uses = users.get(id(n), [])
        if uses and all(u.op in _VALUE_BLIND or (u.op in ("broadcast", "reshape") and id(u) in blind) for u in uses):
            blind.add(id(n))
    return blind


def _canonicalize(order: Sequence[Node], outputs: Sequence[Node],
                  lift: frozenset[int] = frozenset()) -> tuple[Graph, tuple[Node, ...]]:
    canon: dict[int, Node] = {}  # id(original) -> canonical node
    shape_hash: dict[int, str] = {}  # id(canonical) -> hash of structure without leaf identity
    template: dict[int, str] = {}  # id(canonical) -> the same without the constants' values
    table: dict[tuple[Any, ...], Node] = {}
    source_of: dict[int, Node] = {}  # id(canonical input) -> original leaf
    constants: list[Any] = []
    blind = _value_blind_uses(order) if lift else set()

    for node in order:
        if node.is_leaf:
            key = _leaf_key(node)
            if node.op == "const":
                # (a count divisor's constant has count_ddof besides its value: the kernel divides
                # by the runtime extent there, and it stays as it is)
                if (len(constants) in lift and id(node) in blind and node.dtype in _LIFTABLE_DTYPES
                        and len(node.attrs) == 1):
                    key = ("read at run time", len(constants))
                constants.append(node.attr("value"))
            c = table.get(key)
            if c is None:
                if key[0] == "read at run time":
                    c = table[key] = Node("input", (), node.shape, node.dtype, device=node.device)
                    source_of[id(c)] = node
                    leaf: tuple[Any, ...] = key + (node.shape, node.dtype.str)
                else:
                    c = table[key] = Node(node.op, (), node.shape, node.dtype, node.attrs, device=node.device)
                    if node.op == "input":
                        source_of[id(c)] = node
                        leaf = ("input", node.shape, node.dtype.str)
                    else:
                        leaf = key
                shape_hash[id(c)] = _digest(*leaf)
                template[id(c)] = _digest(*(leaf if node.op != "const" else leaf[:3]))
            canon[id(node)] = c
            continue
        ins = [canon[id(i)] for i in node.inputs]
        if OPS[node.op].commutative:
            ins.sort(key=lambda n: (shape_hash[id(n)], n.serial))
        key = (node.op, node.dtype.str, node.shape, node.attrs, tuple(id(i) for i in ins))
        c = table.get(key)
        if c is None:
            c = table[key] = Node(node.op, tuple(ins), node.shape, node.dtype, node.attrs, device=node.device)
            shape_hash[id(c)] = _digest(
                node.op, node.dtype.str, node.shape, node.attrs, [shape_hash[id(i)] for i in ins]
            )
            parts = [template[id(i)] for i in ins]
            template[id(c)] = _digest(node.op, node.dtype.str, node.shape, node.attrs,
                                      sorted(parts) if OPS[node.op].commutative else parts)
        canon[id(node)] = c

    outs = tuple(canon[id(o)] for o in outputs)
    nodes = postorder(outs)
    inputs = tuple(n for n in nodes if n.op == "input")
    slot = {id(n): k for k, n in enumerate(inputs)}
    pos = {id(n): k for k, n in enumerate(nodes)}
    h = hashlib.sha256()
    for n in nodes:
        if n.op == "input":
            h.update(f"in{slot[id(n)]} {n.dtype.str} {n.shape}\n".encode())
        else:
            args = [pos[id(i)] for i in n.inputs]
            h.update(f"{n.op} {n.dtype.str} {n.shape} {n.attrs!r} {args}\n".encode())
    h.update(repr([pos[id(o)] for o in outs]).encode())
    sources = tuple(source_of[id(n)] for n in inputs)
    graph = Graph(tuple(nodes), inputs, outs, h.hexdigest(), _digest(*[template[id(o)] for o in outs]), tuple(constants))
    return graph, sources
