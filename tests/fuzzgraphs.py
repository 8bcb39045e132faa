"""Random expression graphs at sizes where the GPU schedules differ, checked against NumPy.

``tests/test_random_graphs.py`` draws arrays of at most 5 elements an axis; on a GPU those all take
the smallest schedules. The programs here draw axes of 1 to 4096 elements (up to 2**21 elements an
array; now and then one axis of 0), leaves that are contiguous, transposed or strided views,
chains of elementwise ops, reductions over any axes with and without ``keepdims``, layout changes,
casts, ``where``/``clip``, arg-reductions, ``cumsum``, ``take``, library functions (sorts,
``concatenate``, ``pad``, ``matmul``...) and the stitched patterns (softmax, layernorm,
logsumexp, column normalization), and compute every value at once, so one plan has several fusion
groups with several outputs. The same program is then run as an ``sl.jit`` function (traced,
then replayed), which must give the same bits.

Every value is judged by itself: NumPy's function of the step is applied to the values stitchlab
computed for the step's inputs (a rounding difference earlier cannot add up, and a comparison of
a computed value is checked exactly):

* the result must have NumPy's shape and dtype;
* a step that does not round (comparisons, floor, maximum, layout, integer arithmetic, casts that
  lose nothing...) must give NumPy's values exactly (NaN equal to NaN);
* a step that rounds (float arithmetic, transcendentals, sums, the patterns) is compared with the
  same step in float64: stitchlab's error must be within 4 times NumPy's own error, or within
  ``rtol`` (from the result's dtype) times ``|exact| + max|exact|`` plus ``max|input|`` for
  reductions, logsumexp and centering, or 1 for softmax, layernorm and rmsnorm,
  ``|exact| + |inputs|`` for elementwise steps (a division by a constant is a multiply by its
  reciprocal; CUDA's transcendental functions are not the host's).

``python3 tests/fuzzgraphs.py [first_seed] [count] [--budget-s S] [--dtypes a,b]`` runs programs on
the current backend and prints each failing seed with its program (``--compile-only``: plans them
for the H200, checks each plan's recipe and compiles their kernels with NVRTC, which needs no GPU;
``--capture``: captures each program into a CUDA graph and replays it on new inputs, GPU only;
``--host``: plans them for the H200 and runs the plans on the CPU, kernels as host C++
(``tests/compiler/hostkernels.py``);
``--numbers``: runs each program as an ``sl.jit`` function of its Python numbers too, called with
other numbers, against the program with those numbers written in;
``--family reductions|wide|assign|at|rows``: other programs, ``FAMILIES``; ``rows``: row steps over
rows as long as a vocabulary, some of them special);
``tests/gpu/test_random_graphs_gpu.py`` runs a fixed set of seeds on the GPU and
``tests/test_fuzzgraphs.py`` some on the numpy backend.
"""

from __future__ import annotations

import json
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import stitchlab as sl

DIMS = [1, 2, 3, 5, 8, 17, 32, 33, 64, 100, 128, 255, 256, 513, 1024, 1031, 2048, 4096]
MAX_ELEMENTS = 2**21
DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]
RTOL = {"float16": 1e-2, "bfloat16": 8e-2, "float32": 1e-4, "float64": 1e-10}
# per op: whether its float result is rounded ("round") or exact ("exact")
UNARY = {"negative": "exact", "absolute": "exact", "exp": "round", "log1p": "round", "sqrt": "round",
         "square": "round", "sin": "round", "tanh": "round", "floor": "exact", "sign": "exact",
         "isnan": "exact", "logical_not": "exact", "reciprocal": "round", "log": "round", "expm1": "round",
         "cos": "round", "arctan": "round", "cbrt": "round", "exp2": "round", "log2": "round", "ceil": "exact",
         "trunc": "exact", "rint": "exact", "isinf": "exact", "isfinite": "exact", "signbit": "exact",
         "invert": "exact"}
BINARY = {"add": "round", "subtract": "round", "multiply": "round", "divide": "round", "maximum": "exact",
          "minimum": "exact", "fmax": "exact", "less": "exact", "equal": "exact", "logical_and": "exact",
          "floor_divide": "exact", "power": "round", "arctan2": "round", "remainder": "exact",
          "bitwise_and": "exact", "bitwise_or": "exact", "bitwise_xor": "exact", "hypot": "round",
          "logaddexp": "round", "copysign": "exact", "greater_equal": "exact", "not_equal": "exact",
          "logical_or": "exact", "logical_xor": "exact", "fmin": "exact", "fmod": "exact", "left_shift": "exact",
          "right_shift": "exact", "heaviside": "exact"}
REDUCE = {"sum": "round", "max": "exact", "min": "exact", "mean": "round", "any": "exact",
          "prod": "round", "var": "round", "std": "round", "all": "exact", "nansum": "round",
          "nanmax": "exact", "nanmin": "exact", "ptp": "exact", "count_nonzero": "exact"}
PATTERNS = ["softmax", "layernorm", "logsumexp", "rmsnorm", "center"]
#: the "wide" family draws from these: every other NumPy ufunc and reduction stitchlab provides
#: (the "mixed" family keeps the tables above, so its seeds keep their programs)
UNARY_WIDE = {**UNARY, "arccos": "round", "arccosh": "round", "arcsin": "round", "arcsinh": "round",
              "arctanh": "round", "cosh": "round", "sinh": "round", "tan": "round", "log10": "round",
              "deg2rad": "round", "rad2deg": "round", "fabs": "exact", "positive": "exact"}
BINARY_WIDE = {**BINARY, "float_power": "round", "logaddexp2": "round", "gcd": "exact", "lcm": "exact",
               "greater": "exact", "less_equal": "exact", "bitwise_left_shift": "exact"}
REDUCE_WIDE = {**REDUCE, "nanprod": "round", "nanmean": "round", "nanvar": "round", "nanstd": "round"}
Fn = Callable[..., Any]  # fn(module, *inputs): the step with ``np`` or ``sl`` as the module


@dataclass
class Value:
    """One value of the program: NumPy's result and stitchlab's lazy array of the same step."""

    np: np.ndarray
    lazy: Any
    text: str
    fn: Fn | None = None  # None: a leaf
    ins: tuple[int, ...] = ()  # the step's inputs (positions in the program)
    rounds: bool = False  # the step rounds (judged against float64)
    shadow: Fn | None = None  # the step in float64 where ``fn`` on float64 inputs is not it (casts)
    #: a reduction or a pattern, whose rounding error is relative to its terms, not its result:
    #: "input" (sums, logsumexp, centering: their inputs' scale), "product" (prod, nanprod: the
    #: inputs' scale, and an order of the factors may overflow) or "unit" (normalized results)
    reduces: str = ""
    buf: Any = None  # a leaf: the array it wraps (on the cupy backend a view of a device array)
    number: Any = None  # a step with a Python number: the number (``fn`` takes another as ``c=``)


@dataclass
class Program:
    seed: int
    values: list[Value] = field(default_factory=list)
    leaves: int = 0
    errors: list[str] = field(default_factory=list)  # stitchlab raised building a step

    def describe(self) -> str:
        lines = [f"seed {self.seed}:"]
        for i, v in enumerate(self.values):
            lines.append(f"  v{i} = {v.text}  # {v.np.dtype} {v.np.shape}")
        return "\n".join(lines)


_WIDENING = {("float16", "float32"), ("float16", "float64"), ("float32", "float64"), ("bfloat16", "float32"),
             ("bfloat16", "float64")}


def _dtype(d: Any) -> np.dtype:
    return np.dtype(sl.bfloat16) if d == "bfloat16" else np.dtype(d)


def _is_float(dtype: Any) -> bool:
    return _dtype(dtype).kind == "f" or _dtype(dtype).name == "bfloat16"


def _weak(m: Any, x: Any, c: Any) -> Any:
    """The Python scalar ``c`` beside ``x`` as stitchlab (and CuPy, JAX) take it: weak (NEP 50),
    also beside bfloat16, where ml_dtypes' NumPy loops promote to float32 (user guide)."""
    if m is np and getattr(x, "dtype", None) == _dtype("bfloat16") and isinstance(c, (int, float)):
        return np.asarray(c).astype(x.dtype)
    return c


def _f64(a: Any) -> Any:
    return a.astype(np.float64) if isinstance(a, np.ndarray) and _is_float(a.dtype) else a


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    shape = [int(rng.choice(DIMS[6:] if rng.random() < 0.7 else DIMS)) for _ in range(int(rng.integers(1, 4)))]
    while int(np.prod(shape)) > MAX_ELEMENTS:
        i = int(np.argmax(shape))
        shape[i] = int(rng.choice([d for d in DIMS if d < shape[i]]))
    if rng.random() < 0.03:  # an empty array now and then: kernels with nothing to do
        shape[int(rng.integers(0, len(shape)))] = 0
    return tuple(shape)


