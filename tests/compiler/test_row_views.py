"""Rows of an evaluated array are views of its buffer (``build._buffer_view``): ``x[i]``,
``x[i, j]`` and ``x[a:b]`` of a 2-d array become input leaves at the row's address, as NumPy's
and CuPy's views, so a loop over rows or batches plans and compiles one kernel rather than one per
position. Slices along the last axis (a stencil's shifted reads) and other steps stay index maps
that the kernel reads from the one buffer. Values on the GPU: ``tests/gpu/test_row_views_gpu.py``."""

from __future__ import annotations

import numpy as np
import pytest

import stitchlab as sl

from .standin import StandIn, fresh_backend

A = np.random.default_rng(7).standard_normal((5, 4, 6)).astype(np.float32)

#: keys whose result is whole rows of a C-ordered buffer (a view), and keys that stay index maps
VIEWS = [0, -1, 3, (1, 2), (1, -2, 3), (-2, -1, -1), slice(1, 4), slice(-3, None), (slice(2, 3), 1),
         (None, 1), (1, None), (1, Ellipsis), (1, slice(0, 4), slice(0, 6)), (2, slice(1, 3)), slice(0, 5, 1)]
INDEX_MAPS = [(slice(None), 1), (Ellipsis, 1), (2, slice(None), 1), (1, 2, slice(1, 5)), slice(None, None, -1),
              slice(0, 5, 2), (slice(4, 1, -1), 0), (slice(0, 2), slice(1, 3))]


@pytest.mark.parametrize("key", VIEWS + INDEX_MAPS, ids=repr)
def test_rows_are_views_and_every_key_gives_numpys_values(key) -> None:  # noqa: ANN001
    x = sl.asarray(A)
    y = x[key]
    assert (y._node.op == "input") == (key in VIEWS), y._node
    if key in VIEWS:
        assert np.shares_memory(y._node.value, A)  # the buffer itself, not a copy
    np.testing.assert_array_equal(y.get(), A[key])
    np.testing.assert_array_equal((sl.exp(y) * 2 + 1).get(), np.exp(A[key]) * np.float32(2) + np.float32(1))
    np.testing.assert_array_equal(y.sum(axis=-1).get() if y.ndim else y.get(), A[key].sum(axis=-1) if y.ndim else A[key])


def test_a_1d_slice_and_a_buffer_not_in_c_order_stay_index_maps() -> None:
    v = sl.asarray(A.ravel())
    assert v[1:]._node.op != "input" and v[3]._node.op == "input"  # (x[1:] - x[:-1]: one buffer, lane vectors)
    f = sl.asarray(np.asfortranarray(A))
    assert f[1]._node.op != "input"
    np.testing.assert_array_equal(f[1].get(), A[1])
    np.testing.assert_array_equal((f[1:3] * 2).get(), A[1:3] * 2)


def test_a_view_keeps_the_value_of_its_row_when_the_array_is_assigned() -> None:
    x = sl.asarray(A.copy())
    y = x[1]
    x[1] = 5.0
    x += 1
    np.testing.assert_array_equal(y.get(), A[1])
    np.testing.assert_array_equal(x[1].get(), np.full((4, 6), 6.0, np.float32))
    with pytest.raises(TypeError, match="view of another"):
        y[0] = 1.0  # (NumPy would write into x)


def test_rows_of_an_evaluated_result_are_views_of_its_buffer() -> None:
    x = sl.asarray(A) * 3
    assert x[2]._node.op != "input"  # not evaluated yet: an index map of the expression
    x.get()
    np.testing.assert_array_equal(x[2].get(), A[2] * np.float32(3))
    assert x[2]._node.op == "input"


def test_a_jit_function_reads_the_rows_of_each_calls_argument() -> None:
    w = sl.asarray(A[:, 0])

    @sl.jit
    def f(x, i):  # noqa: ANN001, ANN202
        return x[i] * 2 + w[i]  # (an argument's rows: index maps of the trace; w's: views)

    for k in range(3):
        a = A + k
        np.testing.assert_array_equal(f(sl.asarray(a), 1).get(), a[1] * 2 + A[1, 0])
    np.testing.assert_array_equal(f(sl.asarray(A), 2).get(), A[2] * 2 + A[2, 0])


def test_a_loop_over_rows_and_batches_compiles_one_kernel(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh_backend(monkeypatch)
    buf = standin.array((80, 128))
    x = sl.asarray(buf)
    for i in range(10):
        sl.compute(sl.exp(x[i]) * 2 + 1)
        sl.compute(x[8 * i:8 * i + 8].sum(axis=0))
    assert len(standin.compiled) == 2, standin.compiled
    rows = [launch.args[0] for launch in standin.launches if launch.args[0].shape == (128,)]
    assert [r.data.ptr - buf.data.ptr for r in rows] == [512 * i for i in range(10)]  # each row's address
    assert not standin.copies

