"""Graph construction with NumPy's rules, checked at the call that builds the node.

Every function here takes nodes (or weak Python scalars) and returns a node. Dtypes come from
NumPy's own ufunc type resolution; shapes follow NumPy broadcasting; errors use NumPy's wording
where NumPy has one and are raised here, not later at materialization.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..ir.dtypes import as_dtype, cast, is_bfloat16
from ..ir.node import Node, Shape, make_attrs
from ..ir.ops import COMPARISONS, EXTREMA_SCANS, FAST_MATH_OPS, OPS, Kind
from .scalars import TracedScalar

Operand = Node | bool | int | float


# --- devices -----------------------------------------------------------------------------------
def common_device(nodes: Sequence[Node], what: str) -> str | None:
    """The one device all ``nodes`` live on (constants fit any); ValueError if they differ."""
    devices = {n.device for n in nodes if n.device is not None}
    if len(devices) > 1:
        names = " and ".join(sorted(devices))
        raise ValueError(
            f"{what}: operands live on different devices ({names}); move them to one device first, "
            f"e.g. sl.asarray(x.get()) to bring a GPU array to the CPU or set_backend('cupy') "
            f"before creating the CPU one"
        )
    return devices.pop() if devices else None


# --- arguments ---------------------------------------------------------------------------------
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def casting_arg(casting: Any, name: str) -> str:
    """A ``casting=`` checked as NumPy checks it: a string (or bytes) naming one of
    :data:`CASTINGS`; ``TypeError`` for another type, ``ValueError`` for another name."""
    if isinstance(casting, bytes):
        casting = casting.decode("latin-1")
    if not isinstance(casting, str):
        raise TypeError(f"{name}: casting must be str, not {type(casting).__name__} ({casting!r}); give one of "
                        f"{', '.join(map(repr, CASTINGS))}")
    if casting not in CASTINGS:
        raise ValueError(f"{name}: casting must be one of {', '.join(map(repr, CASTINGS))} (got {casting!r})")
    return str(casting)


def keepdims_arg(keepdims: Any, name: str) -> bool:
    """A reduction's ``keepdims=`` read as NumPy's reductions read it: as an integer (a bool is
    one; ``2`` keeps the axes too); ``TypeError`` for anything else (``None``, a float, a NumPy
    bool), as NumPy's ``sum``, ``mean``, ``max``... raise. (``argmax``, ``median`` and the
    quantiles take any value by its truth, as NumPy's do: they pass ``bool(keepdims)``.)"""
    if type(keepdims) is bool:
        return keepdims
    try:
        return bool(operator.index(keepdims))
    except TypeError:
        raise TypeError(f"'{type(keepdims).__name__}' object cannot be interpreted as an integer: keepdims={keepdims!r} "
                        f"of {name} (NumPy's error); give keepdims=True or False") from None


# --- shapes ------------------------------------------------------------------------------------
def shapes_text(shapes: Sequence[Shape]) -> str:
    """Shapes as NumPy's messages list them: ``(2,) (3,4)``."""
    return " ".join("(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")" for s in shapes)


def broadcast_shapes(*shapes: Shape) -> Shape:
    if all(s == shapes[0] for s in shapes[1:]):  # the common case, without NumPy's machinery
        return tuple(shapes[0]) if shapes else ()
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with shapes {shapes_text(shapes)}") from None


def normalize_axis(axis: int, ndim: int) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"axis must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return int(axis) % ndim


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple of ints, negatives allowed) as a sorted tuple."""
    if type(axis) is int:  # the common case, remembered (a bool, equal to 0 or 1, is refused below)
        return _one_axis(axis, ndim)
    return _normalize_axes(axis, ndim)


@functools.lru_cache(maxsize=1024)
def _one_axis(axis: int, ndim: int) -> tuple[int, ...]:
    return _normalize_axes(axis, ndim)


def zero_d_axis(axis: Any, ndim: int, whole: Any) -> Any:
    """``axis`` of a reduction or scan, or ``whole`` (what stands for all of a 0-d array) where it
    is 0 or -1 of 0-d data, which NumPy's reductions, arg-reductions and scans take as that."""
    if ndim == 0 and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and axis in (0, -1):
        return whole
    return axis


def _normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = [normalize_axis(a, ndim) for a in items]
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis!r}")
    return tuple(sorted(axes))


# --- what eager building remembers -----------------------------------------------------------------
# Bounded tables (emptied when full) of what building an expression works out again and again in
# eager code: converted constants, elementwise type resolution, Python scalars' broadcast nodes.
# Each lookup and store is a single dict operation, safe between threads.
_TABLE_SIZE = 4096


def _remember(table: dict[Any, Any], key: Any, make: Any) -> Any:
    """``table[key]``, made by ``make()`` the first time."""
    found = table.get(key)
    if found is None:
        if len(table) >= _TABLE_SIZE:
            table.clear()
        found = table[key] = make()
    return found


def scalar_key(value: bool | int | float) -> tuple[Any, ...]:
    """A Python scalar as a key: its type and value, 0.0 and -0.0 apart (they compare equal)."""
    return type(value), value, math.copysign(1.0, value) if type(value) is float else 0


# --- constants and casts -------------------------------------------------------------------------
_items: dict[tuple[Any, ...], Any] = {}  # Python scalars converted to a dtype by _item()


def _item(value: Any, dtype: np.dtype) -> Any:
    """``value`` converted to ``dtype`` as NumPy converts it, as a Python scalar (remembered for
    Python scalars)."""
    if type(value) not in (bool, int, float):
        return convert(value, dtype)
    return _remember(_items, (dtype, *scalar_key(value)), lambda: convert(value, dtype))


def convert(value: Any, dtype: np.dtype) -> Any:
    """``value`` converted to ``dtype`` as NumPy converts it, as a Python scalar."""
    return cast(np.asarray(value), dtype).item() if dtype.kind != "b" else bool(value)