def _on_device(a: np.ndarray) -> Any:
    """``a`` where the user's array would be: a device array on the cupy backend (a leaf is a view
    of it), else ``a``."""
    if sl.get_backend() == "cupy":
        import cupy

        return cupy.asarray(a)
    return a


def _leaf(rng: np.random.Generator, shape: tuple[int, ...], name: str, dtypes: list[str], full: bool) -> Value:
    """A leaf of ``shape`` (``full``) or of a shape that broadcasts to it."""
    dtype = str(rng.choice(dtypes))
    sub = shape if full else tuple(d if rng.random() < 0.7 else 1 for d in shape)[int(rng.integers(0, len(shape))):]
    layout = str(rng.choice(["contiguous", "transposed", "strided"], p=[0.7, 0.15, 0.15])) if sub else "contiguous"
    base_shape = {"contiguous": sub, "transposed": sub[::-1], "strided": (*sub[:-1], 2 * sub[-1] if sub else 1)}[layout]
    raw = rng.uniform(-4, 4, size=base_shape)
    base = raw > 0 if dtype == "bool" else raw.astype(_dtype(dtype))
    view = {"contiguous": lambda b: b, "transposed": lambda b: b.T, "strided": lambda b: b[..., ::2]}[layout]
    device = _on_device(base)
    value = np.ascontiguousarray(view(base))
    if sl.get_backend() == "numpy":  # there NumPy itself runs on a view, and its float16 prod
        device, view = value, lambda b: b  # depends on the layout (float32 partial products only
        #                                    along a contiguous axis)
    buf = view(device)
    return Value(value, sl.asarray(buf), f"{name} {dtype}{sub}" + ("" if layout == "contiguous" else f" {layout}"),
                 buf=buf)


def _scale_of(reduction: str) -> str:
    """A reduction's ``Value.reduces``."""
    return "product" if reduction in ("prod", "nanprod") else "input"


def _make(env: list[Value], fn: Fn, ins: tuple[int, ...], kind: str, text: str, shadow: Fn | None = None,
          reduces: str = "") -> Value | None:
    """The step ``fn`` of ``ins``; None where NumPy refuses it (then stitchlab is not asked). An
    exception from stitchlab where NumPy has a result propagates: it is a finding."""
    try:
        if int(np.prod(np.broadcast_shapes(*[env[i].np.shape for i in ins]))) > 4 * MAX_ELEMENTS:
            return None  # an outer product of two long vectors
    except ValueError:
        pass  # shapes that do not broadcast: NumPy's error below, unless the step does not broadcast
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # nanmax of an all-NaN slice
            out = np.asarray(fn(np, *[env[i].np for i in ins]))
    except (TypeError, ValueError, OverflowError):
        return None
    rounds = kind == "round" and _is_float(out.dtype)
    return Value(out, fn(sl, *[env[i].lazy for i in ins]), text, fn, ins, rounds, shadow, reduces)


def _step(rng: np.random.Generator, env: list[Value], wide: bool = False) -> Value | None:
    """One random step on the values so far (None: the step NumPy refuses); ``wide``: from the
    wide family's tables and functions."""
    unary, binary, reduce = (UNARY_WIDE, BINARY_WIDE, REDUCE_WIDE) if wide else (UNARY, BINARY, REDUCE)
    kind = rng.choice(["unary", "binary", "scalar", "reduce", "layout", "cast", "pattern", "select", "arg",
                       "scan", "gather", "library"],
                      p=[0.16, 0.19, 0.08, 0.13, 0.08, 0.06, 0.12, 0.04, 0.03, 0.02, 0.03, 0.06])
    # later values more often: longer chains
    i = int(len(env) - 1 - min(len(env) - 1, int(rng.geometric(0.45)) - 1))
    a = env[i].np
    if kind == "unary":
        fn = str(rng.choice(list(unary)))
        if fn == "reciprocal" and not _is_float(a.dtype):
            return None  # of an integer 0: 0 in kernels, platform-defined in NumPy (user guide)
        return _make(env, lambda m, x: getattr(m, fn)(x), (i,), unary[fn], f"{fn}(v{i})")
    if kind in ("binary", "scalar"):
        fn = str(rng.choice(list(binary)))
        if fn == "power" and not _is_float(a.dtype):
            return None  # integer powers: negative exponents raise in NumPy, overflow wraps
        if kind == "binary":
            j = int(rng.integers(0, len(env)))
            return _make(env, lambda m, x, y: getattr(m, fn)(x, y), (i, j), binary[fn], f"{fn}(v{i}, v{j})")
        c = [2, -1.5, True, 3, 0.5][int(rng.integers(0, 5))]
        made = _make(env, lambda m, x, c=c: getattr(m, fn)(x, _weak(m, x, c)), (i,), binary[fn], f"{fn}(v{i}, {c!r})")
        if made is not None:
            made.number = c
        return made
    if kind == "reduce":
        fn = str(rng.choice(list(reduce)))
        nd = a.ndim
        axis = None if nd == 0 or rng.random() < 0.15 else tuple(
            ax for ax in range(nd) if rng.random() < 0.5) or (int(rng.integers(0, nd)),)
        keepdims = bool(rng.random() < 0.5)
        return _make(env, lambda m, x: getattr(m, fn)(x, axis=axis, keepdims=keepdims), (i,), reduce[fn],
                     f"{fn}(v{i}, axis={axis}, keepdims={keepdims})", reduces=_scale_of(fn))
    if kind == "layout":
        choice = int(rng.integers(0, 5))
        if choice == 0:
            return _make(env, lambda m, x: x.T, (i,), "exact", f"v{i}.T")
        if choice == 1:
            return _make(env, lambda m, x: x.reshape(-1), (i,), "exact", f"v{i}.reshape(-1)")
        if choice == 2 and a.ndim:
            return _make(env, lambda m, x: x[..., ::-1, None], (i,), "exact", f"v{i}[..., ::-1, None]")
        if choice == 3 and a.ndim and a.shape[0] > 2:
            return _make(env, lambda m, x: x[1:-1], (i,), "exact", f"v{i}[1:-1]")
        return _make(env, lambda m, x: x[None], (i,), "exact", f"v{i}[None]")
    if kind == "cast":
        targets = ["bool", "int8", "int32", "float16", "float32", "float64"]
        if any(v.np.dtype == _dtype("bfloat16") for v in env):
            targets.append("bfloat16")
        target = str(rng.choice(targets))
        if _is_float(a.dtype) and target.startswith("int"):
            return None  # out-of-range float -> int casts are undefined in C and differ in NumPy
        rounds = _is_float(target) and (a.dtype.name, target) not in _WIDENING and a.dtype.name != target
        to = _dtype(target)
        return _make(env, lambda m, x: x.astype(to), (i,), "round" if rounds else "exact",
                     f"v{i}.astype({target})", shadow=lambda m, x: x.astype(np.float64))
    if kind == "select":
        j, k = int(rng.integers(0, len(env))), int(rng.integers(0, len(env)))
        if rng.random() < 0.5:
            return _make(env, lambda m, c, x, y: m.where(c, x, y), (i, j, k), "exact", f"where(v{i}, v{j}, v{k})")
        lo, hi = sorted(rng.uniform(-3, 3, 2).round(1).tolist())
        return _make(env, lambda m, x: m.minimum(m.maximum(x, _weak(m, x, lo)), _weak(m, x, hi)), (i,), "exact",
                     f"clip(v{i}, {lo}, {hi})")  # ml_dtypes' np.clip of bfloat16 gives float32
    if kind in ("arg", "scan", "gather") and a.ndim == 0:
        return None
    if kind == "arg":
        fn = str(rng.choice(["argmax", "argmin"]))
        axis = int(rng.integers(0, a.ndim)) if rng.random() < 0.8 else None
        return _make(env, lambda m, x: getattr(m, fn)(x, axis=axis), (i,), "exact", f"{fn}(v{i}, axis={axis})")
    if kind == "scan":
        axis = int(rng.integers(0, a.ndim))
        if a.dtype.kind in "iub" or not _is_float(a.dtype):
            return _make(env, lambda m, x: m.cumsum(x, axis=axis), (i,), "exact", f"cumsum(v{i}, axis={axis})")
        return _make(env, lambda m, x: m.cumsum(x, axis=axis), (i,), "round", f"cumsum(v{i}, axis={axis})",
                     reduces="input")
    if kind == "gather":
        axis = int(rng.integers(0, a.ndim))
        if a.shape[axis] == 0:
            return None
        idx = rng.integers(-a.shape[axis], a.shape[axis], size=int(rng.integers(1, 9)))
        return _make(env, lambda m, x: m.take(x, idx, axis=axis), (i,), "exact",
                     f"take(v{i}, {idx.tolist()}, axis={axis})")
    if kind == "library":
        return _wide_step(rng, env, i) if wide and rng.random() < 0.5 else _library_step(rng, env, i)
    # stitched patterns: a reduction whose result is broadcast back over its input
    if not _is_float(a.dtype) or a.ndim == 0:
        return None
    pattern = str(rng.choice(PATTERNS))
    axis = -1 if rng.random() < 0.6 else int(rng.integers(0, a.ndim))

    def run(m: Any, x: Any) -> Any:
        if pattern == "softmax":
            e = m.exp(x - m.max(x, axis=axis, keepdims=True))
            return e / m.sum(e, axis=axis, keepdims=True)
        if pattern == "layernorm":
            return (x - m.mean(x, axis=axis, keepdims=True)) / m.sqrt(m.var(x, axis=axis, keepdims=True) + _weak(m, x, 1e-5))
        if pattern == "logsumexp":
            mx = m.max(x, axis=axis, keepdims=True)
            return m.log(m.sum(m.exp(x - mx), axis=axis)) + m.squeeze(mx, axis=axis)
        if pattern == "rmsnorm":
            return x / m.sqrt(m.mean(x * x, axis=axis, keepdims=True) + _weak(m, x, 1e-6))
        return x - m.mean(x, axis=axis, keepdims=True)

    scale = "input" if pattern in ("logsumexp", "center") else "unit"
    return _make(env, run, (i,), "round", f"{pattern}(v{i}, axis={axis})", reduces=scale)


