"""sl.jit: one trace per input signature, replayed without tracing or planning."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl


def softmax(x):
    e = sl.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_second_call_with_the_same_signature_traces_and_plans_nothing():
    f = sl.jit(softmax)
    a = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    first = f(a).get()
    sl.reset_stats()
    second = f(a * 2).get()
    s = sl.stats()
    assert s["traces"] == 0 and s["plans"] == 0 and s["nvrtc_compiles"] == 0
    ref = np.exp(2 * a - (2 * a).max(-1, keepdims=True))
    np.testing.assert_allclose(second, ref / ref.sum(-1, keepdims=True), rtol=1e-6)
    assert not np.allclose(first, second)


def test_a_new_signature_traces_again():
    f = sl.jit(softmax)
    f(np.ones((2, 8), np.float32))
    sl.reset_stats()
    f(np.ones((3, 8), np.float32))
    f(np.ones((3, 8), np.float64))
    assert sl.stats()["traces"] == 2


def test_outputs_keep_their_structure_and_a_changed_scalar_traces_once_more():
    @sl.jit
    def f(x, scale):
        return {"y": x * scale, "pair": (x + 1, x.sum())}

    out = f(np.arange(3.0), 2.0)
    np.testing.assert_array_equal(out["y"].get(), [0, 2, 4])
    np.testing.assert_array_equal(out["pair"][0].get(), [1, 2, 3])
    assert float(out["pair"][1]) == 3.0
    np.testing.assert_array_equal(f(np.arange(3.0), 3.0)["y"].get(), [0, 3, 6])
    np.testing.assert_array_equal(f(np.arange(3.0), 0.5)["y"].get(), [0, 0.5, 1])
    assert len(f.traces) == 2  # by value, then reading scale at run time


def test_captured_arrays_and_lazy_arguments():
    w = sl.asarray(np.full(3, 10.0))

    @sl.jit
    def f(x):
        return x + w

    lazy = sl.asarray(np.arange(3.0)) * 2
    np.testing.assert_array_equal(f(lazy).get(), [10, 12, 14])


def test_data_dependent_python_inside_jit_is_a_clear_error():
    @sl.jit
    def f(x):
        return x if bool(x.sum() > 0) else -x

    with pytest.raises(RuntimeError, match="cannot materialize a traced array inside sl.jit"):
        f(np.ones(3))


def test_bad_jit_use():
    with pytest.raises(TypeError, match="sl.jit expects a function"):
        sl.jit(3)
    with pytest.raises(TypeError, match="must return stitchlab arrays"):
        sl.jit(lambda x: 3)(np.ones(2))


def test_arguments_the_backend_cannot_take_as_they_are_go_through_asarray():
    f = sl.jit(lambda x: x + 1)
    swapped = np.arange(3, dtype=">f4")  # not native byte order: converted, never misread
    np.testing.assert_array_equal(f(swapped.astype(np.float32)).get(), [1, 2, 3])
    with pytest.raises(TypeError, match="complex128"):
        f(np.ones(2, np.complex128))
    # a list is a list of numbers (a tuple, list or dict argument is passed as it is, as eagerly)
    with pytest.raises(TypeError, match="can only concatenate list"):
        f([1, 2])
    np.testing.assert_array_equal(sl.jit(lambda x: sl.asarray(x) + 1)([1, 2]).get(), [2, 3])


def test_a_retrace_is_logged_with_its_reason(caplog):
    import logging

    f = sl.jit(softmax)
    f(np.ones((2, 8), np.float32))
    with caplog.at_level(logging.INFO, logger="stitchlab"):
        f(np.ones((2, 8), np.float64))
    assert "argument 0: dtype float32 -> float64" in caplog.text


def test_keyword_arguments_and_keyword_only_parameters():
    @sl.jit
    def f(x, lr=0.1, *, eps=1e-3):
        return x * lr + eps

    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x).get(), x * 0.1 + 1e-3)
    np.testing.assert_array_equal(f(x, lr=0.5).get(), x * 0.5 + 1e-3)
    np.testing.assert_array_equal(f(x, eps=1.0, lr=2.0).get(), x * 2.0 + 1.0)
    sl.reset_stats()
    for k in range(8):  # a number passed by keyword is read at run time once it changes, too
        np.testing.assert_array_equal(f(x, lr=0.25 * k).get(), x * (0.25 * k) + 1e-3)
    assert sl.stats()["traces"] == 1
    with pytest.raises(TypeError, match="unexpected keyword argument 'rate'"):
        f(x, rate=0.5)


def test_a_namedtuple_result_keeps_its_type():
    import collections

    Pair = collections.namedtuple("Pair", "a b")
    f = sl.jit(lambda x: Pair(x + 1, [x * 2, {"c": x - 1}]))
    x = np.arange(3.0)
    for _ in range(2):  # traced, then replayed
        out = f(x)
        assert type(out) is Pair and type(out.b) is list
        np.testing.assert_array_equal(out.a.get(), x + 1)
        np.testing.assert_array_equal(out.b[0].get(), x * 2)
        np.testing.assert_array_equal(out.b[1]["c"].get(), x - 1)


def test_a_jitted_function_called_inside_another_runs_in_its_trace():
    inner = sl.jit(lambda x: x * 2)
    outer = sl.jit(lambda x: inner(x) + 1)
    x = np.arange(3.0)
    np.testing.assert_array_equal(outer(x).get(), x * 2 + 1)
    np.testing.assert_array_equal(outer(x + 1).get(), (x + 1) * 2 + 1)
    assert len(inner.traces) == 0 and len(outer.traces) == 1
    np.testing.assert_array_equal(inner(x).get(), x * 2)  # called on its own, it traces as usual

    @sl.jit
    def power_of_two(x, n):  # recursive
        return x if n == 0 else power_of_two(x, n - 1) * 2

    for n in (3, 2, 5):
        np.testing.assert_array_equal(power_of_two(x, n).get(), x * 2 ** n)


def _seeded(x):
    return x * sl.random.default_rng(42).random(x.shape, dtype=np.float32)


def _module_seeded(x):
    sl.random.seed(3)
    return x + sl.random.standard_normal(x.shape, dtype=np.float32)


def _spawned(x):
    return x + sl.random.default_rng(5).spawn(2)[1].integers(0, 100, x.shape)


@pytest.mark.parametrize("fn", [_seeded, _module_seeded, _spawned])
def test_a_generator_seeded_inside_the_function_draws_the_same_numbers_every_call(fn):
    f = sl.jit(fn)
    x = np.arange(1, 5, dtype=np.float32)
    eager = fn(sl.asarray(x)).get()
    for _ in range(3):
        np.testing.assert_array_equal(f(x).get(), eager)


def test_a_generator_from_outside_the_function_draws_anew_every_call():
    gen = sl.random.default_rng(0)
    f = sl.jit(lambda x: x + gen.random(x.shape, dtype=np.float32))
    g = sl.jit(lambda x: x + sl.random.default_rng().random(x.shape, dtype=np.float32))  # fresh entropy
    x = np.zeros(8, np.float32)
    for h in (f, g):
        assert not np.array_equal(h(x).get(), h(x).get())
