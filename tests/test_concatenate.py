"""``sl.concatenate`` and ``sl.stack`` (and ``np.concatenate``/``np.stack`` on stitchlab arrays):
of up to four nonempty arrays an index map fused with the work around it, of more a lazy node of
its own (``Kind.CONTRACT``) run by the array library as one plan step; NumPy's shapes, dtypes and
errors; ``sl.jit`` traces and replays it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lazycheck import same

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")

RNG = np.random.default_rng(9)
A = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.integers(-5, 5, (4, 3)).astype(np.int16)
C = RNG.standard_normal((4, 5)).astype(np.float64)


@pytest.mark.parametrize("arrays, axis", [
    ((A, B), 1), ((A, B), -1), ((A, A, A), 0), ((A, C), 0), ((A, B.astype(bool)), 1), ((A.T, C.T), 1),
    ((A, B), None), ((A[:, :0], A), 1), ((A[0], A[1]), 0),
])
def test_concatenate_is_numpys(arrays: tuple[np.ndarray, ...], axis: Any) -> None:
    want = np.concatenate(arrays, axis=axis)
    same(sl.concatenate([sl.asarray(a) for a in arrays], axis=axis), want)
    same(np.concatenate([sl.asarray(arrays[0]), *arrays[1:]], axis=axis), want)  # NumPy's function, lazily


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_is_numpys(axis: int) -> None:
    want = np.stack([A, C, A], axis=axis)
    same(sl.stack([sl.asarray(A), C, sl.asarray(A)], axis=axis), want)
    same(np.stack([sl.asarray(A), C, A], axis=axis), want)


def test_an_array_argument_is_joined_along_its_first_axis() -> None:
    same(sl.concatenate(sl.asarray(A)), np.concatenate(A))
    same(sl.stack(sl.asarray(A), axis=1), np.stack(A, axis=1))


@pytest.mark.parametrize("call, match", [
    (lambda: sl.concatenate([]), "need at least one array to concatenate"),
    (lambda: sl.concatenate([sl.asarray(np.float32(1)), A[0]]), "zero-dimensional arrays cannot be concatenated"),
    (lambda: sl.concatenate([A, A[0]]), "all the input arrays must have same number of dimensions, but the array at index 0 has 2 dimension"),
    (lambda: sl.concatenate([A, B], axis=0), "along dimension 1, the array at index 0 has size 5 and the array at index 1 has size 3"),
    (lambda: sl.stack([A, B]), "all input arrays must have the same shape"),
    (lambda: sl.stack([]), "need at least one array to stack"),
])
def test_errors_are_numpys(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_an_axis_out_of_range_is_numpys_axis_error() -> None:
    with pytest.raises(np.exceptions.AxisError):
        sl.concatenate([A, A], axis=2)


def test_a_join_of_up_to_four_arrays_fuses_with_the_work_around_it() -> None:
    x = sl.asarray(RNG.standard_normal((64, 256)).astype(np.float32))
    y = sl.tanh(sl.concatenate([x * 2, x + 1], axis=-1)).sum(axis=-1)
    assert len(sl.explain(y).kernels) == 1
    a = x.get().astype(np.float64)
    np.testing.assert_allclose(y.get(), np.tanh(np.concatenate([a * 2, a + 1], axis=-1)).sum(-1), rtol=1e-5, atol=1e-4)
    # rotate_half of rotary embeddings: one kernel with the products around it
    cos, sin = sl.cos(x), sl.sin(x)
    rope = x * cos + sl.concatenate([-x[:, 128:], x[:, :128]], axis=-1) * sin
    assert len(sl.explain(rope).kernels) == 1
    np.testing.assert_allclose(rope.get(), a * np.cos(a) + np.concatenate([-a[:, 128:], a[:, :128]], -1) * np.sin(a), rtol=1e-5, atol=1e-6)
    parts = [x[:, :3], x[:, :0], x * 3, x[:7].T.reshape(64, -1), x]
    same(sl.concatenate(parts, axis=1), np.concatenate([p.get() for p in parts], axis=1))
    assert len(sl.explain(sl.concatenate(parts, axis=1) + 1).kernels) == 1


def test_a_join_of_more_than_four_arrays_is_a_plan_step_of_its_own() -> None:
    x = sl.asarray(RNG.standard_normal((64, 256)).astype(np.float32))
    y = sl.tanh(sl.concatenate([x * k for k in range(5)], axis=0)).sum(axis=-1)
    families = [k.schedule.family for k in sl.explain(y).kernels]
    assert families.count("interpreted") == 1 and len(families) == 3, families
    step = next(k for k in sl.explain(y).kernels if k.schedule.family == "interpreted")
    assert [n.op for n in step.nodes] == ["concatenate"]
    a = x.get().astype(np.float64)
    np.testing.assert_allclose(y.get(), np.tanh(np.concatenate([a * k for k in range(5)], axis=0)).sum(-1), rtol=1e-5, atol=1e-4)


def test_jit_traces_once_and_replays() -> None:
    @sl.jit
    def features(x: Any, y: Any) -> Any:
        return sl.concatenate([sl.exp(x), y * 2], axis=1)

    sl.reset_stats()
    for k in range(3):
        x, y = A + k, C - k
        np.testing.assert_allclose(features(x, y).get(), np.concatenate([np.exp(x), y * 2], axis=1), rtol=1e-6)
    assert sl.stats()["traces"] == 1


def test_numpy_concatenate_on_stitchlab_arrays_takes_dtype() -> None:
    joined = np.concatenate([sl.asarray(A), A], dtype=np.float64)  # (NumPy 2's dtype=: tests/test_shape_arguments.py)
    np.testing.assert_array_equal(joined.get(), np.concatenate([A, A], dtype=np.float64))
    assert joined.dtype == np.float64