def _sortable(m: Any, x: Any) -> Any:
    """``x`` as NumPy sorts it right: bfloat16 in float32 (ml_dtypes' sort of a bfloat16 array
    holding NaN leaves it unsorted; user guide)."""
    return x.astype(np.float32) if m is np and x.dtype == _dtype("bfloat16") else x


def _library_step(rng: np.random.Generator, env: list[Value], i: int) -> Value | None:
    """Layout, ordering and contraction functions (several run as library steps, not kernels)."""
    a = env[i].np
    nd = a.ndim
    if nd == 0:
        return None
    ax = int(rng.integers(0, nd))
    choice = str(rng.choice(["concatenate", "stack", "flip", "roll", "repeat", "tile", "swapaxes", "moveaxis",
                             "expand_dims", "squeeze", "broadcast_to", "sort", "argsort", "diff", "pad", "tril",
                             "matmul", "take_along_axis"]))
    name = f"v{i}"
    if choice == "concatenate":
        return _make(env, lambda m, x: m.concatenate([x, m.flip(x, axis=ax)], axis=ax), (i,), "exact",
                     f"concatenate([{name}, flip({name}, {ax})], axis={ax})")
    if choice == "stack":
        return _make(env, lambda m, x: m.stack([x, m.negative(x)], axis=ax), (i,), "exact",
                     f"stack([{name}, -{name}], axis={ax})")
    if choice == "flip":
        return _make(env, lambda m, x: m.flip(x, axis=ax), (i,), "exact", f"flip({name}, axis={ax})")
    if choice == "roll":
        shift = int(rng.integers(-5, 6))
        return _make(env, lambda m, x: m.roll(x, shift, axis=ax), (i,), "exact", f"roll({name}, {shift}, axis={ax})")
    if choice == "repeat":
        reps = int(rng.integers(1, 3))
        return _make(env, lambda m, x: m.repeat(x, reps, axis=ax), (i,), "exact", f"repeat({name}, {reps}, axis={ax})")
    if choice == "tile":
        reps = tuple(int(r) for r in rng.integers(1, 3, nd))
        return _make(env, lambda m, x: m.tile(x, reps), (i,), "exact", f"tile({name}, {reps})")
    if choice == "swapaxes":
        ax2 = int(rng.integers(0, nd))
        return _make(env, lambda m, x: m.swapaxes(x, ax, ax2), (i,), "exact", f"swapaxes({name}, {ax}, {ax2})")
    if choice == "moveaxis":
        ax2 = int(rng.integers(0, nd))
        return _make(env, lambda m, x: m.moveaxis(x, ax, ax2), (i,), "exact", f"moveaxis({name}, {ax}, {ax2})")
    if choice == "expand_dims":
        return _make(env, lambda m, x: m.expand_dims(x, ax), (i,), "exact", f"expand_dims({name}, {ax})")
    if choice == "squeeze":
        return _make(env, lambda m, x: m.squeeze(x), (i,), "exact", f"squeeze({name})")
    if choice == "broadcast_to":
        shape = (int(rng.integers(1, 4)), *a.shape)
        return _make(env, lambda m, x: m.broadcast_to(x, shape), (i,), "exact", f"broadcast_to({name}, {shape})")
    if choice == "sort":
        return _make(env, lambda m, x: m.sort(_sortable(m, x), axis=ax).astype(x.dtype), (i,), "exact",
                     f"sort({name}, axis={ax})")
    if choice == "argsort":  # stable: ties in the order they come, as both sides must agree
        return _make(env, lambda m, x: m.argsort(_sortable(m, x), axis=ax, kind="stable"), (i,), "exact",
                     f"argsort({name}, axis={ax}, kind='stable')")
    if choice == "take_along_axis":
        return _make(env, lambda m, x: m.take_along_axis(x, m.argsort(_sortable(m, x), axis=ax, kind="stable"),
                                                         axis=ax), (i,),
                     "exact", f"take_along_axis({name}, argsort({name}, axis={ax}), axis={ax})")
    if choice == "diff":
        return _make(env, lambda m, x: m.diff(x, axis=ax), (i,), "round" if _is_float(a.dtype) else "exact",
                     f"diff({name}, axis={ax})", reduces="input")  # of another shape than its input
    if choice == "pad":
        width = tuple((int(p), int(q)) for p, q in rng.integers(0, 3, (nd, 2)))
        # the mode from the widths (no draw of its own: the programs of earlier seeds stay the same)
        mode = ("constant", "edge", "wrap", "reflect", "symmetric")[sum(map(sum, width)) % 5] if a.size else "constant"
        return _make(env, lambda m, x: m.pad(x, width, mode), (i,), "exact", f"pad({name}, {width}, {mode!r})")
    if choice == "tril":
        if nd < 2:
            return None
        k = int(rng.integers(-2, 3))
        return _make(env, lambda m, x: m.tril(x, k), (i,), "exact", f"tril({name}, {k})")
    # matmul of the value and its transpose over the last two axes (inner extent at most 1024)
    if nd < 2 or a.shape[-1] > 1024 or a.dtype == np.bool_ or a.size * a.shape[-2] > 2**24:
        return None
    return _make(env, lambda m, x: m.matmul(x, m.swapaxes(x, -1, -2)), (i,), "round", f"matmul({name}, {name}.mT)",
                 reduces="input")