def const(value: Any, dtype: np.dtype) -> Node:
    """A 0-d constant of ``dtype`` (value converted as NumPy converts it)."""
    return Node("const", (), (), dtype, make_attrs(value=_item(value, dtype)))


def count(n: int, ddof: int, dtype: np.dtype) -> Node:
    """The divisor ``n - ddof`` of a mean or variance: a constant that also records that it is
    the element count of the reduction it divides (less ``ddof``), so that a kernel whose reduced
    extent is a runtime argument divides by that argument instead (one kernel for every batch
    size; ``stitchlab.codegen.elemental``)."""
    item = _item(float(max(n - ddof, 0)), dtype)
    return Node("const", (), (), dtype, make_attrs(value=item, count_ddof=int(ddof)))


_counts: dict[tuple[Any, ...], Node] = {}


def count_like(n: int, ddof: int, dtype: np.dtype, shape: Shape) -> Node:
    """:func:`count` broadcast to ``shape``: built once, shared between expressions as a Python
    scalar's constant is (:func:`_scalar`)."""
    return _remember(_counts, (n, ddof, dtype, shape), lambda: broadcast_to(count(n, ddof, dtype), shape))


def astype(x: Node, dtype: np.dtype) -> Node:
    if x.dtype == dtype:
        return x
    if x.op == "const":
        return const(x.attr("value"), dtype)
    return Node("astype", (x,), x.shape, dtype, device=x.device)


# (shape, target shape) -> (shape with leading axes of extent 1, or None where there are none to
# add; its reshape attributes; the broadcast's attributes): checked once per pair of shapes
_broadcasts: dict[tuple[Shape, Shape], tuple[Shape | None, Any, Any]] = {}


def _broadcast_steps(src: Shape, shape: Shape) -> tuple[Shape | None, Any, Any]:
    if len(src) > len(shape) or any(a != b and a != 1 for a, b in zip(src[::-1], shape[::-1], strict=False)):
        raise ValueError(
            f"cannot broadcast an array of shape {src} to shape {shape}: each axis must "
            f"match or have extent 1"
        )
    lead = (1,) * (len(shape) - len(src)) + src if len(src) < len(shape) else None
    return lead, make_attrs(shape=lead) if lead is not None else None, make_attrs(shape=shape)


def broadcast_to(x: Node, shape: Shape) -> Node:
    if x.shape == shape:
        return x
    steps = _broadcasts.get((x.shape, shape))
    if steps is None:
        steps = _remember(_broadcasts, (x.shape, shape), lambda: _broadcast_steps(x.shape, shape))
    lead, lead_attrs, attrs = steps
    if lead is not None:
        # leading axes of extent 1: the same size, so the node is built without reshape()'s checks
        x = reshape(x, lead) if x.op == "reshape" else Node("reshape", (x,), lead, x.dtype, lead_attrs, device=x.device)
        if lead == shape:
            return x
    return Node("broadcast", (x,), shape, x.dtype, attrs, device=x.device)


# --- elementwise -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _resolve(opname: str, key: tuple[Any, ...]) -> tuple[np.dtype, ...]:
    return tuple(np.dtype(d) for d in OPS[opname].ufunc.resolve_dtypes(key + (None,)))


def fits(value: Any, dtype: np.dtype) -> bool:
    # (a Python int: one an sl.jit call reads at run time, which isinstance takes for an int, is
    # checked when each call reads it)
    if dtype.kind in "iu" and type(value) is int:
        info = np.iinfo(dtype)
        return info.min <= value <= info.max
    return True


def _weak_key(value: Any) -> Any:
    # Python int and float are weak (NEP 50), and so are those an sl.jit call reads at run time; a
    # Python bool is just a bool
    return np.dtype(bool) if isinstance(value, bool) else value.kind if isinstance(value, TracedScalar) else type(value)


def _bfloat16_weak(args: Sequence[Operand], key: tuple[Any, ...]) -> tuple[Any, ...]:
    """``key`` with weak Python floats keyed as weak ints where a bfloat16 array takes part.

    NEP 50 makes a Python float take the float dtype of the array it meets (``x * 0.5`` of a
    float16 ``x`` is float16). ml_dtypes' bfloat16 promotes a Python float to float32 instead, and
    ``result_type`` to float64; a weak int keeps bfloat16, so resolving with ``int`` in the float's
    place gives the loop NEP 50 asks for (the float is then converted to that loop's dtype)."""
    if float not in key or not any(isinstance(a, Node) and is_bfloat16(a.dtype) for a in args):
        return key
    return tuple(int if k is float else k for k in key)


def _describe(a: Operand) -> str:
    return f"Python {type(a).__name__}" if not isinstance(a, Node) else f"dtype('{a.dtype}')"


# --- fast math ---------------------------------------------------------------------------------
_fast_math = contextvars.ContextVar("stitchlab_fast_math", default=False)
#: results whose ops :func:`fast_math` approximates (all computed in float32), with bfloat16, which
#: :func:`elementwise` tests with ``is_bfloat16`` (its dtype object would import ml_dtypes here)
_FAST_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float16)})
_FAST_ATTRS = make_attrs(fast_math=True)


