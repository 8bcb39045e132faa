"""Aliasing against NumPy: in-place operators on views, writes through views, and sequences of
assignments that read the array they write, each against NumPy doing the same to a NumPy array
(user guide, "Assignment").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stitchlab as sl

RNG = np.random.default_rng(4)

_KEYS = [
    slice(None, None, 2), slice(1, None), slice(None, None, -1), slice(-2, 0, -2), Ellipsis, slice(None),
    (1,), 1, -1, (slice(None), 0), (0, slice(1, None)), (slice(None, None, -2), None), (None, 1),
    (1, 2), (-1, -1), (Ellipsis, 0), (slice(3, 1), 0),
]


def _start(dtype: Any) -> np.ndarray:
    if np.dtype(dtype) == np.bool_:
        return RNG.random((4, 3)) < 0.5
    return RNG.integers(0, 9, (4, 3)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op", ["+=", "-=", "*=", "|=", "//=", "**="])
def test_in_place_operators_on_indexed_arrays_numpy(dtype: Any, op: str) -> None:
    """``x[key] += v`` (Python's ``t = x[key]; t += v; x[key] = t``) gives NumPy's array, or
    NumPy's type of error: a view's operator is in place (its result cast ``same_kind``), an
    integer for every axis gives NumPy a scalar, whose operator is not (promoted, then cast as
    assignment casts: ``x_int8[1, 2] += 1.5`` works where ``x_int8[1:2, 2] += 1.5`` raises)."""
    for key in _KEYS:
        for value in (2, 1.5, True):
            a = _start(dtype)
            x = sl.asarray(a.copy())
            code = f"x[key] {op} value"
            try:
                exec(code, {"x": a, "key": key, "value": value})
            except Exception as e:  # noqa: BLE001 - the same type of error, whatever it is
                base = next(t for t in (TypeError, ValueError, IndexError, OverflowError) if isinstance(e, t))
                with pytest.raises(base):
                    exec(code, {"x": x, "key": key, "value": value})
                continue
            exec(code, {"x": x, "key": key, "value": value})
            got = x.get()
            assert got.dtype == a.dtype
            if op == "**=" and a.dtype.kind == "f":
                # NumPy's own scalar and array powers differ by an ulp (np.float64(7) ** 1.5
                # is ...136, np.array([7.0]) ** 1.5 ...132), and x[i, j] **= v is a scalar's
                np.testing.assert_array_max_ulp(got, a, maxulp=1)
            else:
                np.testing.assert_array_equal(got, a, err_msg=f"x[{key!r}] {op} {value!r}")


def test_in_place_operator_reading_the_array_itself_numpy() -> None:
    a = np.arange(12.0).reshape(4, 3)
    x = sl.asarray(a.copy())
    x[::2] *= x[1::2]
    x[1:, 1] += x[:-1, 1]
    x[-1] -= x[0]
    want = a.copy()
    want[::2] *= want[1::2]
    want[1:, 1] += want[:-1, 1]
    want[-1] -= want[0]
    np.testing.assert_array_equal(x.get(), want)


def test_an_in_place_operator_on_a_view_writes_through_as_numpys() -> None:
    """``v = x[1:3]; v += 10`` changes ``x`` and ``v``, as NumPy's view does; a view taken before
    ``x`` was assigned (its value is not ``x``'s any more) and a transpose raise instead of
    writing nowhere; a scalar's operator (``s = x[1]``) leaves ``x`` as it was."""
    a = np.arange(6.0)
    x, want = sl.asarray(a.copy()), a.copy()
    v, w = x[1:5:2], want[1:5:2]
    v += 10
    w += 10
    v *= 2
    w *= 2
    np.testing.assert_array_equal(x.get(), want)
    np.testing.assert_array_equal(v.get(), w)
    s, t = x[0], want[0]
    s += 1  # NumPy's x[0] is a scalar: x stays
    t += 1
    np.testing.assert_array_equal(x.get(), want)
    assert s.get() == t

    x = sl.asarray(a.copy())
    before = x[1:3]
    x[1] = 50.0
    with pytest.raises(TypeError, match="view of another"):
        before += 1  # (NumPy's would see the 50 and write 51; ours holds the value before)
    np.testing.assert_array_equal(x.get(), [0, 50, 2, 3, 4, 5])
    m = sl.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="view of another"):
        m.T[0] += 5
    np.testing.assert_array_equal(m.get(), np.arange(6.0).reshape(2, 3))


def test_in_place_operators_on_views_inside_jit() -> None:
    @sl.jit
    def bumped(a: Any) -> Any:
        y = a.copy()
        y[1:] += 1
        y[0] *= 3
        return y

    for start in (np.arange(4.0), np.arange(4.0) + 1):
        want = start.copy()
        want[1:] += 1
        want[0] *= 3
        np.testing.assert_array_equal(bumped(sl.asarray(start)).get(), want)

    @sl.jit
    def into_argument(a: Any) -> Any:
        a[1:] += 1
        return a

    with pytest.raises(TypeError, match="assigns into its argument"):
        into_argument(sl.asarray(np.arange(4.0)))


def test_indexed_in_place_operators_fuse_into_one_kernel() -> None:
    """``x[key] += v`` is one assignment (the store Python does after it changes nothing),
    fused as ``x[key] = x[key] + v`` is."""
    x = sl.asarray(np.arange(64.0).reshape(8, 8))
    for i in range(8):
        x[i, ::2] += i
    want = np.arange(64.0).reshape(8, 8)
    for i in range(8):
        want[i, ::2] += i
    assert len(sl.explain(x).kernels) == 1
    np.testing.assert_array_equal(x.get(), want)


def test_base_is_numpys_for_views_and_copies() -> None:
    """``base`` is the array viewed (the first of a chain of views), None for arrays that are no
    view, as NumPy's; the flags agree with it."""
    a = np.arange(12.0).reshape(3, 4).copy()
    x = sl.asarray(a.copy())
    for make in (lambda m: m[1:], lambda m: m.T, lambda m: m[::-1, 1], lambda m: m[None], lambda m: m.reshape(4, 3),
                 lambda m: m.ravel(), lambda m: m.swapaxes(0, 1), lambda m: m.diagonal(), lambda m: m[1:].T[::2]):
        assert make(a).base is a
        assert make(x).base is x and not make(x).flags.owndata
    for make in (lambda m: m.copy(), lambda m: m + 1, lambda m: m.flatten(), lambda m: m[[0, 2]]):
        assert make(a).base is None or make(a).base is not a
        assert make(x).base is None and make(x).flags.owndata
    assert x.base is None and a.base is None


def _both(a: np.ndarray, program: str) -> None:
    """``program`` on a NumPy copy of ``a`` and on a stitchlab one: the same arrays after it."""
    want, got = {"x": a.copy(), "np": np}, {"x": sl.asarray(a.copy()), "np": np}
    exec(program, want)
    exec(program, got)
    for name, value in want.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(sl.asnumpy(got[name]), value, err_msg=f"{name} after {program!r}")
            assert sl.asnumpy(got[name]).dtype == value.dtype


@pytest.mark.parametrize("program", [
    "x[0][1] = 5",
    "x[1:][::2] = -1",
    "x[::-1][0][::2] = 7",
    "x[0][1] += 5",
    "x[1:][0] *= 3",
    "v = x[1:3]; v[...] = 7",
    "v = x[:, ::-1]; v[0] = 9; w = v[1:]; w[:, 0] = -2",
    "x[1].fill(4)",
    "x[::-1].sort(axis=0)",
    "x[1:].sort()",
    "np.copyto(x[0], x[1])",
    "np.add(x[0], 1, out=x[0])",
    "np.multiply(x[1], 2, out=x[0])",
    "np.sum(x, axis=0, out=x[2])",
    "np.exp(x[:, :3] / 10, out=x[:, 1:])",
    "np.put(x[1], [0, 2], [8, 9])",
    "np.putmask(x[:2], x[:2] > 3, 0)",
    "np.add.at(x[0], [0, 0, 1], 1.0)",
    "v = x[1:]; v[0] = 1; x[0, 0] = 2; u = x[2]; u += 1; del v  # (v holds the value before x[0, 0] = 2)",
    "s = x[0, 1]; s += 1",
    "r = x.real; r *= 2",
])
def test_writes_into_a_view_by_indexing_reach_the_array_numpy(program: str) -> None:
    """Every way of writing into a view by basic indexing (``x[0][1] = 5``, ``x[1:].sort()``,
    ``out=x[0]``...) writes into ``x`` as NumPy's view does, and the view holds the new value."""
    _both(np.arange(12.0).reshape(3, 4) % 5, program)


def test_views_that_cannot_write_through_raise() -> None:
    """A transpose (or reshape, ravel, broadcast), a view of one, and a view taken before its
    array was assigned raise instead of writing nowhere, and report ``writeable`` False."""
    x = sl.asarray(np.arange(12.0).reshape(3, 4))
    t = x.T
    stale = x[1]
    x[1, 1] = 50.0
    fresh = x[1]
    for view in (t, t[0], x.reshape(4, 3)[0], stale, x.ravel()[2:]):
        assert not view.flags.writeable
        with pytest.raises(TypeError, match="view of another"):
            view[...] = 0.0
    assert fresh.flags.writeable
    want = np.arange(12.0).reshape(3, 4)
    want[1, 1] = 50.0
    np.testing.assert_array_equal(x.get(), want)


def test_jit_reads_a_captured_array_as_it_was_at_the_first_call() -> None:
    """The user guide's promise (``sl.jit``): assignments into a captured stitchlab array between
    calls are not seen (NumPy's function would see them); the data a captured wrapped NumPy array
    holds is read at each call."""
    host = np.arange(4.0)
    wrapped = sl.asarray(host)
    computed = sl.asarray(np.arange(4.0)) * 1

    @sl.jit
    def plus_wrapped(a: Any) -> Any:
        return a + wrapped

    @sl.jit
    def plus_computed(a: Any) -> Any:
        return a + computed

    ones = sl.ones(4)
    np.testing.assert_array_equal(plus_wrapped(ones).get(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(plus_computed(ones).get(), [1.0, 2.0, 3.0, 4.0])
    host[1] = 50.0  # wrapped data: read at the call
    computed += 10.0  # an assignment: not seen by the trace
    np.testing.assert_array_equal(plus_wrapped(ones).get(), [1.0, 51.0, 3.0, 4.0])
    np.testing.assert_array_equal(plus_computed(ones).get(), [1.0, 2.0, 3.0, 4.0])
    wrapped[0] = 100.0  # an assignment into the wrapper: not seen either
    np.testing.assert_array_equal(plus_wrapped(ones).get(), [1.0, 51.0, 3.0, 4.0])


@pytest.mark.parametrize("call", [
    "sl.tile(x, 2)", "sl.tile(x, (2, 1))", "sl.repeat(x, 2)", "sl.repeat(x, 3, axis=1)", "sl.resize(x, (2, 5))",
    "sl.meshgrid(x[0], x[1])[0]", "sl.meshgrid(x[0], x[1], indexing='ij')[1]", "sl.meshgrid(x[0], x[1], sparse=True)[0]",
], ids=str)
def test_functions_numpy_copies_give_new_arrays(call: str) -> None:
    """``tile``, ``repeat``, ``resize`` and ``meshgrid`` are copies in NumPy: their results take
    assignments of their own (they raised ``TypeError``, as views of ``x``), and ``x`` keeps its
    values."""
    a = np.arange(9.0).reshape(3, 3)
    x, xa = sl.asarray(a.copy()), a.copy()
    got, want = eval(call, {"sl": sl, "x": x}), eval(call.replace("sl.", "np."), {"np": np, "x": xa})
    assert got.flags.writeable and got.flags.owndata and got.base is None
    got[...] = -7.0
    want[...] = -7.0
    np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(x.get(), a)
    np.testing.assert_array_equal(xa, a)


def test_functions_numpy_returns_its_argument_from_give_the_array_itself() -> None:
    """``broadcast_arrays`` of arrays of one shape, ``asarray(x, dtype=x.dtype)`` and
    ``astype(x.dtype, copy=False)`` give ``x`` itself, as NumPy does: a write into the result is a
    write into ``x`` (it wrote into a stand-alone array, and ``x`` kept its values)."""
    a = np.arange(6.0).reshape(2, 3)
    x, xa = sl.asarray(a.copy()), a.copy()
    for k, make in enumerate((lambda m, lib: lib.broadcast_arrays(m, m * 2)[0],
                              lambda m, lib: lib.asarray(m, dtype=np.float64),
                              lambda m, lib: m.astype(np.float64, copy=False),
                              lambda m, lib: lib.astype(m, np.float64, copy=False),
                              lambda m, lib: np.astype(m, np.float64, copy=False))):
        got, want = make(x, sl), make(xa, np)
        got[0, 1] = -7.0 - k
        want[0, 1] = -7.0 - k
        np.testing.assert_array_equal(x.get(), xa)
    np.testing.assert_array_equal(xa[0], [0.0, -11.0, 2.0])
    assert x.astype(np.float32, copy=False) is not x
    wide = sl.broadcast_arrays(x, sl.zeros((4, 2, 3)))[0]  # (broadcast: a view of x, which cannot write)
    with pytest.raises(TypeError, match="view of another"):
        wide[0, 0, 0] = 1.0


def test_a_loop_of_writes_through_a_view_numpy() -> None:
    """200 writes into a row view that read it (``v[i % 8] = v[(i + 1) % 8] + i``): NumPy's values
    in the view and the array."""
    x, a = sl.asarray(np.zeros((4, 8))), np.zeros((4, 8))
    v, w = x[1], a[1]
    for i in range(200):
        v[i % 8] = v[(i + 1) % 8] + i
        w[i % 8] = w[(i + 1) % 8] + i
    np.testing.assert_array_equal(v.get(), w)
    np.testing.assert_array_equal(x.get(), a)