def _wide_step(rng: np.random.Generator, env: list[Value], i: int) -> Value | None:
    """The newer NumPy functions the wide family adds: rot90, append, ediff1d, trapezoid, nancumsum,
    cumulative_sum, select, isin, gradient."""
    a = env[i].np
    nd = a.ndim
    if nd == 0:
        return None
    ax = int(rng.integers(0, nd))
    name = f"v{i}"
    rounds = "round" if _is_float(a.dtype) else "exact"
    choice = str(rng.choice(["rot90", "append", "ediff1d", "trapezoid", "nancumsum", "cumulative_sum", "select",
                             "isin", "gradient"]))
    if choice == "rot90":
        if nd < 2:
            return None
        k = int(rng.integers(-2, 4))
        return _make(env, lambda m, x: m.rot90(x, k), (i,), "exact", f"rot90({name}, {k})")
    if choice == "append":
        return _make(env, lambda m, x: m.append(x, m.flip(x, axis=ax), axis=ax), (i,), "exact",
                     f"append({name}, flip({name}, {ax}), axis={ax})")
    if choice == "ediff1d":
        return _make(env, lambda m, x: m.ediff1d(x), (i,), rounds, f"ediff1d({name})", reduces="input")
    if choice == "trapezoid":
        return _make(env, lambda m, x: m.trapezoid(x, axis=ax), (i,), rounds, f"trapezoid({name}, axis={ax})",
                     reduces="input")
    if choice == "nancumsum":
        return _make(env, lambda m, x: m.nancumsum(x, axis=ax), (i,), rounds, f"nancumsum({name}, axis={ax})",
                     reduces="input")
    if choice == "cumulative_sum":
        first = bool(rng.random() < 0.5)
        return _make(env, lambda m, x: m.cumulative_sum(x, axis=ax, include_initial=first), (i,), rounds,
                     f"cumulative_sum({name}, axis={ax}, include_initial={first})", reduces="input")
    if choice == "select":
        return _make(env, lambda m, x: m.select([x > _weak(m, x, 1), x < _weak(m, x, -1)], [x, m.negative(x)]),
                     (i,), "exact", f"select([{name} > 1, {name} < -1], [{name}, -{name}])")
    if choice == "isin":
        tests = [0, 1, -2, 3]
        return _make(env, lambda m, x: m.isin(m.floor(x) if _is_float(x.dtype) else x, tests), (i,), "exact",
                     f"isin(floor({name}), {tests})")
    if a.shape[ax] < 2:
        return None  # NumPy's gradient needs two points
    order = int(rng.integers(1, 3)) if a.shape[ax] > 2 else 1
    return _make(env, lambda m, x: m.gradient(x, axis=ax, edge_order=order), (i,), "round",
                 f"gradient({name}, axis={ax}, edge_order={order})", reduces="input")


def _copy_target(rng: np.random.Generator, env: list[Value]) -> tuple[int, np.ndarray, int] | None:
    """A value to update in a copy (recent ones likelier) and an axis of it: (its index, its
    NumPy result, the axis); None for a 0-d or empty value."""
    i = int(len(env) - 1 - min(len(env) - 1, int(rng.geometric(0.45)) - 1))
    a = env[i].np
    if a.ndim == 0 or a.size == 0:
        return None
    return i, a, int(rng.integers(0, a.ndim))


def _assign_step(rng: np.random.Generator, env: list[Value]) -> Value | None:
    """An assignment into a copy of a value (the "assign" family): a scalar at a strided slice, a
    scalar where the copy exceeds a constant, the copy's own values reversed at random positions
    along an axis (repeats: the last value stays), or a strided slice doubled."""
    target = _copy_target(rng, env)
    if target is None:
        return None
    i, a, ax = target
    n = a.shape[ax]
    c = [0, 1, -2, 3][int(rng.integers(0, 4))]
    pre = (slice(None),) * ax
    choice = str(rng.choice(["slice", "mask", "positions", "double"]))
    key: Any = pre + (slice(int(rng.integers(-n, n)), None, int(rng.choice([-3, -1, 1, 2]))),)
    if choice == "positions":
        key = pre + (rng.integers(-n, n, size=int(rng.integers(1, 2 * n + 1))),)

    def assigned(m: Any, x: Any) -> Any:
        y = m.copy(x)
        if choice == "mask":
            y[y > _weak(m, x, c)] = _weak(m, x, -c)
        elif choice == "positions":
            y[key] = m.flip(y[key], axis=ax)
        elif choice == "double":
            y[key] = y[key] * _weak(m, x, 2)
        else:
            y[key] = _weak(m, x, c)
        return y

    what = {"mask": f"y[y > {c}] = {-c}", "positions": f"y[{key!r}] = flip(y[...], {ax})",
            "double": f"y[{key!r}] *= 2", "slice": f"y[{key!r}] = {c}"}[choice]
    return _make(env, assigned, (i,), "exact", f"y = copy(v{i}); {what}")


#: the ufuncs the "at" family applies, by the kind of the array's dtype
_AT_UFUNCS = {"f": ["add", "subtract", "multiply", "maximum", "minimum", "fmax"],
              "i": ["add", "subtract", "multiply", "maximum", "minimum", "bitwise_xor", "bitwise_or"],
              "b": ["logical_or", "logical_and", "add", "maximum", "bitwise_xor"]}


def _at_step(rng: np.random.Generator, env: list[Value]) -> Value | None:
    """``ufunc.at`` into a copy of a value (the "at" family): at random positions along an axis
    (repeats: each applied in order), behind a slice, at a strided slice, or where the copy exceeds
    a constant; the values are the copy's own at the key, reversed, or the constant, both of the
    copy's dtype (so the loop is the dtype's own)."""
    target = _copy_target(rng, env)
    if target is None:
        return None
    i, a, ax = target
    n = a.shape[ax]
    kind = "f" if _is_float(a.dtype) else "b" if a.dtype == np.bool_ else "i"
    name = str(rng.choice(_AT_UFUNCS[kind]))
    c = np.asarray([0, 1, -2, 3][int(rng.integers(0, 4))]).astype(a.dtype)
    pre = (slice(None),) * ax
    choice = str(rng.choice(["positions", "positions", "slice", "mask"]))
    key: Any = pre + (slice(int(rng.integers(-n, n)), None, int(rng.choice([-2, 1, 3]))),)
    if choice == "positions":
        key = pre + (rng.integers(-n, n, size=int(rng.integers(1, 3 * n + 1))),)

    def updated(m: Any, x: Any) -> Any:
        y = m.copy(x)
        if choice == "mask":
            getattr(m, name).at(y, y > c, c)
        else:
            getattr(m, name).at(y, key, m.flip(y[key], axis=ax))
        return y

    what = f"{name}.at(y, y > {c}, {c})" if choice == "mask" else f"{name}.at(y, {key!r}, flip(y[...], {ax}))"
    return _make(env, updated, (i,), "exact", f"y = copy(v{i}); {what}")


def _reduction_step(rng: np.random.Generator, env: list[Value], axis: tuple[int, ...]) -> Value | None:
    """A reduction of the first leaf times 1, 2 or -1 over ``axis``: the ``reductions`` family,
    whose steps all join one group (a kernel with many accumulators)."""
    fn = str(rng.choice(list(REDUCE) + (["argmax", "argmin"] if len(axis) == 1 else [])))
    keepdims = bool(rng.random() < 0.5)
    c = [1, 2, -1][int(rng.integers(0, 3))]
    if fn in ("argmax", "argmin"):
        return _make(env, lambda m, x: getattr(m, fn)(x * _weak(m, x, c), axis=axis[0], keepdims=keepdims), (0,),
                     "exact", f"{fn}(leaf0 * {c}, axis={axis[0]}, keepdims={keepdims})")
    return _make(env, lambda m, x: getattr(m, fn)(x * _weak(m, x, c), axis=axis, keepdims=keepdims), (0,),
                 REDUCE[fn], f"{fn}(leaf0 * {c}, axis={axis}, keepdims={keepdims})", reduces=_scale_of(fn))


#: the "rows" family: rows as long as a vocabulary, few to many of them (vocabularies of GPT-2,
#: Llama 2 and 3, Qwen 2; the row-count boundaries of the H200's 132 SMs), at most ROW_ELEMENTS
ROW_WIDTHS = [1000, 2048, 4097, 8192, 32000, 50257, 65536, 128256, 151936]
ROW_COUNTS = [1, 2, 3, 8, 17, 64, 131, 132, 133, 256, 512]
ROW_ELEMENTS = 2**23
#: the rows family's dtypes where none are asked for (a language model's logits)
ROW_DTYPES = ["float32", "float32", "bfloat16", "float16", "float64"]
#: the row steps, along the last axis (sometimes the first): the stitched patterns, the language
#: model heads built from them, and elementwise steps between them
ROW_STEPS = ["softmax", "log_softmax", "logsumexp", "cross_entropy", "entropy", "layernorm", "rmsnorm",
             "cumsum_softmax", "sort_descending", "top_p_mask", "argmax", "max", "scale", "bias", "exp"]


def _special_rows(rng: np.random.Generator, a: np.ndarray) -> None:
    """Some rows of the 2-d float array ``a`` made of special values, in place (each row with
    probability 1/4): the maximum rising along the row or falling, +inf at a few places, -inf
    over the head and tail (finite between), all -inf, a NaN, +inf beside -inf, the dtype's
    largest finite values."""
    rows, n = a.shape
    big = float(_max_finite(a.dtype))
    for r in range(rows):
        if rng.random() >= 0.25:
            continue
        kind = int(rng.integers(0, 8))
        at = rng.integers(0, n, size=3)
        if kind == 0:
            a[r] = np.linspace(-30, 30, n)
        elif kind == 1:
            a[r] = np.linspace(30, -30, n)
        elif kind == 2:
            a[r, at] = np.inf
        elif kind == 3:
            head, tail = sorted(rng.integers(0, n + 1, size=2).tolist())
            a[r, :head] = a[r, tail:] = -np.inf
        elif kind == 4:
            a[r] = -np.inf
        elif kind == 5:
            a[r, at[0]] = np.nan
        elif kind == 6:
            a[r, at[0]], a[r, at[1]] = np.inf, -np.inf
        else:
            a[r, at] = big