@contextlib.contextmanager
def fast_math(enabled: bool = True) -> Iterator[None]:
    """Build the float32, float16 and bfloat16 ``exp``, ``log``, ``log2``, ``log10``, ``sin``,
    ``cos``, ``tan``, ``sigmoid``, ``divide`` and ``reciprocal`` of the block with CUDA's hardware
    approximations (``__expf``, ``__logf``, ``__sinf``, ``__fdividef``...: what
    ``nvcc --use_fast_math`` substitutes): fewer instructions per element, CUDA's error bounds
    instead of NumPy's results (the user guide lists them). ``enabled=False`` turns it off inside
    an enabled block. Each node remembers how it was built, so a lazy expression built inside
    and evaluated outside the block is approximated; the numpy backend computes NumPy's values.
    An :func:`~stitchlab.jit` function takes its own ``fast_math=`` argument instead of the block's.

    Example:
        >>> import stitchlab as sl, numpy as np
        >>> x = sl.asarray(np.linspace(-4, 4, 8, dtype=np.float32))
        >>> with sl.fast_math():
        ...     y = sl.log1p(sl.exp(x)) / 2
    """
    if not isinstance(enabled, (bool, np.bool_)):
        raise TypeError(f"sl.fast_math(enabled): enabled must be True or False, not {enabled!r}")
    token = _fast_math.set(bool(enabled))
    try:
        yield
    finally:
        _fast_math.reset(token)


# (op, operand signatures) -> (loop dtypes, result dtype, shape, device, operand steps) of the
# elementwise nodes built so far: the same operation on operands of the same dtypes, shapes and
# devices (an eager expression evaluated again) skips NumPy's type resolution and the
# broadcasting checks, and knows which operands to cast, broadcast or take as they are
_elementwise: dict[tuple[Any, ...], tuple[tuple[np.dtype, ...], np.dtype, Shape, str | None, tuple[int, ...] | None]] = {}


def _operand_key(a: Operand) -> Any:
    return (a.dtype, a.shape, a.device) if type(a) is Node else type(a)


#: how :func:`elementwise` turns an operand into its input (by operand signature, remembered)
_AS_IS, _BROADCAST, _CAST, _SCALAR = 0, 1, 2, 3


def elementwise(opname: str, *args: Operand) -> Node:
    """Build an elementwise node with NumPy's dtype and broadcasting rules."""
    if len(args) == 2:  # the common cases spelled out: this runs for every operation of eager code
        sig: tuple[Any, ...] = (opname, _operand_key(args[0]), _operand_key(args[1]))
    elif len(args) == 1:
        sig = (opname, _operand_key(args[0]))
    else:
        sig = (opname, *[_operand_key(a) for a in args])
    known = _elementwise.get(sig)
    if known is None or (int in sig and not all(fits(a, dt) for a, dt in zip(args, known[0], strict=True))):
        made = _resolve_elementwise(opname, args)
        if isinstance(made, Node):  # an integer out of the loop's range, compared exactly
            return made
        known = _remember(_elementwise, sig, lambda: (*made, _operand_steps(args, made[0], made[2])))
    loop, out_dtype, shape, device, steps = known
    ins = args  # (steps None: every operand is a node of the shape and dtype, taken as it is)
    if steps is not None:
        made_ins = []
        for a, dt, step in zip(args, loop, steps, strict=True):
            if step == _AS_IS:
                made_ins.append(a)
            elif step == _BROADCAST:
                made_ins.append(broadcast_to(a, shape))
            elif step == _CAST:
                made_ins.append(broadcast_to(astype(a, dt), shape))
            else:
                made_ins.append(_scalar(a, dt, shape))
        ins = tuple(made_ins)
    if opname in FAST_MATH_OPS and (out_dtype in _FAST_DTYPES or is_bfloat16(out_dtype)) and _fast_math.get():
        return Node(opname, ins, shape, out_dtype, _FAST_ATTRS, device=device)
    return Node(opname, ins, shape, out_dtype, device=device)


def check_integer_exponent(out: Node, exponent: Any) -> None:
    """NumPy's ``ValueError`` for an integer power (``out``) whose exponent is a negative integer
    known while building (a Python or NumPy integer, a 0-d NumPy array): raised at the call, as
    NumPy raises it. Exponents in arrays are checked when the step runs on the CPU; the GPU's
    kernel gives the exact value where it is an integer (1 or -1 to any power, else 0)."""
    known = type(exponent) is int or isinstance(exponent, (np.integer, np.ndarray))  # (not a traced int)
    if out.dtype.kind not in "iu" or not known or np.ndim(exponent):
        return
    if np.asarray(exponent).dtype.kind in "iu" and exponent < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")


def _operand_steps(args: Sequence[Operand], loop: Sequence[np.dtype], shape: Shape) -> tuple[int, ...] | None:
    """What each operand of an elementwise op needs (the same for every operand of its signature);
    None where every operand is taken as it is."""
    steps = tuple(_SCALAR if type(a) is not Node else _CAST if a.dtype != dt else _BROADCAST if a.shape != shape else _AS_IS
                  for a, dt in zip(args, loop, strict=True))
    return None if all(step == _AS_IS for step in steps) else steps


_scalars: dict[tuple[Any, ...], Node] = {}


def _scalar(value: Any, dtype: np.dtype, shape: Shape) -> Node:
    """A Python scalar operand as a constant broadcast to ``shape``. The nodes of a Python scalar
    are shared by every expression that uses it (as ``x * 0.5`` in a loop; only the nodes an
    evaluation asks for are ever materialized, and these are never returned to the user). A
    scalar that an ``sl.jit`` call reads at run time is its 0-d input of ``dtype``."""
    if isinstance(value, TracedScalar):
        return broadcast_to(value.node(dtype), shape)
    return _remember(_scalars, (dtype, *scalar_key(value), shape), lambda: broadcast_to(const(value, dtype), shape))


_PY_COMPARE = {"equal": operator.eq, "not_equal": operator.ne, "less": operator.lt, "less_equal": operator.le,
               "greater": operator.gt, "greater_equal": operator.ge}


