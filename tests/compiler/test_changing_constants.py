"""One expression compiled for many values of its Python scalars (CPU stand-in of the cupy backend,
``standin.py``, and the numpy backend): after ``CONSTANT_VARIANTS_WARN`` sets of values the
constants that changed are read at run time where that gives the same bits (value-blind ops,
float dtypes), and the user is told once; a NumPy scalar or a 0-d array is an input from the
start and compiles nothing new."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir import graph as graph_module
from stitchlab.ir.graph import build_graph
from stitchlab.runtime.backend import CONSTANT_VARIANTS_WARN, ConstantsWarning

from .standin import StandIn, fresh_backend


def _graph(y: sl.LazyArray):
    return build_graph([y._node])[0]


def test_the_template_leaves_out_only_the_constants_values() -> None:
    x, z = sl.asarray(np.ones((4, 8), np.float32)), sl.asarray(np.ones((4, 8), np.float32))
    a, b = _graph(sl.sin(x * 0.5) + 1.0), _graph(sl.sin(0.25 * x) + 2.0)
    assert a.key != b.key and a.template == b.template  # operands of a product in either order
    assert _graph(sl.sin(x * 0.5) - 1.0).template != a.template  # another op
    assert _graph(sl.sin(x * np.float64(0.5)) + 1.0).template != a.template  # another dtype
    assert _graph(sl.cos(x * 0.5) + 1.0).template != a.template
    assert _graph(sl.sin(x * 0.5) + z).template != a.template  # an input, not a constant


@pytest.fixture(autouse=True)
def _no_templates_read_at_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_module, "_read_at_run_time", {})


def test_changed_constants_are_read_at_run_time_after_the_limit(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh_backend(monkeypatch)
    x = sl.asarray(standin.array((64, 64)))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for k in range(CONSTANT_VARIANTS_WARN + 4):
            before = sl.stats()["plans"]
            t = 0.01 + k / 8  # (never 1.0: equal constants are one node, another graph)
            sl.compute(sl.sin(x * t) + 1.0)
            assert len(seen) == (k + 1 >= CONSTANT_VARIANTS_WARN), k
            # planned for each value up to the limit, then once more for the graph that reads t
            assert sl.stats()["plans"] - before == (k <= CONSTANT_VARIANTS_WARN), k
            sl.compute(sl.sin(x * t) + 1.0)  # the same values again: planned once
    (w,) = seen
    assert w.category is ConstantsWarning and w.filename == __file__  # the line that evaluated
    assert "read when the kernel runs" in str(w.message) and "np.float32(t)" in str(w.message)
    assert len(set(standin.compiled)) == CONSTANT_VARIANTS_WARN + 1
    plan = sl.explain(sl.sin(x * 5.5) + 1.0)
    (kernel,) = plan.kernels
    consts = [n for n in plan.graph.nodes if n.op == "const"]
    assert [c.attr("value") for c in consts] == [1.0]  # the 1.0 never changed: still a literal
    assert len(plan.graph.inputs) == 2  # x and t
    launch = standin.launches[-1]
    assert launch.name == kernel.name


def test_changing_divisors_stay_literals(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """A division by a constant is a multiply by its reciprocal, written when the kernel is: the
    value matters to the code, so it is not read at run time (nor an exponent)."""
    fresh_backend(monkeypatch)
    x = sl.asarray(standin.array((64, 64)))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for k in range(CONSTANT_VARIANTS_WARN + 3):
            before = sl.stats()["plans"]
            sl.compute(x / (k + 1.5))
            assert sl.stats()["plans"] - before == 1
    assert len(seen) == 1 and "divisors" in str(seen[0].message)


def test_a_loop_over_integers_shares_its_kernels_after_the_limit(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """``labels == k`` for each class ``k`` (an integer compare) and ``x * k + j`` (an integer
    product and sum) read ``k`` and ``j`` at run time after the limit, as float constants are."""
    fresh_backend(monkeypatch)
    labels = sl.asarray(standin.array((1 << 16,), "int32"))
    x = sl.asarray(standin.array((64, 64), "int8"))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for k in range(CONSTANT_VARIANTS_WARN + 6):
            sl.compute((labels == k).sum())
            sl.compute(x * (k + 2) + k)
    assert len(seen) == 2 and all(w.category is ConstantsWarning for w in seen)
    assert len(set(standin.compiled)) == 2 * (CONSTANT_VARIANTS_WARN + 1)
    plan = sl.explain((labels == 100).sum())
    assert not [n for n in plan.graph.nodes if n.op == "const"] and len(plan.graph.inputs) == 2  # labels, k


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_integer_constants_read_at_run_time_give_numpys_values(numpy_backend, dtype) -> None:
    info = np.iinfo(dtype)
    a = np.random.default_rng(8).integers(info.min, info.max, (16, 33), dtype=dtype, endpoint=True)
    x = sl.asarray(a)

    def expr(t, u):
        return sl.maximum(x * t - u, t) + (x > u)  # (wrapping products and sums, as NumPy's)

    values = [(3, 5), (info.max, info.min), (info.max // 3, 1)]
    literal = _graph(expr(7, 8))
    graph_module.read_constants_at_run_time(literal.template, range(len(literal.constants)))
    graphs = [_graph(expr(t, u)) for t, u in values]
    assert len({g.key for g in graphs}) == 1 and not [n for n in graphs[0].nodes if n.op == "const"]
    with np.errstate(over="ignore"):
        for t, u in values:
            t_, u_ = np.array(t, dtype), np.array(u, dtype)
            want = np.maximum(a * t_ - u_, t_) + (a > u_)
            got = expr(t, u).get()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_numpy_scalars_are_inputs_and_compile_nothing_new(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    from stitchlab import runtime

    fresh_backend(monkeypatch)
    monkeypatch.setattr(runtime, "_current", "cupy")  # a NumPy scalar goes to the current backend's device
    x = sl.asarray(standin.array((64, 64)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstantsWarning)
        for k in range(2 * CONSTANT_VARIANTS_WARN):
            sl.compute(sl.sin(x * np.float32(k / 8)) + 1.0)
            sl.compute(sl.sin(x * sl.asarray(standin.array(()))) + 1.0)
    assert len(standin.compiled) == 1


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_graph_that_reads_its_constants_gives_the_same_bits(numpy_backend, dtype) -> None:
    a = np.random.default_rng(5).standard_normal((16, 33)).astype(dtype)
    x = sl.asarray(a)

    def expr(t, u):
        return sl.maximum(x * t - u, 0.25) + (x > t)

    values = [(0.3, 1.7), (-2.5, 0.1)]
    want = [np.maximum(a * np.array(t, dtype) - np.array(u, dtype), np.array(0.25, dtype)) + (a > np.array(t, dtype))
            for t, u in values]
    literal = _graph(expr(7.0, 8.0))  # (a graph built before is reused as it was: new values here)
    graph_module.read_constants_at_run_time(literal.template, range(len(literal.constants)))
    first, second = (_graph(expr(t, u)) for t, u in values)
    assert first.key == second.key != literal.key
    assert not [n for n in first.nodes if n.op == "const"] and len(first.inputs) == 4  # x, t, u, 0.25
    got = [expr(t, u).get() for t, u in values]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_a_jit_trace_captures_the_constants_it_reads(numpy_backend) -> None:
    a = np.random.default_rng(6).standard_normal((8, 8)).astype(np.float32)
    literal = _graph(sl.asarray(a) * 9.0 + 0.5)
    graph_module.read_constants_at_run_time(literal.template, [0, 1])
    f = sl.jit(lambda v, t: v * t + 0.5)
    for t in (0.75, -3.0):
        np.testing.assert_array_equal(f(a, t).get(), a * np.float32(t) + np.float32(0.5))


def test_the_numpy_backend_compiles_nothing_and_never_warns(numpy_backend) -> None:
    x = sl.asarray(np.ones((8, 8), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstantsWarning)
        for k in range(2 * CONSTANT_VARIANTS_WARN):
            sl.compute(x * (k / 8))


def test_clearing_a_backend_forgets_its_plans(numpy_backend) -> None:
    from stitchlab import runtime

    backend = runtime.current()
    sl.compute(sl.asarray(np.ones((3, 3), np.float32)) * 3.5)
    assert backend._executables
    backend.clear_cache()  # (the registry browser's buttons call it)
    assert not backend._executables