def _rows_leaves(rng: np.random.Generator, dtypes: list[str]) -> list[Value]:
    """The rows family's leaves: a 2-d float array of logits-like values (some rows special), its
    rows' class indices and a bias along the rows."""
    floats = [d for d in dtypes if _is_float(_dtype(d))] or ["float32"]  # (ints: the targets are int64)
    dtype = _dtype(str(rng.choice(floats)))
    n = int(rng.choice(ROW_WIDTHS))
    rows = int(rng.choice([r for r in ROW_COUNTS if r * n <= ROW_ELEMENTS]))
    scale = float(rng.choice([1.0, 4.0, 30.0]))
    x = (rng.standard_normal((rows, n)) * scale).astype(dtype)
    _special_rows(rng, x)
    strided = rng.random() < 0.1  # (the logits as the first half of each row of a wider array)
    logits = _on_device(np.concatenate([x, x], axis=1))[:, :n] if strided else _on_device(x)
    targets = rng.integers(0, n, size=rows).astype(np.int64)
    bias = (rng.standard_normal(n) * 0.5).astype(dtype)
    return [Value(x, sl.asarray(logits), f"leaf0 {dtype}{x.shape}" + (" strided" if strided else ""), buf=logits),
            *(Value(a, sl.asarray(d := _on_device(a)), f"leaf{k} {a.dtype}{a.shape}", buf=d)
              for k, a in ((1, targets), (2, bias)))]


def _row_step(rng: np.random.Generator, env: list[Value]) -> Value | None:
    """One step of the rows family on a float value of the program (later ones likelier)."""
    i = int(len(env) - 1 - min(len(env) - 1, int(rng.geometric(0.45)) - 1))
    a = env[i].np
    if not _is_float(a.dtype) or a.ndim == 0 or a.size == 0:
        i, a = 0, env[0].np
    step = str(rng.choice(ROW_STEPS))
    axis = -1 if rng.random() < 0.85 or a.ndim == 1 else 0
    name = f"v{i}"

    def lse(m: Any, x: Any, keepdims: bool) -> Any:
        mx = m.max(x, axis=axis, keepdims=True)
        mx = m.where(m.isfinite(mx), mx, _weak(m, x, 0))  # (as scipy's logsumexp: ±inf rows stay)
        out = m.log(m.sum(m.exp(x - mx), axis=axis, keepdims=True)) + mx
        return out if keepdims else m.squeeze(out, axis=axis)

    def softmax(m: Any, x: Any) -> Any:
        e = m.exp(x - m.max(x, axis=axis, keepdims=True))
        return e / m.sum(e, axis=axis, keepdims=True)

    if step == "softmax":
        return _make(env, softmax, (i,), "round", f"softmax({name}, axis={axis})", reduces="unit")
    if step == "log_softmax":
        return _make(env, lambda m, x: x - lse(m, x, True), (i,), "round", f"log_softmax({name}, axis={axis})",
                     reduces="input")
    if step == "logsumexp":
        return _make(env, lambda m, x: lse(m, x, False), (i,), "round", f"logsumexp({name}, axis={axis})",
                     reduces="input")
    if step == "cross_entropy":
        if a.ndim != 2 or a.shape[0] != env[1].np.shape[0] or axis != -1:
            return None
        return _make(env, lambda m, x, t: lse(m, x, False) - m.take_along_axis(x, t[:, None], axis=1)[:, 0], (i, 1),
                     "round", f"cross_entropy({name}, leaf1)", reduces="input")
    if step == "entropy":
        return _make(env, lambda m, x: -m.sum(softmax(m, x) * (x - lse(m, x, True)), axis=axis), (i,), "round",
                     f"entropy({name}, axis={axis})", reduces="input")
    if step in ("layernorm", "rmsnorm"):
        # of the logits only: a normalization's rounding error grows with |mean| / std of its
        # input, which the judge's unit scale does not know (the layernorm of three entropies
        # near log(n) was 3.5e-4 off, NumPy 0.9e-4)
        i, name = 0, "v0"
        if step == "layernorm":
            def norm(m: Any, x: Any) -> Any:
                return (x - m.mean(x, axis=axis, keepdims=True)) / m.sqrt(m.var(x, axis=axis, keepdims=True) + _weak(m, x, 1e-5))
        else:
            def norm(m: Any, x: Any) -> Any:
                return x / m.sqrt(m.mean(x * x, axis=axis, keepdims=True) + _weak(m, x, 1e-6))
        return _make(env, norm, (i,), "round", f"{step}({name}, axis={axis})", reduces="unit")
    if step == "cumsum_softmax":
        return _make(env, lambda m, x: m.cumsum(softmax(m, x), axis=axis), (i,), "round",
                     f"cumsum(softmax({name}, axis={axis}), axis={axis})", reduces="unit")
    if step == "sort_descending":
        return _make(env, lambda m, x: m.flip(m.sort(_sortable(m, x), axis=axis), axis=axis).astype(x.dtype), (i,),
                     "exact", f"flip(sort({name}, axis={axis}), axis={axis})")
    if step == "top_p_mask":  # the logits kept by top-p sampling of sorted ones (p of 0.5 to 0.99)
        j = int(rng.integers(0, len(env)))
        p = float(rng.choice([0.5, 0.9, 0.99]))
        return _make(env, lambda m, c, x: m.where(c < _weak(m, c, p), x, _weak(m, x, -np.inf)), (j, i), "exact",
                     f"where(v{j} < {p}, {name}, -inf)")
    if step == "argmax":
        return _make(env, lambda m, x: m.argmax(x, axis=axis), (i,), "exact", f"argmax({name}, axis={axis})")
    if step == "max":
        return _make(env, lambda m, x: m.max(x, axis=axis), (i,), "exact", f"max({name}, axis={axis})")
    if step == "scale":
        c = float(rng.choice([0.5, 1 / 0.7, -2.0]))
        made = _make(env, lambda m, x, c=c: x * _weak(m, x, c), (i,), "round", f"{name} * {c!r}")
        if made is not None:
            made.number = c
        return made
    if step == "bias":
        return _make(env, lambda m, x, b: x + b, (i, 2), "round", f"{name} + leaf2")
    return _make(env, lambda m, x: m.exp(x), (i,), "round", f"exp({name})")


#: program families: "mixed" (any steps), "reductions" (4 to 12 reductions of one leaf over
#: the same axes, as many accumulators in one kernel: seven float64 column sums once took more
#: static shared memory than a block has) and "wide" (the steps of "mixed" from larger tables:
#: every other ufunc and reduction stitchlab provides, and the newer NumPy functions) and
#: "assign" (the steps of "mixed" with assignments into copies between them) and "at" (the same
#: with ``ufunc.at`` into copies) and "rows" (row steps over long rows, ``ROW_STEPS``)
FAMILIES = ("mixed", "reductions", "wide", "assign", "at", "rows")


def build(seed: int, dtypes: list[str] | None = None, family: str = "mixed") -> Program:
    """The program of ``seed`` in ``family``: its values, NumPy's results and the lazy arrays."""
    if family not in FAMILIES:
        raise ValueError(f"program family {family!r}: use one of {FAMILIES}")
    rng = np.random.default_rng(seed)
    prog = Program(seed)
    if family == "rows":
        prog.values = _rows_leaves(rng, dtypes or ROW_DTYPES)
        prog.leaves = len(prog.values)
        steps = [lambda: _row_step(rng, prog.values)] * int(rng.integers(1, 5))
    else:
        shape = _shape(rng)
        prog.leaves = int(rng.integers(1, 4))
        for k in range(prog.leaves):
            prog.values.append(_leaf(rng, shape, f"leaf{k}", dtypes or DTYPES, full=k == 0))
        if family == "reductions":
            nd = len(shape)
            axis = tuple(ax for ax in range(nd) if rng.random() < 0.5) or (int(rng.integers(0, nd)),)
            steps = [lambda: _reduction_step(rng, prog.values, axis)] * int(rng.integers(4, 13))
        elif family in ("assign", "at"):
            special = _assign_step if family == "assign" else _at_step
            steps = [lambda: special(rng, prog.values) if rng.random() < 0.5 else _step(rng, prog.values)] * int(
                rng.integers(1, 9))
        else:
            steps = [lambda: _step(rng, prog.values, wide=family == "wide")] * int(rng.integers(1, 9))
    for step in steps:
        try:
            v = step()
        except Exception:  # noqa: BLE001 - stitchlab refused what NumPy computes: a finding
            prog.errors.append(traceback.format_exc(limit=4))
            break
        if v is not None:
            prog.values.append(v)
    return prog


