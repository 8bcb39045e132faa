"""NumPy-named functions of the ``stitchlab`` namespace.

Elementwise functions are generated from the op table; reductions and layout functions are
written out, composite ones (``mean``, ``var``, ``std``, ``logsumexp``, ``clip``, and the NumPy
functions at the end: ``isclose``, ``nan_to_num``, the nan-reductions, ``ptp``, ``swapaxes``...)
as graphs of primitive ops so the planner sees their structure and fuses them.
"""

from __future__ import annotations

import builtins
import functools
import math
import numbers
import operator
import warnings
from typing import Any

import numpy as np

from .. import runtime
from ..ir.dtypes import as_dtype, cast, is_bfloat16, is_float, is_low_float, is_weak
from ..ir.dtypes import finfo as _finfo
from ..ir.ops import COMPARISONS, OPS, Kind
from . import build
from .array import LazyArray, c_order, node_of
from .creation import _ones_in_front, array, asarray, broadcast_to, full
from .scalars import TracedScalar
from .ufunc import extreme_out, initial_arg, outputs, stored


def _python_scalar_operands(opname: str, args: tuple[Any, ...]) -> list[Any]:
    """The operands of ``opname`` over Python scalars only, as NumPy takes them: the loop is the
    one for their default dtypes (int64, float64, bool) and each number becomes an array of its
    loop dtype (OverflowError where it does not fit): ``ldexp(0, 2**40)`` takes the int64
    exponent loop, ``ldexp(2**63, 1)`` the float64 one for 2**63, ``add(2**63, 1)`` raises.
    Comparisons (NumPy compares Python ints exactly), other scalars (an ``sl.jit`` argument) or no
    such loop: the first as an array, the rest weak."""
    defaults = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64)}
    if opname not in COMPARISONS and builtins.all(type(a) in defaults for a in args):  # (this module's all is the reduction)
        try:
            loop = build._resolve(opname, tuple(defaults[type(a)] for a in args))
        except (TypeError, np.exceptions.DTypePromotionError):
            pass  # (build.elementwise raises NumPy's TypeError naming the operands)
        else:
            return [node_of(asarray(np.asarray(a, dtype=dt))) for a, dt in zip(args, loop, strict=False)]
    return [node_of(asarray(args[0])), *(node_of(a) for a in args[1:])]


def _elementwise(opname: str, doc_name: str | None = None) -> Any:
    nin = OPS[opname].nin

    def fn(*args: Any) -> LazyArray:
        if len(args) != nin:
            raise TypeError(f"{fn.__name__}() takes {nin} positional argument{'s' * (nin > 1)} but {len(args)} were given")
        operands = [node_of(a) for a in args]
        for o in operands:
            if isinstance(o, build.Node):
                break
        else:  # all Python scalars
            operands = _python_scalar_operands(opname, args)
        return LazyArray(build.elementwise(opname, *operands))

    fn.__name__ = fn.__qualname__ = doc_name or opname
    fn.__doc__ = f"Elementwise ``{doc_name or opname}`` with NumPy's semantics (lazy)."
    return fn


_ALIASES = {"absolute": ["abs"], "divide": ["true_divide"], "remainder": ["mod"], "power": ["pow"],
            # NumPy 2's array-API names
            "arcsin": ["asin"], "arccos": ["acos"], "arctan": ["atan"], "arctan2": ["atan2"],
            "arcsinh": ["asinh"], "arccosh": ["acosh"], "arctanh": ["atanh"], "invert": ["bitwise_not", "bitwise_invert"],
            "left_shift": ["bitwise_left_shift"], "right_shift": ["bitwise_right_shift"],
            # SciPy's name (scipy.special.expit)
            "sigmoid": ["expit"]}

#: elementwise ops without a generated function of their own (written out, or internal)
_NOT_GENERATED = ("astype", "where", "splitmix64", "gamma_rounds", "poisson_rounds", "binomial_rounds", "vonmises_rounds",
                  "hypergeometric_rounds", "frexp_exponent")

for _name, _op in OPS.items():
    if _op.kind is Kind.ELEMENTWISE and _name not in _NOT_GENERATED:
        globals()[_name] = _elementwise(_name)
        for _alias in _ALIASES.get(_name, ()):
            globals()[_alias] = _elementwise(_name, _alias)

#: what NumPy's float32 and float64 ``power`` loops compute for these scalar exponents instead of
#: ``pow`` (NaN and -0.0 for ``(-inf) ** 0.5`` and ``(-0.0) ** 0.5``; on the GPU NumPy's bits where
#: CUDA's ``pow`` may differ in the last place)
_SCALAR_POWERS = {0.5: "sqrt", 2.0: "square", 1.0: "positive", -1.0: "reciprocal"}
_generic_power = _elementwise("power")


def power(x1: Any, x2: Any) -> LazyArray:
    """Elementwise ``power`` with NumPy's semantics (lazy), NumPy's fast paths included: of
    float32 and float64 values, a scalar exponent (a Python or NumPy number) of 0.5, 2, 1 or -1
    is ``sqrt``, ``square``, the value itself or ``reciprocal``, as NumPy's loops compute it
    (``sl.power(x, 0.5)`` of -inf is NaN, as NumPy's; :func:`float_power` never takes them).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.power(sl.asarray(np.array([-np.inf, 4.0])), 0.5).get()
        array([nan,  2.])
    """
    out = _generic_power(x1, x2)
    build.check_integer_exponent(out._node, x2)
    scalar = (not isinstance(x2, LazyArray) and not hasattr(x2, "__cuda_array_interface__") and np.ndim(x2) == 0
              and np.asarray(x2).dtype.kind in "iuf")  # (a host number or 0-d array; not a bool)
    if scalar and out.dtype in (np.float32, np.float64) and float(x2) in _SCALAR_POWERS:
        base = node_of(x1) if isinstance(node_of(x1), build.Node) else node_of(asarray(x1))
        return LazyArray(build.elementwise(_SCALAR_POWERS[float(x2)], build.astype(base, out.dtype)))
    return out


pow = power  # noqa: A001 - the array API's name
ELEMENTWISE = [n for n, o in OPS.items() if o.kind is Kind.ELEMENTWISE and n not in _NOT_GENERATED]
ELEMENTWISE += [a for names in _ALIASES.values() for a in names]


_NO_VALUE: Any = object()


def where(condition: Any, x: Any = _NO_VALUE, y: Any = _NO_VALUE) -> Any:
    """Elements of ``x`` where ``condition`` is true, else of ``y``. With ``condition`` alone,
    NumPy's ``nonzero(condition)`` (:func:`stitchlab.nonzero`: evaluates, a tuple of int64
    arrays)."""
    if x is _NO_VALUE and y is _NO_VALUE:
        from .selection import nonzero

        return nonzero(condition)
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ValueError("either both or neither of x and y should be given")
    c = node_of(condition)
    if not isinstance(c, build.Node):
        c = node_of(asarray(c))
    return LazyArray(build.elementwise("where", c, node_of(x), node_of(y)))


_select = where  # (for functions whose where= parameter hides it)


def _power_of_ten(n: int) -> float:
    """10.0 ** n as NumPy's ``round`` computes it (exact to 1e22, then repeated products)."""
    if n < 9:
        return (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)[n]
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
    return ret


def round(a: Any, decimals: Any = 0, out: Any = None) -> LazyArray:  # noqa: A001
    """Round to ``decimals`` decimals, halves to even (NumPy's ``round``/``around``), by NumPy's
    own arithmetic: ``rint(x * 10**d) / 10**d`` in the array's dtype (``rint(x / 10**-d) *
    10**-d`` for negative ``d``); integers come back unchanged for ``d >= 0`` and are rounded
    through float64 otherwise; bool gives ``rint``'s float16 for ``d == 0`` and raises
    ``TypeError`` otherwise, as in NumPy; bfloat16 is rounded in float64 and the result rounded
    once to bfloat16. With ``out``, NumPy computes in ``out``'s dtype: the scaled value (of the
    input's loop with a Python float) is cast to it with the ``same_kind`` rule (NumPy's error
    where it cannot be: an integer ``out`` with ``decimals != 0`` of float input, or ``< 0`` of
    integers), then rounded and scaled back there (``round(x_int8, -1, out=float64)`` of 126 is
    130.0).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.round(sl.asarray(np.array([0.125, 2.5, -1.55])), 1).get()
        array([ 0.1,  2.5, -1.6])
    """
    x, d = asarray(a), operator.index(decimals)  # (a float decimals raises TypeError, as in NumPy)
    if out is None or (d >= 0 and x.dtype.kind in "iu") or d == 0:
        return stored(_round(x, d), out, "round", casting="same_kind")  # (a copy or rint, written with out's same_kind cast)
    from .ufunc import outputs

    target = outputs(out, 1, "round")[0]
    return stored(_round_into(x, d, as_dtype(target.dtype)), out, "round", casting="same_kind")


def _round_into(x: LazyArray, d: int, dtype: np.dtype) -> LazyArray:
    """NumPy's ``round`` with an ``out`` of ``dtype`` (``PyArray_Round``): ``op1(x, f, out)``,
    ``rint(out, out)``, ``op2(out, f, out)``, each result cast to ``dtype`` by ``same_kind``."""
    f = _power_of_ten(abs(d))
    scaled = x * f if d >= 0 else (LazyArray(build.exact_divide(x.astype(np.float64)._node, f))
                                   if x.dtype.kind in "iub" else LazyArray(build.exact_divide(x._node, f)))
    if not np.can_cast(scaled.dtype, dtype, "same_kind"):
        op = "multiply" if d >= 0 else "divide"
        raise TypeError(f"Cannot cast ufunc '{op}' output from {scaled.dtype!r} to {dtype!r} with casting rule "
                        f"'same_kind' (round to {d} decimals into out=, as in NumPy); give a float out=")
    r = rint(scaled.astype(dtype))  # noqa: F821
    return LazyArray(build.exact_divide(r._node, f)) if d >= 0 else r * f


def _round(x: LazyArray, d: int) -> LazyArray:
    if d == 0 and x.dtype.kind not in "iu":
        return rint(x)  # noqa: F821  (NumPy: bool gives float16)
    if x.dtype.kind == "b":
        raise TypeError(
            "Cannot cast ufunc 'multiply' output from dtype('float64') to dtype('bool') with casting "
            "rule 'same_kind' (round of a bool array, as in NumPy)"
        )
    f = _power_of_ten(abs(d))

    def divide(v: LazyArray) -> LazyArray:  # IEEE, so that round's results are NumPy's bits
        return LazyArray(build.exact_divide(v._node, f))

    if x.dtype.kind in "iu":
        if d >= 0:
            return x.copy()  # (a new array object, as NumPy's: assigning into it leaves x)
        return (rint(divide(x.astype(np.float64))) * f).astype(x.dtype)  # noqa: F821
    if is_bfloat16(x.dtype):
        # in float64, rounded once to bfloat16 (ml_dtypes' own bfloat16 loops round the scaled
        # value to bfloat16 in one version and not in another)
        return _round(x.astype(np.float64), d).astype(x.dtype)
    return divide(rint(x * f)) if d >= 0 else rint(divide(x)) * f  # noqa: F821


around = round


def matmul(a: Any, b: Any) -> LazyArray:
    """NumPy's ``matmul`` (``a @ b``), lazily: its own step of the plan, run by CuPy (cuBLAS) on
    the GPU or NumPy on the CPU, never fused; the work before and after it fuses as usual.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.ones((2, 3), np.float32))
        >>> sl.tanh(x @ np.full((3, 4), 0.1, np.float32)).shape
        (2, 4)
    """
    a, b = asarray(a), asarray(b)
    return LazyArray(build.matmul(a._node, b._node))


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> LazyArray:
    """Join arrays along an existing axis (NumPy's ``concatenate``; ``axis=None`` joins the
    flattened arrays, ``dtype``, ``casting`` and ``out`` are NumPy's), lazily. A join of up to four nonempty arrays is an index map, fused into the
    kernel that reads it (``rotate_half``'s ``concatenate([-x2, x1], -1)`` with the products around
    it is one kernel); a join of more is a step of the plan of its own, run by CuPy or NumPy.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.ones((2, 3), np.float32))
        >>> sl.concatenate([x, x * 2], axis=-1).shape
        (2, 6)
    """
    if isinstance(arrays, LazyArray) or not isinstance(arrays, (list, tuple)):
        arrays = list(asarray(arrays))  # an array: its subarrays along the first axis, as NumPy
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
    # (into out=, each array is cast to out's dtype, as NumPy's)
    into = outputs(out, 1, "concatenate")[0].dtype if out is not None else dtype
    xs = joined("concatenate", [asarray(a) for a in arrays], into, casting)
    return stored(LazyArray(build.concatenate([x._node for x in xs], axis)), out, "concatenate", casting=casting)