def _resolve_elementwise(opname: str, args: Sequence[Operand]) -> Any:
    """(loop dtypes, result dtype, shape, device) of ``opname`` over ``args``; or the node itself
    where a Python integer out of the loop's range is compared, exactly as NumPy compares it (an
    integer array's answer is the same for every element, a float array is widened to float64)."""
    nodes = [a for a in args if isinstance(a, Node)]
    device = common_device(nodes, opname)
    if opname == "where":
        cond, x, y = args
        dtype = result_type(x, y)
        loop: Sequence[np.dtype] = [np.dtype(bool), dtype, dtype]
        out_dtype = dtype
    else:
        key = tuple(a.dtype if isinstance(a, Node) else _weak_key(a) for a in args)
        key = _bfloat16_weak(args, key)
        try:
            *loop, out_dtype = _resolve(opname, key)
        except (TypeError, np.exceptions.DTypePromotionError) as exc:
            listed = ", ".join(_describe(a) for a in args)
            raise TypeError(f"ufunc '{opname}' not supported for the input types ({listed}): {exc}") from None
        out_dtype = as_dtype(out_dtype)
        for a, dt in zip(args, loop, strict=False):
            if not isinstance(a, Node) and not fits(a, dt):
                other = next((n for n in args if isinstance(n, Node)), None)
                kind = other.dtype.kind if other is not None and opname in COMPARISONS else "b"
                if kind in "iu":
                    # outside the array's range: every element compares as any one in it (0) does
                    # (a widened array would wrap or round: uint64 to int64, int64 to float64)
                    holds = _PY_COMPARE[opname](*(0 if isinstance(n, Node) else n for n in args))
                    return elementwise("equal" if holds else "not_equal", other, other)
                if kind != "b":  # a float array (a bool one raises, as in NumPy)
                    return elementwise(opname, *(astype(n, np.dtype("float64")) if isinstance(n, Node) else n for n in args))
                raise OverflowError(f"Python integer {a} out of bounds for {dt}")
    shape = broadcast_shapes(*(a.shape for a in nodes)) if nodes else ()
    return tuple(loop), out_dtype, shape, device


def matmul(a: Node, b: Node) -> Node:
    """``a @ b`` with NumPy's shapes (1-D operands promoted and their axis dropped, batch axes
    broadcast), dtype and errors; a node of its own, never fused (:class:`~stitchlab.ir.ops.Kind`
    ``CONTRACT``)."""
    device = common_device([a, b], "matmul")
    sig = "(n?,k),(k,m?)->(n?,m?)"
    for i, x in enumerate((a, b)):
        if not x.shape:
            raise ValueError(
                f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc core with "
                f"signature {sig} requires 1)"
            )
    sa = (1, *a.shape) if len(a.shape) == 1 else a.shape
    sb = (*b.shape, 1) if len(b.shape) == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"{sig} (size {sb[-2]} is different from {sa[-1]})"
        )
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    shape = batch + sa[-2:-1] * (len(a.shape) > 1) + sb[-1:] * (len(b.shape) > 1)
    try:
        dtype = as_dtype(np.matmul(np.zeros((1, 1), a.dtype), np.zeros((1, 1), b.dtype)).dtype)
    except TypeError as exc:
        raise TypeError(f"matmul not supported for the input types ({a.dtype}, {b.dtype}): {exc}") from None
    return Node("matmul", (astype(a, dtype), astype(b, dtype)), tuple(shape), dtype, device=device)


#: At most this many nonempty inputs, a join is an index map fused into the kernel that reads it
#: (:func:`concatenate`); more, and it is a library step (each element would read every input).
FUSED_JOIN = 4


def concatenate(nodes: Sequence[Node], axis: int | None) -> Node:
    """NumPy's ``concatenate`` (``axis=None``: of the flattened inputs) with its dtype (the
    inputs' ``result_type``) and errors. Of at most :data:`FUSED_JOIN` nonempty inputs an index map:
    each input edge-padded to the result's extent (:func:`pad`, reads stay in bounds) and the one
    whose range holds the position selected (``where`` of an ``iota`` compare), so the join fuses
    with the work around it; of more, a node of its own, a library step (``Kind.CONTRACT``)."""
    if not nodes:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        nodes, axis = [reshape(n, (-1,)) for n in nodes], 0
    if any(not n.shape for n in nodes):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ndim = len(nodes[0].shape)
    for i, n in enumerate(nodes):
        if len(n.shape) != ndim:
            raise ValueError(
                f"all the input arrays must have same number of dimensions, but the array at index 0 "
                f"has {ndim} dimension(s) and the array at index {i} has {len(n.shape)} dimension(s)"
            )
    axis = normalize_axis(axis, ndim)
    for i, n in enumerate(nodes):
        for d in range(ndim):
            if d != axis and n.shape[d] != nodes[0].shape[d]:
                raise ValueError(
                    f"all the input array dimensions except for the concatenation axis must match "
                    f"exactly, but along dimension {d}, the array at index 0 has size "
                    f"{nodes[0].shape[d]} and the array at index {i} has size {n.shape[d]}"
                )
    device = common_device(nodes, "concatenate")
    dtype = as_dtype(np.result_type(*(n.dtype for n in nodes)))
    shape = list(nodes[0].shape)
    shape[axis] = sum(n.shape[axis] for n in nodes)
    parts = [astype(n, dtype) for n in nodes if n.shape[axis]]
    if not parts or len(parts) > FUSED_JOIN or 0 in shape:
        return Node("concatenate", tuple(astype(n, dtype) for n in nodes), tuple(shape), dtype,
                    make_attrs(axis=axis), device=device)
    total, start, out = shape[axis], 0, None
    at_dtype = np.dtype(np.int32 if total < 2**31 else np.int64)
    at = Node("iota", (), (total,), at_dtype, make_attrs(start=0, step=1), device=device)
    at = reshape(at, (total,) + (1,) * (len(shape) - axis - 1))
    for part in parts:  # (the first part's positions select it, the next part's it, ...)
        n = part.shape[axis]
        piece = pad(part, axis, start, total - start - n, "edge", masked=True)
        if out is None:
            out = piece
        else:
            out = elementwise("where", elementwise("less", at, const(start, at_dtype)), out, piece)
        start += n
    assert out is not None
    return out


