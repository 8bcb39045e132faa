"""Python scalar arguments of ``sl.jit`` read at run time, on the GPU: an Adam step whose learning
rate and step count change at every call traces twice (by value, then reading both) and compiles
nothing after that; every step read at run time is NumPy's bits (float32, float16; the first, by
value, within the reciprocal's ulp; bfloat16 equals the trace by value); an integer outside its array's range, and a negative power of an integer, give NumPy's
answer and error through a trace by value; numbers passed by keyword are read alike; a replay captured into a CUDA graph gives the values
of the capture.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_jit_scalars_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import bfloat16

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]


def adam(xp: Any) -> Any:
    def step(p: Any, g: Any, m: Any, v: Any, lr: float, t: int) -> Any:
        b1, b2 = 0.9, 0.999
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        return p - lr * (m / (1 - b1 ** t)) / (xp.sqrt(v / (1 - b2 ** t)) + 1e-8), m, v

    return step


def _state(dtype: Any, shape: tuple[int, ...] = (333, 517)) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    p, g, m = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    return [p, g, m, (1e-3 + rng.random(shape)).astype(dtype)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_an_adam_schedule_traces_twice_and_gives_numpys_steps(dtype: Any) -> None:
    import cupy as cp

    host = _state(dtype)
    dev = [cp.asarray(a) for a in host]
    f = sl.jit(adam(sl))
    sl.reset_stats()
    for t in range(1, 41):
        lr = 3e-3 * 0.95 ** t
        got = f(*dev, lr, t)
        with np.errstate(all="ignore"):
            want = adam(np)(*host, lr, t)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype
            if t == 1:  # by value: a constant divisor is a multiply by its reciprocal (1 ulp of the update)
                eps = float(np.finfo(dtype).eps)
                np.testing.assert_allclose(a.get(), b, rtol=2 * eps, atol=2 * eps * float(np.abs(b).max()))
            else:  # read at run time: an IEEE division, NumPy's bits
                np.testing.assert_array_equal(a.get(), b, err_msg=f"t={t}")
        if t == 2:
            compiled = sl.stats()["nvrtc_compiles"] + sl.stats()["registry_hits"]
    s = sl.stats()
    assert s["traces"] == 2 and s["nvrtc_compiles"] + s["registry_hits"] == compiled


def adam_corrected(p: Any, g: Any, m: Any, v: Any, lr: float, t: int) -> Any:
    """The step with its corrections computed in Python and multiplied (as benchmarks/workloads.py
    has it): no division by a number, which a trace by value would multiply by its reciprocal."""
    c1, c2 = 1.0 / (1.0 - 0.9 ** t), 1.0 / (1.0 - 0.999 ** t)
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * (g * g)
    return p - lr * (m * c1) * sl.rsqrt(v * c2 + 1e-8), m, v


def test_bfloat16_reads_the_numbers_as_the_trace_by_value_does() -> None:
    import cupy as cp

    dev = [cp.asarray(a.astype(bfloat16())) for a in _state(np.float32)]
    f = sl.jit(adam_corrected)
    for t in (1, 2, 3, 17):
        got = f(*dev, 1e-3 / t, t)
        want = adam_corrected(*(sl.asarray(a) for a in dev), 1e-3 / t, t)  # eager: by value
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a.get().view(np.uint16), b.get().view(np.uint16))
    assert len(f.traces) == 2


def test_values_the_trace_cannot_hold_give_numpys_answer_and_error() -> None:
    import cupy as cp

    x = np.array([-3, 0, 7, 127], np.int8)
    d = cp.asarray(x)
    calls = {"add": lambda x, k: x + k, "eq": lambda x, k: x == k, "scale": lambda x, k: x * 2 ** k}
    jitted = {name: sl.jit(fn) for name, fn in calls.items()}
    for k in (1, 5, 300, -2, -129, 100, 3, 6):
        for name, fn in calls.items():
            try:
                want = fn(x, k)
            except OverflowError:  # NumPy: the Python integer is out of bounds for int8
                with pytest.raises(OverflowError):
                    jitted[name](d, k)
                continue
            got = jitted[name](d, k).get()
            assert got.dtype == want.dtype, (name, k)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {k}")
    assert all(len(f.traces) < 8 for f in jitted.values())  # values that fit replay one trace


def test_a_captured_replay_keeps_the_numbers_of_the_capture() -> None:
    import cupy as cp

    a = np.random.default_rng(2).standard_normal((64, 96)).astype(np.float32)
    x = cp.asarray(a)
    f = sl.jit(lambda x, c: x * c + 1.0)
    f(x, 0.5)
    f(x, 0.25)  # reads c from now on
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        f(x, 1.5)  # (kernels loaded outside the capture)
        stream.begin_capture()
        out = f(x, 3.0)
        graph = stream.end_capture()
        graph.launch()
        stream.synchronize()
    np.testing.assert_array_equal(out.get(), a * np.float32(3.0) + np.float32(1.0))
    np.testing.assert_array_equal(f(x, -2.0).get(), a * np.float32(-2.0) + np.float32(1.0))


def test_a_returned_number_keeps_its_value_after_later_calls() -> None:
    import cupy as cp

    x = cp.asarray(np.arange(6, dtype=np.float32))
    f = sl.jit(lambda x, t: (x * t, sl.full((), t), sl.full((), t).reshape(1, 1)))
    outs = [f(x, t) for t in (1.0, 2.0, 3.0, 4.0)]
    assert [(float(a.get()), float(b.get()[0, 0])) for _, a, b in outs] == [(t, t) for t in (1.0, 2.0, 3.0, 4.0)]
    for (y, _, _), t in zip(outs, (1.0, 2.0, 3.0, 4.0), strict=True):
        np.testing.assert_array_equal(y.get(), np.arange(6, dtype=np.float32) * np.float32(t))


def test_numpy_scalars_replay_one_trace_with_numpys_values() -> None:
    import cupy as cp

    a = np.random.default_rng(4).standard_normal((96, 130)).astype(np.float16)
    x = cp.asarray(a)
    f = sl.jit(lambda x, lr, k: (x - lr * x, x * k))
    sl.reset_stats()
    for t in range(1, 9):
        lr, k = np.float32(1.0 / t), np.float16(t - 4.5)
        got = f(x, lr, k)
        with np.errstate(all="ignore"):
            want = (a - lr * a, a * k)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g.get(), w)
    assert sl.stats()["traces"] == 1


def test_numbers_passed_by_keyword_are_read_at_run_time() -> None:
    import cupy as cp

    dev = [cp.asarray(a) for a in _state(np.float32)]
    steps = [(1e-3 * 0.9 ** t, t) for t in range(1, 7)]
    want = [[b.get() for b in adam_corrected(*(sl.asarray(a) for a in dev), lr, t)] for lr, t in steps]  # eager, by value
    f = sl.jit(adam_corrected)
    sl.reset_stats()
    for (lr, t), w in zip(steps, want, strict=True):
        got = f(*dev[:2], v=dev[3], m=dev[2], t=t, lr=lr)
        for a, b in zip(got, w, strict=True):
            np.testing.assert_array_equal(a.get(), b, err_msg=f"t={t}")
        if t == 2:  # traced by value, then once more reading lr and t
            compiled = sl.stats()["nvrtc_compiles"] + sl.stats()["registry_hits"]
    s = sl.stats()
    assert s["traces"] == 2 and s["nvrtc_compiles"] + s["registry_hits"] == compiled
