"""argmax/argmin fused into row and column kernels (``sl_op_argmax``/``sl_op_argmin`` over
``sl_arg`` pairs) against NumPy, exactly: ties (the first position), NaN (the first NaN), rows of
-inf/+inf, all equal rows, rows of the integer identities, every row schedule (a warp per row, a
block per row with 16-byte vectors, rows in shared memory, streamed long rows, few long rows split
over blocks) and every column schedule (threads per column, a register cache, tall columns split
over blocks), float16/32/64, integers and bool; long rows and whole arrays; fused with what
surrounds them (an accuracy, a softmax, a second pass over columns).

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -m gpu tests/gpu/test_arg_reductions_gpu.py -q``.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes  # noqa: F401  (registers the "bfloat16" dtype name with NumPy)
import numpy as np
import pytest

import stitchlab as sl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cupy_backend")]

SHAPES = [(1000, 37), (300, 4096), (64, 65_536), (257, 1000)]


def _data(shape: tuple[int, int], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        x = rng.random(shape) < 0.02  # rows of all False among them
        x[::7] = False
        x[3::7] = True  # argmin's identity: position 0
        return x
    x = rng.integers(-20, 20, shape)  # many ties
    x = x.astype(dtype)
    if np.dtype(dtype).kind == "f" or dtype == "bfloat16":
        x[1::5, 3] = np.nan
        x[1::5, -2] = np.nan  # two NaNs: the first counts
        x[2::9] = -np.inf
        x[3::9] = np.inf
        x[4::9, :] = 5  # all equal: position 0
        x[5::9, -1] = 100  # the maximum last
    else:
        x[4::9, :] = 5
        info = np.iinfo(dtype)
        x[6::9, :] = info.min  # the identities, whole rows: position 0
        x[7::9, :] = info.max
        x[8::9, 1::3] = info.min
    return x


def _kernels(*arrays: sl.LazyArray) -> list[str]:
    return [k.schedule.family for k in sl.explain(*arrays).kernels]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "int32", "uint16", "int64", "bool"])
def test_row_argmax_and_argmin_are_numpys(shape: tuple[int, int], dtype: str) -> None:
    import cupy as cp

    x = _data(shape, dtype, seed=shape[0] + shape[1])
    a = sl.asarray(cp.asarray(x))
    assert all(f.startswith("row_") for f in _kernels(a.argmax(-1), a.argmin(-1)))
    for name in ("argmax", "argmin"):
        got = getattr(a, name)(-1).get()
        want = getattr(x, name)(-1)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {dtype} {shape}")
        kept = getattr(a, name)(-1, keepdims=True).get()
        np.testing.assert_array_equal(kept, getattr(x, name)(-1, keepdims=True))


@pytest.mark.parametrize("shape", [(257, 1000), (40, 4099)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32", "bool"])
def test_every_row_schedule_gives_numpys_index(shape: tuple[int, int], dtype: str) -> None:
    """Each schedule the evaluator considers for an argmax/argmin kernel (rows of 4099: split
    over blocks too), and a block per row with the row in shared memory or streamed: each thread
    steps up its own positions (vectors or not) and the pairs combine to NumPy's index."""
    import cupy as cp

    from stitchlab.codegen import emit
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.cost import Launch, Schedule, schedules
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    x = _data(shape, dtype, seed=7)
    a = sl.asarray(cp.asarray(x))
    graph, sources = build_graph([a.argmax(-1)._node, a.argmin(-1)._node])
    bufs = [s.value for s in sources]
    plan = _instance("cupy").plan(graph).plan
    (k0,) = plan.kernels
    rows = shape[0]
    tried = [(e.schedule, e.launch) for e in schedules(k0.info, plan.device)]
    tried += [(Schedule("row_block", block=b, cache=c), Launch((rows, 1, 1), (b, 1, 1))) for b, c in ((256, "shared"), (128, "none"))]
    for sched, launch in tried:
        ks = emit(k0.info, sched)
        k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule, launch=launch)
        got_max, got_min = (o.get() for o in build_executable(dataclasses.replace(plan, kernels=[k]))(bufs))
        np.testing.assert_array_equal(got_max, x.argmax(-1), err_msg=f"argmax {sched}")
        np.testing.assert_array_equal(got_min, x.argmin(-1), err_msg=f"argmin {sched}")
    assert {s.family for s, _ in tried} == {"row_warp", "row_block"} | ({"row_split"} if shape[1] > 4096 else set())
    assert {s.cache for s, _ in tried} == {"registers", "shared", "none"}


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_accuracy_and_softmax_argmax_fused(dtype: str) -> None:
    import cupy as cp

    rng = np.random.default_rng(1)
    logits = (rng.standard_normal((4096, 1000)) * 3).astype(dtype)
    labels = rng.integers(0, 1000, 4096)
    labels[::3] = logits[::3].argmax(-1)  # a third right
    x, t = sl.asarray(cp.asarray(logits)), sl.asarray(cp.asarray(labels))
    hit = x.argmax(-1) == t
    assert len(sl.explain(hit).kernels) == 1
    np.testing.assert_array_equal(hit.get(), logits.argmax(-1) == labels)
    assert float(hit.mean().get()) == pytest.approx(float((logits.argmax(-1) == labels).mean()), abs=1e-12)
    e = sl.exp(x - x.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    assert len(sl.explain(p.argmax(-1), p).kernels) == 1
    # the argmax of the softmax as computed (float16 probabilities tie more often than logits)
    probs = p.get()
    np.testing.assert_array_equal(p.argmax(-1).get(), probs.argmax(-1))


COLUMN_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int32", "uint16", "int64", "bool"]


@pytest.mark.parametrize("shape", [(1000, 37), (4099, 257), (100_003, 7), (33, 4096)])
@pytest.mark.parametrize("dtype", COLUMN_DTYPES)
def test_column_argmax_and_argmin_are_numpys(shape: tuple[int, int], dtype: str) -> None:
    """The row patterns of ``_data`` down the columns; every schedule the evaluator considers for
    the kernel (and a split over blocks), and a middle axis."""
    import cupy as cp

    from stitchlab.codegen import emit
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.cost import Launch, Schedule, schedules
    from stitchlab.runtime import _instance
    from stitchlab.runtime.launch import build_executable

    x = np.ascontiguousarray(_data(shape[::-1], dtype, seed=shape[0]).T)
    a = sl.asarray(cp.asarray(x))
    assert set(_kernels(a.argmax(0), a.argmin(0))) <= {"column", "column_split"}
    np.testing.assert_array_equal(a.argmax(0).get(), x.argmax(0))
    np.testing.assert_array_equal(a.argmin(0, keepdims=True).get(), x.argmin(0, keepdims=True))
    graph, sources = build_graph([a.argmax(0)._node, a.argmin(0)._node])
    bufs = [s.value for s in sources]
    plan = _instance("cupy").plan(graph).plan
    (k0,) = plan.kernels
    tiles = -(-shape[1] // 32)
    tried = [(e.schedule, e.launch) for e in schedules(k0.info, plan.device)]
    tried.append((Schedule("column_split", block=32, ty=8), Launch((tiles * 5, 1, 1), (32, 8, 1), 0, 5)))
    for sched, launch in tried:
        ks = emit(k0.info, sched)
        k = dataclasses.replace(k0, name=ks.name, source=ks.source, params=ks.params, schedule=ks.schedule, launch=launch)
        got_max, got_min = (o.get() for o in build_executable(dataclasses.replace(plan, kernels=[k]))(bufs))
        np.testing.assert_array_equal(got_max, x.argmax(0), err_msg=f"argmax {sched}")
        np.testing.assert_array_equal(got_min, x.argmin(0), err_msg=f"argmin {sched}")
    assert {s.ty for s, _ in tried} >= {4, 8, 16}
    x3 = x[: shape[0] // 3 * 3].reshape(3, shape[0] // 3, shape[1])  # a middle axis
    a3 = sl.asarray(cp.asarray(x3))
    assert _kernels(a3.argmax(1))[0] in ("column", "column_split")  # (3, 33334, 7): split
    np.testing.assert_array_equal(a3.argmax(1).get(), x3.argmax(1))
    np.testing.assert_array_equal(a3.argmin(1).get(), x3.argmin(1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_column_arg_reductions_in_a_second_pass(dtype: str) -> None:
    """``(x - x.max(0)).argmin(0)`` and a column sum in one kernel: the second pass reads the
    columns going up too (a thread steps up its positions); exact in every float dtype."""
    import cupy as cp

    x = np.ascontiguousarray(_data((4096, 2048), dtype, seed=9).T)
    a = sl.asarray(cp.asarray(x))
    d = a - a.max(0)
    (k,) = sl.explain(d.argmin(0), d.argmax(0), a.sum(0)).kernels
    assert k.schedule.family == "column"
    with np.errstate(invalid="ignore"):
        want = x - x.max(0)
    np.testing.assert_array_equal(d.argmin(0).get(), want.argmin(0))
    np.testing.assert_array_equal(d.argmax(0).get(), want.argmax(0))


@pytest.mark.parametrize(("shape", "axis", "dtype"), [((1 << 20,), None, "float32"), ((3, 70_001), None, "float16"),
                                                      ((5, 130_000), -1, "float16"), ((2, 1 << 21), 1, "float32")])
def test_long_rows_and_whole_arrays_fused(shape: tuple[int, ...], axis: int | None, dtype: str) -> None:
    """Rows of any length (few of them: split over blocks) and the argmax of a whole array (its
    flattened row), with the maximum repeated, a NaN late in one row, -inf rows."""
    import cupy as cp

    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, shape).astype(dtype)
    flat = x.reshape(-1, shape[-1])
    flat[0, [shape[-1] - 3, shape[-1] // 2]] = 5000  # two maxima far apart: the first counts
    if flat.shape[0] > 1:
        flat[1, -2] = np.nan
        flat[-1] = -np.inf
    a = sl.asarray(cp.asarray(x))
    assert all(f.startswith("row_") for f in _kernels(a.argmax(axis), a.argmin(axis)))
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(a, name)(axis).get(), getattr(x, name)(axis), err_msg=name)