def check_index_dtype(dtype: np.dtype, along_axis: bool = False) -> None:
    """NumPy's error for positions that are not integers (``take`` also accepts bool;
    ``take_along_axis`` does not)."""
    if along_axis and dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if dtype.kind not in "iub":
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type, not {dtype}")


def check_mask_shape(shape: Shape, mask_shape: Shape) -> None:
    """NumPy's errors for a boolean mask of ``mask_shape`` over the leading axes of ``shape``."""
    if len(mask_shape) > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {len(mask_shape)} were indexed")
    for d, (have, want) in enumerate(zip(mask_shape, shape, strict=False)):
        if have != want:
            raise IndexError(
                f"boolean index did not match indexed array along axis {d}; size of axis is {want} "
                f"but size of corresponding boolean axis is {have}"
            )


def check_indices(indices: np.ndarray, n: int, axis: int, indexing: bool = False) -> np.ndarray:
    """Host positions along an axis of extent ``n``: NumPy's errors for a float array or a position
    out of bounds (``take``'s, or with ``indexing`` those of ``x[...]``), returned as non-negative
    int64."""
    check_index_dtype(indices.dtype)
    idx = indices.astype(np.int64)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        if n == 0 and not indexing:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        raise IndexError(f"index {int(idx[bad].ravel()[0])} is out of bounds for axis {axis} with size {n}")
    return np.where(idx < 0, idx + n, idx)


def _position_checks(axis: int, merged: tuple[int, ...], named: int | tuple[int, ...] | None) -> dict[str, Any]:
    """The attributes by which a gather's or scatter's step names positions out of bounds (none
    where it names ``axis`` itself, so that those steps are as they were): with ``merged``, the
    extents of the axes merged and ``named`` those axes as NumPy names them."""
    if merged:
        return {"merged": tuple(merged), "named_axis": tuple(named)}  # type: ignore[arg-type]
    return {"named_axis": named} if named is not None and named != axis else {}


def take(x: Node, indices: Node, axis: int, checked: bool, merged: tuple[int, ...] = (),
         named: int | tuple[int, ...] | None = None) -> Node:
    """NumPy's ``take`` along ``axis`` (already normalized): the result's shape is ``x.shape[:axis]
    + indices.shape + x.shape[axis + 1:]``. ``checked``: the positions were validated on the host
    (:func:`check_indices`); otherwise the step checks them when it runs. ``merged``: the extents
    of the axes that ``axis`` merges (several index arrays; for the step's error message, with
    ``named`` those axes as NumPy names them, and the positions coded as ``_flat_positions``
    makes them). ``named``: the axis the step's error names where it is not ``axis`` (NumPy names
    the axis of the array indexed, ``axis`` may count new axes of 1 before it). A node of its own, never fused
    (``Kind.CONTRACT``)."""
    check_index_dtype(indices.dtype)
    device = common_device([x, indices], "take")
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    attrs = make_attrs(axis=axis, checked=checked, **_position_checks(axis, merged, named))
    return Node("take", (x, astype(indices, np.dtype(np.int64))), shape, x.dtype, attrs, device=device)


def scatter(x: Node, positions: Node, values: Node, axis: int, checked: bool, merged: tuple[int, ...] = (),
            ufunc: str | None = None, presorted: bool = False, order: Node | None = None,
            named: int | tuple[int, ...] | None = None) -> Node:
    """``x`` with its slices at ``positions`` (1-d) along ``axis`` replaced by those of ``values``
    (``x``'s shape with ``len(positions)`` along ``axis``, ``x``'s dtype): NumPy's
    ``out[..., positions, ...] = values`` into a copy. ``checked``: host positions validated and
    non-negative (:func:`check_indices`) and, without ``ufunc``, unique (the last of a repeated
    position kept); otherwise the step checks them and keeps the last value of each. ``merged``
    and ``named``: as :func:`take`'s. With ``ufunc`` (a binary op of the table whose loop is
    ``values``' dtype): NumPy's ``ufunc.at(out, (..., positions), values)`` into a copy instead,
    each position's values applied one after another in their order, each result cast to ``x``'s
    dtype (``presorted``: the positions come sorted, each one's values in their order, so the step
    sorts nothing; ``order``, with ``presorted``: the entry of ``values`` each sorted position
    takes, read through it instead of gathered). A node of its own, never fused (``Kind.CONTRACT``)."""
    want = x.shape[:axis] + positions.shape + x.shape[axis + 1:]
    if len(positions.shape) != 1 or values.shape != want or (values.dtype != x.dtype and ufunc is None):
        raise ValueError(f"scatter node: x {x.shape} {x.dtype}, positions {positions.shape}, values {values.shape} {values.dtype}")
    if order is not None and (not presorted or order.shape != positions.shape):
        raise ValueError(f"scatter node: order {order.shape} without presorted positions {positions.shape}")
    device = common_device([x, positions, values], "an assignment")
    extra = _position_checks(axis, merged, named)
    if ufunc is not None:
        extra["ufunc"] = ufunc
    if presorted:
        extra["presorted"] = True
    attrs = make_attrs(axis=axis, checked=checked, **extra)
    inputs = (x, astype(positions, np.dtype(np.int64)), values)
    if order is not None:
        inputs += (astype(order, np.dtype(np.int64)),)
    return Node("scatter", inputs, x.shape, x.dtype, attrs, device=device)


