"""The random-graph checker of ``tests/fuzzgraphs.py`` (run on the GPU by
``tests/gpu/test_random_graphs_gpu.py``): its programs pass on the numpy backend, and it reports a
value that is off, in every kind of step."""

from __future__ import annotations

import fuzzgraphs
import numpy as np
import pytest

import stitchlab as sl

pytestmark = pytest.mark.usefixtures("numpy_backend")


@pytest.mark.parametrize("first", [0, 40])
def test_programs_pass_on_numpy_backend(first: int) -> None:
    bad = {s: p for s in range(first, first + 40) if (p := fuzzgraphs.check(s))}
    assert not bad, bad


def test_wide_programs_pass_on_numpy_backend() -> None:
    """The wide family (every other ufunc and reduction, the newer NumPy functions)."""
    bad = {s: p for s in range(40_000, 40_040) if (p := fuzzgraphs.check(s, family="wide"))}
    assert not bad, bad


def test_assign_programs_pass_on_numpy_backend() -> None:
    """The assign family: assignments into copies (strided slices, masks, repeated positions)
    between the mixed family's steps, checked step by step and under ``sl.jit``."""
    progs = {s: fuzzgraphs.build(s, family="assign") for s in range(50_000, 50_060)}
    assert sum("y = copy(" in p.describe() for p in progs.values()) > 30  # (they do assign)
    bad = {s: p for s in progs if (p := fuzzgraphs.check(s, family="assign"))}
    assert not bad, bad


def test_at_programs_pass_on_numpy_backend() -> None:
    """The at family: ``ufunc.at`` into copies (repeated positions, slices, masks) between the
    mixed family's steps, checked step by step and under ``sl.jit``."""
    progs = {s: fuzzgraphs.build(s, family="at") for s in range(70_000, 70_060)}
    assert sum(".at(y, " in p.describe() for p in progs.values()) > 30  # (they do call ufunc.at)
    bad = {s: p for s in progs if (p := fuzzgraphs.check(s, family="at"))}
    assert not bad, bad


def test_rows_programs_pass_on_numpy_backend() -> None:
    """The rows family: row steps (softmax, logsumexp, cross-entropy, top-p...) over rows as long
    as a vocabulary, some of them special (inf, -inf, NaN, the largest finite value)."""
    pytest.importorskip("ml_dtypes")
    bad = {s: p for s in range(90_000, 90_024) if (p := fuzzgraphs.check(s, family="rows"))}
    assert not bad, bad


def test_rows_family_draws_long_rows_special_rows_and_every_row_step() -> None:
    """What the rows family is for: every step of ``ROW_STEPS``, rows of a vocabulary's width,
    row counts on both sides of the SM count, every dtype and special rows."""
    pytest.importorskip("ml_dtypes")
    progs = [fuzzgraphs.build(s, family="rows") for s in range(90_000, 90_080)]
    text = "\n".join(p.describe() for p in progs)
    names = {"cumsum_softmax": "cumsum(softmax(", "sort_descending": "flip(sort(", "top_p_mask": "where(",
             "scale": " * ", "bias": " + leaf2"}
    assert [s for s in fuzzgraphs.ROW_STEPS if names.get(s, f"{s}(") not in text] == []
    shapes = [p.values[0].np.shape for p in progs]
    assert any(c >= 128_256 for _, c in shapes) and any(r <= 3 for r, _ in shapes) and any(r > 132 for r, _ in shapes)
    assert {p.values[0].np.dtype.name for p in progs} == {"float16", "float32", "float64", "bfloat16"}
    special = sum(bool(np.any(~np.isfinite(p.values[0].np.astype(np.float64)))) for p in progs)
    assert special > len(progs) // 2


def test_wide_family_draws_the_other_steps() -> None:
    """The wide family's programs hold its own steps; the mixed family's never do (its tables are
    unchanged, so the fixed seeds of the GPU tests keep their programs)."""
    def ops(family: str) -> set[str]:
        return {line.split(" = ")[1].split("(")[0] for s in range(40_000, 40_200)
                for line in fuzzgraphs.build(s, family=family).describe().splitlines()[1:]}

    extra = {"arccos", "arcsin", "tan", "rot90", "nanvar", "gradient", "float_power", "deg2rad"}
    assert extra <= ops("wide")
    assert not extra & ops("mixed")