def joined(name: str, xs: list[LazyArray], dtype: Any, casting: str) -> list[LazyArray]:
    """The arrays of a join in ``dtype`` (None: as they are, joined in their promotion), after
    NumPy's check that each casts to the join's dtype under ``casting``."""
    casting = build.casting_arg(casting, name)
    if not xs or (dtype is None and casting in ("same_kind", "unsafe")):
        return xs
    dt = as_dtype(dtype) if dtype is not None else np.result_type(*(x.dtype for x in xs))
    for x in xs:
        if not np.can_cast(x.dtype, dt, casting):
            raise TypeError(f"{name}: cannot cast array data from {x.dtype!r} to {dt!r} according to the rule {casting!r}; "
                            f"give casting='unsafe' or another dtype")
    return [_cast(x, dt) for x in xs]



#: the array API's name (NumPy 2's ``np.concat`` is ``np.concatenate``)
concat = concatenate

def stack(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None, casting: str = "same_kind") -> LazyArray:
    """Join arrays of one shape along a new axis (NumPy's ``stack``; ``dtype``, ``casting`` and
    ``out`` as :func:`concatenate`'s), lazily (as :func:`concatenate`)."""
    if isinstance(arrays, LazyArray) or not isinstance(arrays, (list, tuple)):
        arrays = list(asarray(arrays))
    xs = [asarray(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to stack")
    if builtins.any(x.shape != xs[0].shape for x in xs):
        raise ValueError("all input arrays must have the same shape")
    return concatenate([expand_dims(x, axis) for x in xs], build.normalize_axis(axis, xs[0].ndim + 1), out, dtype=dtype,
                       casting=casting)


def clip(a: Any, a_min: Any = np._NoValue, a_max: Any = np._NoValue, out: Any = None, *, min: Any = np._NoValue,  # noqa: A002
         max: Any = np._NoValue) -> LazyArray:  # noqa: A002
    """Limit values to ``[a_min, a_max]``; ``out`` as a ufunc's. NumPy 2's rules: ``min``/``max``
    are the keyword names of the bounds, ``None`` (or none given) leaves that side open, and both
    sides open is a copy; for an integer array a Python-int bound at or beyond the dtype's range
    leaves that side open too (``clip(x_uint8, -1, 2)`` is ``minimum(x, 2)``, uint8); with one
    side open the result is ``maximum``/``minimum``'s. With both, NumPy's ``clip`` loop: the
    dtype is the three operands' ``result_type`` (Python numbers weak), and for floats
    ``min(max(x, a_min), a_max)`` where a NaN ``x`` stays and a NaN bound gives NaN. Where ``x``
    equals a bound, NumPy's loops differ in the sign of a zero, and so does this: with two
    one-element bounds (scalars) or float16 ``x`` stays (``clip(-0.0, 0.0, 1.0)`` is -0.0); with
    array bounds of float32 or float64, the bound (0.0).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.clip(sl.asarray(np.array([1, 2, 3], np.uint8)), -1, 2).get()
        array([1, 2, 2], dtype=uint8)
    """
    if a_min is np._NoValue and a_max is np._NoValue:
        a_min, a_max = (None if v is np._NoValue else v for v in (min, max))
    elif a_min is np._NoValue or a_max is np._NoValue:
        missing = "a_min" if a_min is np._NoValue else "a_max"
        raise TypeError(f"clip() missing 1 required positional argument: '{missing}'")
    elif min is not np._NoValue or max is not np._NoValue:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is forbidden.")
    x = asarray(a)
    if x.dtype.kind in "iu":  # NumPy's _clip: an out-of-range Python int leaves its side open
        info = np.iinfo(x.dtype)
        if _python_int(a_min) and a_min <= info.min:
            a_min = None
        if _python_int(a_max) and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        result = copy(x)  # noqa: F821  (defined below)
    elif a_min is None:
        result = minimum(x, a_max)  # noqa: F821  (generated above)
    elif a_max is None:
        result = maximum(x, a_min)  # noqa: F821
    else:
        result = _clip(x, a_min, a_max)
    return stored(result, out, "clip", exact=False, ufunc="clip")


def _python_int(v: Any) -> bool:
    """Whether ``v`` is a Python ``int`` (not a bool) or one an sl.jit call reads at run time,
    whose comparison with the dtype's range then makes the trace take it by value."""
    return type(v) is int or (isinstance(v, TracedScalar) and v.kind is int)


def _clip_bound(v: Any, dtype: np.dtype) -> LazyArray:
    """A bound of :func:`clip` as an array of the result's ``dtype`` (a Python number converted
    as NumPy converts it, an ``int`` outside the dtype raising NumPy's ``OverflowError``)."""
    if isinstance(v, TracedScalar):  # (an sl.jit argument read at run time)
        return LazyArray(v.node(dtype))
    if is_weak(v):
        if type(v) is int and dtype.kind in "iu" and not build.fits(v, dtype):
            raise OverflowError(f"clip: Python integer {v} out of bounds for {dtype} (the result's dtype); give a "
                                f"bound within [{np.iinfo(dtype).min}, {np.iinfo(dtype).max}] or clip a wider array")
        return LazyArray(build.const(v, dtype))
    return asarray(v).astype(dtype)


def _clip(x: LazyArray, a_min: Any, a_max: Any) -> LazyArray:
    """NumPy's ``clip`` loop (``np._core.umath.clip``) on ``x`` and two bounds."""
    operands = [v if is_weak(v) or isinstance(v, TracedScalar) else node_of(asarray(v)) for v in (a_min, a_max)]
    dtype = build.result_type(x._node, *operands)
    v, lo, hi = x.astype(dtype), _clip_bound(a_min, dtype), _clip_bound(a_max, dtype)
    if not is_float(dtype):
        return minimum(maximum(v, lo), hi)  # noqa: F821  (no NaN, no signed zero: the same values)
    if (lo.size == 1 and hi.size == 1) or dtype == np.float16 or is_bfloat16(dtype):
        # the loop for constant bounds and the half loop: x stays where it equals a bound
        t = where(v < lo, lo, v)
        t = where(t > hi, hi, t)
        return where((isnan(lo) | isnan(hi)) & ~isnan(v), math.nan, t)  # noqa: F821
    # NumPy's generic loop, Max(a, b) = isnan(a) || a > b ? a : b and Min likewise
    t = where(isnan(v) | (v > lo), v, lo)  # noqa: F821
    return where(isnan(t) | (t < hi), t, hi)  # noqa: F821


def astype(x: Any, dtype: Any, *, copy: bool = True, device: Any = None) -> LazyArray:
    """NumPy's (the array API's) ``astype``: ``x`` cast to ``dtype``; with ``copy=False``, ``x``
    itself where it has that dtype. ``device``: None (stitchlab arrays stay where they are)."""
    if device is not None:
        raise ValueError(f"astype: device={device!r} is not supported (a stitchlab array stays on its backend's "
                         "device); leave device out")
    return asarray(x).astype(dtype, copy=copy)


# --- reductions ---------------------------------------------------------------------------------
# NumPy's parameters, in NumPy's order: ``out=`` a stitchlab array (which then stands for the
# value), a NumPy or a CuPy one, of the result's shape; ``initial=`` and ``where=`` as the ufunc's
# ``reduce`` (stitchlab.frontend.ufunc)
def sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        initial: Any = np._NoValue, where: Any = True) -> LazyArray:
    return asarray(a).sum(axis, dtype, out, keepdims, initial, where)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = np._NoValue, where: Any = True) -> LazyArray:
    return asarray(a).prod(axis, dtype, out, keepdims, initial, where)


def max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,  # noqa: A001
        where: Any = True) -> LazyArray:
    return asarray(a).max(axis, out, keepdims, initial, where)


def min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,  # noqa: A001
        where: Any = True) -> LazyArray:
    return asarray(a).min(axis, out, keepdims, initial, where)


amax, amin = max, min