def take_along_axis(x: Node, indices: Node, axis: int, checked: bool) -> Node:
    """NumPy's ``take_along_axis`` (``axis`` normalized, same number of dimensions): the other axes
    broadcast between ``x`` and ``indices``; the result has ``indices``' extent along ``axis``.
    ``checked`` as in :func:`take`."""
    check_index_dtype(indices.dtype, along_axis=True)
    shape = []
    for d, (a, b) in enumerate(zip(x.shape, indices.shape, strict=True)):
        if d != axis and a != b and 1 not in (a, b):
            raise ValueError(
                f"take_along_axis: `arr` {x.shape} and `indices` {indices.shape} do not broadcast along axis {d}"
            )
        shape.append(b if d == axis or a == 1 else a)
    src = list(shape)
    src[axis] = x.shape[axis]
    device = common_device([x, indices], "take_along_axis")
    return Node("take_along_axis", (broadcast_to(x, tuple(src)), broadcast_to(astype(indices, np.dtype(np.int64)), tuple(shape))),
                tuple(shape), x.dtype, make_attrs(axis=axis, checked=checked), device=device)


def _einsum_terms(subscripts: str, nodes: Sequence[Node]) -> tuple[list[str], str]:
    """The input terms and the explicit output term of ``subscripts`` (NumPy's implicit output:
    the broadcast ``...`` axes, then the letters that appear once, in order)."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(nodes):
        more = "more" if len(nodes) > len(terms) else "fewer"
        raise ValueError(f"{more} operands provided to einstein sum function than specified in the subscripts string")
    for t in (*terms, out):
        rest = t.replace("...", "")
        bad = [c for c in rest if not c.isascii() or not c.isalpha()]
        if bad:
            raise ValueError(f"invalid subscript {bad[0]!r} in einstein sum subscripts string, subscripts must be letters")
    for i, (t, n) in enumerate(zip(terms, nodes, strict=True)):
        named = len(t.replace("...", ""))
        if ("..." not in t and named != len(n.shape)) or ("..." in t and named > len(n.shape)):
            raise ValueError(
                f"einstein sum subscripts string {t!r} does not match operand {i}, which has "
                f"{len(n.shape)} dimension(s); use '...' for axes it does not name"
            )
    if not arrow:
        letters = "".join(t.replace("...", "") for t in terms)
        ell = "..." if any("..." in t for t in terms) else ""
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    else:
        named = out.replace("...", "")
        for c in named:
            if named.count(c) > 1:
                raise ValueError(f"einstein sum subscripts string includes output subscript {c!r} multiple times")
            if not any(c in t for t in terms):
                raise ValueError(f"einstein sum subscripts string included output subscript {c!r} which never appeared in an input")
    return terms, out


def einsum(subscripts: str, nodes: Sequence[Node]) -> Node:
    """NumPy's ``einsum`` (``"ij,jk->ik"``, implicit output, ``...`` broadcasting) with its dtype
    (the operands' ``result_type``) and shape; a node of its own run by ``cupy.einsum`` or
    ``numpy.einsum`` (``Kind.CONTRACT``)."""
    if not isinstance(subscripts, str):
        raise TypeError("einsum: give the subscripts as a string, e.g. sl.einsum('ij,jk->ik', a, b)")
    terms, out = _einsum_terms(subscripts, nodes)
    sizes: dict[str, int] = {}
    ell: Shape = ()
    for t, n in zip(terms, nodes, strict=True):
        pre, _, post = t.partition("...")
        k = len(n.shape) - len(post)
        if "..." in t:
            ell = broadcast_shapes(ell, n.shape[len(pre):k])
        for c, d in zip(pre + post, n.shape[: len(pre)] + n.shape[k:], strict=True):
            if sizes.get(c, d) != d and 1 not in (sizes[c], d):
                raise ValueError(
                    f"einstein sum subscript {c!r} has sizes {sizes[c]} and {d} in the operands; "
                    f"they must be equal (or 1)"
                )
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    pre, _, post = out.partition("...")
    shape = tuple(sizes[c] for c in pre) + (ell if "..." in out else ()) + tuple(sizes[c] for c in post)
    dtypes = [n.dtype for n in nodes]
    if any(is_bfloat16(d) for d in dtypes):
        raise TypeError("einsum of bfloat16: NumPy has no bfloat16 einsum; give dtype=np.float32 or cast the operands "
                        "to float32 first")
    dtype = as_dtype(np.result_type(*dtypes))
    device = common_device(nodes, "einsum")
    spec = ",".join(terms) + "->" + out
    return Node("einsum", tuple(astype(n, dtype) for n in nodes), shape, dtype, make_attrs(subscripts=spec), device=device)


def searchsorted(a: Node, v: Node, side: str) -> Node:
    """NumPy's ``searchsorted``: the int64 positions where ``v``'s elements would go in the sorted
    1-d ``a`` (both compared in their ``result_type``); a node of its own (``Kind.CONTRACT``)."""
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    if len(a.shape) != 1:
        raise ValueError(f"searchsorted: a must be 1-d (got shape {a.shape}); sort along an axis of a 1-d array")
    dtype = as_dtype(np.result_type(a.dtype, v.dtype))
    device = common_device([a, v], "searchsorted")
    return Node("searchsorted", (astype(a, dtype), astype(v, dtype)), v.shape, np.dtype(np.int64),
                make_attrs(side=side), device=device)


def scan(opname: str, x: Node, axis: int | None, dtype: Any) -> Node:
    """NumPy's ``cumsum``/``cumprod`` (and ``maximum``/``minimum.accumulate``: ``cummax``/``cummin``):
    ``axis=None`` scans the flattened array; the result dtype is ``dtype`` or NumPy's (for a sum or
    product, integers narrower than int64 and bool widen to int64/uint64)."""
    if zero_d_axis(axis, len(x.shape), None) is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis(axis, len(x.shape))
    if dtype is not None:
        dt = as_dtype(dtype)
    elif opname not in EXTREMA_SCANS and (x.dtype.kind == "b" or (x.dtype.kind in "iu" and x.dtype.itemsize < 8)):
        dt = np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)
    else:
        dt = x.dtype
    x = astype(x, dt)
    return Node(opname, (x,), x.shape, dt, make_attrs(axis=axis), device=x.device)


def sort(opname: str, x: Node, axis: int | None) -> Node:
    """NumPy's ``sort``/``argsort`` along ``axis`` (``None``: of the flattened array)."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if not x.shape:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    axis = normalize_axis(axis, len(x.shape))
    dt = np.dtype(np.int64) if opname == "argsort" else x.dtype
    return Node(opname, (x,), x.shape, dt, make_attrs(axis=axis), device=x.device)


