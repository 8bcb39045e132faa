"""Assignment into stitchlab arrays on the GPU (``stitchlab/frontend/assign.py``): basic indexes
and masks fused into the kernels around them at sizes the planner vectorizes, the scatter step
through CuPy (whose own assignment keeps an unspecified one of a repeated position's values: the
step keeps the last, as NumPy), bfloat16 moved as its bits, NumPy's functions that write into an
argument, and an assignment at host positions captured into a CUDA graph while one at device
positions is refused with a clear error.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_assignment_gpu.py -q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl
from stitchlab.ir.dtypes import as_dtype

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

RNG = np.random.default_rng(3232)


def _host(y: Any) -> np.ndarray:
    import cupy as cp

    return cp.asnumpy(cp.asarray(y))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_basic_and_mask_assignments_are_one_kernel_and_numpys(dtype: str) -> None:
    import cupy as cp

    dt = as_dtype(dtype)
    a = (RNG.standard_normal((768, 1024)) * 4).astype(dt)
    x = sl.asarray(cp.asarray(a))
    x[:, :5] = 0
    x[3::7, 2:900:3] = x[3::7, 2:900:3] * 2
    x[::-2, -1] = sl.arange(384).astype(dt)
    x[x < 1] = 1
    x[(x > 5).any(axis=1)] = x[0]  # one row for every selected row
    assert len(sl.explain(x).kernels) == 1  # (a row kernel: the mask's any)
    want = a.copy()
    want[:, :5] = 0
    want[3::7, 2:900:3] = want[3::7, 2:900:3] * 2
    want[::-2, -1] = np.arange(384).astype(dt)
    want[want < 1] = 1
    want[(want > 5).any(axis=1)] = want[0]
    np.testing.assert_array_equal(_host(x), want)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_chains_of_assignments_at_constant_positions_are_numpys(dtype: str) -> None:
    """Row by row and element by element loops (``x[i] = x[i - 1] * 2 + 1``; single elements, a
    column from another row, a row's slice from the next row's): the kernels whose masks and
    positions are computed while they are written (docs/compiler.md section 4) give NumPy's values."""
    import cupy as cp

    dt = as_dtype(dtype)
    a = (RNG.integers(0, 7, (64, 33))).astype(dt)
    x, y = sl.asarray(cp.asarray(a)), sl.asarray(cp.asarray(a))
    want_x, want_y = a.copy(), a.copy()
    for i in range(1, 31):
        x[i] = x[i - 1] * 2 % 97 + 1
        want_x[i] = want_x[i - 1] * 2 % 97 + 1
    for i in range(25):
        for arr in (y, want_y):
            arr[i, (3 * i) % 33] = i + 10
            arr[:, 0] = arr[:, 1] + arr[i, 2]
            arr[i % 64, 1:3] = arr[(i + 1) % 64, 2:4] - 1
    np.testing.assert_array_equal(_host(x), want_x)
    np.testing.assert_array_equal(_host(y), want_y)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bool", "int64"])
@pytest.mark.parametrize("where", ["host", "device"])
def test_scatter_keeps_the_last_value_of_a_repeated_position(dtype: str, where: str) -> None:
    import cupy as cp

    dt = as_dtype(dtype)
    a = (RNG.standard_normal((2000, 33)) * 9).astype(dt)
    rows = RNG.integers(-2000, 2000, size=5000)  # many repeats
    values = (RNG.standard_normal((5000, 33)) * 9).astype(dt)
    want = a.copy()
    want[rows] = values  # NumPy: sequential, the last one stays
    x = sl.asarray(cp.asarray(a))
    x[rows if where == "host" else cp.asarray(rows)] = cp.asarray(values)
    np.testing.assert_array_equal(_host(x), want)
    cols = RNG.integers(0, 33, size=(300, 1))  # several arrays, separated by a slice
    i = RNG.integers(0, 2000, size=(1, 40))
    v = (RNG.standard_normal((300, 40)) * 9).astype(dt)
    want[i, cols] = v
    x[i if where == "host" else cp.asarray(i), cols] = v
    np.testing.assert_array_equal(_host(x), want)
    c = RNG.integers(-33, 33, size=50)  # along an inner axis, in a block of rows
    w = (RNG.standard_normal((1000, 50)) * 9).astype(dt)
    want[500:1500, c] = w
    x[500:1500, c if where == "host" else cp.asarray(c)] = w
    np.testing.assert_array_equal(_host(x), want)