def any(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> LazyArray:  # noqa: A001
    return asarray(a).any(axis, out, keepdims, where=where)


def all(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> LazyArray:  # noqa: A001
    return asarray(a).all(axis, out, keepdims, where=where)


def _count(x: LazyArray, axis: Any) -> int:
    axes = build.normalize_axes(axis, x.ndim)
    return math.prod(x.shape[i] for i in axes)


def _divisor(x: LazyArray, axis: Any, ddof: int, work: np.dtype, total: LazyArray) -> LazyArray:
    """``count - ddof`` of ``x``'s elements along ``axis``, as a count constant (build.count)
    broadcast to the shape of ``total``, the sum it divides."""
    return LazyArray(build.count_like(_count(x, axis), ddof, work, total.shape))


def _cast(x: LazyArray, dtype: np.dtype) -> LazyArray:
    """``x.astype(dtype)`` for a dtype already checked (the casts mean, var and std make)."""
    return x if x.dtype == dtype else LazyArray(build.astype(x._node, dtype))


def _float_work(dtype: np.dtype, requested: Any) -> tuple[np.dtype, np.dtype]:
    """(dtype to compute in, dtype to return) for mean/var/std, as NumPy chooses them."""
    if requested is not None:
        out = as_dtype(requested)
        return (np.dtype("float32") if is_low_float(out) else out), out
    if dtype.kind in "biu":
        return np.dtype("float64"), np.dtype("float64")
    if is_low_float(dtype):
        return np.dtype("float32"), dtype
    return dtype, dtype


def bool_mask(where_: Any, name: str) -> LazyArray:
    """A ``where=`` mask read as NumPy reads one: an array (stitchlab, NumPy, CuPy) must be bool,
    as NumPy casts it under the 'safe' rule (``TypeError`` naming its dtype: an integer array is
    no mask); Python bools, numbers and lists become bools (``[1, 0]`` is ``[True, False]``)."""
    if hasattr(where_, "dtype"):
        m = asarray(where_)
        if m.dtype != np.bool_:
            raise TypeError(f"{name}: where= takes a bool mask; Cannot cast array data from {m.dtype!r} to "
                            f"dtype('bool') according to the rule 'safe'; give e.g. where=(m != 0)")
        return m
    return asarray(np.asarray(where_, dtype=np.bool_))


def _mask(x: LazyArray, where_: Any) -> LazyArray | None:
    """A reduction's ``where=`` as a bool array of ``x``'s shape (it broadcasts to it, as NumPy
    requires), or None for ``True``."""
    if where_ is True:
        return None
    m = bool_mask(where_, "reduction")
    try:
        shape = np.broadcast_shapes(m.shape, x.shape)
    except ValueError:
        shape = None
    if shape != x.shape:
        raise ValueError(f"where= of shape {m.shape} does not broadcast to the array's shape {x.shape}; give a mask "
                         "that does")
    return LazyArray(build.broadcast_to(m._node, x.shape))


def _counted(x: LazyArray, axis: Any, ddof: Any, work: np.dtype, total: LazyArray, mask: LazyArray | None) -> LazyArray:
    """``count - ddof`` of the elements ``total`` summed (those ``mask`` selects; never below 0, as
    NumPy's), in ``work``, of ``total``'s shape."""
    if mask is None:
        return _divisor(x, axis, ddof, work, total)
    return maximum(mask.sum(axis, keepdims=True).reshape(total.shape) - ddof, 0).astype(work)  # noqa: F821


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
         where: Any = True) -> LazyArray:
    """Arithmetic mean along ``axis`` (integers in float64, float16 and bfloat16 accumulated in
    float32) of the elements ``where`` selects (a mask broadcast to the array: NumPy's ``where=``;
    a slice with none gives NaN)."""
    x = asarray(a)
    mask = _mask(x, where)
    exact = _exact_dtype(dtype)
    if exact is not None:
        into = _out_dtype(out, "mean", exact)
        if into is None:
            return stored(_exact_mean(x, axis, exact, keepdims, mask), out, "mean")
        total = (x if mask is None else _select(mask, x, 0)).sum(axis, exact, keepdims=keepdims)
        return stored(_divided_in(total, _counted(x, axis, 0, np.dtype(np.float64), total, mask), into), out, "mean")
    work, result = _float_work(x.dtype, dtype)
    into = _out_dtype(out, "mean", result)
    if into is None and out is not None and work != result:  # (float16: NumPy sums into a float16 out too,
        into = result                                          # then divides there: 40000 + 40000 is inf)
    work = _summed_in(work, dtype, x.dtype, into)
    xf = _work_input(x, work, result)
    total = (xf if mask is None else _select(mask, xf, 0)).sum(axis, keepdims=keepdims)
    if into is not None:
        total = _summed(total, dtype, result)
        return stored(_divided_in(total, _counted(x, axis, 0, work, total, mask), into), out, "mean")
    return stored(_cast(total / _counted(x, axis, 0, work, total, mask), result), out, "mean")


def _out_dtype(out: Any, name: str, result: np.dtype) -> np.dtype | None:
    """The dtype of ``out`` where it is not ``result``'s: NumPy's mean and variance then sum into
    ``out`` and divide there (:func:`_divided_in`)."""
    if out is None:
        return None
    target = outputs(out, 1, name)[0]
    return None if target.dtype == result else target.dtype


def _summed_in(work: np.dtype, requested: Any, dtype: np.dtype, into: np.dtype | None) -> np.dtype:
    """The dtype NumPy's mean and variance sum in: ``work``; but where no ``dtype`` was asked for,
    float32 or float64 data summed into an ``out`` of another dtype is summed in the promotion of
    both (NumPy's ``add.reduce`` into ``out``: float32 data into a float64 or an int64 ``out``
    adds in float64)."""
    if into is None or requested is not None or dtype.kind != "f" or is_low_float(dtype):
        return work
    return np.result_type(work, into)


def _summed(total: LazyArray, requested: Any, result: np.dtype) -> LazyArray:
    """A float sum of mean/var/std as NumPy's sum returns it before it goes into ``out``: in the
    ``dtype`` asked for (a float16 ``dtype=`` sums in float32 here, so the sum is rounded to
    float16 once, as NumPy's float16 reduction returns it), else as summed."""
    return _cast(total, result) if requested is not None else total


def _divided_in(total: LazyArray, count: LazyArray, into: np.dtype) -> LazyArray:
    """NumPy's steps for an ``out`` of another dtype: the sum cast into it, then divided by the
    count in place (``true_divide(..., casting='unsafe')``: in float64 for an integer ``out``)."""
    div = np.dtype(np.float64) if into.kind in "biu" else into
    return (total.astype(into).astype(div) / count.astype(div)).astype(into)


def _work_input(x: LazyArray, work: np.dtype, result: np.dtype) -> LazyArray:
    """``x`` in ``work``, the float that mean/var/std sum in; for a float16 or bfloat16 ``dtype=``
    of other data each element is rounded to it first, as NumPy's sum in that dtype casts them
    (an int32 70000 is inf in float16)."""
    return _cast(_cast(x, result) if is_low_float(result) else x, work)


def _exact_dtype(requested: Any) -> np.dtype | None:
    """An integer or bool ``dtype=`` of mean/var/std, in which NumPy's steps run (sums that wrap,
    quotients truncated), or None."""
    if requested is None:
        return None
    dt = as_dtype(requested)
    return dt if dt.kind in "biu" else None


def _exact_mean(x: LazyArray, axis: Any, dt: np.dtype, keepdims: bool, mask: LazyArray | None) -> LazyArray:
    """NumPy's mean with an integer or bool ``dtype``: the sum in ``dt`` divided by the count in
    float64 and cast back (``true_divide(..., casting='unsafe')``: truncated)."""
    total = (x if mask is None else _select(mask, x, 0)).sum(axis, dt, keepdims=keepdims)
    return (total / _counted(x, axis, 0, np.dtype(np.float64), total, mask)).astype(dt)


def _ddof(ddof: Any, correction: Any) -> Any:
    """``ddof``, or the array API's name for it, ``correction`` (NumPy's check: not both)."""
    if correction is not np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if not isinstance(ddof, (int, float, np.integer, np.floating, TracedScalar)):
        raise TypeError(f"ddof must be a number (the degrees of freedom subtracted from the count), got {ddof!r} "
                        f"of type {type(ddof).__name__}")
    return ddof


def _given_mean(x: LazyArray, mean: Any, name: str) -> LazyArray:
    """NumPy 2's ``mean=`` of a variance: an array of the shape a mean with ``keepdims=True`` has
    (anything that broadcasts to ``x``'s shape without changing it)."""
    m = asarray(mean)
    try:
        ok = np.broadcast_shapes(m.shape, x.shape) == x.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{name}: mean= of shape {m.shape} does not broadcast to the array's shape {x.shape}; give "
                         "the mean as mean(..., keepdims=True) computes it")
    return mean if is_weak(mean) else m


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = True, mean: Any = np._NoValue, correction: Any = np._NoValue) -> LazyArray:
    """Variance along ``axis`` with ``ddof`` delta degrees of freedom (two-pass, as NumPy), of
    the elements ``where`` selects (as :func:`mean`); ``correction`` is ``ddof``'s array API name.
    ``mean`` (NumPy 2), of the shape ``mean(..., keepdims=True)`` gives, is taken as the mean
    instead of computing it; the deviations are then ``x - mean`` in NumPy's promotion (float32
    data with a float64 mean: float64)."""
    return stored(_variance("var", a, axis, dtype, _ddof(ddof, correction), keepdims, where, mean, out), out, "var")


def _variance(name: str, a: Any, axis: Any, dtype: Any, ddof: Any, keepdims: bool, where_: Any, mean: Any,
              out: Any = None) -> LazyArray:
    x = asarray(a)
    mask = _mask(x, where_)
    exact = _exact_dtype(dtype)
    if exact is not None:  # NumPy's steps in an integer dtype: the mean truncated, squares that wrap
        avg = _exact_mean(x, axis, exact, True, mask) if mean is np._NoValue else _given_mean(x, mean, name)
        centered = x - avg
        sq = centered * centered
        sq_total = (sq if mask is None else _select(mask, sq, 0)).sum(axis, exact, keepdims=keepdims)
        count = _counted(x, axis, ddof, np.dtype(np.float64), sq_total, mask)
        into = _out_dtype(out, name, exact)
        if into is not None:  # NumPy sums into out, then divides there
            return _divided_in(sq_total, count, into)
        return (sq_total / count).astype(exact)
    if mean is not np._NoValue:
        m = _given_mean(x, mean, name)
        centered = x - m
        work, result = _float_work(centered.dtype, dtype)
        if centered.dtype.itemsize < 4:  # float16, bfloat16, small integers: the deviations in the working float
            centered = x.astype(work) - (m if is_weak(m) else m.astype(work))
        sq = (centered * centered).astype(work)
    else:
        work, result = _float_work(x.dtype, dtype)
        xf = _work_input(x, work, result)
        total = (xf if mask is None else _select(mask, xf, 0)).sum(axis, keepdims=True)
        avg = total / _counted(x, axis, 0, work, total, mask)
        # NumPy subtracts the mean from the input itself: integers minus a float32 mean give float64
        # deviations (int32 and wider), as float64 data with dtype=float32 does; squared there and
        # summed in the requested dtype
        deviation_t = np.result_type(x.dtype, work)
        if deviation_t != work or (is_low_float(result) and x.dtype != result):  # (xf was rounded to result)
            centered = x.astype(deviation_t) - avg.astype(deviation_t)
            sq = (centered * centered).astype(work)
        else:
            centered = xf - avg
            sq = centered * centered
    into = _out_dtype(out, name, result)
    sq = _cast(sq, _summed_in(work, dtype, x.dtype, into))  # (NumPy sums the squares into out)
    sq_total = (sq if mask is None else _select(mask, sq, 0)).sum(axis, keepdims=keepdims)
    if into is not None:
        if name in ("std", "nanstd") and into.kind in "biu":  # NumPy's sqrt(var, out=var) cannot go back into it
            raise TypeError(f"{name}: Cannot cast ufunc 'sqrt' output from dtype('float64') to {into!r} with casting rule "
                            f"'same_kind' (the out= NumPy's std takes its root in); give a float out=")
        sq_total = _summed(sq_total, dtype, result)
        return _divided_in(sq_total, _counted(x, axis, ddof, work, sq_total, mask), into)
    return _cast(sq_total / _counted(x, axis, ddof, work, sq_total, mask), result)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = True, mean: Any = np._NoValue, correction: Any = np._NoValue) -> LazyArray:
    """Standard deviation: ``sqrt(var(...))``."""
    return _deviation("std", a, axis, dtype, out, _ddof(ddof, correction), keepdims, where, mean)


def _deviation(name: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: bool, where_: Any,
               mean: Any) -> LazyArray:
    """:func:`std` (``name``: ``"std"``, or ``"nanstd"`` of integers, which NumPy hands to ``std``)."""
    v = _variance(name, a, axis, dtype, ddof, keepdims, where_, mean, out)
    exact = _exact_dtype(dtype) is not None and v.dtype.kind in "biu"  # (a float out= holds the variance: its root)
    return stored(_exact_root(name, v, out) if exact else sqrt(v), out, name)  # noqa: F821


def _exact_root(name: str, v: LazyArray, out: Any) -> LazyArray:
    """NumPy's std with an integer or bool ``dtype``: a single value is the square root truncated
    to it; an array of them is NumPy's ``sqrt(var, out=var)``, whose float result cannot go back
    into the integer array (a TypeError there, so here too)."""
    root = sqrt(v)  # noqa: F821
    if out is None and v.ndim == 0:  # (a 0-d result is a NumPy scalar there, keepdims=True of 0-d data too)
        return root.astype(v.dtype)
    raise TypeError(
        f"{name}: Cannot cast ufunc 'sqrt' output from {root.dtype!r} to {v.dtype!r} with casting rule "
        f"'same_kind' (NumPy's error: an integer dtype= takes the root of a whole-array {name} only); give a float "
        f"dtype, e.g. dtype=np.float64"
    )


def _arg(opname: str, a: Any, axis: Any, keepdims: Any) -> LazyArray:
    x = asarray(a)
    keepdims = bool(keepdims)  # (NumPy's argmax reads it by its truth: keepdims=None is False)
    if build.zero_d_axis(axis, x.ndim, None) is None:
        flat = x.reshape(-1)
        out = LazyArray(build.reduce(opname, flat._node, 0, keepdims=False))
        return out.reshape((1,) * x.ndim) if keepdims else out
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{opname}: axis must be an integer or None, got {axis!r}")
    return LazyArray(build.reduce(opname, x._node, axis, keepdims))


def argmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
    """Index of the first maximum along ``axis`` (over the flattened array if None)."""
    return positions_stored(_arg("argmax", a, axis, keepdims), out, "argmax")


def argmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
    """Index of the first minimum along ``axis`` (over the flattened array if None)."""
    return positions_stored(_arg("argmin", a, axis, keepdims), out, "argmin")


def positions_stored(result: LazyArray, out: Any, name: str) -> LazyArray:
    """An arg-reduction's ``result``, or ``out`` with it written in: NumPy takes an ``out`` whose
    dtype casts safely to int64 (an integer or bool; not a float, not uint64) and casts into it."""
    target = outputs(out, 1, name) if out is not None else None
    if target is not None and not np.can_cast(target[0].dtype, np.int64, "safe"):
        raise TypeError(f"{name}: Cannot cast array data from {target[0].dtype!r} to dtype('int64') according to the "
                        f"rule 'safe' (NumPy's check of out=); give an integer out=")
    return stored(result, out, name)


def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> LazyArray:
    """``log(sum(exp(a)))`` along ``axis``, computed stably (SciPy's ``logsumexp``: shifted by the
    maximum; over no elements ``log(0)``, -inf)."""
    x = asarray(a)
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    # an empty axis has no maximum: -inf there (the shape says which; elsewhere no initial=, so
    # the code generator still sees exp(x - max(x)))
    m = x.max(axis, keepdims=True, initial=-np.inf) if x.size == 0 else x.max(axis, keepdims=True)
    m = where(isfinite(m), m, 0)  # noqa: F821
    s = exp(x - m).sum(axis, keepdims=True)  # noqa: F821
    out = log(s) + m  # noqa: F821
    if not keepdims:
        out = out.squeeze(axis if axis is not None else None)
    return out


def _float_input(a: Any) -> LazyArray:
    """``a`` as a lazy array; bool and integer input as float64 (what SciPy computes them in)."""
    x = asarray(a)
    return x.astype(np.float64) if x.dtype.kind in "biu" else x


