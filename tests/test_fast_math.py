"""``sl.fast_math`` and ``sl.jit(fast_math=True)``: which nodes are built for CUDA's hardware
approximations, the CUDA C they generate (``sl.explain`` on the CPU), that fast and exact versions
of one expression are different graphs and kernels, and that the numpy backend keeps NumPy's
values. The approximations' accuracy on the GPU: ``tests/gpu/test_fast_math_gpu.py``."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.ops import FAST_MATH_OPS

X = np.random.default_rng(3).uniform(0.1, 3.0, (16, 256)).astype(np.float32)
Y = np.random.default_rng(4).uniform(0.1, 3.0, (16, 256)).astype(np.float32)

#: op -> (expression, the CUDA intrinsic its float32 fast version calls)
FAST = {
    "exp": (lambda x, y: sl.exp(x), "__expf("),
    "log": (lambda x, y: sl.log(x), "__logf("),
    "log2": (lambda x, y: sl.log2(x), "__log2f("),
    "log10": (lambda x, y: sl.log10(x), "__log10f("),
    "sin": (lambda x, y: sl.sin(x), "__sinf("),
    "cos": (lambda x, y: sl.cos(x), "__cosf("),
    "tan": (lambda x, y: sl.tan(x), "__tanf("),
    "sigmoid": (lambda x, y: sl.sigmoid(x), "__expf("),
    "divide": (lambda x, y: x / y, "__fdividef("),
    "reciprocal": (lambda x, y: sl.reciprocal(x), "__fdividef("),
}


def _source(y: Any) -> str:
    (kernel,) = sl.explain(y, device="H200").kernels
    return kernel.source.split("end of preamble")[-1]


def _flags(y: Any) -> dict[str, Any]:
    return {n.op: n.attr("fast_math") for n in sl.explain(y, device="H200").graph.nodes if n.op not in ("input", "const", "broadcast")}


def test_every_op_with_an_approximation_is_listed() -> None:
    assert set(FAST) == FAST_MATH_OPS


@pytest.mark.parametrize("op", sorted(FAST))
def test_a_fast_math_block_generates_the_intrinsic(op: str) -> None:
    expr, intrinsic = FAST[op]
    x, y = sl.asarray(X), sl.asarray(Y)
    exact = expr(x, y)
    with sl.fast_math():
        fast = expr(x, y)
    assert _flags(fast) == {op: True} and _flags(exact) == {op: None}
    assert intrinsic in _source(fast) and intrinsic not in _source(exact)


def test_only_listed_ops_and_float32_float16_bfloat16_results_are_approximated() -> None:
    x = sl.asarray(X)
    with sl.fast_math():
        ys = {
            "sqrt": sl.sqrt(x),  # (no approximation: IEEE as before)
            "log1p": sl.log1p(x),
            "float64 exp": sl.exp(x.astype(np.float64)),
            "int32 / int32": sl.asarray(np.arange(4, dtype=np.int32)) / 3,  # (float64)
        }
        flagged = {"float16 exp": sl.exp(x.astype(np.float16)), "bfloat16 divide": x.astype(ml_dtypes.bfloat16) / 2}
    for name, y in ys.items():
        assert y._node.attrs == (), name
    for name, y in flagged.items():
        assert y._node.attr("fast_math") is True, name


def test_sixteen_bit_results_keep_their_own_approximation() -> None:
    with sl.fast_math():
        y = sl.exp(sl.asarray(X.astype(np.float16)))
    src = _source(y)
    assert "sl_exp_f16(" in src and "__expf(" not in src


def test_the_block_nests_and_restores_after_an_error() -> None:
    x = sl.asarray(X)
    with sl.fast_math():
        with sl.fast_math(False):
            inner = sl.exp(x)
        outer = sl.exp(x)
        with pytest.raises(ZeroDivisionError):
            with sl.fast_math(False):
                1 / 0  # noqa: B018
        after_error = sl.exp(x)
    outside = sl.exp(x)
    assert inner._node.attrs == () and outside._node.attrs == ()
    assert outer._node.attr("fast_math") and after_error._node.attr("fast_math")


def test_a_lazy_expression_built_inside_keeps_its_approximation() -> None:
    x = sl.asarray(X)
    with sl.fast_math():
        y = sl.exp(x) + 1
    assert "__expf(" in _source(y)  # (planned outside the block)


def test_the_plan_and_its_picture_name_the_approximated_ops() -> None:
    from stitchlab.notebook.adapter import plan_view

    x = sl.asarray(X)
    with sl.fast_math():
        y = sl.exp(x) / (1 + x)
    plan = sl.explain(y)
    assert "[exp (fast math), add, divide (fast math)]" in plan.summary()
    labels = {n.op: n.label for n in plan_view(plan).nodes}
    assert labels["exp"] == "exp (fast math)" and labels["add"] == "add (1)"  # (the folded constant)


def test_fast_and_exact_versions_are_different_graphs_and_kernels() -> None:
    x = sl.asarray(X)
    exact = sl.log1p(sl.exp(x)) / 3.0 + sl.sin(x)
    with sl.fast_math():
        fast = sl.log1p(sl.exp(x)) / 3.0 + sl.sin(x)
    a, b = sl.explain(exact, device="H200"), sl.explain(fast, device="H200")
    assert a.graph.key != b.graph.key
    assert [k.name for k in a.kernels] != [k.name for k in b.kernels]


def test_the_numpy_backend_computes_numpys_values() -> None:
    x, y = sl.asarray(X), sl.asarray(Y)
    for op, (expr, _) in FAST.items():
        with sl.fast_math():
            got = expr(x, y).get()
        want = expr(sl.asarray(X), sl.asarray(Y)).get()
        np.testing.assert_array_equal(got, want, err_msg=op)


def test_jit_takes_its_own_flag_not_the_block() -> None:
    def f(a: Any) -> Any:
        return sl.exp(a) / (1 + a)

    fast = sl.jit(f, fast_math=True)
    exact = sl.jit(f)
    fast(X)
    with sl.fast_math():
        exact(X)

    @sl.jit(fast_math=True)
    def g(a: Any) -> Any:
        return sl.sin(a)

    g(X)
    (tf,), (te,), (tg,) = fast.traces.values(), exact.traces.values(), g.traces.values()
    ops = {j: {n.op: n.attr("fast_math") for n in t.graph.nodes if n.op in FAST_MATH_OPS} for j, t in (("fast", tf), ("exact", te), ("g", tg))}
    assert ops == {"fast": {"exp": True, "divide": True}, "exact": {"exp": None, "divide": None}, "g": {"sin": True}}
    assert g.__name__ == "g" and g.fast_math is True
    np.testing.assert_array_equal(fast(X).get(), exact(X).get())  # (the numpy backend)


def test_vectorize_inside_the_block() -> None:
    soft = sl.vectorize(lambda z: sl.log1p(sl.exp(z)) / 2)
    with sl.fast_math():
        y = soft(X)
    assert "__expf(" in _source(y)


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_a_flag_that_is_not_a_bool_is_refused(bad: Any) -> None:
    with pytest.raises(TypeError, match="True or False"):
        with sl.fast_math(bad):
            pass
    with pytest.raises(TypeError, match="True or False"):
        sl.jit(lambda a: a, fast_math=bad)