def _as_numpy(x: Any) -> np.ndarray:
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else np.asarray(x)


def _max_finite(dtype: np.dtype) -> float:
    if dtype.name == "bfloat16":
        import ml_dtypes

        return float(ml_dtypes.finfo(dtype).max)
    return float(np.finfo(dtype).max)


def _finite_abs(x: np.ndarray) -> np.ndarray:
    """|x|, 0 where x is not finite (an infinite input bounds nothing)."""
    a = np.abs(_f64(np.asarray(x)))
    return np.where(np.isfinite(a), a, 0.0)


def _max_abs(x: np.ndarray) -> float:
    a = np.abs(_f64(np.asarray(x)))
    finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    return float(finite.max()) if finite.size else 0.0


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _is_float(a.dtype):
        a, b = a.astype(np.float64), b.astype(np.float64)
        return (a == b) | (np.isnan(a) & np.isnan(b))
    return a == b


def judge(v: Value, got: np.ndarray, ins: list[np.ndarray]) -> str | None:
    """Why ``got`` (stitchlab's value of ``v``, whose inputs stitchlab computed as ``ins``) is wrong,
    or None."""
    want_dtype, want_shape = v.np.dtype, v.np.shape
    if v.lazy.shape != want_shape or v.lazy.dtype != want_dtype:
        return f"lazy shape/dtype {v.lazy.shape} {v.lazy.dtype}, NumPy {want_shape} {want_dtype}"
    if got.shape != want_shape or got.dtype != want_dtype:
        return f"shape/dtype {got.shape} {got.dtype}, NumPy {want_shape} {want_dtype}"
    assert v.fn is not None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        e = np.asarray(v.fn(np, *ins))  # NumPy's step on stitchlab's inputs
        if not v.rounds:
            ok = _same(got, e)
            if not np.all(ok):
                bad = tuple(int(k) for k in np.argwhere(~ok)[0])
                return f"{int((~ok).sum())} of {ok.size} values differ, first at {bad}: {got[bad]!r}, NumPy {e[bad]!r}"
            return None
        t = np.asarray((v.shadow or v.fn)(np, *[_f64(x) for x in ins]), dtype=np.float64)
        g, e = got.astype(np.float64), e.astype(np.float64)
        if v.reduces:
            mag = np.abs(t) + _max_abs(t) + (sum(_max_abs(x) for x in ins) if v.reduces != "unit" else 1.0)
        else:  # an elementwise step's, to its result and inputs (reciprocal multiplies, CUDA's functions)
            mag = sum((_finite_abs(x) for x in ins if _is_float(np.asarray(x).dtype)), _finite_abs(t))
        err_g, err_e = np.abs(g - t), np.abs(e - t)
        rtol = RTOL[want_dtype.name]
        ok = ((err_g <= 4 * err_e) & np.isfinite(e)) | (err_g <= rtol * mag) | (g == e)
        ok |= np.isnan(g) & (np.isnan(e) | np.isnan(t))
        ok |= np.isinf(g) & (np.sign(g) == np.sign(t)) & (np.abs(t) >= _max_finite(want_dtype))  # overflows
        if v.reduces:  # a product whose partial products overflow (inf) or underflow (0, then NaN)
            # in NumPy's order too (its result not finite, or off by all of it): the order decides
            ok |= ~np.isfinite(g) & (~np.isfinite(e) | (err_e >= np.abs(t)))
        if v.reduces == "product":  # a finite product that some order of its factors overflows: the
            # product of every factor's magnitude past 1 is past the largest finite value (seed 2000373)
            big = np.abs(np.asarray(v.fn(np, *[np.where(np.isnan(_f64(x)), 1.0, np.maximum(np.abs(_f64(x)), 1.0)) for x in ins])))
            ok |= np.isinf(g) & (np.sign(g) == np.sign(t)) & (big >= _max_finite(want_dtype))
            # a zero factor and no NaN or inf one: the product is 0, which an order that overflows to
            # inf first turns into NaN (NumPy's and float64's, seed 8018482); 0 is then right
            def of(mark: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
                return np.asarray(v.fn(np, *[mark(_f64(x)) for x in ins]))

            exact_zero = ((of(lambda x: np.where(x == 0, 0.0, 1.0)) == 0) & ~np.isnan(of(lambda x: np.where(np.isnan(x), np.nan, 1.0)))
                          & (of(lambda x: np.where(np.isinf(x), 2.0, 1.0)) == 1))
            ok |= (g == 0) & exact_zero & (np.isnan(e) | np.isnan(t))
    if not np.all(ok):
        bad = tuple(int(k) for k in np.argwhere(~ok)[0])
        return (f"{int((~ok).sum())} of {ok.size} values off, first at {bad}: {g[bad]!r}, NumPy {e[bad]!r}, "
                f"float64 {t[bad]!r} (rtol {rtol})")
    return None


def check(seed: int, dtypes: list[str] | None = None, jit: bool = True, family: str = "mixed") -> list[str]:
    """Build and compute the program of ``seed``; the problems found (empty when all agree). With
    ``jit``, also run it under ``sl.jit`` and compare the bits."""
    prog = build(seed, dtypes, family)
    steps = prog.values[prog.leaves:]
    if prog.errors or not steps:
        return [f"raised building the next step: {e}" for e in prog.errors]
    try:
        got = [_as_numpy(g) for g in sl.compute(*[v.lazy for v in steps])]
    except Exception:  # noqa: BLE001 - a crash is a finding, reported with the program
        return [f"raised: {traceback.format_exc(limit=6)}"]
    values = [v.np for v in prog.values[:prog.leaves]] + got
    problems = []
    for k, v in enumerate(steps, start=prog.leaves):
        why = judge(v, values[k], [values[i] for i in v.ins])
        if why:
            problems.append(f"v{k} = {v.text}: {why}")
    if jit and not problems:
        problems += _check_jit(prog, got)
    return problems


#: the numbers a program's Python numbers are changed to by :func:`numbers_check` (a change of
#: kind, int to float, is a new trace too; bools stay: they are part of the signature by value)
OTHER_NUMBERS = [0.25, -2.5, 3, 0, -7, 1e-3, 100, 2.0, 300, 0.5]


def numbers_check(seed: int, dtypes: list[str] | None = None, family: str = "mixed") -> list[str]:
    """The program of ``seed`` as an ``sl.jit`` function of its leaves and its Python numbers (the
    "scalar" steps'), called with its own numbers, with two other sets (read at run time from the
    second call on) and with its own again: each call must give the bits of the program evaluated
    with those numbers written in (eager, by value), or raise the same error. On the numpy backend
    (on the GPU a divisor written in is a multiply by its reciprocal, a divisor read at run time a
    division: not the same bits)."""
    prog = build(seed, dtypes, family)
    steps = prog.values[prog.leaves:]
    if prog.errors:
        return [f"raised building the next step: {e}" for e in prog.errors]
    own = [v.number for v in steps if v.number is not None]
    if not own:
        return []

    def run(leaves: Any, numbers: Any) -> tuple[Any, ...]:
        env, it = list(leaves), iter(numbers)
        for v in steps:
            assert v.fn is not None
            env.append(v.fn(sl, *[env[i] for i in v.ins], **({"c": next(it)} if v.number is not None else {})))
        return tuple(env[prog.leaves:])

    def outcome(call: Callable[[], Any]) -> tuple[list[np.ndarray] | None, str | None]:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return [_as_numpy(o) for o in sl.compute(*call())], None
        except Exception as exc:  # noqa: BLE001 - compared with the other call's
            return None, type(exc).__name__

    rng = np.random.default_rng(seed)
    other = [[c if type(c) is bool else OTHER_NUMBERS[int(rng.integers(0, len(OTHER_NUMBERS)))] for c in own]
             for _ in range(2)]
    leaves = [v.lazy for v in prog.values[:prog.leaves]]
    fn = sl.jit(lambda *args: run(args[:prog.leaves], args[prog.leaves:]))
    problems = []
    for numbers in (own, *other, own):
        want, want_error = outcome(lambda numbers=numbers: run(leaves, numbers))
        got, got_error = outcome(lambda numbers=numbers: fn(*leaves, *numbers))
        if want_error or got_error:
            if want_error != got_error:
                problems.append(f"numbers {numbers}: by value {want_error or 'computes'}, sl.jit {got_error or 'computes'}")
            continue
        assert want is not None and got is not None
        for k, (g, w) in enumerate(zip(got, want, strict=True), start=prog.leaves):
            if g.dtype != w.dtype or g.shape != w.shape or not np.all(_same(g, w)):
                problems.append(f"numbers {numbers}: v{k} = {prog.values[k].text} differs from the value by value")
    return problems


def compile_check(seed: int, dtypes: list[str] | None = None, family: str = "mixed") -> list[str]:
    """Plan the program of ``seed`` for the H200, lower the plan to its recipe (what the plan
    cache stores) and check it against the graph, and compile every kernel with NVRTC (no GPU
    needed: ``cuda.bindings.nvrtc``); the problems: a crash, kernels that do not compile (with
    NVRTC's error), or a kernel whose PTX takes an integer min/max of a negation that an NVRTC
    before 13.4 would compile optimized (:func:`negated_min_max`)."""
    from stitchlab.runtime import plan_cache
    from stitchlab.runtime.kernels import ptxas_options
    from stitchlab.runtime.nvrtc import CompileError, compile_cubin

    prog = build(seed, dtypes, family)
    steps = prog.values[prog.leaves:]
    if prog.errors or not steps:
        return [f"raised building the next step: {e}" for e in prog.errors]
    problems = []
    try:
        plan = sl.explain(*[v.lazy for v in steps], device="H200")
        kernels = plan.kernels
    except Exception:  # noqa: BLE001 - a planning crash is a finding
        return [f"planning raised: {traceback.format_exc(limit=6)}"]
    try:  # (a plan of views only has no kernels, and nothing worth storing)
        if kernels:
            recipe = json.loads(json.dumps(plan_cache.lower(plan, ["ab" * 32] * len(kernels))))
            plan_cache.validate(recipe, plan.graph)
    except Exception:  # noqa: BLE001 - a plan the cache cannot store (or rejects) is a finding
        problems.append(f"recipe: {traceback.format_exc(limit=6)}")
    for k in kernels:
        if getattr(k, "error", None):
            problems.append(f"{k.name}: {k.error}")
        elif getattr(k, "source", None):
            try:
                compile_cubin(k.source, k.name, "sm_90")
            except CompileError as exc:
                errors = [line for line in str(exc).splitlines() if "error" in line]
                problems.append(f"{k.name} ({k.schedule.family}) does not compile: {' | '.join(errors[:3])}")
                continue
            ptx = ptx_of(k.source)
            if not ptxas_options(k, "13.0") and (hits := negated_min_max(ptx)):
                problems.append(f"{k.name} ({k.schedule.family}): integer min/max of a negation ({hits[0]}) that an "
                                "NVRTC before 13.4 would compile optimized (runtime.kernels.ptxas_options)")
            if _byte_vectors_only(k.source) and (hits := packed_byte_reads(ptx)):
                problems.append(f"{k.name} ({k.schedule.family}): {len(hits)} instructions read past the low byte of "
                                f"a half that holds two bytes ({hits[0]})")
    return problems


def host_check(seed: int, dtypes: list[str] | None = None, family: str = "mixed") -> list[str]:
    """Plan the program of ``seed`` for the H200 and run the plan on the CPU
    (``tests/compiler/hostkernels.py``: each kernel built as host C++, its threads as fibers,
    warps in increasing and then decreasing order, which must give the same bits); each value is
    judged as :func:`check` judges it. No GPU needed: what the emitters write, not the device's
    arithmetic, is under test."""
    import tempfile
    from pathlib import Path

    from compiler.hostkernels import run_plan  # tests/ is on sys.path (this file's folder)

    from stitchlab.codegen.program import build_plan
    from stitchlab.ir.graph import build_graph
    from stitchlab.plan.device import preset

    prog = build(seed, dtypes, family)
    steps = prog.values[prog.leaves:]
    if prog.errors or not steps:
        return [f"raised building the next step: {e}" for e in prog.errors]
    try:
        graph, sources = build_graph([v.lazy._node for v in steps])
        plan = build_plan(graph, preset("H200"))
        directory = Path(tempfile.gettempdir()) / "stitchlab-host-kernels"
        directory.mkdir(exist_ok=True)
        with np.errstate(all="ignore"):
            up = run_plan(plan, sources, directory)
            down = run_plan(plan, sources, directory, order=1)
    except Exception:  # noqa: BLE001 - a crash is a finding, reported with the program
        return [f"raised: {traceback.format_exc(limit=6)}"]
    problems = [f"v{k} = {steps[k - prog.leaves].text}: other bits with the warps in another order"
                for k, (a, b) in enumerate(zip(up, down, strict=True), start=prog.leaves)
                if a.shape != b.shape or a.tobytes() != b.tobytes()]
    values = [v.np for v in prog.values[:prog.leaves]] + [np.asarray(g).reshape(v.lazy.shape) for g, v in zip(up, steps, strict=True)]
    for k, v in enumerate(steps, start=prog.leaves):
        why = judge(v, values[k], [values[i] for i in v.ins])
        if why:
            problems.append(f"v{k} = {v.text}: {why}")
    return problems


def ptx_of(source: str) -> str:
    """NVRTC's PTX of ``source`` for sm_90 (the runtime's options, a virtual architecture: no
    ptxas)."""
    from cuda.bindings import nvrtc

    from stitchlab.runtime.nvrtc import _options

    _, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"k.cu", 0, [], [])
    try:
        opts = _options("compute_90")
        nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        buf = bytearray(size)
        nvrtc.nvrtcGetPTX(prog, buf)
        return buf.decode(errors="replace")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