def softmax(x: Any, axis: Any = None) -> LazyArray:
    """``exp(x) / sum(exp(x))`` along ``axis`` (``None``: over all elements), shifted by the
    maximum first (SciPy's ``scipy.special.softmax``; integer and bool input in float64). Over
    rows it is one kernel.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.softmax(sl.asarray(np.log(np.array([[1.0, 3.0], [2.0, 2.0]]))), axis=1).get()
        array([[0.25, 0.75],
               [0.5 , 0.5 ]])
    """
    v = _float_input(x)
    e = exp(v - v.max(axis, keepdims=True))  # noqa: F821
    return e / e.sum(axis, keepdims=True)


def log_softmax(x: Any, axis: Any = None) -> LazyArray:
    """``log(softmax(x, axis))`` computed as ``x - max - log(sum(exp(x - max)))`` (SciPy's
    ``scipy.special.log_softmax``: exact where ``softmax`` underflows to 0; an infinite maximum
    shifts by 0).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.log_softmax(sl.asarray(np.array([0.0, 1000.0]))).get()
        array([-1000.,     0.])
    """
    v = _float_input(x)
    m = v.max(axis, keepdims=True)
    d = v - where(isfinite(m), m, 0)  # noqa: F821
    return d - log(exp(d).sum(axis, keepdims=True))  # noqa: F821


def logit(x: Any) -> LazyArray:
    """``log(x / (1 - x))``, the inverse of :func:`expit` (SciPy's ``scipy.special.logit``: near
    0.5, in [0.3, 0.65], as ``log1p(2x - 1) - log1p(1 - 2x)``, which keeps its precision there).
    0 gives -inf, 1 gives inf, outside [0, 1] NaN.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.logit(sl.asarray(np.array([0.0, 0.5, 1.0]))).get()
        array([-inf,   0.,  inf])
    """
    v = _float_input(x)
    s = (v - 0.5) * 2
    return where((v < 0.3) | (v > 0.65), log(v / (1 - v)), log1p(s) - log1p(-s))  # noqa: F821


def xlogy(x: Any, y: Any) -> LazyArray:
    """``x * log(y)``, 0 where ``x`` is 0 and ``y`` is not NaN (SciPy's ``scipy.special.xlogy``:
    the ``0 * log(0)`` of entropies is 0). In the operands' result dtype, float64 for integers.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.xlogy(sl.asarray(np.array([0.0, 2.0, 0.0])), np.array([0.0, np.e, np.nan])).get()
        array([ 0.,  2., nan])
    """
    a, b = asarray(x), asarray(y)
    dt = build.result_type(a._node, b._node)
    if not is_float(dt):
        dt = np.dtype(np.float64)
    a, b = a.astype(dt), b.astype(dt)
    return where((a == 0) & ~isnan(b), 0, a * log(b))  # noqa: F821


# --- layout -------------------------------------------------------------------------------------
def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: bool | None = None) -> LazyArray:
    """``a`` in another shape (NumPy's ``reshape``: ``newshape=`` is its old name for ``shape``;
    ``order="F"`` raises ``TypeError`` naming the way round)."""
    if shape is None and newshape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    if shape is not None and newshape is not None:
        raise TypeError("You cannot specify 'newshape' and 'shape' arguments at the same time.")
    return asarray(a).reshape(shape if shape is not None else newshape, order=order, copy=copy)


def transpose(a: Any, axes: Any = None) -> LazyArray:
    return asarray(a).transpose(axes)



#: the array API's name (NumPy 2's ``np.permute_dims`` is ``np.transpose``)
permute_dims = transpose

def ravel(a: Any, order: str = "C") -> LazyArray:
    """The elements of ``a`` in one axis, a lazy view (NumPy's ``ravel``)."""
    return asarray(a).ravel(order)


def expand_dims(a: Any, axis: Any) -> LazyArray:
    x = asarray(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    new = build.normalize_axes(axes, ndim)
    it = iter(x.shape)
    return x.reshape(tuple(1 if i in new else next(it) for i in range(ndim)))


def squeeze(a: Any, axis: Any = None) -> LazyArray:
    x = asarray(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = build.normalize_axes(build.zero_d_axis(axis, x.ndim, ()), x.ndim)
        for i in axes:
            if x.shape[i] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in axes))


# --- NumPy functions composed of the ops above ------------------------------------------------------
# Each is a small graph of elementwise ops, where() and reductions, so a fused kernel does the work
# (sl.nansum(x, axis=-1) is one row kernel, sl.isclose(a, b) one pointwise kernel). Where NumPy
# computes in a particular dtype (isclose's tolerances, the nan-functions' divisions), the graph
# does the same, so the numpy backend gives NumPy's bits.


def _py_or_lazy(v: Any) -> Any:
    """A Python scalar as it is (it promotes weakly, NEP 50), anything else as a lazy array."""
    return v if is_weak(v) else asarray(v)


def _isnan(v: Any) -> Any:
    return math.isnan(v) if is_weak(v) else isnan(v)  # noqa: F821


def _check_tolerances(rtol: Any, atol: Any) -> None:
    """NumPy's check that ``rtol`` and ``atol`` are finite, reported as ``np.geterr()`` asks.

    Only Python and NumPy values are checked: checking a lazy (or CuPy) tolerance would evaluate
    it or copy it to the host.
    """
    concrete = [t for t in (atol, rtol) if isinstance(t, (bool, int, float, np.generic, np.ndarray))]
    if builtins.all(np.all(np.isfinite(t)) for t in concrete):
        return
    msg = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
    mode = np.geterr()["invalid"]
    if mode == "warn":
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    elif mode == "raise":
        raise FloatingPointError(msg)
    elif mode == "print":
        print(msg)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> LazyArray:
    """Elementwise ``|a - b| <= atol + rtol * |b|``, with NumPy's ``isclose`` semantics.

    Infinities are close only to themselves (``inf`` and ``inf`` are, ``inf`` and a finite value
    are not); NaN is close to nothing unless ``equal_nan``, then to NaN. The arithmetic follows
    NumPy 2: ``b`` is made a float (integer and bool arrays become float64), and Python-scalar
    tolerances promote weakly, so for ``float16`` inputs the tolerance ``atol + rtol * |b|`` is
    computed and compared in ``float16`` as NumPy does (``atol=1e-8`` rounds to 0 there).

    A non-finite ``rtol`` or ``atol`` is reported as NumPy does (``np.geterr()["invalid"]``:
    a ``RuntimeWarning`` by default), unless the tolerance is a lazy or CuPy array: checking it
    would evaluate it or copy it to the host.

    Args:
        a: array or Python scalar.
        b: array or Python scalar, broadcast against ``a``.
        rtol: relative tolerance (a scalar or an array broadcast against ``a`` and ``b``).
        atol: absolute tolerance (likewise).
        equal_nan: whether NaN in ``a`` and NaN in ``b`` at the same place count as close.

    Returns:
        A lazy ``bool`` array of the broadcast shape (0-d for two scalars, where NumPy returns a
        NumPy bool).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([1.0, np.inf, np.nan, 2.0]))
        >>> sl.isclose(x, np.array([1.0 + 1e-9, np.inf, np.nan, 2.1])).get()
        array([ True,  True, False, False])
        >>> sl.isclose(x, np.array([1.0, np.inf, np.nan, 2.1]), equal_nan=True).get()
        array([ True,  True,  True, False])
    """
    x = _py_or_lazy(a)
    if is_weak(b):
        y: Any = float(b)  # NumPy: a Python int or bool b becomes a Python float
    else:
        y = asarray(b)
        y = y.astype(build.result_type(y._node, 1.0))  # integer and bool b: float64
    _check_tolerances(rtol, atol)
    rtol, atol = _py_or_lazy(rtol), _py_or_lazy(atol)
    finite_y = math.isfinite(y) if is_weak(y) else isfinite(y)  # noqa: F821
    # Python operators on purpose: two Python scalars combine in Python, as in NumPy's own code
    close = ((abs(x - y) <= atol + rtol * abs(y)) & finite_y) | (x == y)
    if equal_nan:
        close = close | (_isnan(x) & _isnan(y))
    return asarray(close)


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``a`` is close to ``b``: ``bool(isclose(a, b, ...).all())``.

    Unlike the other functions here this evaluates (like NumPy's it returns a Python ``bool``).
    See :func:`isclose` for the arguments.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.allclose(sl.asarray(np.array([1e10, 1e-7])), np.array([1.00001e10, 1e-8]))
        False
    """
    return builtins.bool(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).all())


def _fill_value(value: Any, like: LazyArray, name: str) -> LazyArray:
    """``value`` in ``like``'s dtype, converted as NumPy's ``copyto`` converts it: a number as a
    constant, an array (real) broadcast to ``like``'s shape (ValueError where it does not)."""
    dtype = like.dtype
    if not isinstance(value, numbers.Real | LazyArray) and np.ndim(value) == 0:
        if np.asarray(value).dtype.kind not in "biuf":  # (1j, a string, None)
            raise TypeError(f"nan_to_num: {name} must be a real number, got {value!r}")
        value = np.asarray(value).item()  # (a 0-d NumPy array)
    if isinstance(value, numbers.Real):
        with np.errstate(over="ignore"):  # out of range for float16: inf, as in NumPy
            return LazyArray(build.const(cast(np.asarray(value), dtype).item(), dtype))
    v = asarray(value)
    if v.dtype.kind not in "biuf":
        raise TypeError(f"nan_to_num: {name} must be a real number or array, got {value!r}")
    while v.ndim > like.ndim and v.shape[0] == 1:  # (an assignment drops leading axes of length 1)
        v = v.reshape(v.shape[1:])
    tail = like.shape[like.ndim - v.ndim:] if v.ndim <= like.ndim else None
    if tail is None or builtins.any(n not in (1, m) for n, m in zip(v.shape, tail, strict=True)):
        raise ValueError(f"nan_to_num: could not broadcast {name} of shape {v.shape} into x's shape {like.shape}; give "
                         "a number or an array that broadcasts to x")
    return LazyArray(build.broadcast_to(v.astype(dtype)._node, like.shape))


def nan_to_num(
    x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None
) -> LazyArray:
    """NaN replaced by ``nan``, +inf by ``posinf``, -inf by ``neginf`` (NumPy's ``nan_to_num``).

    Args:
        x: array or scalar. Integer and bool input comes back unchanged.
        copy: ``False`` with a stitchlab ``x``: ``x`` then stands for the result too, and is
            returned (NumPy's replacement in place); otherwise the result is a new lazy array.
        nan: value for NaN (a number, or an array that broadcasts to ``x``'s shape; so too the
            next two).
        posinf: value for +inf; default: the dtype's largest finite value (``np.finfo(dtype).max``).
        neginf: value for -inf; default: the dtype's most negative finite value.

    Returns:
        A lazy array of ``x``'s shape and dtype; the replacement values are converted to that
        dtype as NumPy converts them (too large for ``float16``: inf).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([np.nan, np.inf, -np.inf, 1.5], np.float16))
        >>> sl.nan_to_num(x).get()
        array([ 0.00e+00,  6.55e+04, -6.55e+04,  1.50e+00], dtype=float16)
    """
    arr = asarray(x)
    if not is_float(arr.dtype):
        return arr.copy() if copy else arr
    info = _finfo(arr.dtype)
    fills = [
        _fill_value(nan, arr, "nan"),
        _fill_value(float(info.max) if posinf is None else posinf, arr, "posinf"),
        _fill_value(float(info.min) if neginf is None else neginf, arr, "neginf"),
    ]
    out = where(arr == -math.inf, fills[2], arr)
    out = where(arr == math.inf, fills[1], out)
    out = where(isnan(arr), fills[0], out)  # noqa: F821
    if copy or not isinstance(x, LazyArray):
        return out
    x._rebind(out._node)
    return x


def inexact_out(x: Any, out: Any, name: str) -> None:
    """NumPy's check of a nan-statistic's ``out=`` for float data: a float array."""
    target = outputs(out, 1, name)[0] if out is not None else None
    if target is not None and is_float(asarray(x).dtype) and not is_float(target.dtype):
        raise TypeError(f"{name}: If a is inexact, then out must be inexact (NumPy's rule), got out= of dtype "
                        f"{target.dtype}; give a float out=")


def _nan_dtype(x: LazyArray, dtype: Any, name: str) -> np.dtype:
    """The dtype a nan-function over float ``x`` sums in and returns: ``dtype`` or ``x``'s own."""
    if dtype is None:
        return x.dtype
    out = as_dtype(dtype)
    if not is_float(out):
        raise TypeError(
            f"{name}: dtype must be a float dtype for float input (NumPy: 'If a is inexact, then dtype "
            f"must be inexact'), got {out}; use e.g. dtype=np.float64"
        )
    return out


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = np._NoValue, where: Any = True) -> LazyArray:
    """Sum along ``axis`` treating NaN as zero (NumPy's ``nansum``), of the elements ``where``
    selects, plus ``initial``.

    An all-NaN or empty slice sums to 0. Integer and bool input: the plain :func:`sum`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([[1.0, np.nan], [np.nan, np.nan]]))
        >>> sl.nansum(x, axis=1).get()
        array([1., 0.])
    """
    x = asarray(a)
    if is_float(x.dtype):
        x = _select(isnan(x), 0, x)  # noqa: F821
    return x.sum(axis, dtype, out, keepdims, initial, where)  # (NumPy's sum into out: in the promotion of both dtypes)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = np._NoValue, where: Any = True) -> LazyArray:
    """Product along ``axis`` treating NaN as one (NumPy's ``nanprod``), of the elements ``where``
    selects, times ``initial``.

    An all-NaN or empty slice gives 1. Integer and bool input: the plain :func:`prod`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanprod(sl.asarray(np.array([[2.0, np.nan], [np.nan, np.nan]])), axis=1).get()
        array([2., 1.])
    """
    x = asarray(a)
    if is_float(x.dtype):
        x = _select(isnan(x), 1, x)  # noqa: F821
    return x.prod(axis, dtype, out, keepdims, initial, where)  # (NumPy's prod into out: in the promotion of both dtypes)