def exact_divide(x: Node, divisor: float) -> Node:
    """``x / divisor`` as an IEEE division: the node is marked ``exact``, which the kernels'
    rewrite of a division by a constant into a multiply by its reciprocal (about 1 ulp apart)
    leaves alone."""
    n = elementwise("divide", x, divisor)
    return Node(n.op, n.inputs, n.shape, n.dtype, make_attrs(exact=True), device=n.device)


def result_type(*args: Operand) -> np.dtype:
    """NumPy's ``result_type`` with Python scalars weak (NEP 50; for bfloat16 as
    :func:`_bfloat16_weak` explains)."""
    bf16 = any(isinstance(a, Node) and is_bfloat16(a.dtype) for a in args)
    args = tuple(a.kind() if isinstance(a, TracedScalar) else a for a in args)  # (any value of its kind)
    items = [a.dtype if isinstance(a, Node) else (0 if bf16 and type(a) is float else a) for a in args]
    try:
        return as_dtype(np.result_type(*items))
    except np.exceptions.DTypePromotionError as exc:
        raise TypeError(str(exc)) from None


# --- reductions ----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def reduction_dtype(opname: str, dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's reduction returns for input ``dtype`` (sum of int8 is int64, ...)."""
    with np.errstate(all="ignore"):
        return np.asarray(OPS[opname].numpy(np.ones(1, dtype))).dtype


_UFUNC_NAME = {"max": "maximum", "min": "minimum", "argmax": "argmax", "argmin": "argmin"}


# (op, shape, dtype, axis, keepdims) -> (dtype to reduce in, reduced shape with the axes kept, result
# dtype, attributes, result shape): what :func:`reduce` works out, once per signature (for an axis
# of ints or None and no dtype asked for: the calls of eager code; a bool is not an int here)
_reductions: dict[tuple[Any, ...], tuple[np.dtype, Shape, np.dtype, Any, Shape]] = {}


def _reduction_steps(opname: str, shape: Shape, dtype: np.dtype, axis: Any, keepdims: bool,
                     requested: Any) -> tuple[np.dtype, Shape, np.dtype, Any, Shape]:
    """What :func:`reduce` builds (attributes None: no axes, the cast input is the result)."""
    if isinstance(axis, list):  # NumPy's reductions take an int or a tuple of them
        raise TypeError(f"'list' object cannot be interpreted as an integer: axis={axis!r} of {opname}; "
                        f"give a tuple, axis={tuple(axis)!r}")
    axes = normalize_axes(axis, len(shape))
    if opname in ("any", "all"):
        acc = np.dtype(bool)
    elif opname in ("argmax", "argmin"):
        acc = dtype
    else:
        acc = as_dtype(requested) if requested is not None else reduction_dtype(opname, dtype)
    if OPS[opname].identity is None and any(shape[a] == 0 for a in axes):
        if opname in ("argmax", "argmin"):  # (NumPy's text for these)
            raise ValueError(f"attempt to get {opname} of an empty sequence")
        raise ValueError(
            f"zero-size array to reduction operation {_UFUNC_NAME.get(opname, opname)} which has no identity"
        )
    if not axes:
        return acc, shape, acc, None, shape
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    out_dtype = np.dtype("int64") if opname in ("argmax", "argmin") else acc
    final = kept if keepdims else tuple(d for i, d in enumerate(shape) if i not in axes)
    return acc, kept, out_dtype, make_attrs(axes=axes), final