_PTX_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)\s+([^;]*);", re.M)
_INT_MIN_MAX = re.compile(r"(min|max)\.[su](16|32)")


def negated_min_max(ptx: str) -> list[str]:
    """The 16/32-bit integer min/max instructions of ``ptx`` with an operand that is a negation
    (``neg``, ``sub`` from 0, a multiply by a negative constant), also through ``mov``, ``cvt``,
    ``selp`` and other min/max: what ptxas before CUDA 13.4 can fuse into a VIMNMX3 that drops
    the negation (docs/compiler.md §8). Each function of ``ptx`` on its own: register names are
    per function (a ``tan`` of float64 brings a ``.func`` whose ``%r37`` is not the kernel's)."""
    starts = sorted({0, *(m.start() for m in _PTX_FUNCTION.finditer(ptx))})
    return [hit for a, b in zip(starts, [*starts[1:], len(ptx)], strict=True) for hit in _negated_min_max(ptx[a:b])]


#: the start of a function of a PTX module (``.visible .entry``, ``.func``, ``.weak .func``)
_PTX_FUNCTION = re.compile(r"^\.(?:(?:visible|weak|extern)\s+\.)*(?:entry|func)\b", re.M)


def _negated_min_max(ptx: str) -> list[str]:
    """:func:`negated_min_max` of one function's PTX."""
    defs: dict[str, tuple[str, list[str]]] = {}
    found = []
    for m in _PTX_INSTRUCTION.finditer(ptx):
        op, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        if args and args[0].startswith("%"):
            defs[args[0]] = (op, args[1:])
        found.append((op, args))

    seen: dict[str, bool] = {}

    def negated(reg: str) -> bool:
        if reg in seen:  # (False while in progress: a loop-carried register defined through itself)
            return seen[reg]
        seen[reg] = False
        op, srcs = defs.get(reg, ("", []))
        base = op.split(".")[0]
        seen[reg] = ((base == "neg" and ".s" in op) or (base == "sub" and srcs[:1] == ["0"])
                     or (base == "mul" and any(re.fullmatch(r"-\d+", a) for a in srcs))
                     or (base in ("mov", "cvt", "selp", "min", "max")
                         and any(negated(a) for a in srcs if a.startswith("%"))))
        return seen[reg]

    return [f"{op} {', '.join(args)}" for op, args in found
            if _INT_MIN_MAX.fullmatch(op) and any(negated(a) for a in args[1:] if a.startswith("%"))]


_SPLIT = re.compile(r"^\s*mov\.b32\s+\{(%\w+),\s*(%\w+)\},\s*%\w+;", re.M)
#: instructions whose result's low byte depends only on the operands' low bytes (a neighbour in the
#: high byte stays a neighbour): what may compute on a half that holds two bytes
_BYTE_SAFE = re.compile(r"(add|sub|mul\.lo|and|or|xor|not|neg|shl|mov|selp)\.\w+|cvt\.u(16|32)\.u(16|32)")
#: instructions that read only a register's low byte (or its high byte, the neighbour, on purpose)
_BYTE_READER = re.compile(r"cvt(\.\w+)*\.[su]8|st(\.\w+)*\.[bsu]8|prmt\.b32")