def test_mask_with_a_value_per_position_and_the_functions_that_write() -> None:
    import cupy as cp

    a = RNG.standard_normal((1024, 512)).astype(np.float32)
    x = sl.asarray(cp.asarray(a))
    m = x > 1.5
    n = int(_host(m).sum())
    vals = np.arange(n, dtype=np.float32)
    x[m] = vals  # a device mask: evaluated, then a scatter at its positions
    want = a.copy()
    want[a > 1.5] = vals
    np.testing.assert_array_equal(_host(x), want)
    sl.put_along_axis(x, sl.argmax(x, axis=1, keepdims=True), -7.0, axis=1)
    np.put_along_axis(want, np.argmax(want, axis=1)[:, None], -7.0, axis=1)
    sl.fill_diagonal(x, [1.0, 2.0, 3.0], wrap=True)
    np.fill_diagonal(want, [1.0, 2.0, 3.0], wrap=True)
    sl.place(x, x < -2, [10.0, 20.0])
    np.place(want, want < -2, [10.0, 20.0])
    sl.putmask(x, x > 2.5, np.arange(7, dtype=np.float32))
    np.putmask(want, want > 2.5, np.arange(7, dtype=np.float32))
    sl.put(x, cp.asarray([5, -1, 5]), [1.0, 2.0, 3.0])
    np.put(want, [5, -1, 5], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(_host(x), want)
    bad = sl.asarray(cp.asarray(a))
    bad[cp.asarray([3, 1024])] = 0.0
    with pytest.raises(IndexError, match="index 1024 is out of bounds for axis 0 with size 1024"):
        _host(bad)


@sl.jit
def _update_rows(x: Any) -> Any:
    y = x.copy()
    y[[3, 0, 3]] = y[[1, 2, 4]] * 2  # host positions: checked when traced, captured
    y[:, 0] = y.sum(axis=1)
    return y


@sl.jit
def _update_computed(x: Any) -> Any:
    y = x.copy()
    y[sl.argmax(x, axis=0) % 8] = 0.0  # device positions: checked (and repeats resolved) when run
    return y


def test_host_position_assignment_is_captured_and_device_positions_are_refused() -> None:
    import cupy as cp

    a = RNG.standard_normal((64, 300)).astype(np.float32)
    x = cp.asarray(a)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        _update_rows(x)
        _update_computed(x)
        stream.synchronize()
        stream.begin_capture()
        try:
            out = _update_rows(x)
        finally:
            graph = stream.end_capture()
        b = RNG.standard_normal((64, 300)).astype(np.float32)
        x[...] = cp.asarray(b)
        graph.launch(stream=stream)
        stream.synchronize()
        got = _host(out)
        stream.begin_capture()
        try:
            with pytest.raises(RuntimeError, match="an assignment at positions computed on the device .* cannot be captured"):
                _update_computed(x)
        finally:
            stream.end_capture()
        stream.synchronize()
        computed = _host(_update_computed(x))
    want = b.copy()
    want[[3, 0, 3]] = want[[1, 2, 4]] * 2
    want[:, 0] = want.sum(axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    w2 = b.copy()
    w2[np.argmax(b, axis=0) % 8] = 0.0
    np.testing.assert_array_equal(computed, w2)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bool"])
def test_array_of_a_cupy_array_is_a_copy(dtype: str) -> None:
    import cupy as cp

    dt = as_dtype(dtype)
    a = (RNG.standard_normal((300, 200)) * 3).astype(dt)
    for src in (cp.asarray(a), cp.asarray(a).T, cp.asarray(a)[::2, 1::3]):
        want = _host(src).copy()
        for y in (sl.array(src), sl.copy(src)):
            src[...] = 0  # a later write to the source does not reach the copy
            np.testing.assert_array_equal(_host(y), want)
            src[...] = cp.asarray(want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_rows_scattered_in_one_pass_in_every_word_width(dtype: str) -> None:
    """Rows of 128 bytes or more are scattered by one pass that copies each output row from x or
    from the values (``runtime.scatter_rows``), in words as wide as the rows' bytes and the
    buffers' alignment allow: inner axes, a batch before the axis, repeats, and a misaligned input."""
    import cupy as cp

    dt = as_dtype(dtype)
    a = (RNG.standard_normal((6, 100, 136)) * 20).astype(dt)
    idx = RNG.integers(-100, 100, size=150)
    v = (RNG.standard_normal((6, 150, 136)) * 20).astype(dt)
    want = a.copy()
    want[:, idx] = v
    for positions in (idx, cp.asarray(idx)):
        x = sl.asarray(cp.asarray(a))
        x[:, positions] = v
        np.testing.assert_array_equal(_host(x), want)
    flat = cp.asarray(np.concatenate([np.zeros(1, dt), a.ravel()]))  # one element in: a misaligned view
    x = sl.asarray(flat[1:].reshape(a.shape))
    x[:, idx] = cp.asarray(v)
    np.testing.assert_array_equal(_host(x), want)
    rows = sl.asarray(cp.asarray(a[0]))  # rows of 136 elements, one value broadcast to each
    rows[[5, 1, 5]] = 3
    w = a[0].copy()
    w[[5, 1, 5]] = 3
    np.testing.assert_array_equal(_host(rows), w)


@pytest.mark.parametrize("key", [
    lambda d: (d([7]), slice(5, None)),  # an empty block: NumPy checks the positions all the same
    lambda d: (d([0]), d([9]), slice(0, 0)),
    lambda d: (slice(0, 0), d([-6])),
], ids=["array, empty slice", "two arrays, empty slice", "empty slice, array"])
def test_device_positions_into_an_empty_block_are_checked_on_the_device(key: Any) -> None:
    """The scatter step writes x's own values back at the positions and checks them as a
    non-empty block's (tests/test_assignment.py runs the same on the numpy backend)."""
    import cupy as cp

    a = RNG.standard_normal((3, 4, 5))
    with pytest.raises(IndexError, match="out of bounds"):
        a.copy()[key(np.array)] = 0.0
    on_device = lambda p: sl.asarray(cp.asarray(np.array(p)))  # noqa: E731
    x = sl.asarray(cp.asarray(a))
    x[key(on_device)] = 0.0
    with pytest.raises(IndexError, match="out of bounds"):
        x.get()
    y = sl.asarray(cp.asarray(a))
    np.add.at(y, key(on_device), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        y.get()
    ok = sl.asarray(cp.asarray(a))  # in bounds (a negative one too): nothing written
    ok[on_device([-1, 2]), 5:] = 0.0
    np.testing.assert_array_equal(_host(ok), a)
