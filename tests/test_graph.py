"""Canonical form and structural hash of the IR."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import stitchlab as sl
from stitchlab.ir import OPS, Kind, build_graph


def graph_of(*arrays):
    return build_graph([a._node for a in arrays])[0]


def test_common_subexpressions_are_merged():
    a = np.ones((4, 8), np.float32)
    x, y = sl.asarray(a), sl.asarray(a)  # the same buffer twice is one input
    g = graph_of(sl.exp(x) + sl.exp(y))
    assert [n.op for n in g.nodes].count("exp") == 1
    assert len(g.inputs) == 1


def test_commutative_operands_do_not_change_the_key():
    a, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    x, y = sl.asarray(a), sl.asarray(b)
    assert graph_of(x * 2 + y).key == graph_of(y + 2 * x).key
    assert graph_of(x * y + 1).key == graph_of(1 + y * x).key
    # maximum is not: of -0.0 and +0.0 NumPy returns one by position (tests/test_signed_zero_and_casts.py)
    assert graph_of(sl.maximum(sl.exp(x), y)).key != graph_of(sl.maximum(y, sl.exp(x))).key
    assert graph_of(sl.exp(x) - y).key != graph_of(x - sl.exp(y)).key  # subtract is not commutative


def test_key_depends_on_shape_dtype_and_structure_not_on_values():
    a = np.ones((4, 8), np.float32)
    k1 = graph_of(sl.exp(sl.asarray(a))).key
    assert graph_of(sl.exp(sl.asarray(a * 3))).key == k1
    assert graph_of(sl.exp(sl.asarray(a.astype(np.float64)))).key != k1
    assert graph_of(sl.exp(sl.asarray(a[:2]))).key != k1
    assert graph_of(sl.log(sl.asarray(a))).key != k1
    assert graph_of(sl.asarray(a) + 1).key != graph_of(sl.asarray(a) + 2).key


def test_graph_is_topologically_ordered_and_buffer_free():
    x = sl.asarray(np.ones((2, 3), np.float32))
    g = graph_of(sl.exp(x - x.max(axis=-1, keepdims=True)))
    seen = set()
    for n in g.nodes:
        assert all(id(i) in seen for i in n.inputs)
        seen.add(id(n))
    assert all(n.value is None for n in g.inputs)


def test_materializing_does_not_change_a_built_graph():
    x = sl.asarray(np.ones(3, np.float32))
    y = sl.exp(x)
    g, _ = build_graph([y._node])
    ops_before = [n.op for n in g.nodes]
    y.get()
    assert [n.op for n in g.nodes] == ops_before


SCRIPT = """
import numpy as np, stitchlab as sl
from stitchlab.ir import build_graph
x = sl.asarray(np.ones((8, 16), np.float32)); w = sl.asarray(np.ones(16, np.float32))
mu = x.mean(axis=-1, keepdims=True)
y = (x - mu) * sl.rsqrt(x.var(axis=-1, keepdims=True) + 1e-5) * w
print(build_graph([y._node, mu._node])[0].key)
"""


def test_structural_key_is_stable_across_processes_and_hash_seeds():
    keys = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        keys.add(out.stdout.strip())
    assert len(keys) == 1 and len(keys.pop()) == 64


def test_every_op_has_a_kind_and_elementwise_ops_a_cuda_expression():
    for op in OPS.values():
        assert isinstance(op.kind, Kind)
        if op.kind is Kind.ELEMENTWISE:
            for kind in "fiub":
                assert op.cuda_expr(kind)


def test_broadcasting_is_explicit_in_the_graph():
    x = sl.asarray(np.ones((4, 8), np.float32))
    g = graph_of(x - x.max(axis=-1, keepdims=True))
    ops = [n.op for n in g.nodes]
    assert "max" in ops and "broadcast" in ops
    sub = next(n for n in g.nodes if n.op == "subtract")
    assert all(i.shape == (4, 8) for i in sub.inputs)


def test_the_same_expression_built_again_reuses_its_graph():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    x, y = sl.asarray(a), sl.asarray(b)
    g1, s1 = build_graph([(x * 2 + y)._node])
    g2, s2 = build_graph([(y * 2 + x)._node])  # other buffers in the same places
    assert g2 is g1
    swap = {id(x._node): y._node, id(y._node): x._node}
    assert sorted(map(id, s1)) == sorted([id(x._node), id(y._node)])
    assert [id(s) for s in s2] == [id(swap[id(s)]) for s in s1]
    np.testing.assert_array_equal(y * 2 + x, b * 2 + a)


def test_a_reused_graph_tells_apart_what_the_canonical_form_tells_apart():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    x, y = sl.asarray(a), sl.asarray(b)
    # the same buffer twice is one input, two buffers are two
    assert len(graph_of(x + x).inputs) == 1
    assert len(graph_of(x + y).inputs) == 2
    assert len(graph_of(y + y).inputs) == 1
    assert len(graph_of(sl.asarray(b) + sl.asarray(b)).inputs) == 1  # two leaves, one buffer
    # equal Python values that are different constants: 0.0 and -0.0
    assert graph_of(x * 0.0).key != graph_of(x * -0.0).key
    np.testing.assert_array_equal(np.signbit(np.asarray(-x * 0.0)), np.signbit(-a * 0.0))
    np.testing.assert_array_equal(np.signbit(np.asarray(-x * -0.0)), np.signbit(-a * -0.0))
    # the same nodes (one postorder) requested in another order
    u = x + 1
    v = u * 2
    assert graph_of(u, v).key != graph_of(v, u).key
    r1, r2 = sl.compute(u * 2, u)
    np.testing.assert_array_equal(r1, (a + 1) * 2)
    np.testing.assert_array_equal(r2, a + 1)


def test_the_reused_graphs_are_bounded_and_safe_between_threads():
    import threading

    from stitchlab.ir import graph as graph_module

    a = np.arange(12.0).reshape(3, 4)
    x = sl.asarray(a)
    for k in range(graph_module._MEMO_SIZE + 40):  # distinct constants: distinct graphs
        graph_of(x + float(k))
    assert len(graph_module._memo) <= graph_module._MEMO_SIZE
    np.testing.assert_array_equal(x + 0.0, a)  # evicted long ago: built again

    failures = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(60):
            b = rng.random((3, 4))
            k = float(rng.integers(0, 700))
            try:
                np.testing.assert_allclose(sl.asarray(b) * 2.0 + k, b * 2.0 + k)
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                failures.append(repr(exc))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]


def test_an_executable_evicted_by_another_thread_after_its_lookup_still_runs(monkeypatch):
    from collections import OrderedDict

    from stitchlab import runtime

    class EvictedAfterLookup(OrderedDict):
        def get(self, key, default=None):  # as if another thread evicted the entry just after
            found = super().get(key, default)
            self.pop(key, None)
            return found

    backend = runtime.current()
    a = np.arange(6.0)
    np.testing.assert_array_equal(sl.asarray(a) * 3.5 - 1, a * 3.5 - 1)  # planned and cached
    monkeypatch.setattr(backend, "_executables", EvictedAfterLookup(backend._executables))
    np.testing.assert_array_equal(sl.asarray(a) * 3.5 - 1, a * 3.5 - 1)  # found, then gone: runs
    monkeypatch.setattr(backend, "cache_size", 1)
    for k in range(3):  # additions past the bound evict under the lock
        np.testing.assert_array_equal(sl.asarray(a) * float(k), a * float(k))
    assert len(backend._executables) <= 1


def test_the_fingerprint_walk_keeps_the_postorder_and_tells_shared_buffers_apart():
    from stitchlab.ir.graph import _order_and_fingerprint, postorder

    a = np.arange(12.0).reshape(3, 4)
    x, y = sl.asarray(a), sl.asarray(a + 1)
    d = x - x.mean(1, keepdims=True)
    cases = [
        [d * d + 1.0, d],  # a shared subexpression, one output inside another
        [x, x + y, x],  # a leaf output, repeated
        [(d * 2.0).sum(), sl.exp(d) / sl.exp(d).sum(1, keepdims=True)],
    ]
    for outs in cases:  # every node once, each after its inputs
        nodes = [o._node for o in outs]
        order, _ = _order_and_fingerprint(nodes)
        assert len({id(n) for n in order}) == len(order) and {id(o) for o in nodes} <= {id(n) for n in order}
        assert all(order.index(i) < order.index(n) for n in order for i in n.inputs)
    # depth first, inputs in order, a leaf where it is met: x, y, x - y, (x - y) ** 2 (the second
    # root is already there)
    s = x - y
    sq = s * s
    assert postorder([sq._node, s._node]) == [x._node, y._node, s._node, sq._node]
    # two leaves over one buffer are one input of the graph; over two buffers, two
    x2 = sl.asarray(a)
    assert x2._node is not x._node and x2._node.value is x._node.value
    same = _order_and_fingerprint([(x + x2)._node])[1]
    assert same == _order_and_fingerprint([(y + sl.asarray(y._node.value))._node])[1]
    assert same != _order_and_fingerprint([(x + y)._node])[1]
    assert len(graph_of(x + x2).inputs) == 1 and len(graph_of(x + y).inputs) == 2
