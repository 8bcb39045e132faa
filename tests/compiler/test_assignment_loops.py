"""Loops of assignments (``for i in ...: x[i] = ...``): an array is evaluated after
``ASSIGNMENTS_PENDING`` assignments whose value nobody asked for, so a loop plans expressions of a
bounded length; a single-row assignment's graph holds its position only in constants (its value
is broadcast into place, not padded), and ``where`` passes a constant through unchanged, so the
stretches of a loop share one template and, after ``CONSTANT_VARIANTS_WARN`` of them, one set of
kernels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.frontend import array as array_module
from stitchlab.ir.graph import build_graph
from stitchlab.runtime.backend import CONSTANT_VARIANTS_WARN

from .standin import StandIn, fresh_backend


def test_a_single_row_assignment_holds_its_position_in_constants_only() -> None:
    graphs = []
    for i in (3, 5):
        x = sl.asarray(np.zeros((8, 4), np.float32))
        x[i] = sl.asarray(np.arange(4, dtype=np.float32))
        graphs.append(build_graph([x._node])[0])
        assert not [n for n in graphs[-1].nodes if n.op == "pad"]
    assert graphs[0].key != graphs[1].key and graphs[0].template == graphs[1].template
    x = sl.asarray(np.zeros((8, 4), np.float32))
    x[2:4] = sl.asarray(np.ones((2, 4), np.float32))  # (two rows: the value's rows are placed by a pad)
    assert [n for n in build_graph([x._node])[0].nodes if n.op == "pad"]


def test_an_array_is_evaluated_after_a_stretch_of_assignments() -> None:
    a = np.random.default_rng(3).standard_normal((100, 7)).astype(np.float32)
    x, want = sl.asarray(a), a.copy()
    for i in range(1, 100):
        x[i] = x[i - 1] * 0.5 + x[i]
        want[i] = want[i - 1] * np.float32(0.5) + want[i]
        assert x.is_materialized == (i % array_module.ASSIGNMENTS_PENDING == 0), i
    np.testing.assert_array_equal(x.get(), want)
    y = sl.asarray(a) * 2  # (an expression, then assignments: counted from the first of them)
    for i in range(array_module.ASSIGNMENTS_PENDING - 1):
        y[i, 0] = -1.0
    assert not y.is_materialized
    y[0, 1] = 5.0
    assert y.is_materialized


def test_a_traced_loop_of_assignments_stays_one_expression() -> None:
    a = np.random.default_rng(4).standard_normal((40, 3)).astype(np.float32)

    @sl.jit
    def scan_rows(v):  # noqa: ANN001, ANN202
        out = v.copy()
        for i in range(1, 40):
            out[i] = out[i - 1] + v[i]
        return out

    for k in range(2):
        np.testing.assert_allclose(scan_rows(a + k).get(), np.cumsum(a + k, axis=0, dtype=np.float32), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dependent", [False, True], ids=["fill", "chain"])
def test_a_long_loop_of_row_assignments_compiles_a_bounded_number_of_kernels(
        standin: StandIn, monkeypatch: pytest.MonkeyPatch, dependent: bool) -> None:
    from stitchlab import runtime

    fresh_backend(monkeypatch)
    monkeypatch.setattr(runtime, "_current", "cupy")  # (the assignment masks' positions on the device)
    x = sl.asarray(standin.array((401, 64)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sl.ConstantsWarning)
        for i in range(1, 401):
            if dependent:
                x[i] = x[i - 1] * 2 + 1
            else:
                x[i] = i * 0.5
        sl.compute(x)
    # a fill loop: one template from the first stretch on (its constants read at run time after
    # 8); a chain reads rows of the stretch's own expression, index maps whose positions differ
    # from stretch to stretch: one plan each, 25 for 400 rows (it was one plan of all 400)
    assert len(standin.compiled) <= (CONSTANT_VARIANTS_WARN + 2 if not dependent else 400 // 16 + 1), standin.compiled
