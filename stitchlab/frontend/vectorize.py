"""``sl.vectorize``: NumPy's ``vectorize`` whose function becomes one fused kernel where it can.

The function is called once, on the stitchlab arrays themselves. Where what it builds is
elementwise (arithmetic, ufuncs, ``sl.where``, casts, comparisons, constants: every op reads
each input at the output's own position), that expression is the result, lazy, fused with the work
around it: a scalar function written in Python runs at the speed of a kernel. Where it is not
(Python control flow on the values, ``math.exp``, a reduction or a shape inside the function, a
captured array), NumPy's ``vectorize`` runs it element by element on the host, as NumPy would,
with a ``UserWarning`` that names the reason, and the result is a stitchlab array again.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..ir.ops import OPS, Kind
from .array import LazyArray
from .creation import asarray

__all__ = ["vectorize"]


class vectorize:  # noqa: N801 - NumPy's name
    """NumPy's ``vectorize(pyfunc, otypes, doc, excluded, cache, signature)`` (module docstring):
    a decorator too, with or without arguments.

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> @sl.vectorize
        ... def huber(r, delta=1.0):
        ...     a = sl.abs(r)
        ...     return sl.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
        >>> huber(sl.asarray(np.array([-3.0, 0.5, 2.0]))).get()
        array([2.5  , 0.125, 1.5  ])
    """

    def __init__(self, pyfunc: Any = np._NoValue, otypes: Any = None, doc: str | None = None, excluded: Any = None,
                 cache: bool = False, signature: str | None = None) -> None:
        self.pyfunc = pyfunc
        self.otypes = None if otypes is None else [np.dtype(t) for t in otypes]
        self.excluded = set(excluded or ())
        self.cache = cache
        self.signature = signature
        self._options = {"otypes": otypes, "excluded": excluded, "cache": cache, "signature": signature}
        if pyfunc is not np._NoValue:
            self.__doc__ = doc if doc is not None else pyfunc.__doc__
            self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.pyfunc is np._NoValue:  # @sl.vectorize(otypes=...): the decorator's argument is the function
            return vectorize(args[0], doc=None, **self._options)
        if self.signature is None:
            try:
                return self._traced(args, kwargs)
            except (TypeError, ValueError, _NotElementwise) as e:
                reason = f"{type(e).__name__}: {e}" if not isinstance(e, _NotElementwise) else str(e)
        else:
            reason = "a signature (core dimensions) is applied by NumPy"
        warnings.warn(f"sl.vectorize({self.__name__}): not one kernel ({reason}); running it element by element on "
                      "the host with numpy.vectorize", UserWarning, stacklevel=2)
        return self._on_host(args, kwargs)

    def _varies(self, key: int | str) -> bool:
        return key not in self.excluded

    def _traced(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        lazy_args = [asarray(a) if self._varies(i) else a for i, a in enumerate(args)]
        lazy_kwargs = {k: asarray(v) if self._varies(k) else v for k, v in kwargs.items()}
        operands = [a for a in [*lazy_args, *lazy_kwargs.values()] if isinstance(a, LazyArray)]
        result = self.pyfunc(*lazy_args, **lazy_kwargs)
        results = result if isinstance(result, tuple) else (result,)
        if self.otypes is not None and len(self.otypes) != len(results):
            raise ValueError(f"{len(self.otypes)} otypes for {len(results)} outputs")
        shape = np.broadcast_shapes(*[a.shape for a in operands]) if operands else ()
        outs = []
        for i, r in enumerate(results):
            r = asarray(r)
            _check_elementwise(r._node, {id(a._node) for a in operands})
            if self.otypes is not None:
                r = r.astype(self.otypes[i])
            outs.append(r if r.shape == shape else LazyArray(_broadcast(r, shape)))
        return tuple(outs) if isinstance(result, tuple) else outs[0]

    def _on_host(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from .protocols import native

        result = np.vectorize(self.pyfunc, **self._options)(*native(args, True), **native(kwargs, True))
        return tuple(asarray(r) for r in result) if isinstance(result, tuple) else asarray(result)


class _NotElementwise(Exception):
    """What the function built reads its inputs elsewhere than at the output's position."""


def _check_elementwise(node: Any, operands: set[int]) -> None:
    """Raise :class:`_NotElementwise` unless every node between ``node`` and the ``operands``
    is elementwise, a broadcast (with the unit axes broadcasting puts in front), a reshape of one
    element or a 0-d source (a constant)."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in operands or id(n) in seen:
            continue
        seen.add(id(n))
        kind = OPS[n.op].kind
        if kind is Kind.SOURCE:
            if n.shape != ():
                raise _NotElementwise(f"it reads an array it was not given (shape {n.shape}); pass it as an argument")
            continue
        if kind not in (Kind.ELEMENTWISE, Kind.BROADCAST) and not (kind is Kind.LAYOUT and _unit_axes_only(n)):
            raise _NotElementwise(f"it applies {n.op!r}, which reads more than the element itself")
        stack.extend(n.inputs)


def _unit_axes_only(n: Any) -> bool:
    """A layout node that is one element reshaped, or its input with unit axes put in front (what
    broadcasting an operand of fewer dimensions builds)."""
    if n.size == 1:
        return True
    (x,) = n.inputs
    return n.op == "reshape" and n.shape[len(n.shape) - len(x.shape):] == x.shape and set(n.shape[:len(n.shape) - len(x.shape)]) <= {1}


def _broadcast(r: LazyArray, shape: tuple[int, ...]) -> Any:
    from . import build

    return build.broadcast_to(r._node, shape)