def test_bfloat16_programs_pass_on_numpy_backend() -> None:
    pytest.importorskip("ml_dtypes")
    dtypes = ["bfloat16", "bfloat16", "float32", "int32", "bool"]
    bad = {s: p for s in range(10_000, 10_040) if (p := fuzzgraphs.check(s, dtypes))}
    assert not bad, bad


def _off(value: np.ndarray) -> np.ndarray | None:
    """``value`` with one finite element changed well beyond any tolerance (None: none finite)."""
    out = value.copy()
    flat = out.reshape(-1)
    as_float = flat.astype(np.float64) if flat.dtype != bool else flat
    where = np.flatnonzero(np.isfinite(as_float)) if flat.dtype != bool else np.arange(flat.size)
    if where.size == 0:
        return None
    k = where[len(where) // 2]
    if flat.dtype == bool:
        flat[k] = not flat[k]
    elif flat.dtype.kind in "iu":
        flat[k] = flat[k] + 1 if flat[k] < np.iinfo(flat.dtype).max else flat[k] - 1
    else:
        v = float(flat[k])
        big = np.abs(as_float[where]).max()
        flat[k] = v + max(1.0, abs(v)) + big if v + big < 6e4 else v / 3 - 1
    return out


def test_checker_reports_a_value_that_is_off() -> None:
    kinds = {"rounds": 0, "exact": 0}
    for seed in range(60):
        prog = fuzzgraphs.build(seed)
        steps = prog.values[prog.leaves:]
        if not steps:
            continue
        got = [np.asarray(g) for g in sl.compute(*[v.lazy for v in steps])]
        values = [v.np for v in prog.values[:prog.leaves]] + got
        for k, v in enumerate(steps, start=prog.leaves):
            ins = [values[i] for i in v.ins]
            assert fuzzgraphs.judge(v, values[k], ins) is None
            wrong = _off(values[k])
            if wrong is None:
                continue
            assert fuzzgraphs.judge(v, wrong, ins) is not None, (seed, v.text)
            kinds["rounds" if v.rounds else "exact"] += 1
    assert kinds["rounds"] > 50 and kinds["exact"] > 50, kinds


def test_programs_compile_with_nvrtc() -> None:
    """Every kernel of 30 programs compiles for sm_90 (seeds 1127 and 1217 did not: an argmax
    position combined with int64 values)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    bad = {s: p for s in [1127, 1217, *range(28)] if (p := fuzzgraphs.compile_check(s))}
    assert not bad, bad


def test_reduction_programs_pass_on_numpy_backend() -> None:
    bad = {s: p for s in range(40) if (p := fuzzgraphs.check(s, family="reductions"))}
    assert not bad, bad


def test_reduction_programs_compile_and_their_recipes_fit() -> None:
    """Many accumulators in one kernel (seeds 3, 20, 26, 29: more static shared memory than a
    block has, before ``cost._team_fits``) and empty arrays (seed 13: a recipe the plan cache
    refused, K larger than any node's element count)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    bad = {s: p for s in [3, 13, 20, 26, 29, *range(10)] if (p := fuzzgraphs.compile_check(s, family="reductions"))}
    assert not bad, bad


def test_compile_check_flags_an_integer_min_max_of_a_negation_left_optimized(monkeypatch: pytest.MonkeyPatch) -> None:
    """The premise of ``runtime.kernels.ptxas_options``: every kernel whose PTX takes a 16/32-bit
    integer min or max of a negation compiles with -O0 on an NVRTC before 13.4. Seed 3 of the
    reductions family has one (a ptp of ``leaf0 * -1`` over int32 columns); with the workaround
    switched off the check reports it."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (pip cuda-bindings) is not installed")
    from stitchlab.runtime import kernels

    assert fuzzgraphs.compile_check(3, family="reductions") == []
    monkeypatch.setattr(kernels, "ptxas_options", lambda kernel, version=None: ())
    (problem,) = fuzzgraphs.compile_check(3, family="reductions")
    assert "integer min/max of a negation" in problem and ".s32" in problem


def test_negated_min_max_reads_each_function_on_its_own() -> None:
    """PTX register names are per function: a ``.func`` (float64 ``tan``'s slow path) that negates
    its own ``%r37`` does not make the kernel's ``min`` of its parameter ``%r37`` a negation (wide
    family seed 12300077 was reported for that); a negation in the kernel itself still is."""
    kernel = """.visible .entry k(
\tld.param.u32 \t%r37, [k_param_6];
\tadd.s32 \t%r49, %r4, %r48;
\tmin.s32 \t%r5, %r49, %r37;
}
"""
    helper = """.func  (.param .b32 func_retval0) helper(
\tneg.s32 \t%r37, %r2;
\tmin.s32 \t%r8, %r37, %r3;
}
"""
    assert fuzzgraphs.negated_min_max(kernel + helper) == ["min.s32 %r8, %r37, %r3"]
    assert fuzzgraphs.negated_min_max(helper + kernel) == ["min.s32 %r8, %r37, %r3"]
    negating = kernel.replace("ld.param.u32 \t%r37, [k_param_6]", "neg.s32 \t%r37, %r2")
    assert fuzzgraphs.negated_min_max(negating) == ["min.s32 %r5, %r49, %r37"]


def test_checker_accepts_a_product_that_another_order_overflows() -> None:
    """Seed 2000373 (wide family, H200): a float32 ``nanprod`` of 256 factors is -1.2e37 in NumPy's
    order and -inf in the kernel's, whose partial products pass 3.4e38. Some order overflows when
    the factors' magnitudes past 1 multiply past the largest float32; where they do not, an inf is
    still wrong."""
    prog = fuzzgraphs.build(2000373, family="wide")
    v = next(v for v in prog.values if v.text.startswith("nanprod"))
    (x,) = [prog.values[i].np for i in v.ins]
    overflowed = v.np.copy()
    overflowed[0, 22] = -np.inf
    assert np.isfinite(v.np[0, 22])
    assert fuzzgraphs.judge(v, v.np, [x]) is None
    assert fuzzgraphs.judge(v, overflowed, [x]) is None
    small = (np.sign(x) * (1 + np.abs(x) / 1000)).astype(x.dtype)  # every partial product is near 1
    want = np.nanprod(small, axis=1)
    v.np, wrong = want, want.copy()
    wrong[0, 22] = -np.inf if want[0, 22] < 0 else np.inf
    assert fuzzgraphs.judge(v, want, [small]) is None
    assert "1 of 8160 values off" in fuzzgraphs.judge(v, wrong, [small])


def test_checker_accepts_a_zero_product_that_another_order_turns_to_nan() -> None:
    """Seed 8018482 (mixed family, numpy backend): the ``prod`` of 262,905 float32 factors, one of
    them 0, is NaN in NumPy's order (an overflow to inf, then times 0) and -0.0 in another: 0 is
    the product, so it is accepted; without the zero factor it is not."""
    prog = fuzzgraphs.build(8018482, ["bfloat16", "float16", "int8", "float32"], "mixed")
    v = next(v for v in prog.values if v.text.startswith("prod"))
    x = np.ascontiguousarray(prog.values[v.ins[0]].np)  # (NumPy's prod of the transposed view is -0.0)
    with np.errstate(all="ignore"):
        assert np.isnan(np.prod(x)) and (x == 0).any() and np.isfinite(x).all()
        assert fuzzgraphs.judge(v, np.full(v.np.shape, -0.0, v.np.dtype), [x]) is None
        near_one = np.where(x < 0, -1, 1).astype(x.dtype) * (1 + np.abs(x) / np.float32(1e6))  # no zero, a finite product
        assert "values off" in fuzzgraphs.judge(v, np.full(v.np.shape, -0.0, v.np.dtype), [near_one])


def test_programs_with_numbers_read_at_run_time_pass_on_numpy_backend() -> None:
    """The programs' Python numbers as arguments of an sl.jit function, changed between calls: the
    bits of the program with the numbers written in (fuzzgraphs.numbers_check)."""
    bad = {s: p for s in range(120) if (p := fuzzgraphs.numbers_check(s))}
    assert not bad, bad


@pytest.mark.parametrize(("family", "seeds"), [("mixed", range(10_000_000, 10_000_004)),
                                               ("reductions", range(10_000_006, 10_000_010)),
                                               ("rows", [90_001, 90_006, 90_011])])
def test_programs_run_on_the_host_as_planned_for_the_gpu(family: str, seeds: range) -> None:
    """``--host``: the H200 plans of random programs, their kernels built as host C++ and run with
    their threads as fibers (``tests/compiler/hostkernels.py``), judged as on the GPU (the
    reductions family: row kernels of every team size, block reductions through shared memory; its
    seed 10000008 fails without the barrier in ``sl_block_allreduce_once``; the rows family: long
    rows, few and many, with special values)."""
    from compiler.hostkernels import unsupported

    if unsupported():
        pytest.skip(unsupported())
    bad = {s: p for s in seeds if (p := fuzzgraphs.host_check(s, family=family))}
    assert not bad, bad
