"""Python numbers are constants of the kernel, NumPy scalars inputs, on the GPU: a loop over values
of a Python float plans each value until ``CONSTANT_VARIANTS_WARN`` of them, warns once
(``sl.ConstantsWarning``) and from then on reads the value at run time (a 0-d buffer filled by a
kernel: one more plan, then none); the same loop over NumPy scalars plans once; all give NumPy's
values, in eager code, in ``sl.jit`` and in a captured CUDA graph.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_constants_gpu.py -q``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.runtime.backend import CONSTANT_VARIANTS_WARN

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

A = np.random.default_rng(11).standard_normal((257, 301)).astype(np.float32)  # a shape of its own


def test_python_numbers_replan_and_warn_numpy_scalars_do_not() -> None:
    import cupy as cp

    x = sl.asarray(cp.asarray(A))
    ts = [0.1 + 0.37 * k for k in range(CONSTANT_VARIANTS_WARN + 4)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = sl.stats()["plans"]
        for t in ts:  # a multiply and an add: NumPy's bits, whether t is a literal or read at run time
            np.testing.assert_array_equal((x * t + 0.5).get(), A * np.float32(t) + np.float32(0.5))
        # one plan per value up to the limit, one more for the graph that reads t, then none
        assert sl.stats()["plans"] - before == CONSTANT_VARIANTS_WARN + 1
        assert [w.category for w in seen] == [sl.ConstantsWarning]
        before = sl.stats()["plans"]
        for t in ts:
            got = sl.sin(x * np.float32(t) + 0.5)
            assert got.dtype == np.float32
            np.testing.assert_allclose(got.get(), np.sin(A * np.float32(t) + np.float32(0.5)), rtol=2e-6, atol=2e-6)
        assert sl.stats()["plans"] - before == 1
        assert len(seen) == 1


def test_a_constant_read_at_run_time_in_jit_and_under_capture() -> None:
    import cupy as cp

    from stitchlab.ir import graph as graph_module
    from stitchlab.ir.graph import build_graph

    x = sl.asarray(cp.asarray(A))
    template = build_graph([(x * 3.25 - 1.0)._node])[0].template
    graph_module.read_constants_at_run_time(template, [0])
    f = sl.jit(lambda v, t: v * t - 1.0)
    for t in (0.75, -2.5):
        np.testing.assert_array_equal(f(cp.asarray(A), t).get(), A * np.float32(t) - np.float32(1.0))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        a = cp.asarray(A)  # (inputs stay alive while a captured graph is replayed: the user's part)
        out = sl.asarray(a) * 7.5 - 1.0  # a new value: its 0-d buffer is filled by a kernel
        stream.begin_capture()
        sl.compute(out)
        graph = stream.end_capture()
        # small blocks, as the constant's: one freed during the capture would be among them
        junk = [cp.full((1,), np.nan, np.float32) for _ in range(64)]
        graph.launch()
    stream.synchronize()
    np.testing.assert_array_equal(out.get(), A * np.float32(7.5) - np.float32(1.0))
    assert all(bool(cp.isnan(j).all()) for j in junk)


def test_a_loop_over_integer_classes_reads_the_class_at_run_time() -> None:
    """``labels == k`` for each class ``k``: one plan per class up to the limit, one more for the
    graph that reads ``k``, then none; NumPy's counts, and an int8 product that wraps as NumPy's."""
    import cupy as cp

    rng = np.random.default_rng(12)
    labels = rng.integers(0, 40, 100_003).astype(np.int32)
    b = rng.integers(-128, 128, (97, 33)).astype(np.int8)
    y, x = sl.asarray(cp.asarray(labels)), sl.asarray(cp.asarray(b))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = sl.stats()["plans"]
        counts = [int((y == k).sum()) for k in range(40)]
        assert sl.stats()["plans"] - before == CONSTANT_VARIANTS_WARN + 1
        for k in range(CONSTANT_VARIANTS_WARN + 6):
            np.testing.assert_array_equal((x * (k + 100) + k).get(), b * np.int8(k + 100) + np.int8(k))
    assert counts == np.bincount(labels, minlength=40).tolist()
    assert [w.category for w in seen] == [sl.ConstantsWarning] * 2


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_loops_of_row_assignments_give_numpys_values_with_few_plans(dtype: str) -> None:
    """A fill loop (``x[i] = v``) and a chain (``x[i] = x[i - 1] * 2 + 1``) of 300 rows: the array is
    evaluated every 16 assignments, and the stretches share their kernels once their positions and
    values are read at run time (the fill loop), or plan one expression each (the chain)."""
    import cupy as cp

    a = (np.random.default_rng(13).standard_normal((301, 67)) * 4).astype(dtype)
    for dependent in (False, True):
        x, want = sl.asarray(cp.asarray(a)), a.copy()
        before = sl.stats()["plans"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sl.ConstantsWarning)
            for i in range(1, 301):
                if dependent:
                    x[i] = x[i - 1] * 2 + 1 if dtype == "int32" else x[i - 1] * 0.5 + 1
                    want[i] = want[i - 1] * 2 + 1 if dtype == "int32" else want[i - 1] * want.dtype.type(0.5) + want.dtype.type(1)
                else:
                    x[i] = i * 3 if dtype == "int32" else i * 0.25
                    want[i] = i * 3 if dtype == "int32" else want.dtype.type(i * 0.25)
            got = x.get()
        np.testing.assert_array_equal(got, want)
        assert sl.stats()["plans"] - before <= (300 // 16 + 1 if dependent else CONSTANT_VARIANTS_WARN + 3)