def _nan_extreme(opname: str, a: Any, axis: Any, out: Any, keepdims: bool, initial: Any, where_: Any) -> LazyArray:
    """``nanmax``/``nanmin``: NumPy's ``fmax``/``fmin`` reduction, whose ``where=`` needs ``initial``;
    of integers and bools :func:`max`'s or :func:`min`'s, ``out=`` included (NumPy's reduces in
    ``out``'s dtype)."""
    x = asarray(a)
    axis = build.zero_d_axis(axis, x.ndim, ())
    axes = build.normalize_axes(axis, x.ndim)
    initial = initial_arg(initial, f"nan{opname}")
    given = initial is not np._NoValue
    if not given and where_ is not True:
        raise ValueError(f"reduction operation 'f{opname}' does not have an identity, so to use a where mask one has "
                         "to specify 'initial'")
    if not given and builtins.any(x.shape[i] == 0 for i in axes):  # NumPy names the ufunc it reduces with
        raise ValueError(f"zero-size array to reduction operation f{opname} which has no identity")
    if not is_float(x.dtype):
        reduce = x.max if opname == "max" else x.min
        return reduce(axis, out=out, keepdims=keepdims, initial=initial, where=where_)
    if out is not None:
        extreme_out(f"nan{opname}", f"sl.nan{opname}", x.dtype, np.dtype(outputs(out, 1, f"nan{opname}")[0].dtype))
    return stored(_nan_float_extreme(opname, x, axis, keepdims, initial, where_), out, f"nan{opname}")


def _nan_float_extreme(opname: str, x: LazyArray, axis: Any, keepdims: bool, initial: Any, where_: Any) -> LazyArray:
    given = initial is not np._NoValue
    nan = isnan(x)  # noqa: F821
    if given:  # (fmax/fmin with initial: the extreme of the selected numbers and initial; a NaN initial is ignored)
        sel = ~nan if where_ is True else ~nan & _mask(x, where_)
        fill = -math.inf if opname == "max" else math.inf
        found = where(sel, x, fill)
        found = (found.max if opname == "max" else found.min)(axis, keepdims=keepdims, initial=fill)  # (empty slices)
        some = sel.any(axis, keepdims=keepdims)
        if isinstance(initial, numbers.Real) and math.isnan(initial):
            return where(some, found, math.nan)
        bound = (maximum if opname == "max" else minimum)(found, initial)  # noqa: F821
        return where(some, bound, initial).astype(x.dtype)
    if opname == "max":
        extreme = where(nan, -math.inf, x).max(axis, keepdims=keepdims)
    else:
        extreme = where(nan, math.inf, x).min(axis, keepdims=keepdims)
    return where(nan.all(axis, keepdims=keepdims), math.nan, extreme)


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,
           where: Any = True) -> LazyArray:
    """Maximum along ``axis`` ignoring NaN (NumPy's ``nanmax``), of the elements ``where`` selects
    and ``initial`` (``where`` needs ``initial``, as NumPy's).

    An all-NaN slice gives NaN (``initial`` if given), as in NumPy, but without NumPy's
    ``RuntimeWarning`` (the values are not known when the expression is built). A zero result's
    sign follows :func:`max`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]]))
        >>> sl.nanmax(x, axis=1).get()
        array([ 3., nan])
    """
    return _nan_extreme("max", a, axis, out, keepdims, initial, where)


def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
    """Position of the first maximum along ``axis`` ignoring NaN (NumPy's ``nanargmax``: NaN
    replaced by -inf, then :func:`argmax`, so a slice of NaN and -inf gives its first NaN, as in
    NumPy). An all-NaN slice gives -1, as CuPy's ``nanargmax`` does, where NumPy raises
    ``ValueError``: the values are not known when the expression is built (check
    ``sl.isnan(x).all(axis)``). One reduction kernel with the work around it.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]]))
        >>> sl.nanargmax(x, axis=1).get()
        array([ 2, -1])
    """
    return positions_stored(_nan_arg("argmax", a, axis, keepdims), out, "nanargmax")


def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
    """Position of the first minimum along ``axis`` ignoring NaN (NumPy's ``nanargmin``); NaN
    and all-NaN slices as in :func:`nanargmax` (+inf in place of NaN)."""
    return positions_stored(_nan_arg("argmin", a, axis, keepdims), out, "nanargmin")


def _nan_arg(name: str, a: Any, axis: Any, keepdims: Any) -> LazyArray:
    x = asarray(a)
    keepdims = bool(keepdims)  # (by its truth, as NumPy's nanargmax)
    if not is_float(x.dtype):
        return _arg(name, x, axis, keepdims)
    nan = isnan(x)  # noqa: F821
    pos = _arg(name, where(nan, -math.inf if name == "argmax" else math.inf, x), axis, keepdims)
    return where(nan.all(axis, keepdims=keepdims), -1, pos)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,
           where: Any = True) -> LazyArray:
    """Minimum along ``axis`` ignoring NaN (NumPy's ``nanmin``); ``initial``, ``where`` and all-NaN
    slices as :func:`nanmax`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanmin(sl.asarray(np.array([np.nan, 2.0, -1.0]))).get()
        array(-1.)
    """
    return _nan_extreme("min", a, axis, out, keepdims, initial, where)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
            where: Any = True) -> LazyArray:
    """Mean along ``axis`` of the elements that are not NaN (NumPy's ``nanmean``), of those
    ``where`` selects.

    Float input is summed in its own dtype (or ``dtype``) and divided by the count in ``float64``,
    as in NumPy, except that float16 and bfloat16 without ``dtype`` are summed in float32, as
    :func:`mean` sums them, and the result is NumPy's on the float32 values, rounded (NumPy sums
    them in float16, where a sum past 65504 is inf). An all-NaN or empty slice gives
    NaN (without NumPy's ``RuntimeWarning``). Integer and bool input: the plain :func:`mean`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanmean(sl.asarray(np.array([[1.0, np.nan, 3.0]])), axis=-1).get()
        array([2.])
    """
    x = asarray(a)
    if not is_float(x.dtype):
        return mean(x, axis, dtype, out, keepdims, where=where)
    inexact_out(x, out, "nanmean")
    result = _nan_dtype(x, dtype, "nanmean")
    into = _out_dtype(out, "nanmean", result)
    nan = _left_out(x, where)
    count = (~nan).sum(axis, keepdims=keepdims)  # int64, as NumPy's intp count
    work = _nan_work(result, dtype, into)
    total = _select(nan, 0, x).sum(axis, work, keepdims=keepdims)
    if into is not None:
        return stored(_counted_into(total, count, into), out, "nanmean")
    return stored((total / count).astype(work).astype(result), out, "nanmean")  # float64 division, as NumPy's _divide_by_count


def nanvar(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *,
    where: Any = True, mean: Any = np._NoValue, correction: Any = np._NoValue,
) -> LazyArray:
    """Variance along ``axis`` of the elements that are not NaN (NumPy's ``nanvar``), of those
    ``where`` selects; ``mean`` (NumPy 2, of ``keepdims=True``'s shape) is taken as their mean,
    the deviations cast to the input's dtype as NumPy's are.

    Follows NumPy's two passes dtype for dtype: the mean is summed in the input's dtype (or
    ``dtype``) and divided by the count in ``float64``; the deviations are taken in the input's
    dtype and their squares summed in ``dtype``. Without ``dtype``, float16 and bfloat16 work in
    float32 instead, as :func:`var` does, and the result is NumPy's on the float32 values, rounded
    (NumPy sums float16 squares in float16: past 65504, which 16384 values of variance 4 reach,
    that sum is inf). Where ``count - ddof <= 0`` (all-NaN slices among
    them) the result is NaN, without NumPy's ``RuntimeWarning``. Integer and bool input: the plain
    :func:`var`.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanvar(sl.asarray(np.array([1.0, np.nan, 3.0])), ddof=1).get()
        array(2.)
    """
    if not is_float(asarray(a).dtype):  # no NaN to skip: NumPy's var, out= included
        return stored(_variance("nanvar", a, axis, dtype, _ddof(ddof, correction), keepdims, where, mean, out), out,
                      "nanvar")
    inexact_out(a, out, "nanvar")
    return stored(_nan_variance("nanvar", a, axis, dtype, _ddof(ddof, correction), keepdims, where, mean, out=out), out,
                  "nanvar")


def _nan_work(result: np.dtype, requested: Any, into: np.dtype | None) -> np.dtype:
    """The dtype a float nan-statistic sums in: the ``dtype`` asked for (a float16 one sums in
    float32 and rounds once); without one float32 for float16 and bfloat16, and with an ``out`` of
    another float dtype the promotion of both (NumPy's ``sum(..., out=out)``: float16 data into a
    float32 ``out`` adds in float32, where the result's float16 rounding went in too)."""
    if requested is not None:
        return result
    work = _float_work(result, None)[0]
    return work if into is None else np.result_type(work, into)


def _counted_into(total: LazyArray, count: LazyArray, into: np.dtype) -> LazyArray:
    """NumPy's ``_divide_by_count`` into ``out`` of dtype ``into``: the sum cast into it, then divided
    by the integer count (in float64, NumPy's promotion with intp) and cast back."""
    return (total.astype(into) / count).astype(into)


def _left_out(x: LazyArray, where_: Any) -> LazyArray:
    """Where a nan-function leaves float ``x``'s elements out: NaN, or not selected by ``where_``."""
    nan = isnan(x)  # noqa: F821
    return nan if where_ is True else nan | ~_mask(x, where_)


def _nan_variance(name: str, a: Any, axis: Any, dtype: Any, ddof: Any, keepdims: bool, where_: Any = True,
                  mean: Any = np._NoValue, root: bool = False, out: Any = None) -> LazyArray:
    """``nanvar`` (``root``: its square root, ``nanstd``) in the dtype NumPy's steps run in; for
    float16 and bfloat16 without ``dtype`` NumPy's steps on their float32 values, rounded at the end.
    With an ``out`` of another dtype, NumPy's last steps: the squares summed into it, divided there."""
    if not isinstance(ddof, numbers.Real):
        raise TypeError(f"{name}: ddof must be a real number, got {ddof!r}")
    x = asarray(a)
    if not is_float(x.dtype):
        v = _variance(name, x, axis, dtype, ddof, keepdims, where_, mean)
        if root and _exact_dtype(dtype) is not None:
            return _exact_root(name, v, None)
        return sqrt(v) if root else v  # noqa: F821
    result = _nan_dtype(x, dtype, name)
    work = result if dtype is not None else _float_work(result, None)[0]  # float16, bfloat16: float32
    nan = _left_out(x, where_)
    arr = where(nan, 0, x)
    count = (~nan).sum(axis, keepdims=True)
    if mean is np._NoValue:
        avg = (arr.sum(axis, work, keepdims=True) / count).astype(work)
    else:  # (float16 and bfloat16 without dtype: the deviations in float32, as above)
        avg = _given_mean(x, mean, name)
        avg = avg if is_weak(avg) or dtype is not None or x.dtype.itemsize >= 4 else avg.astype(work)
    # NumPy subtracts into the input's dtype (float32 for float16 and bfloat16 without ``dtype``)
    deviation = where(nan, 0, (arr - avg).astype(work if dtype is None else x.dtype))
    into = _out_dtype(out, name, result)
    total = (deviation * deviation).sum(axis, _nan_work(result, dtype, into), keepdims=keepdims)
    dof = (count - ddof).reshape(total.shape)
    v = _counted_into(total, dof, into) if into is not None else (total / dof).astype(work)
    v = sqrt(v) if root else v  # noqa: F821
    return where(dof <= 0, math.nan, v.astype(into if into is not None else result))


