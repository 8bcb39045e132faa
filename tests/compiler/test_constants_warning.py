"""One expression compiled for many values of its Python scalars warns once, naming the way round
it (CPU stand-in of the cupy backend, ``standin.py``): a NumPy scalar or a 0-d array is an input
and compiles nothing new."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stitchlab as sl
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


def test_new_constants_warn_once_at_the_limit(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh_backend(monkeypatch)
    x = sl.asarray(standin.array((64, 64)))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for k in range(CONSTANT_VARIANTS_WARN + 3):
            sl.compute(sl.sin(x * (k / 8)) + 1.0)
            assert len(seen) == (k + 1 >= CONSTANT_VARIANTS_WARN), k
            sl.compute(sl.sin(x * (k / 8)) + 1.0)  # the same values again: planned once
    (w,) = seen
    assert w.category is ConstantsWarning and w.filename == __file__  # the line that evaluated
    assert "NumPy scalar" in str(w.message) and "np.float32(t)" in str(w.message)


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


def test_the_numpy_backend_compiles_nothing_and_never_warns(numpy_backend) -> None:
    x = sl.asarray(np.ones((8, 8), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstantsWarning)
        for k in range(2 * CONSTANT_VARIANTS_WARN):
            sl.compute(x * (k / 8))
