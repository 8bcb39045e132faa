"""NumPy's ``axes=``, ``axis=`` and ``keepdims=`` for the ufuncs with a signature (``matmul``,
``vecdot``, ``matvec``, ``vecmat``): the core dimensions of each operand are moved to the end
(lazy transposes), the function runs on its default layout, and the outputs' core dimensions are
moved to where ``axes`` puts them, with NumPy's errors for lists it refuses.

Example:
    >>> import numpy as np, stitchlab as sl
    >>> a = sl.asarray(np.ones((4, 3, 2)))
    >>> sl.matmul(a, a, axes=[(0, 1), (1, 0), (0, 1)]).shape
    (4, 4, 2)
    >>> sl.vecdot(a, a, axis=1, keepdims=True).shape
    (4, 1, 2)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .array import LazyArray
from .build import normalize_axis


@functools.lru_cache(maxsize=16)
def _parse(signature: str) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    """``"(n?,k),(k,m?)->(n?,m?)"`` -> the core dimension names of the inputs and of the outputs."""
    def groups(s: str) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(d.strip() for d in g.split(",") if d.strip()) for g in re.findall(r"\(([^)]*)\)", s))

    ins, outs = signature.split("->")
    return groups(ins), groups(outs)


def with_core_axes(name: str, signature: str, args: tuple[Any, ...], axes: Any, axis: Any,
                   keepdims: bool) -> tuple[tuple[LazyArray, ...], Callable[[tuple[Any, ...]], tuple[Any, ...]]]:
    """The operands with their core dimensions moved last, and the step that moves the outputs'
    core dimensions to their places (``axes``/``axis``/``keepdims`` as NumPy's gufuncs take them)."""
    from .api import expand_dims, moveaxis
    from .creation import asarray

    ins, outs = _parse(signature)
    args = tuple(a if isinstance(a, LazyArray) else asarray(a) for a in args)
    # a flexible dimension ("n?") is absent where an operand has too few axes for it (matmul's 1-d operands)
    dropped = {d for core, a in zip(ins, args, strict=True) if a.ndim < len(core) for d in core if d.endswith("?")}
    n_in = [len([d for d in core if d not in dropped]) for core in ins]
    n_out = [len([d for d in core if d not in dropped]) for core in outs]
    for k, (a, n) in enumerate(zip(args, n_in, strict=True)):
        if a.ndim < n:
            raise ValueError(f"{name}: Input operand {k} does not have enough dimensions (has {a.ndim}, gufunc core "
                             f"with signature {signature} requires {n})")
    if keepdims:
        if len(set(n_in)) != 1 or any(n_out):
            bad = next((j for j, n in enumerate(n_out) if n), 0)
            raise TypeError(f"{name} does not support keepdims: its signature {signature} requires output {bad} to have "
                            f"{n_out[bad]} core dimensions, but keepdims can only be used when all inputs have the same "
                            f"number of core dimensions and all outputs have no core dimensions.")
        n_out = [n_in[0]] * len(n_out)
    if axis is not None:
        if axes is not None:
            raise TypeError("cannot specify both 'axis' and 'axes'")
        names = {d for core in ins + outs for d in core}
        if len(names) != 1 or any(len(core) > 1 for core in ins + outs):
            raise TypeError(f"{name}: axis can only be used with a single shared core dimension, not with the "
                            f"{len(names)} distinct ones implied by signature {signature}.")
        axes = [(axis,) if n else () for n in n_in + n_out]
    loop_ndim = max(a.ndim - n for a, n in zip(args, n_in, strict=True))
    ndims = [a.ndim for a in args] + [loop_ndim + n for n in n_out]
    counts = n_in + n_out
    if axes is None:
        places: list[tuple[int, ...]] = [tuple(range(nd - n, nd)) for nd, n in zip(ndims, counts, strict=True)]
    else:
        if not isinstance(axes, list):
            raise TypeError("axes should be a list.")
        if len(axes) == len(args) and not any(len(core) for core in outs):
            axes = list(axes) + [tuple(range(nd - n, nd)) for nd, n in zip(ndims[len(args):], n_out, strict=True)]
        if len(axes) != len(counts):
            raise ValueError(f"axes should be a list with an entry for all {len(counts)} inputs and outputs; entries "
                             f"for outputs can only be omitted if none of them has core axes.")
        places = [_places(name, k, entry, n, nd) for k, (entry, n, nd) in enumerate(zip(axes, counts, ndims, strict=True))]
    moved = tuple(moveaxis(a, p, tuple(range(-n, 0))) if n else a
                  for a, p, n in zip(args, places[:len(args)], n_in, strict=True))

    def place(results: tuple[Any, ...]) -> tuple[Any, ...]:
        done = []
        for r, p, n in zip(results, places[len(args):], n_out, strict=True):
            if keepdims:
                r = expand_dims(r, tuple(range(-n, 0)))
            done.append(moveaxis(r, tuple(range(-n, 0)), p) if n else r)
        return tuple(done)

    return moved, place


def _places(name: str, k: int, entry: Any, n: int, ndim: int) -> tuple[int, ...]:
    """One entry of ``axes``: an int (one core dimension) or a tuple of ints, normalized."""
    if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
        entry = (entry,)
    elif not isinstance(entry, (tuple, list)):
        raise TypeError(f"{name}: axes item {k} must be an integer or a tuple of integers, got {entry!r}")
    if len(entry) != n:
        raise np.exceptions.AxisError(f"{name}: operand {k} has {n} core dimensions, but {len(entry)} dimensions are "
                                      f"specified by axes tuple.")
    places = tuple(normalize_axis(a, ndim) for a in entry)
    for v in places:
        if places.count(v) > 1:
            raise ValueError(f"axes item {k} has value {v} repeated")
    return places