def nanstd(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *,
    where: Any = True, mean: Any = np._NoValue, correction: Any = np._NoValue,
) -> LazyArray:
    """Standard deviation ignoring NaN: ``sqrt(nanvar(...))`` (NumPy's ``nanstd``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.nanstd(sl.asarray(np.array([[1.0, np.nan, 3.0]])), axis=1).get()
        array([1.])
    """
    if not is_float(asarray(a).dtype):  # no NaN to skip: NumPy's std, out= included (an integer out= raises)
        return _deviation("nanstd", a, axis, dtype, out, _ddof(ddof, correction), keepdims, where, mean)
    inexact_out(a, out, "nanstd")
    return stored(_nan_variance("nanstd", a, axis, dtype, _ddof(ddof, correction), keepdims, where, mean, root=True,
                                out=out), out, "nanstd")


def isposinf(x: Any) -> LazyArray:
    """True where ``x`` is +inf (NumPy's ``isposinf``; False for every integer and bool).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.isposinf(sl.asarray(np.array([np.inf, -np.inf, 1.0, np.nan]))).get()
        array([ True, False, False, False])
    """
    v = asarray(x)
    return isinf(v) & ~signbit(v)  # noqa: F821


def isneginf(x: Any) -> LazyArray:
    """True where ``x`` is -inf (NumPy's ``isneginf``; False for every integer and bool).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.isneginf(sl.asarray(np.array([np.inf, -np.inf, 1.0, np.nan]))).get()
        array([False,  True, False, False])
    """
    v = asarray(x)
    return isinf(v) & signbit(v)  # noqa: F821


def copy(a: Any, order: str = "K", subok: bool = False) -> LazyArray:
    """An array with ``a``'s values (NumPy's ``copy``): :func:`array` with ``copy=True``. NumPy
    and CuPy input is copied, so later writes to it do not reach the result; a lazy array's copy
    is a new array object that shares its expression (assigning into either leaves the other).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> h = np.array([1.0, 2.0]); c = sl.copy(h); h[0] = 9.0
        >>> c.get()
        array([1., 2.])
    """
    if order in ("F", "f", b"F", b"f"):
        raise ValueError(
            f"copy: order={order!r} is not supported: stitchlab arrays are C-ordered; use order='C' "
            f"(or 'K', 'A'), and np.asfortranarray on the NumPy result where Fortran order is needed"
        )
    c_order("copy", order)  # (NumPy's errors for an order it does not take)
    return array(a, copy=True)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> LazyArray:
    """The element of the first choice whose condition holds, ``default`` where none does
    (NumPy's ``select``): conditions, choices and ``default`` broadcast together; the result
    dtype is the choices' and ``default``'s ``result_type``, Python ints and floats among them
    weak (``select(c, [x_int8, 5])`` is int8), as in NumPy; such a choice is then an int64 or
    float64 value cast to it with NumPy's ``same_kind`` rule (it wraps: 300 is 44 in int8).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(6))
        >>> sl.select([x < 2, x > 3], [x, x ** 2], 42).get()
        array([ 0,  1, 42, 42, 16, 25])
    """
    conds, choices = list(condlist), list(choicelist)
    if len(conds) != len(choices):
        raise ValueError("list of cases must be same length as list of conditions")
    if not conds:
        raise ValueError("select with an empty condition list is not possible")
    cs = [asarray(c) for c in conds]
    # NumPy's: a Python int or float (not a bool) is weak in the result dtype, then an int64 or
    # float64 array (uint64 beyond int64) written into the result with copyto's same_kind rule;
    # the default fills the result with an unsafe cast
    weak = [v if type(v) in (int, float) else asarray(v) for v in [*choices, default]]
    dtype = build.result_type(*(v._node if isinstance(v, LazyArray) else v for v in weak))
    # (NumPy's order of checks: the conditions broadcast together, the choices and default
    # together, then the conditions' dtype)
    build.broadcast_shapes(*(c.shape for c in cs))
    build.broadcast_shapes(*(np.shape(v) for v in weak))
    for i, c in enumerate(cs):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray (got dtype {c.dtype}); "
                            f"compare first, e.g. x > 0")
    vs = []
    for i, v in enumerate(weak[:-1]):
        if not isinstance(v, LazyArray):
            host = np.asarray(v)
            if not np.can_cast(host.dtype, dtype, "same_kind"):
                raise TypeError(f"select: Cannot cast array data from {host.dtype!r} to {dtype!r} according to the rule "
                                f"'same_kind' (choice {i}, {v!r}, as NumPy's copyto); give it as a {dtype} array "
                                f"(np.{dtype}({v!r}))")
            v = asarray(host)
        vs.append(v.astype(dtype))
    d = weak[-1]
    if isinstance(d, LazyArray):
        out = d.astype(dtype)
    else:
        with np.errstate(all="ignore"):
            out = LazyArray(build.const(cast(np.asarray(d), dtype)[()], dtype))
    for c, v in zip(reversed(cs), reversed(vs), strict=True):  # the first condition that holds wins
        out = where(c, v, out)
    return out


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> LazyArray:
    """Number of elements that are not zero along ``axis`` (NaN counts, ``-0.0`` does not).

    Returns:
        A lazy ``int64`` array (NumPy's ``intp``); 0-d for ``axis=None``, where NumPy returns a
        NumPy integer.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.count_nonzero(sl.asarray(np.array([[0.0, -0.0, np.nan], [1.0, 2.0, 0.0]])), axis=1).get()
        array([1, 2])
    """
    return asarray(a).astype(np.bool_).sum(axis, np.int64, keepdims=keepdims)


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> LazyArray:
    """Range of values (maximum minus minimum) along ``axis``, in the input's dtype (NumPy's
    ``ptp``: integers wrap around as NumPy's do, a NaN gives NaN).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.ptp(sl.asarray(np.array([[4, 9, 2], [1, 1, 1]])), axis=1).get()
        array([7, 0])
    """
    x = asarray(a)
    target = outputs(out, 1, "ptp") if out is not None else None
    hi, lo = x.max(axis, keepdims=keepdims), x.min(axis, keepdims=keepdims)  # (NumPy's errors of axis and empty slices first)
    into = target[0].dtype if target is not None else x.dtype
    if into == x.dtype == np.bool_:
        raise TypeError(
            "ptp: boolean input is not supported (NumPy's subtract has no bool loop); "
            "use sl.any(a, axis) & ~sl.all(a, axis), or a.astype(int) first"
        )
    if into != x.dtype:  # NumPy's max into out (in out's dtype), then the difference in both dtypes
        if not np.can_cast(x.dtype, into):
            raise TypeError(f"ptp: out= of dtype {into} cannot hold every {x.dtype} value (NumPy takes the maximum in "
                            f"out's dtype, a result that depends on how it buffers, as max's); give out= of dtype "
                            f"{x.dtype}, or cast first: sl.ptp(x.astype(np.{into}), out=...)")
        hi = x.max(axis, out=full(hi.shape, 0, into), keepdims=keepdims)
    return stored(hi - lo, out, "ptp", casting="same_kind")


def fabs(x: Any) -> LazyArray:
    """Absolute value as a float (NumPy's ``fabs``): integer and bool input is converted to the
    float NumPy's ``fabs`` converts it to (``int8``, ``uint8``, ``bool``: float16; ``int16``:
    float32; wider: float64).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.fabs(sl.asarray(np.array([-3, 2], np.int16))).get()
        array([3., 2.], dtype=float32)
    """
    arr = asarray(x)
    _, float_dtype = np.fabs.resolve_dtypes((arr.dtype, None))
    return absolute(arr.astype(float_dtype))  # noqa: F821


def swapaxes(a: Any, axis1: int, axis2: int) -> LazyArray:
    """``a`` with axes ``axis1`` and ``axis2`` interchanged (a lazy transpose).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.swapaxes(sl.asarray(np.zeros((2, 3, 4))), 0, -1).shape
        (4, 3, 2)
    """
    x = asarray(a)
    i = np.lib.array_utils.normalize_axis_index(axis1, x.ndim, "axis1")
    j = np.lib.array_utils.normalize_axis_index(axis2, x.ndim, "axis2")
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return x.transpose(perm)



def matrix_transpose(x: Any) -> LazyArray:
    """``x`` with its last two axes swapped (the array API's ``matrix_transpose``, NumPy 2's
    ``np.matrix_transpose``): a lazy view.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.matrix_transpose(sl.asarray(np.zeros((4, 2, 3)))).shape
        (4, 3, 2)
    """
    v = asarray(x)
    if v.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {v.ndim}")
    return swapaxes(v, -1, -2)


def vecdot(x1: Any, x2: Any, *, axis: int = -1) -> LazyArray:
    """Dot products of vectors along ``axis`` of each operand, the other axes broadcast (NumPy
    2's ``vecdot`` ufunc of real arrays: ``sum(x1 * x2, axis)`` in their result dtype, wrapping
    for integers as NumPy's loops do; ``any(x1 & x2)`` for bool). A row or column reduction, fused
    with the product.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.vecdot(sl.asarray(np.arange(6.0).reshape(2, 3)), np.ones(3)).get()
        array([ 3., 12.])
    """
    a, b = _gufunc_operands("vecdot", "(n),(n)->()", x1, x2, (1, 1), (axis, axis))
    a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    dt = _vecdot_dtype(a.dtype, b.dtype)
    a, b = a.astype(dt), b.astype(dt)
    if dt == np.bool_:
        return (a & b).any(-1)
    return (a * b).sum(-1, dtype=dt)


def matvec(x1: Any, x2: Any) -> LazyArray:
    """Matrix-vector products over the last two axes of ``x1`` and the last axis of ``x2``, the
    other axes broadcast (NumPy 2's ``matvec`` ufunc of real arrays, signature
    ``(m,n),(n)->(m)``): ``sum(x1 * x2[..., None, :], -1)`` in :func:`vecdot`'s dtype. One row
    reduction, fused with the product and with the work around it.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.matvec(sl.asarray(np.arange(6.0).reshape(2, 3)), np.ones(3)).get()
        array([ 3., 12.])
    """
    a, b = _gufunc_operands("matvec", "(m,n),(n)->(m)", x1, x2, (2, 1), (-1, -1))
    return vecdot(a, expand_dims(b, -2), axis=-1)


def vecmat(x1: Any, x2: Any) -> LazyArray:
    """Vector-matrix products over the last axis of ``x1`` and the last two axes of ``x2``, the
    other axes broadcast (NumPy 2's ``vecmat`` ufunc of real arrays, signature
    ``(n),(n,m)->(m)``): ``sum(x1[..., :, None] * x2, -2)`` in :func:`vecdot`'s dtype. One column
    reduction, fused with the product.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.vecmat(np.ones(2), sl.asarray(np.arange(6.0).reshape(2, 3))).get()
        array([3., 5., 7.])
    """
    a, b = _gufunc_operands("vecmat", "(n),(n,m)->(m)", x1, x2, (1, 2), (-1, -2))
    return vecdot(expand_dims(a, -1), b, axis=-2)


def _gufunc_operands(name: str, signature: str, x1: Any, x2: Any, ndims: tuple[int, int],
                     core: tuple[int, int]) -> tuple[LazyArray, LazyArray]:
    """``x1`` and ``x2`` as lazy arrays, with NumPy's errors for too few dimensions (``ndims``: the
    least of each) and for core dimensions ``core`` (one axis of each) that differ."""
    a, b = asarray(x1), asarray(x2)
    for k, (v, need) in enumerate(zip((a, b), ndims, strict=True)):
        if v.ndim < need:
            raise ValueError(f"{name}: Input operand {k} does not have enough dimensions (has {v.ndim}, gufunc core with "
                             f"signature {signature} requires {need})")
    n1, n2 = a.shape[build.normalize_axis(core[0], a.ndim)], b.shape[build.normalize_axis(core[1], b.ndim)]
    if n1 != n2:
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"{signature} (size {n2} is different from {n1})")
    return a, b