def _byte_vectors_only(source: str) -> bool:
    """Whether a kernel's vectors all hold 1-byte elements (in a kernel with 2-byte vectors, a
    16-bit half read by a shift of 8 may be one element: :func:`packed_byte_reads` cannot tell)."""
    kinds = set(re.findall(r"sl_vec<([\w ]+), \d+>", source.split("end of preamble")[-1]))
    return bool(kinds) and kinds <= {"signed char", "unsigned char", "bool"}


def packed_byte_reads(ptx: str) -> list[str]:
    """Instructions of ``ptx`` that read more than the low byte of a 16-bit half holding two
    bytes of a vector load (split by ``mov.b32 {lo, hi}`` and read by a shift by 8 or more):
    a right shift, comparison, division or widening of such a half (or of a sum or product of
    it) mixes in the neighbouring element. NVVM 13.0 to 13.5 emitted one for int8
    ``floor_divide(x, 2)`` and ``right_shift(x - 2, x)`` in the 16-element vector loop (126 for
    -3 on the H200; ``sl_load`` of a byte now goes through an opaque int, docs/compiler.md §8)."""
    shifted = {m.group(1) for m in re.finditer(r"shr\.[bsu]16\s+%\w+,\s*(%\w+),\s*(8|9|1[0-5]);", ptx)}
    packed = {h for m in _SPLIT.finditer(ptx) for h in m.groups() if h in shifted}
    found = []
    for m in _PTX_INSTRUCTION.finditer(ptx):
        op, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        reads = [a for a in args[1:] if a in packed]
        if not reads or op.startswith("mov") and args[0].startswith("{"):
            continue
        imm = [int(a) for a in args[2:] if re.fullmatch(r"\d+", a)]
        if _BYTE_SAFE.fullmatch(op) and not (op.startswith("and") and imm and imm[0] <= 255):
            packed.add(args[0])  # (the result holds the neighbour too)
        elif not (_BYTE_READER.fullmatch(op) or (op.startswith("and") and imm and imm[0] <= 255)
                  or (op.startswith("shr") and imm and imm[0] >= 8)):
            found.append(f"{op} {', '.join(args)}")
    return found


def _check_jit(prog: Program, got: list[np.ndarray]) -> list[str]:
    """The program as an ``sl.jit`` function of its leaves, called twice (trace, then replay):
    the bits ``sl.compute`` gave."""
    fn = _jitted(prog)
    leaves = [v.lazy for v in prog.values[:prog.leaves]]
    problems = []
    for call in ("traced", "replayed"):
        try:
            outs = [_as_numpy(o) for o in sl.compute(*fn(*leaves))]
        except Exception:  # noqa: BLE001 - a crash is a finding
            return [f"sl.jit {call}: raised {traceback.format_exc(limit=6)}"]
        for k, (o, g) in enumerate(zip(outs, got, strict=True), start=prog.leaves):
            if o.dtype != g.dtype or o.shape != g.shape or not np.all(_same(o, g)):
                problems.append(f"v{k}: sl.jit ({call}) differs from sl.compute")
    return problems


def _jitted(prog: Program) -> Any:
    """The program as an ``sl.jit`` function of its leaves, returning every step's value."""
    def replay(*leaves: Any) -> tuple[Any, ...]:
        env = list(leaves)
        for v in prog.values[prog.leaves:]:
            assert v.fn is not None
            env.append(v.fn(sl, *[env[i] for i in v.ins]))
        return tuple(env[prog.leaves:])

    return sl.jit(replay)


#: what a capture may refuse, documented (user guide, "Streams, threads and CUDA graphs")
UNCAPTURABLE = "cannot be captured into a CUDA graph"


def capture_check(seed: int, dtypes: list[str] | None = None, family: str = "mixed") -> list[str] | None:
    """The program of ``seed`` as an ``sl.jit`` function captured into a CUDA graph (cupy backend):
    replayed after the leaves' device arrays get new contents (their values shuffled), it must give
    the bits an uncaptured call gives on them, and arrays allocated after the capture must keep
    their values. None where the program holds a step that documents it cannot be captured."""
    import cupy as cp

    prog = build(seed, dtypes, family)
    if prog.errors or len(prog.values) == prog.leaves:
        return [f"raised building the next step: {e}" for e in prog.errors]
    fn = _jitted(prog)
    leaves = [v.lazy for v in prog.values[:prog.leaves]]
    shuffle = np.random.default_rng(seed)
    fresh = [cp.asarray(shuffle.permutation(v.np.ravel()).reshape(v.np.shape)) for v in prog.values[:prog.leaves]]
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        try:
            for _ in range(2):
                fn(*leaves)  # traced, compiled, then replayed: nothing left to plan
            spare = [cp.empty(1 << k, cp.uint8) for k in range(10, 27, 2)]  # free blocks in the pool
            del spare
            stream.synchronize()
            stream.begin_capture()
            try:
                outs = fn(*leaves)
            finally:
                graph = stream.end_capture()
        except RuntimeError as exc:
            if UNCAPTURABLE in str(exc):
                return None
            return [f"capture raised: {traceback.format_exc(limit=6)}"]
        except Exception:  # noqa: BLE001 - a crash is a finding
            return [f"capture raised: {traceback.format_exc(limit=6)}"]
        sizes = [int(n) for n in np.geomspace(16, 1 << 22, 30)] * 2
        others = [cp.full(n, k, cp.int32) for k, n in enumerate(sizes)]
        for v, f in zip(prog.values[:prog.leaves], fresh, strict=True):
            v.buf[...] = f
        for _ in range(2):
            graph.launch(stream=stream)
        stream.synchronize()
        got = [_as_numpy(o) for o in outs]
        want = [_as_numpy(o) for o in fn(*leaves)]
    problems = [f"array {k} ({o.size} int32) was overwritten by a replay"
                for k, o in enumerate(others) if not bool((o == k).all())]
    for k, (o, w) in enumerate(zip(got, want, strict=True), start=prog.leaves):
        if o.dtype != w.dtype or o.shape != w.shape or not np.all(_same(o, w)):
            problems.append(f"v{k}: the captured graph's replay differs from an uncaptured call")
    return problems


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Random programs checked against NumPy (module docstring).")
    parser.add_argument("first", type=int, nargs="?", default=0, help="first seed")
    parser.add_argument("count", type=int, nargs="?", default=200, help="number of seeds")
    parser.add_argument("--budget-s", type=float, default=float("inf"), help="stop starting programs after this")
    parser.add_argument("--dtypes", type=lambda t: t.split(","), default=None, help="leaf dtypes, comma-separated")
    parser.add_argument("--family", choices=FAMILIES, default="mixed", help="which programs (FAMILIES)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--compile-only", action="store_true", help="plan for the H200 and compile with NVRTC")
    mode.add_argument("--capture", action="store_true", help="capture each program into a CUDA graph (GPU)")
    mode.add_argument("--host", action="store_true", help="plan for the H200 and run the kernels on the CPU (host C++)")
    mode.add_argument("--numbers", action="store_true",
                      help="sl.jit with the programs' Python numbers as arguments read at run time (numpy backend)")
    args = parser.parse_args(argv)
    check_one = (compile_check if args.compile_only else capture_check if args.capture
                 else numbers_check if args.numbers else host_check if args.host else check)
    start = time.perf_counter()
    failed, ran, refused = [], 0, 0
    print(f"backend {sl.get_backend()}, seeds {args.first}..{args.first + args.count - 1}, "
          f"dtypes {args.dtypes or (ROW_DTYPES if args.family == 'rows' else DTYPES)}, {args.family} programs", flush=True)
    for seed in range(args.first, args.first + args.count):
        if time.perf_counter() - start > args.budget_s:
            break
        problems = check_one(seed, args.dtypes, family=args.family)
        ran += 1
        if problems is None:
            refused += 1
        elif problems:
            failed.append(seed)
            print(build(seed, args.dtypes, args.family).describe())
            for p in problems:
                print("  FAIL", p)
            sys.stdout.flush()
    print(f"{ran} programs in {time.perf_counter() - start:.1f} s, {len(failed)} failed: {failed}"
          + (f"; {refused} hold a step that cannot be captured (refused as documented)" if args.capture else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