def reduce(opname: str, x: Node, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Node:
    """A reduction node over ``axis``; the output keeps reduced axes unless ``keepdims`` is False."""
    keepdims = keepdims_arg(keepdims, opname)
    if not x.shape:
        axis = zero_d_axis(axis, 0, ())
    if dtype is None and (axis is None or type(axis) is int or (type(axis) is tuple and all(type(a) is int for a in axis))):
        key = (opname, x.shape, x.dtype, axis, keepdims)
        steps = _reductions.get(key)
        if steps is None:
            steps = _remember(_reductions, key, lambda: _reduction_steps(opname, x.shape, x.dtype, axis, keepdims, None))
    else:
        steps = _reduction_steps(opname, x.shape, x.dtype, axis, keepdims, dtype)
    acc, kept, out_dtype, attrs, final = steps
    x = astype(x, acc)
    if attrs is None:
        return x
    node = Node(opname, (x,), kept, out_dtype, attrs, device=x.device)
    return node if final == kept else reshape(node, final)


# --- layout ------------------------------------------------------------------------------------
def reshape(x: Node, shape: Sequence[int]) -> Node:
    shape = tuple(shape)
    for s in shape:
        try:
            operator.index(s) if not isinstance(s, TracedScalar) else None
        except TypeError:  # (a float, a list, an array of several numbers...)
            raise TypeError(f"'{type(s).__name__}' object cannot be interpreted as an integer: reshape to "
                            f"{shape!r}; give integers (int({s!r}))") from None
    # (a scalar an sl.jit call reads is traced per value here: its int() says so in the log)
    shape = tuple(int(s) if isinstance(s, TracedScalar) else operator.index(s) for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(s < -1 for s in shape):
        raise ValueError(f"negative dimensions not allowed in shape {shape}")
    if unknown:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:  # (NumPy's text: the unknown extent written "newaxis")
            raise ValueError(f"cannot reshape array of size {x.size} into shape "
                             f"{shapes_text([shape]).replace('-1', 'newaxis')}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape array of size {x.size} into shape {shapes_text([shape])}")
    if shape == x.shape:
        return x
    if x.op == "reshape":  # reshape of a reshape is one reshape
        x = x.inputs[0]
        if shape == x.shape:
            return x
    return Node("reshape", (x,), shape, x.dtype, make_attrs(shape=shape), device=x.device)


def transpose(x: Node, axes: Sequence[int] | None = None) -> Node:
    ndim = len(x.shape)
    if axes is None:
        perm = tuple(range(ndim))[::-1]
    else:
        if len(axes) != ndim:
            raise ValueError(f"axes {tuple(axes)} don't match array of dimension {ndim}")
        perm = tuple(normalize_axis(a, ndim) for a in axes)
        if len(set(perm)) != ndim:
            raise ValueError(f"repeated axis in transpose: {tuple(axes)}")
    if perm == tuple(range(ndim)):
        return x
    shape = tuple(x.shape[p] for p in perm)
    return Node("transpose", (x,), shape, x.dtype, make_attrs(perm=perm), device=x.device)


def slice_(x: Node, starts: Sequence[int], steps: Sequence[int], shape: Shape) -> Node:
    if tuple(shape) == x.shape and all(s == 0 for s in starts) and all(s == 1 for s in steps):
        return x
    return Node(
        "slice", (x,), tuple(shape), x.dtype,
        make_attrs(starts=tuple(starts), steps=tuple(steps)), device=x.device,
    )


#: NumPy ``pad`` modes whose values are input values at positions computed per axis (``pad`` nodes)
PAD_INDEX_MODES = ("edge", "wrap", "reflect", "symmetric")


def pad(x: Node, axis: int, before: int, after: int, mode: str, masked: bool = False) -> Node:
    """``x`` extended by ``before`` and ``after`` elements along ``axis`` as NumPy's ``pad`` in
    ``mode`` (one of :data:`PAD_INDEX_MODES`; the axis is not empty): an index map, fused like a slice.

    ``masked`` (an ``"edge"`` pad whose values outside ``x`` are never used: a ``where`` that
    selects it by position replaces them, as a constant pad, a join and a slice assignment
    build it): the kernels read ``x`` at the position minus ``before`` without clamping it
    (``stitchlab.codegen.elemental``, ``Writer._unclamped``), so that a stencil's steps are
    computed once per offset."""
    n = x.shape[axis]
    if mode not in PAD_INDEX_MODES or n == 0 or before < 0 or after < 0:
        raise ValueError(f"pad node: mode {mode!r}, widths ({before}, {after}) of an axis of {n}")
    if not before and not after:
        return x
    shape = x.shape[:axis] + (n + before + after,) + x.shape[axis + 1:]
    if n == 1:  # every mode repeats the one element: a broadcast, whose graph holds no position
        return broadcast_to(x, shape)
    extra = {"masked": True} if masked and mode == "edge" else {}
    attrs = make_attrs(axis=axis, before=before, extent=n, mode=mode, **extra)
    return Node("pad", (x,), shape, x.dtype, attrs, device=x.device)


def getitem(x: Node, key: Any) -> Node:
    """Basic indexing: integers, slices, None and Ellipsis, as a lazy index map."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        ok = k is None or k is Ellipsis or isinstance(k, slice) or (
            isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))
        )
        if not ok:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                f"boolean arrays are valid indices; got {k!r} of type {type(k).__name__}"
                + (f" (int({k!r}) for a position)" if isinstance(k, (float, np.floating)) else "")
            )
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in items if k is not None and k is not Ellipsis)
    if n_real > len(x.shape):
        raise IndexError(
            f"too many indices for array: array is {len(x.shape)}-dimensional, but {n_real} were indexed"
        )
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items = items[:i] + (slice(None),) * (len(x.shape) - n_real) + items[i + 1:]
    else:
        items = items + (slice(None),) * (len(x.shape) - n_real)
    starts, steps, sliced, final = [], [], [], []
    axis = 0
    for k in items:
        if k is None:
            final.append(1)
            continue
        n = x.shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = max(0, (stop - start + (step - (1 if step > 0 else -1))) // step)
            starts.append(start if length else 0)
            steps.append(step)
            sliced.append(length)
            final.append(length)
        else:
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            starts.append(k % n)
            steps.append(1)
            sliced.append(1)
        axis += 1
    view = _buffer_view(x, starts, steps, sliced, tuple(final))
    if view is not None:
        return view
    node = slice_(x, starts, steps, tuple(sliced))
    return reshape(node, tuple(final))


def _buffer_view(x: Node, starts: list[int], steps: list[int], sliced: list[int], final: Shape) -> Node | None:
    """An index of an evaluated array that keeps whole rows (``x[i]``, ``x[i, j]``, ``x[a:b]``
    of a 2-d array): a view of its buffer, as NumPy's and CuPy's, made a new input leaf. The
    position is then in the buffer's address, not in the kernel, so a loop over rows or batches
    plans and compiles one kernel, not one per position. A slice along the last axis (a stencil's
    shifted reads, which the kernel reads from one buffer) and any other step stay index maps."""
    buf = x.value
    if x.op != "input" or buf is None or not all(sliced) or not buf.flags.c_contiguous:
        return None
    shape = x.shape
    m = len(shape)  # axes m... are taken whole
    while m and starts[m - 1] == 0 and steps[m - 1] == 1 and sliced[m - 1] == shape[m - 1]:
        m -= 1
    if not m or any(n != 1 for n in sliced[:m - 1]) or (sliced[m - 1] != 1 and (steps[m - 1] != 1 or m == len(shape))):
        return None
    view = buf[tuple(slice(s, s + n) for s, n in zip(starts[:m], sliced[:m], strict=True))].reshape(final)
    return Node("input", (), final, x.dtype, value=view, device=x.device)


def is_source(node: Node) -> bool:
    return OPS[node.op].kind is Kind.SOURCE