@functools.lru_cache(maxsize=256)
def _vecdot_dtype(x: np.dtype, y: np.dtype) -> np.dtype:
    """The loop NumPy's ``vecdot`` picks for these dtypes (bfloat16 has none of its own: float32)."""
    return as_dtype(np.vecdot(np.zeros(1, x), np.zeros(1, y)).dtype)

def moveaxis(a: Any, source: Any, destination: Any) -> LazyArray:
    """``a`` with the axes ``source`` moved to the positions ``destination`` (int or sequence);
    the other axes keep their order (a lazy transpose, NumPy's ``moveaxis``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.moveaxis(sl.asarray(np.zeros((2, 3, 4))), 0, -1).shape
        (3, 4, 2)
    """
    x = asarray(a)
    src = np.lib.array_utils.normalize_axis_tuple(source, x.ndim, "source")
    dst = np.lib.array_utils.normalize_axis_tuple(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(
            f"`source` and `destination` arguments must have the same number of elements "
            f"(got source={source!r}, destination={destination!r})"
        )
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return x.transpose(order)


def _atleast(ndim: int, arys: tuple[Any, ...]) -> LazyArray | tuple[LazyArray, ...]:
    out = []
    for ary in arys:
        out.append(_ones_in_front(asarray(ary), ndim))  # (a 1-d array becomes one row)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: Any) -> LazyArray | tuple[LazyArray, ...]:
    """Each argument as an array of at least one dimension (a scalar becomes shape ``(1,)``).

    Returns:
        One lazy array for one argument, else a tuple of them (NumPy 2 returns a tuple).

    Example:
        >>> import stitchlab as sl
        >>> tuple(x.shape for x in sl.atleast_1d(1.0, sl.zeros((2, 3))))
        ((1,), (2, 3))
    """
    return _atleast(1, arys)


def atleast_2d(*arys: Any) -> LazyArray | tuple[LazyArray, ...]:
    """Each argument as an array of at least two dimensions: a scalar becomes ``(1, 1)``, a 1-d
    array of length n one row ``(1, n)``.

    Returns:
        One lazy array for one argument, else a tuple of them (NumPy 2 returns a tuple).

    Example:
        >>> import stitchlab as sl
        >>> sl.atleast_2d(sl.zeros(3)).shape
        (1, 3)
    """
    return _atleast(2, arys)


def broadcast_arrays(*args: Any) -> tuple[LazyArray, ...]:
    """The arguments broadcast against each other: lazy broadcasts, no copies. Where every
    argument has the common shape they come back as they are (a stitchlab array itself, as NumPy
    returns its arguments); else each is a view of its argument (:func:`broadcast_to`).

    Returns:
        A tuple of lazy arrays of the common shape (NumPy 2 returns a tuple).

    Example:
        >>> import stitchlab as sl
        >>> tuple(x.shape for x in sl.broadcast_arrays(sl.zeros((3, 1)), sl.zeros(4), 5))
        ((3, 4), (3, 4), (3, 4))
    """
    arrays = [asarray(a) for a in args]
    shape = build.broadcast_shapes(*(x.shape for x in arrays))
    if builtins.all(x.shape == shape for x in arrays):  # (sl.all is this module's all)
        return tuple(arrays)
    return tuple(broadcast_to(x, shape) for x in arrays)


def compute(*arrays: Any) -> tuple[Any, ...]:
    """Evaluate several lazy arrays in one plan.

    Returns:
        A tuple with one concrete array per argument: ``numpy.ndarray`` on the numpy backend,
        ``cupy.ndarray`` on the cupy backend. These are the lazy arrays' own values; NumPy ones
        are read-only (copy before writing), so a later expression never sees a changed value.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.arange(4.0))
        >>> total, peak = sl.compute(x.sum(), x.max())
        >>> float(total), float(peak)
        (6.0, 3.0)
    """
    lazies = [asarray(a) for a in arrays]
    by_device: dict[str | None, list[LazyArray]] = {}
    for x in lazies:
        by_device.setdefault(x._node.device, []).append(x)
    for group in by_device.values():
        runtime.evaluate([x._node for x in group])
    return tuple(x._node.value for x in lazies)




# --- more of NumPy's elementwise functions, composed of the ops above ------------------------------
def divmod(x1: Any, x2: Any) -> tuple[LazyArray, LazyArray]:  # noqa: A001
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (NumPy's ``divmod``): two lazy arrays that
    fuse into one kernel when evaluated together.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> q, r = sl.divmod(sl.asarray(np.array([7, -7])), 3)
        >>> q.get(), r.get()
        (array([ 2, -3]), array([1, 2]))
    """
    return floor_divide(x1, x2), remainder(x1, x2)  # noqa: F821


def fix(x: Any) -> LazyArray:
    """Round toward zero (NumPy's and CuPy's ``fix``; NumPy 2.5 deprecates it for ``trunc``):
    ``trunc``, which keeps integers as they are and gives ``-0.0`` for negative fractions.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.fix(sl.asarray(np.array([2.7, -2.7]))).get()
        array([ 2., -2.])
    """
    return trunc(x)  # noqa: F821


def modf(x: Any) -> tuple[LazyArray, LazyArray]:
    """Fractional and integral parts, both with the sign of ``x`` (NumPy's ``modf``): integers
    give float64 parts; ``modf(inf)`` is ``(0.0, inf)``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> frac, whole = sl.modf(sl.asarray(np.array([3.5, -3.0], np.float32)))
        >>> frac.get(), whole.get()
        (array([ 0.5, -0. ], dtype=float32), array([ 3., -3.], dtype=float32))
    """
    arr = asarray(x)
    dt = as_dtype(np.modf.resolve_dtypes((arr.dtype, None, None))[1])
    xf = arr.astype(dt)
    whole = trunc(xf)  # noqa: F821
    frac = where(isinf(xf), copysign(0, xf), copysign(xf - whole, xf))  # noqa: F821
    return frac, whole


def frexp(x: Any) -> tuple[LazyArray, LazyArray]:
    """Mantissas and exponents, ``x == mantissa * 2**exponent`` with ``0.5 <= |mantissa| < 1``
    (NumPy's ``frexp``: the mantissa in ``x``'s float dtype, float64 for integers, the exponent
    int32; zeros keep their sign and give exponent 0, as do infinities and NaN, which are their
    own mantissas). One kernel for both: the exponent, and ``ldexp(x, -exponent)`` (exact).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> m, e = sl.frexp(sl.asarray(np.array([8.0, -0.3, 0.0], np.float32)))
        >>> m.get(), e.get()
        (array([ 0.5, -0.6,  0. ], dtype=float32), array([ 4, -1,  0], dtype=int32))
    """
    arr = asarray(x)
    dt = as_dtype(np.frexp.resolve_dtypes((arr.dtype, None, None))[0])
    xf = arr.astype(dt)
    exponent = LazyArray(build.Node("frexp_exponent", (xf._node,), xf.shape, np.dtype(np.int32), device=xf._node.device))
    return ldexp(xf, -exponent), exponent  # noqa: F821


def sinc(x: Any) -> LazyArray:
    """``sin(pi x) / (pi x)``, 1 at 0 (NumPy's ``sinc``, with its guard: where ``pi x`` is 0 it
    divides at the dtype's epsilon).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.sinc(sl.asarray(np.array([0.0, 0.5]))).get()
        array([1.        , 0.63661977])
    """
    px = math.pi * asarray(x)
    y = where(px != 0, px, float(_finfo(px.dtype).eps))  # noqa: F821
    return sin(y) / y  # noqa: F821


def real(val: Any) -> LazyArray:
    """The real part: the array itself (stitchlab arrays are real).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.real(sl.asarray(np.array([1.5, -2.0]))).get()
        array([ 1.5, -2. ])
    """
    return asarray(val)[...]  # (a view, as NumPy's)


def imag(val: Any) -> LazyArray:
    """The imaginary part: zeros of the array's shape and dtype (stitchlab arrays are real),
    read-only while the array lives, as NumPy's ``x.imag`` of a real array (an assignment into it
    raises ``TypeError`` rather than going nowhere).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.imag(sl.asarray(np.array([1.5, -2.0]))).get()
        array([0., 0.])
    """
    arr = asarray(val)
    return LazyArray(build.broadcast_to(build.const(0, arr.dtype), arr.shape), view_of=arr)


def conjugate(x: Any) -> LazyArray:
    """The complex conjugate: the array itself (stitchlab arrays are real); a bool array is int8,
    as NumPy's ``conjugate`` has no bool loop.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.conj(sl.asarray(np.array([1, -2]))).get()
        array([ 1, -2])
    """
    arr = asarray(x)
    return arr.astype(np.int8) if arr.dtype == np.bool_ else arr.copy()


conj = conjugate


def angle(z: Any, deg: bool = False) -> LazyArray:
    """The argument of each element (NumPy's ``angle`` of real values, ``arctan2(0, z)``): pi for
    negative values and -0.0, 0 otherwise; in degrees with ``deg=True``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.angle(sl.asarray(np.array([-1.0, 2.0])), deg=True).get()
        array([180.,   0.])
    """
    a = arctan2(0, asarray(z))  # noqa: F821
    return a * (180 / math.pi) if deg else a


def _dtype_of(x: Any) -> Any:
    return x.dtype if isinstance(x, LazyArray) else x


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype NumPy's promotion gives these arrays (stitchlab, NumPy or CuPy), dtypes and
    scalars (NumPy's ``result_type``; a Python scalar is weak, NEP 50).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.result_type(sl.zeros(2, np.float32), 1.0, np.int8)
        dtype('float32')
    """
    return np.result_type(*(_dtype_of(a) for a in arrays_and_dtypes))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether a cast from ``from_`` (an array or a dtype) to ``to`` is allowed under
    ``casting`` (NumPy's ``can_cast``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.can_cast(sl.zeros(2, np.int16), np.float32), sl.can_cast(np.float64, np.float32)
        (True, False)
    """
    return bool(np.can_cast(_dtype_of(from_), _dtype_of(to), casting))


def iinfo(int_type: Any) -> np.iinfo:
    """Machine limits of an integer dtype, or of an array's (NumPy's ``iinfo``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> int(sl.iinfo(sl.zeros(2, np.int16)).max)
        32767
    """
    return np.iinfo(_dtype_of(int_type))


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating dtype, or of an array's (NumPy's ``finfo``; ml_dtypes' for
    bfloat16).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> float(sl.finfo(np.float16).eps)
        0.0009765625
    """
    return _finfo(as_dtype(_dtype_of(dtype)))


def asnumpy(a: Any) -> np.ndarray:
    """``a`` as a NumPy array on the host (CuPy's ``asnumpy``): a stitchlab array evaluated and
    copied, a CuPy array copied, anything else through ``numpy.asarray``.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.asnumpy(sl.arange(3) * 2)
        array([0, 2, 4])
    """
    if isinstance(a, LazyArray):
        return a.get()
    if hasattr(a, "__cuda_array_interface__") and hasattr(a, "get"):
        return a.get()
    return np.asarray(a)


def get_array_module(*args: Any) -> Any:
    """The array module for ``args`` (CuPy's ``get_array_module``): ``stitchlab`` if any of them
    is a stitchlab array, else ``numpy``, so that code written against ``xp`` takes either.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> def norm(x):
        ...     xp = sl.get_array_module(x)
        ...     return xp.sqrt((x * x).sum())
        >>> sl.get_array_module(sl.ones(2)).__name__, sl.get_array_module(np.ones(2)).__name__
        ('stitchlab', 'numpy')
    """
    if builtins.any(isinstance(a, LazyArray) for a in args):
        import stitchlab

        return stitchlab
    return np


def array_repr(arr: Any, max_line_width: Any = None, precision: Any = None, suppress_small: Any = None) -> str:
    """NumPy's ``array_repr`` of the evaluated array (``repr(x)`` is this).

    Example:
        >>> import stitchlab as sl
        >>> sl.array_repr(sl.arange(3) / 2, precision=1)
        'array([0. , 0.5, 1. ])'
    """
    return np.array_repr(asnumpy(arr), max_line_width, precision, suppress_small)


def array_str(a: Any, max_line_width: Any = None, precision: Any = None, suppress_small: Any = None) -> str:
    """NumPy's ``array_str`` of the evaluated array (``str(x)`` is this)."""
    return np.array_str(asnumpy(a), max_line_width, precision, suppress_small)


def array2string(a: Any, *args: Any, **kwargs: Any) -> str:
    """NumPy's ``array2string`` of the evaluated array, with NumPy's arguments."""
    return np.array2string(asnumpy(a), *args, **kwargs)


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """NumPy's ``printoptions`` context manager: a stitchlab array prints through NumPy, so the
    options apply to it (``with sl.printoptions(precision=2): print(x)``)."""
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """NumPy's ``set_printoptions`` (they apply to stitchlab arrays, which print through NumPy)."""
    np.set_printoptions(*args, **kwargs)


def get_printoptions() -> dict[str, Any]:
    """NumPy's ``get_printoptions``."""
    return np.get_printoptions()


_ERROR_MODES = ("ignore", "warn", "raise", "call", "print", "log")


def _error_modes(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    for k, v in kwargs.items():
        if k in ("all", "divide", "over", "under", "invalid") and v is not None and v not in _ERROR_MODES:
            raise ValueError(f"{name}({k}={v!r}): the mode is one of {', '.join(map(repr, _ERROR_MODES))} (or None)")
    return kwargs


def errstate(**kwargs: Any) -> Any:
    """NumPy's ``errstate`` (``with sl.errstate(divide="ignore"): ...``), for code written for NumPy
    and stitchlab alike. stitchlab's kernels, as CuPy's, never report floating-point errors: a
    division by zero gives inf or nan and an overflow inf, whatever the state; NumPy's own code in
    the block follows it as usual."""
    return np.errstate(**_error_modes("errstate", kwargs))


def seterr(**kwargs: Any) -> dict[str, str]:
    """NumPy's ``seterr`` (it sets NumPy's state; stitchlab's kernels report no floating-point
    errors, see :func:`errstate`); returns the old settings."""
    return np.seterr(**_error_modes("seterr", kwargs))


def geterr() -> dict[str, str]:
    """NumPy's ``geterr``."""
    return np.geterr()


def binary_repr(num: Any, width: int | None = None) -> str:
    """NumPy's ``binary_repr`` of an integer (two's complement in ``width`` digits if negative)."""
    return np.binary_repr(operator.index(num), width)


def base_repr(number: Any, base: int = 2, padding: int = 0) -> str:
    """NumPy's ``base_repr`` of an integer in ``base`` (2 to 36)."""
    return np.base_repr(operator.index(number), base, padding)


def isreal(x: Any) -> LazyArray:
    """Whether each element is real: all true (stitchlab arrays are real; NumPy's ``isreal``).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.isreal(sl.asarray(np.array([1.5, np.nan]))).get()
        array([ True,  True])
    """
    return imag(x) == 0


def iscomplex(x: Any) -> LazyArray:
    """Whether each element has a nonzero imaginary part: all false (stitchlab arrays are real;
    NumPy's ``iscomplex``)."""
    return imag(x) != 0


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (NumPy's ``iscomplexobj``): never for a stitchlab array."""
    return False if isinstance(x, LazyArray) else bool(np.iscomplexobj(x))


def isrealobj(x: Any) -> bool:
    """Whether ``x`` has no complex dtype (NumPy's ``isrealobj``): always for a stitchlab array."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar (NumPy's ``isscalar``): a Python or NumPy number, string
    or bytes; not an array, a stitchlab array of any shape included."""
    return bool(np.isscalar(element))


def _any_dtype(x: Any) -> np.dtype:
    """The dtype of an array, or a dtype: any of NumPy's (the predicates below answer for complex
    ones too) and bfloat16 by name."""
    x = _dtype_of(x)
    return as_dtype(x) if isinstance(x, str) and x == "bfloat16" else np.dtype(x)


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The smallest dtype both ``type1`` and ``type2`` (dtypes or arrays) cast to safely (NumPy's
    ``promote_types``; bfloat16 as ml_dtypes promotes it: with float16 to float32).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.promote_types(sl.bfloat16, np.float16)
        dtype('float32')
    """
    return np.promote_types(_any_dtype(type1), _any_dtype(type2))


#: the array API's dtype kinds (``isdtype``) by NumPy kind letters; bfloat16 is a real floating type
_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu", "real floating": "f",
          "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (the array API's ``isdtype``, as NumPy's): a dtype, a kind
    name (``"bool"``, ``"signed integer"``, ``"unsigned integer"``, ``"integral"``,
    ``"real floating"``, ``"complex floating"``, ``"numeric"``) or a tuple of them. bfloat16 is a
    ``"real floating"`` type here (NumPy cannot tell, it is not a NumPy dtype).

    Example:
        >>> import stitchlab as sl
        >>> sl.isdtype(sl.bfloat16, "real floating"), sl.isdtype(sl.int8, ("bool", "unsigned integer"))
        (True, False)
    """
    dt = _any_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"kind argument is a string, but {k!r} is not a known kind name; "
                                 f"use one of {', '.join(map(repr, _KINDS))}")
            if (dt.kind if not is_bfloat16(dt) else "f") in _KINDS[k]:
                return True
        elif dt == _any_dtype(k):
            return True
    return False


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether ``arg1`` (a dtype or an array's) is lower than or equal to ``arg2`` in NumPy's type
    hierarchy (NumPy's ``issubdtype``), with bfloat16 under ``np.floating`` and ``np.inexact``
    (for NumPy it is under neither).

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.issubdtype(sl.bfloat16, np.floating), sl.issubdtype(np.int8, np.floating)
        (True, False)
    """
    a = _any_dtype(arg1)
    if is_bfloat16(a) and isinstance(arg2, type) and issubclass(np.floating, arg2):
        return True  # floating, inexact, number, generic
    return bool(np.issubdtype(a, arg2))


def common_type(*arrays: Any) -> type:
    """The scalar type of NumPy's ``common_type``: the float type that the arrays' values fit
    (integers give float64), bfloat16 when all floating arrays are bfloat16.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.common_type(sl.zeros(2, np.float16), sl.zeros(2, np.int8))
        <class 'numpy.float64'>
    """
    if not arrays:
        raise TypeError("common_type() needs at least one array")
    dtypes = []
    for a in arrays:
        dt = _any_dtype(a if isinstance(a, LazyArray) else np.asarray(a).dtype)
        if dt.kind in "iub":
            dt = np.dtype(np.float64)
        elif dt.kind not in "fc" and not is_bfloat16(dt):
            raise TypeError("can't get common type for non-numeric array")
        dtypes.append(dt)
    return functools.reduce(np.promote_types, dtypes).type


def min_scalar_type(a: Any) -> np.dtype:
    """The smallest dtype that holds the scalar ``a``, or an array's dtype (NumPy's
    ``min_scalar_type``)."""
    return as_dtype(a.dtype) if isinstance(a, LazyArray) else np.min_scalar_type(a)


# Chebyshev coefficients of exp(-x) I0(x) on [0, 8] (A, in t = x/2 - 2) and of exp(-x) sqrt(x) I0(x)
# on (8, inf) (B, in t = 32/x - 2), from Cephes' i0 as NumPy evaluates them
_I0_A = (-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
         -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
         -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
         -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
         -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
         -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
         -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
         -0.3046826723431984, 0.6767952744094761)
_I0_B = (-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
         -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
         -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
         7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
         1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
         2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
         0.8044904110141088)


def _chebyshev(t: LazyArray, coefficients: tuple[float, ...]) -> LazyArray:
    """The Chebyshev series at ``t`` by Clenshaw's recurrence, in NumPy's order of operations
    (the coefficients are weak Python floats: the sums stay in ``t``'s dtype)."""
    b0: Any = coefficients[0]
    b1: Any = 0.0
    b2: Any = 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = t * b1 - b2 + c
    return 0.5 * (b0 - b2)


def i0(x: Any) -> LazyArray:
    """The modified Bessel function of the first kind, order 0 (NumPy's ``i0``), by NumPy's
    Chebyshev series (Cephes) and in its arithmetic: float16, bfloat16, float32 and float64 stay
    in their dtype, integers and bool go to float64. One fused kernel.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> sl.i0(sl.asarray(np.array([0.0, 1.0, 2.0]))).get()
        array([1.        , 1.26606588, 2.2795853 ])
    """
    a = asarray(x)
    if not is_float(a.dtype):
        a = a.astype(np.float64)
    a = absolute(a)  # noqa: F821
    e = exp(a)  # noqa: F821
    return where(a <= 8.0, e * _chebyshev(a / 2.0 - 2, _I0_A), e * _chebyshev(32.0 / a - 2.0, _I0_B) / sqrt(a))  # noqa: F821


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> LazyArray:
    """``x`` with each condition's elements given by its function or value (NumPy's
    ``piecewise``): zeros of ``x``'s dtype, then for each condition in order (a later one wins) the
    value of its entry of ``funclist`` there, cast to ``x``'s dtype. One more entry than conditions
    is the value where none holds. Conditions broadcast to ``x``'s shape.

    A function is called once on the whole of ``x`` (``f(x, *args, **kw)``), not on the elements
    its condition selects as NumPy does: an elementwise function gives NumPy's values, and the
    whole result is one fused kernel. A function whose result depends on which elements it is given
    (a sum, a sort) does not; select those elements yourself.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.linspace(-2.0, 2.0, 5))
        >>> sl.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]).get()
        array([2., 1., 0., 1., 4.])
    """
    xs = asarray(x)
    if hasattr(condlist, "ndim") or np.isscalar(condlist):  # one array (stitchlab, NumPy, CuPy): one condition or a stack
        conds = [condlist] if np.ndim(condlist) <= xs.ndim else [condlist[k] for k in range(len(condlist))]
    else:
        conds = list(condlist)
        if conds and not isinstance(conds[0], (list, np.ndarray, LazyArray)) and xs.ndim != 0:
            conds = [conds]  # one condition given as a list of booleans

    def everywhere(c: Any) -> LazyArray:
        return LazyArray(build.broadcast_to(asarray(c).astype(np.bool_)._node, xs.shape))

    cs = [everywhere(c) for c in conds]
    funcs = list(funclist)
    if len(funcs) == len(cs) + 1:  # the last entry: where no condition holds
        cs.append(~functools.reduce(operator.or_, cs, everywhere(False)))
    elif len(funcs) != len(cs):
        raise ValueError(f"with {len(cs)} condition(s), either {len(cs)} or {len(cs) + 1} functions are expected")
    out = LazyArray(build.broadcast_to(build.const(0, xs.dtype), xs.shape))
    for c, f in zip(cs, funcs, strict=True):
        value = f(xs, *args, **kw) if callable(f) else f
        if np.isscalar(value):  # NumPy's assignment of the value into x's dtype (0.5 -> 0 for integers;
            # a Python int out of its range OverflowError, NaN into integers ValueError)
            v = LazyArray(build.const(np.asarray(value, dtype=xs.dtype)[()], xs.dtype))
        else:
            v = asarray(value).astype(xs.dtype)
        out = where(c, v, out)
    return out


def _as_ufuncs() -> None:
    """Every elementwise function above, and NumPy's other ufuncs stitchlab has (``divmod``,
    ``matmul``...), as a :class:`~stitchlab.frontend.ufunc.ufunc` of the same name: NumPy's
    keywords and methods (``out=``, ``where=``, ``dtype=``, ``reduce``, ``accumulate``...)."""
    from .ufunc import ufunc

    names = ELEMENTWISE + ["pow", "fabs", "matmul", "divmod", "modf", "frexp", "conjugate", "conj", "vecdot", "matvec",
                           "vecmat"]
    for name in dict.fromkeys(names):
        fn = globals()[name]
        numpy_ufunc = getattr(np, name, None)
        if not isinstance(numpy_ufunc, np.ufunc):
            numpy_ufunc = None
        if numpy_ufunc is not None:
            nin = numpy_ufunc.nin
        else:  # (sigmoid, rsqrt, erf, erfc and their aliases)
            nin = OPS[next((op for op, aliases in _ALIASES.items() if name in aliases), name)].nin
        nout = numpy_ufunc.nout if numpy_ufunc is not None else 1
        globals()[name] = ufunc(fn, name, numpy_ufunc, nin, nout)


_as_ufuncs()
