"""``LazyArray``: the user-facing array. Operations build graph nodes; values are computed when
asked for (``get()``, ``np.asarray``, ``print``, ``sl.compute``...)."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from operator import index as operator_index
from typing import Any

import numpy as np

from .. import runtime
from ..ir.dtypes import as_dtype, is_bfloat16, is_weak
from ..ir.node import Node
from . import build
from .scalars import TracedScalar


def node_of(x: Any) -> Node | bool | int | float | TracedScalar:
    """The graph operand for ``x``: a node, or a Python scalar kept weak (NEP 50; one that an
    ``sl.jit`` call reads at run time too)."""
    if isinstance(x, LazyArray):
        return x._node
    if is_weak(x) or isinstance(x, TracedScalar):
        return x
    from .creation import asarray

    return asarray(x)._node


def c_order(call: str, order: Any, allowed: tuple[Any, ...] = ("C", "A", "K", None), way: str = "") -> None:
    """Refuse an ``order`` a C-ordered array cannot follow (``"F"``, as :meth:`LazyArray.astype`
    does): ``TypeError`` naming it and the way round. ``"A"`` and ``"K"`` mean C for such an array.
    As NumPy reads it: in any case, or bytes; NumPy's ``ValueError`` for an order NumPy does not
    take there (``allowed`` and ``"F"``), ``TypeError`` for one that is not a string."""
    key = order.decode() if isinstance(order, bytes) else order
    if isinstance(key, str):
        key = key.upper()
    elif key is not None:
        raise TypeError(f"order must be str, not {type(order).__name__}")
    if key is None or key in allowed:  # (None: NumPy's default, C here)
        return
    if key not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if key != "F":  # (one NumPy takes elsewhere, not in this call)
        raise ValueError("only 'C' or 'F' order is permitted" if allowed == ("C",) else
                         f"order {key!r} is not permitted for {'reshaping' if call == 'reshape' else call}")
    raise TypeError(f"{call}(order={order!r}): stitchlab arrays are C-ordered; "
                    f"{way or 'leave order out'} (or order='C')")


def _method_axis(method: str, axis: Any) -> None:
    """NumPy's ``TypeError`` for ``x.sort(axis=None)`` and ``x.partition(kth, axis=None)``: the
    in-place methods take an integer axis (the functions ``sl.sort``/``sl.partition`` flatten)."""
    if axis is None:
        raise TypeError(f"x.{method}() takes an integer axis, not None (the in-place method cannot flatten); "
                        f"use sl.{method}(x, axis=None) for the flattened result")


class _TypeLevel:
    """``__array_ufunc__`` as NumPy finds it, on the type: the method. Read from an instance it
    is None, and that is how CuPy reads it: ``cupy_array + x`` then defers to ``x.__radd__`` and
    stays lazy (CuPy's own ``add`` would take x through its CUDA array interface, evaluating it)."""

    def __init__(self, method: Any) -> None:
        self.method = method
        self.__doc__ = method.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self.method if instance is None else None


#: assignments into one array, its value not asked for, after which it is evaluated (see
#: ``LazyArray._rebind``)
ASSIGNMENTS_PENDING = 16


class LazyArray:
    """A lazily evaluated array with NumPy/CuPy semantics.

    Operations on it return new lazy arrays that record the computation; the work runs, fused,
    when the value is needed.

    Example:
        >>> import stitchlab as sl, numpy as np
        >>> x = sl.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
        >>> y = sl.exp(x - x.max(axis=-1, keepdims=True))
        >>> (y / y.sum(axis=-1, keepdims=True)).shape
        (2, 3)
    """

    __slots__ = ("_node", "_view", "_pending", "_indexed", "__weakref__")
    __hash__ = None  # type: ignore[assignment]  # elementwise __eq__, like numpy

    def __init__(self, node: Node, view_of: LazyArray | None = None) -> None:
        self._node = node
        self._pending = 0  # assignments into this array since its value was last computed
        # the array this one was made a view of (NumPy's view would write through into it): the
        # first of a chain of views, while it lives
        self._view = weakref.ref(view_of._base()) if view_of is not None else None
        # for a view by basic indexing: the array indexed (held where it is a view itself, so that
        # x[::-1][0][::2] = 7 reaches x; weakly where not), the key, and the node that array stood
        # for when the view was taken (see :meth:`_write_through`)
        self._indexed: tuple[LazyArray | weakref.ref[LazyArray], Any, Node] | None = None

    def _base(self) -> LazyArray:
        """The array this one is a view of, if it still lives; else this one."""
        base = self._view() if self._view is not None else None
        return base if base is not None else self

    def _rebind(self, node: Node) -> None:
        """Make this array stand for ``node``: an assignment into it (``x[...] = v``, ``x += v``,
        ``out=x``...). A view of an array still alive writes through into it where it is a view
        by basic indexing taken from the array's current value (:meth:`_write_through`), as
        NumPy's does; other views of an array still alive refuse, as NumPy's would write through
        them (a view of a temporary, ``sl.arange(12).reshape(3, 4)``, takes assignments).

        After :data:`ASSIGNMENTS_PENDING` assignments whose value was not asked for, the array is
        evaluated (kernels launched, nothing read back; not while :func:`jit` traces): a loop of
        assignments then plans expressions of a bounded length, which repeat from one stretch of
        the loop to the next (their positions are constants read at run time after a few,
        ``Backend._note_constants``), instead of one expression as long as the loop."""
        from .jit import note_assignment, tracing

        note_assignment(self)
        if self._base() is not self:
            if self._write_through(node):
                return
            raise TypeError(
                "this array is a view of another that it cannot write through into, as NumPy's would: a "
                "transpose, reshape, ravel, broadcast or .imag (or a view of one), or a view taken before that "
                "array was assigned (it holds the value from before). Views by indexing (x[1:], x[0]) "
                "taken from the array's current value write through. Assign into that array (x[0, 1] = "
                "v rather than x.T[1][0] = v), or into a copy of the view (y = x.T.copy())"
            )
        self._pending = 1 if self._node.op == "input" else self._pending + 1
        self._node = node
        if self._pending >= ASSIGNMENTS_PENDING and node.op != "input" and not tracing():
            runtime.evaluate([node])
            self._pending = 0

    # --- attributes ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @shape.setter
    def shape(self, shape: Any) -> None:
        """``x.shape = (2, 3)``: ``x`` stands for its elements in that shape, as NumPy's sets it in
        place (NumPy's ``ValueError`` for another size). A view of an array still alive refuses
        with NumPy's ``AttributeError`` for a shape it cannot set in place: reshape a copy."""
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        new = build.reshape(self._node, shape)
        if self._base() is not self:
            raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                                 "with the desired shape (this array is a view of another, which stitchlab "
                                 "cannot reshape in place)")
        self._node = new

    @property
    def dtype(self) -> np.dtype:
        return self._node.dtype

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return self._node.size

    @property
    def itemsize(self) -> int:
        return self._node.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def device(self) -> str:
        """``"cpu"`` or ``"cuda:N"``."""
        return self._node.device or runtime.current().device()

    @property
    def T(self) -> LazyArray:
        return self.transpose()

    @property
    def mT(self) -> LazyArray:  # noqa: N802 - NumPy's and the array API's name
        """The last two axes swapped (``matrix_transpose``): a lazy view."""
        from . import api

        return api.matrix_transpose(self)

    @property
    def real(self) -> LazyArray:
        """The array itself (stitchlab arrays are real), as a view."""
        return self[...]

    @property
    def imag(self) -> LazyArray:
        """Zeros of the array's shape and dtype (stitchlab arrays are real), read-only as NumPy's."""
        from . import api

        return api.imag(self)

    def conj(self) -> LazyArray:
        """The array itself, a new array (stitchlab arrays are real)."""
        return self.copy()

    conjugate = conj

    @property
    def strides(self) -> tuple[int, ...]:
        """C-order strides in bytes: a stitchlab array's value is always laid out in C order
        (all 0 for an empty array, as NumPy's)."""
        if self.size == 0:
            return (0,) * self.ndim
        strides, step = [], self.itemsize
        for n in reversed(self.shape):
            strides.append(step)
            step *= n
        return tuple(reversed(strides))

    def to_device(self, device: Any, /, *, stream: Any = None) -> LazyArray:
        """The array API's ``to_device``: the same array where ``device`` is its own
        (``x.device``), else ``ValueError`` naming the way (``sl.asarray`` of ``x.get()`` under the
        other backend)."""
        if stream is not None:
            raise ValueError("to_device(stream=...): stitchlab runs on the current CuPy stream; leave stream out")
        if str(device) != self.device:
            raise ValueError(f"to_device({device!r}): this array lives on {self.device!r}; to move it, take x.get() and "
                             "wrap it with sl.asarray under the other backend (sl.set_backend)")
        return self

    def tofile(self, fid: Any, sep: str = "", format: str = "%s") -> None:  # noqa: A002 - NumPy's name
        """Write the evaluated elements to a file (NumPy's ``tofile``)."""
        self.get().tofile(fid, sep, format)

    @property
    def is_materialized(self) -> bool:
        """True once the value has been computed (or for arrays made from concrete data)."""
        return self._node.op == "input"

    # --- materialization ---------------------------------------------------------------------------
    def _value(self) -> Any:
        return runtime.evaluate([self._node])[0]

    def get(self) -> np.ndarray:
        """The value as a new ``numpy.ndarray`` (as ``cupy.ndarray.get()``)."""
        buf = self._value()
        out = runtime.for_device(self._node.device).to_numpy(buf)
        return np.array(out, copy=True) if out is buf else out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        buf = self._value()
        out = runtime.for_device(self._node.device).to_numpy(buf)
        if dtype is not None:
            out = out.astype(dtype, copy=False)
        return np.array(out, copy=True) if copy else out

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if not self.device.startswith("cuda"):
            raise AttributeError("__cuda_array_interface__: this array lives on the CPU (numpy backend)")
        if is_bfloat16(self.dtype):
            # its typestr would be "<V2" (raw bytes): CuPy and torch would take the values for
            # opaque records. Without the attribute, cupy.asarray asks __cupy_get_ndarray__
            raise AttributeError(
                "__cuda_array_interface__: bfloat16 has no typestr in the CUDA array interface; "
                "use torch.from_dlpack(x) or cupy.asarray(x)"
            )
        return self._value().__cuda_array_interface__

    def __cupy_get_ndarray__(self) -> Any:
        """The value as a ``cupy.ndarray`` (what ``cupy.asarray`` calls first): the GPU array
        itself, with its dtype; the CUDA array interface cannot say bfloat16 (its typestr is
        "<V2"). An array of the numpy backend is copied to the current GPU."""
        import cupy

        return cupy.asarray(self._value())

    @_TypeLevel
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``np.exp(x)``, ``ndarray + x``, ``np.add.reduce(x)``: the stitchlab op, lazily (NEP 13;
        :mod:`stitchlab.frontend.protocols`)."""
        from .protocols import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``np.mean(x, axis=0)``, ``np.where(c, x, y)``...: the stitchlab function, lazily (NEP 18;
        :mod:`stitchlab.frontend.protocols`)."""
        from .protocols import array_function

        return array_function(func, args, kwargs)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._value().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._value().__dlpack_device__()

    def __repr__(self) -> str:
        return np.array_repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    def _repr_html_(self) -> str:  # Jupyter: shape, dtype, ops -> kernels; never evaluates
        from ..notebook.html import array_html
        return array_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # Jupyter asks this first: no evaluating __repr__
        from ..notebook.html import array_mimebundle

        return array_mimebundle(self)

    def _scalar(self, kind: str) -> Any:
        if self.size != 1:
            if kind == "bool" and self.size == 0:
                raise ValueError(
                    "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                    "that an array is not empty."
                )
            if kind == "bool":
                raise ValueError(
                    "The truth value of an array with more than one element is ambiguous. "
                    "Use a.any() or a.all()"
                )
            if kind == "item":
                raise ValueError(f"can only convert an array of size 1 to a Python scalar (shape {self.shape})")
        if self.ndim and kind in ("int", "float", "index"):  # (NumPy 2.4's: not a size-1 array of dimensions)
            if kind == "index":
                raise TypeError(f"only integer scalar arrays can be converted to a scalar index (shape {self.shape})")
            raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars (shape {self.shape}; "
                            f"x.item() takes the one element of a size-1 array)")
        return self.get().reshape(()).item()

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index (dtype {self.dtype})")
        return int(self._scalar("index"))

    def item(self, *args: Any) -> Any:
        """One element as a Python scalar (NumPy's ``ndarray.item``): of a size-1 array without
        arguments, else at a flat index (``x.item(5)``) or at one index per axis (``x.item(1, 2)``,
        ``x.item((1, 2))``). Evaluates that element only."""
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if not args:
            return self._scalar("item")
        if len(args) == 1 and self.ndim != 1:
            flat, n = operator_index(args[0]), self.size
            if not -n <= flat < n:
                raise IndexError(f"index {flat} is out of bounds for size {n}")
            return self.reshape(-1)[flat]._scalar("item")
        if len(args) != self.ndim:
            raise ValueError(f"incorrect number of indices for array: item{args} of an array of "
                             f"{self.ndim} dimensions; give one index per axis or one flat index")
        return self[tuple(operator_index(i) for i in args)]._scalar("item")

    def __format__(self, spec: str) -> str:
        """``f"{x:.2f}"``: a 0-d array formats as its value, as NumPy's does; an array of
        dimensions takes only the empty spec (its ``str``)."""
        if self.ndim == 0:
            return format(self.get()[()], spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} passed to LazyArray.__format__ (an array of shape "
                            f"{self.shape}); format its elements, e.g. f'{{x[0]:{spec}}}' or x.item(0)")
        return str(self)

    def __contains__(self, value: Any) -> bool:
        """``v in x``: ``(x == v).any()``, as NumPy's (evaluates)."""
        return bool((self == value).any())

    def __divmod__(self, other: Any) -> tuple[LazyArray, LazyArray]:
        """``divmod(x, y)``: :func:`stitchlab.divmod`, two lazy arrays."""
        from . import api

        return api.divmod(self, other)

    def __rdivmod__(self, other: Any) -> tuple[LazyArray, LazyArray]:
        from . import api

        return api.divmod(other, self)

    @property
    def base(self) -> LazyArray | None:
        """NumPy's ``base``: the array this one is a view of (``x[1:].base is x``, the first
        array of a chain of views: ``x[1:].T.base is x``), None for an array that is no view.
        A stitchlab view does not keep that array alive: once nothing else holds it, ``base`` is
        None, and the view takes assignments as an array of its own (:meth:`_rebind`)."""
        base = self._base()
        return None if base is self else base

    @property
    def flags(self) -> ArrayFlags:
        """NumPy's ``flags``, read-only: a stitchlab array's value is laid out in C order, so
        ``c_contiguous`` is True and ``f_contiguous`` only where the two orders agree (at most
        one axis longer than 1, or no elements), as for NumPy's C-ordered arrays; ``owndata`` is
        False for a view (``x[...]``, ``reshape``...), and ``writeable`` False for a view of an
        array still alive that cannot write through into it (a transpose, a view of a view, one
        taken before the array was assigned: :meth:`_rebind`)."""
        view = self._view is not None
        return ArrayFlags(
            f_contiguous=self.size == 0 or sum(n > 1 for n in self.shape) <= 1,
            owndata=not view,
            writeable=self._base() is self or self._writes_through(),
        )

    def tolist(self) -> Any:
        return self.get().tolist()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[LazyArray]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # --- layout ----------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> LazyArray:
        """Basic indexing (integers, slices, ``None``, ``...``) is a lazy view fused with its use;
        one integer array (or list) among full slices, or a NumPy boolean mask, is a gather
        (:func:`stitchlab.take`)."""
        from .library import advanced_index, bool_scalar_advanced, is_bool_scalar

        items = key if isinstance(key, tuple) else (key,)
        if any(is_bool_scalar(k) for k in items) and not bool_scalar_advanced(items):
            return self._bool_scalar_index(items)
        gathered = advanced_index(self, key)
        if gathered is not None:
            return gathered
        view = LazyArray(build.getitem(self._node, key), view_of=self)
        view._indexed = (self if self._view is not None else weakref.ref(self), key, self._node)
        return view

    def _bool_scalar_index(self, items: tuple[Any, ...]) -> LazyArray:
        """``x[True]``, ``x[False]``, ``x[..., True]``: NumPy's 0-d boolean index, a new axis of
        length 1 (True) or 0 (False) where it stands, beside slices, ``None`` and ``...`` only
        (others: :func:`stitchlab.frontend.library.advanced_index`). NumPy takes a boolean as an
        advanced index, so the result is a copy: a write into it leaves ``x`` as it was."""
        i = next(i for i, k in enumerate(items) if not (k is None or k is Ellipsis or isinstance(k, slice)))
        out = self[items[:i] + (None,) + items[i + 1:]]
        if not items[i]:
            # NumPy's shape of the result (of a stand-in without memory) differs from out's in the new axis
            want = np.broadcast_to(np.False_, self.shape)[items].shape
            axis = next(d for d, (n, m) in enumerate(zip(want, out.shape, strict=True)) if n != m)
            out = out[(slice(None),) * axis + (slice(0, 0),)]
        return LazyArray(out._node)  # (a copy, not a view that writes through)

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value`` with NumPy's indexing and casting: ``x`` then stands for the new value,
        as after ``x += 1`` (arrays built from ``x`` before keep the old one). Basic indexes and
        boolean masks fuse into the kernels around them; integer arrays are a scatter step."""
        from .assign import assign

        if isinstance(value, LazyArray) and value._written_back_into(self, key):
            return  # (the store of ``x[key] += v``: the in-place operator wrote x[key] already)
        self._rebind(assign(self, key, value))

    def _write_through(self, node: Node) -> bool:
        """An assignment into a view by basic indexing (``v = x[1:]; v[0] = 5``, ``x[0][1] = 5``,
        ``x[1:].sort()``, ``out=x[0]``, and ``x[key] += v``, which Python runs as ``t = x[key];
        t += v; x[key] = t``): write ``node`` through into the array indexed, ``x[key] = node``
        (which writes on through where ``x`` is such a view too), as NumPy's view does, and let
        this view stand for it. False where that is not possible: a view of another kind
        (``x.T``), a NumPy scalar (``x[0, 0]``), a view whose array indexed is gone (``x.T[0]``
        once ``x.T`` is), or one taken before that array was assigned (its value then is not the
        array's any more)."""
        parent = self._indexed_array()
        if parent is None or self._is_numpy_scalar():
            return False
        key = self._indexed[1]
        parent[key] = LazyArray(node)
        # (read back from the array's new value, not ``node``: a loop of writes into the view then
        # builds expressions no longer than the array's, which are evaluated every few writes)
        self._node = build.getitem(parent._node, key)
        self._indexed = (self._indexed[0], key, parent._node)
        return True

    def _indexed_array(self) -> LazyArray | None:
        """The array this view indexes, where it lives and was not assigned since."""
        if self._indexed is None:
            return None
        held = self._indexed[0]
        parent = held if isinstance(held, LazyArray) else held()
        return parent if parent is not None and parent._node is self._indexed[2] else None

    def _writes_through(self) -> bool:
        """Whether an assignment into this view writes through (:meth:`_write_through`): the
        array it indexes writes too (it is no view of a live array, or one that writes through)."""
        parent = self._indexed_array()
        return parent is not None and not self._is_numpy_scalar() and \
            (parent._base() is parent or parent._writes_through())

    def _is_numpy_scalar(self) -> bool:
        """Whether this is ``x[i, j]`` with an integer for every axis of ``x`` (``x[()]`` of a 0-d
        ``x``), where NumPy gives a scalar, not a view: ``x[i, j] += v`` is then NumPy's
        ``x[i, j] = x[i, j] + v`` (promoted, then cast as assignment casts), and ``s = x[i, j];
        s += v`` leaves ``x`` as it was."""
        if self._indexed is None or self.ndim:
            return False
        key = self._indexed[1]
        items = key if isinstance(key, tuple) else (key,)
        return all(isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) for k in items)

    def _written_back_into(self, parent: LazyArray, key: Any) -> bool:
        """Whether this view is ``parent[key]`` as ``parent`` stands now (taken, or last written
        through by :meth:`_write_through`, with this key object, and ``parent`` not assigned
        since): ``parent[key] = self`` then changes nothing."""
        return self._indexed_array() is parent and self._indexed[1] is key

    def fill(self, value: Any) -> None:
        """Set every element to ``value`` (NumPy's ``ndarray.fill``: one number, read as one element
        reads it, :func:`stitchlab.frontend.assign.one_element`): ``x`` then stands for the new value."""
        from .assign import one_element

        self[...] = one_element(self, value, "not a sequence (x[...] = values assigns an array)")

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        """NumPy's ``ndarray.put``: :func:`stitchlab.put` into this array."""
        from .assign import put

        put(self, indices, values, mode)

    def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> LazyArray:
        """The elements in another shape, a lazy view (NumPy's ``reshape``; ``order="F"`` raises
        ``TypeError`` naming the way round: ``x.T.reshape(shape[::-1]).T``)."""
        if order != "C":
            c_order("reshape", order, ("C", "A"), "x.T.reshape(shape[::-1]).T reshapes in Fortran order")
        if len(shape) == 1 and (isinstance(shape[0], (tuple, list)) or np.ndim(shape[0]) == 1):  # (or an array of sizes)
            shape = tuple(shape[0])
        out = LazyArray(build.reshape(self._node, shape), view_of=self)
        return out.copy() if copy else out

    def transpose(self, *axes: Any) -> LazyArray:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return LazyArray(build.transpose(self._node, axes or None), view_of=self)

    def ravel(self, order: str = "C") -> LazyArray:
        """The elements in one axis, a lazy view (NumPy's ``ravel``; ``order="F"``: ``x.T.ravel()``)."""
        if order != "C":
            c_order("ravel", order, way="x.T.ravel() gives the Fortran order")
        return self.reshape(-1)

    def flatten(self, order: str = "C") -> LazyArray:
        """The elements in one axis, a new array (NumPy's ``flatten`` copies; ``ravel`` is a view)."""
        c_order("flatten", order, way="x.T.flatten() gives the Fortran order")
        return self.reshape(-1).copy()

    def swapaxes(self, axis1: int, axis2: int) -> LazyArray:
        from . import api

        return api.swapaxes(self, axis1, axis2)

    def squeeze(self, axis: Any = None) -> LazyArray:
        from . import api

        return api.squeeze(self, axis)

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> LazyArray:
        """Cast to ``dtype`` with NumPy's ``astype`` semantics: ``casting`` ``"unsafe"`` by default,
        another rule raises NumPy's ``TypeError`` where the cast breaks it (``order``: stitchlab
        arrays are C-ordered; ``subok`` means nothing here). ``copy=False`` returns this array itself
        where its dtype is ``dtype``, as NumPy's: assignments into the result are assignments into it."""
        target = as_dtype(dtype)
        c_order("astype", order)
        casting = build.casting_arg(casting, "astype")
        if casting != "unsafe" and not np.can_cast(self.dtype, target, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {target!r} according to the rule {casting!r}")
        if not copy and target == self.dtype:
            return self
        return LazyArray(build.astype(self._node, target))

    def copy(self, order: str = "C") -> LazyArray:
        """A new array of the same value (NumPy's ``copy``; stitchlab arrays are C-ordered)."""
        c_order("copy", order)
        return LazyArray(self._node)

    # --- reductions --------------------------------------------------------------------------------
    # NumPy's parameters in NumPy's order; ``out``, ``initial`` and ``where`` as the ufunc's
    # ``reduce`` (stitchlab.frontend.ufunc)
    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = np._NoValue, where: Any = True) -> LazyArray:
        return self._reduce("sum", axis, dtype, out, keepdims, initial, where)

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             initial: Any = np._NoValue, where: Any = True) -> LazyArray:
        return self._reduce("prod", axis, dtype, out, keepdims, initial, where)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,
            where: Any = True) -> LazyArray:
        return self._reduce("max", axis, None, out, keepdims, initial, where)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,
            where: Any = True) -> LazyArray:
        return self._reduce("min", axis, None, out, keepdims, initial, where)

    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> LazyArray:
        return self._reduce("any", axis, None, out, keepdims, np._NoValue, where)

    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> LazyArray:
        return self._reduce("all", axis, None, out, keepdims, np._NoValue, where)

    def _reduce(self, opname: str, axis: Any, dtype: Any, out: Any, keepdims: bool, initial: Any, where: Any) -> Any:
        if out is None and initial is np._NoValue and where is True:
            return LazyArray(build.reduce(opname, self._node, axis, keepdims, dtype))
        from .ufunc import reduction_ufunc

        return reduction_ufunc(opname).reduce(self, axis, dtype, out, keepdims, initial, where)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
             where: Any = True) -> LazyArray:
        from . import api

        return api.mean(self, axis, dtype, out, keepdims, where=where)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False, *,
            where: Any = True, mean: Any = np._NoValue) -> LazyArray:
        from . import api

        return api.var(self, axis, dtype, out, ddof=ddof, keepdims=keepdims, where=where, mean=mean)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False, *,
            where: Any = True, mean: Any = np._NoValue) -> LazyArray:
        from . import api

        return api.std(self, axis, dtype, out, ddof=ddof, keepdims=keepdims, where=where, mean=mean)

    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
        from . import api

        return api.argmax(self, axis, out, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
        from . import api

        return api.argmin(self, axis, out, keepdims=keepdims)

    def round(self, decimals: int = 0) -> LazyArray:
        from . import api

        return api.round(self, decimals)

    def clip(self, min: Any = None, max: Any = None, out: Any = None) -> LazyArray:
        from . import api

        return api.clip(self, min, max, out)

    # --- library steps and views (stitchlab.frontend.library / .manipulation) ----------------------
    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> LazyArray:
        from . import library

        return library.take(self, indices, axis, out, mode)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
        from . import library

        return library.cumsum(self, axis, dtype, out)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
        from . import library

        return library.cumprod(self, axis, dtype, out)

    def argsort(self, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> LazyArray:
        from . import library

        return library.argsort(self, axis, kind, order, stable=stable)

    def sort(self, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> None:
        """Sort along ``axis`` (NumPy's ``ndarray.sort``): ``x`` then stands for the sorted value.
        ``axis`` is an integer: the method sorts in place, so there is no flattened ``axis=None``
        (NumPy's ``TypeError``; ``sl.sort(x, axis=None)`` returns the flattened sort)."""
        from . import library

        _method_axis("sort", axis)
        self._rebind(library.sort(self, axis, kind, order, stable=stable)._node)

    def dot(self, b: Any, out: Any = None) -> LazyArray:
        from . import library

        return library.dot(self, b, out)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> LazyArray:
        from . import library

        return library.searchsorted(self, v, side, sorter)

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> LazyArray:
        from . import selection

        return selection.choose(self, choices, out, mode)

    def partition(self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> None:
        """NumPy's ``ndarray.partition``: ``x`` then stands for the partitioned value (``axis`` an
        integer, as for :meth:`sort`)."""
        from . import library

        _method_axis("partition", axis)
        self._rebind(library.partition(self, kth, axis, kind, order)._node)

    def argpartition(self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> LazyArray:
        from . import library

        return library.argpartition(self, kth, axis, kind, order)

    def tobytes(self, order: str = "C") -> bytes:
        """The evaluated elements' bytes (NumPy's ``tobytes``)."""
        return self.get().tobytes(order)

    def nonzero(self) -> tuple[LazyArray, ...]:
        """The indices of the non-zero elements (:func:`stitchlab.nonzero`; evaluates)."""
        from . import selection

        return selection.nonzero(self)

    def compress(self, condition: Any, axis: Any = None, out: Any = None) -> Any:
        """The slices where ``condition`` is true (:func:`stitchlab.compress`; evaluates it)."""
        from . import selection

        return selection.compress(condition, self, axis, out)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
        from . import manipulation

        return manipulation.diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> LazyArray:
        from . import manipulation

        return manipulation.trace(self, offset, axis1, axis2, dtype, out)

    def repeat(self, repeats: Any, axis: Any = None) -> LazyArray:
        from . import manipulation

        return manipulation.repeat(self, repeats, axis)

    def __matmul__(self, other: Any) -> LazyArray:
        """``x @ w`` (:func:`stitchlab.matmul`): a plan step of its own, run by CuPy (cuBLAS) or
        NumPy; the work around it fuses."""
        from . import api

        return api.matmul(self, other)

    def __rmatmul__(self, other: Any) -> LazyArray:
        from . import api

        return api.matmul(other, self)


class ArrayFlags:
    """What ``LazyArray.flags`` gives: NumPy's ``flagsobj``, read-only (attributes, and NumPy's
    keys ``x.flags["C_CONTIGUOUS"]``)."""

    __slots__ = ("f_contiguous", "owndata", "writeable")
    c_contiguous = True
    aligned = True
    writebackifcopy = False

    def __init__(self, f_contiguous: bool, owndata: bool, writeable: bool) -> None:
        object.__setattr__(self, "f_contiguous", f_contiguous)
        object.__setattr__(self, "owndata", owndata)
        object.__setattr__(self, "writeable", writeable)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"flags.{name}: a stitchlab array's flags are read-only (it has no memory layout to "
                             "change); x.copy() gives a new array")

    @property
    def fnc(self) -> bool:  # what np.isfortran reads: Fortran-ordered and not C-ordered
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self) -> bool:
        return True

    contiguous = c_contiguous
    fortran = property(lambda self: self.f_contiguous)

    _KEYS = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")

    def __getitem__(self, key: str) -> bool:
        names = {"C": "c_contiguous", "F": "f_contiguous", "O": "owndata", "W": "writeable", "A": "aligned",
                 "X": "writebackifcopy", "CONTIGUOUS": "c_contiguous", "FORTRAN": "f_contiguous", "FNC": "fnc",
                 "FORC": "forc"}
        name = names.get(key, key.lower() if key in self._KEYS else None)
        if name is None:
            raise KeyError(f"Unknown flag {key!r}; NumPy's flags are {', '.join(self._KEYS)}")
        return getattr(self, name)

    def __repr__(self) -> str:
        return "".join(f"  {key} : {self[key]}\n" for key in self._KEYS)


#: ``x ** c`` for these Python scalars is the cheaper op, as NumPy's own ``ndarray.__pow__`` does
_FAST_POWERS = {2: "square", 0.5: "sqrt", 1: "positive"}


def _binary(opname: str) -> Any:
    def node(self: LazyArray, other: Any) -> Node:
        if opname == "power" and isinstance(other, TracedScalar):
            other._need("an exponent (NumPy computes x ** 2, ** 0.5 and ** 1 otherwise)")
        if opname == "power" and type(other) in (int, float) and other in _FAST_POWERS:
            # NumPy: its own float types take every fast power (bfloat16, ml_dtypes', none);
            # integers and bools only an integer 2
            if self.dtype.kind == "f" or (type(other) is int and other == 2):
                return build.elementwise(_FAST_POWERS[other], self._node)
        made = build.elementwise(opname, self._node, node_of(other))
        if opname == "power":
            build.check_integer_exponent(made, other)
        return made

    def forward(self: LazyArray, other: Any) -> LazyArray:
        return LazyArray(node(self, other))

    def reflected(self: LazyArray, other: Any) -> LazyArray:
        return LazyArray(build.elementwise(opname, node_of(other), self._node))

    def inplace(self: LazyArray, other: Any) -> LazyArray:
        if self._is_numpy_scalar():  # x[i, j] += v: NumPy's x[i, j] is a scalar, its += not in place
            return forward(self, other)  # (Python stores it: x[i, j] = x[i, j] + v, cast as assigned)
        result = node(self, other)  # (x **= 2 squares, as NumPy's in-place power does)
        if result.shape != self.shape:
            raise ValueError(
                f"non-broadcastable output operand with shape {build.shapes_text([self.shape])} doesn't match the "
                f"broadcast shape {build.shapes_text([result.shape])}"
            )
        if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
            raise TypeError(
                f"Cannot cast ufunc '{opname}' output from {result.dtype!r} to {self.dtype!r} "
                f"with casting rule 'same_kind'"
            )
        self._rebind(build.astype(result, self.dtype))
        return self

    return forward, reflected, inplace


for _name, _op in [
    ("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
    ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"),
    ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
    ("lshift", "left_shift"), ("rshift", "right_shift"),
]:
    _f, _r, _i = _binary(_op)
    setattr(LazyArray, f"__{_name}__", _f)
    setattr(LazyArray, f"__r{_name}__", _r)
    setattr(LazyArray, f"__i{_name}__", _i)

for _name, _op in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal")]:
    setattr(LazyArray, f"__{_name}__", _binary(_op)[0])


def _equality(opname: str) -> Any:
    compare = _binary(opname)[0]

    def method(self: LazyArray, other: Any) -> LazyArray:
        """``x == v``, ``x != v``; against what is no number (``None``, a string, an object)
        elementwise False (True for ``!=``), as NumPy's."""
        if other is None or isinstance(other, (str, bytes)):
            shape = self.shape
        else:
            try:
                return compare(self, other)
            except TypeError:
                if isinstance(other, LazyArray) or hasattr(other, "__cuda_array_interface__"):
                    raise
                host = np.asarray(other)
                if host.dtype.kind not in "OUSV":
                    raise
                shape = np.broadcast_shapes(self.shape, host.shape)
        from .creation import full

        return full(shape, opname == "not_equal", np.bool_)

    return method


LazyArray.__eq__ = _equality("equal")  # type: ignore[assignment,method-assign]
LazyArray.__ne__ = _equality("not_equal")  # type: ignore[assignment,method-assign]

for _name, _op in [("neg", "negative"), ("pos", "positive"), ("abs", "absolute"), ("invert", "invert")]:
    setattr(LazyArray, f"__{_name}__", (lambda op: lambda self: LazyArray(build.elementwise(op, self._node)))(_op))

del _name, _op, _f, _r, _i
