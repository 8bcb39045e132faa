"""``sl.jit``: trace a function once per input signature and replay its planned graph."""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import runtime
from ..ir.dtypes import WEAK_TYPES, as_dtype, is_supported, is_weak
from ..ir.graph import Graph, build_graph
from ..ir.node import Node
from ..runtime import stats
from . import build
from .array import LazyArray
from .creation import asarray

_tracing = threading.local()


def tracing() -> bool:
    """Whether this thread is tracing a function for :func:`jit` (what it builds is replayed)."""
    return getattr(_tracing, "per_call", None) is not None


def note_assignment(x: LazyArray) -> None:
    """Remember ``x`` and its value before the first assignment into it while a function is
    traced: after the trace, an array still alive that is neither an argument nor a result came
    from outside the function (and gets its value back)."""
    assigned = getattr(_tracing, "assigned", None)
    if assigned is not None and id(x) not in assigned:
        assigned[id(x)] = (weakref.ref(x), x._node)


def per_call_input(node: Node, make: Callable[[], Any]) -> None:
    """Make the placeholder ``node`` of the trace in progress an input whose buffer ``make()``
    returns anew for every call of the jitted function (a random draw's stream position)."""
    _tracing.per_call[id(node)] = runtime.PerCall(make)


class _Trace:
    """What one trace recorded: the graph, how to bind its inputs, how to rebuild the output."""

    __slots__ = ("graph", "binding", "structure", "executable")

    def __init__(self, graph: Graph, binding: list[int | Any], structure: Any, executable: Any) -> None:
        self.graph = graph
        self.binding = binding  # per input slot: argument position (int), a captured buffer or a runtime.PerCall
        self.structure = structure
        self.executable = executable


def _flatten(out: Any) -> tuple[list[LazyArray], Any]:
    if isinstance(out, LazyArray):
        return [out], None
    if isinstance(out, (tuple, list)):
        leaves, spec = [], []
        for item in out:
            sub, s = _flatten(item)
            spec.append((len(sub), s))
            leaves += sub
        return leaves, (type(out), spec)
    if isinstance(out, dict):
        keys = list(out)
        leaves, spec = _flatten([out[k] for k in keys])
        return leaves, (dict, keys, spec)
    raise TypeError(
        f"a function under sl.jit must return stitchlab arrays (or tuples/lists/dicts of them), "
        f"got {type(out).__name__}"
    )


def _unflatten(leaves: list[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    if spec[0] is dict:
        _, keys, inner = spec
        return dict(zip(keys, _unflatten(leaves, inner), strict=False))
    kind, parts = spec
    out, i = [], 0
    for n, s in parts:
        out.append(_unflatten(leaves[i:i + n], s))
        i += n
    return kind(out)


_cuda_devices: dict[int, str] = {}


def _direct_device(a: Any) -> str | None:
    """The device of ``a`` if it is a NumPy (on the numpy backend) or CuPy array of a supported
    dtype, which :func:`asarray` would use without a copy; else None (take the general path)."""
    if type(a) is np.ndarray:
        if is_supported(a.dtype) and runtime.get_backend() == "numpy":
            return "cpu"
        return None
    if type(a).__module__.startswith("cupy") and hasattr(a, "__cuda_array_interface__"):
        if not is_supported(a.dtype):
            return None
        ident = a.device.id
        device = _cuda_devices.get(ident)
        if device is None:
            device = _cuda_devices[ident] = f"cuda:{ident}"
        return device
    return None


def _why(old: tuple[Any, ...], new: tuple[Any, ...]) -> str:
    """What differs between two signatures, for the recompile log."""
    if len(old) != len(new):
        return f"{len(new)} arguments instead of {len(old)}"
    names = ("shape", "dtype", "device")
    changes = []
    for pos, (a, b) in enumerate(zip(old, new, strict=False)):
        if a == b:
            continue
        if isinstance(a[0], type) or isinstance(b[0], type):  # Python scalars, part of the signature by value
            changes.append(f"argument {pos}: scalar {a[-1]!r} -> {b[-1]!r}")
            continue
        for name, x, y in zip(names, a, b, strict=False):
            if x != y:
                changes.append(f"argument {pos}: {name} {x} -> {y}")
    return "new input signature (" + "; ".join(changes) + ")"


#: Array types whose instances took the direct path before and expose ``a.data.device_id`` (CuPy's
#: ``ndarray``): a call whose arguments are all such arrays or Python scalars may replay at once.
_replayable_types: set[type] = set()


def _note_replayable(a: Any) -> bool:
    """Remember ``type(a)`` for the replay key if ``a.data.device_id`` names its device (the cheap
    spelling of ``a.device.id``, which builds a Device object on each access)."""
    t = type(a)
    if t in _replayable_types:
        return True
    try:
        ok = a.data.device_id == a.device.id
    except AttributeError:
        ok = False
    if ok:
        _replayable_types.add(t)
    return ok


def _leaf(buf: Any, shape: tuple[int, ...], dtype: np.dtype, device: str | None) -> LazyArray:
    return LazyArray(Node("input", (), shape, dtype, value=buf, device=device))


class Jitted:
    """A function traced once per input signature (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any], fast_math: bool = False) -> None:
        self.fn = fn
        self.fast_math = fast_math
        self.traces: dict[tuple[Any, ...], _Trace] = {}
        # replay key (per argument: shape, dtype and device id, or a scalar's type and value) ->
        # a call that binds, launches and wraps with nothing else in between
        self._replays: dict[tuple[Any, ...], Callable[[tuple[Any, ...]], Any]] = {}
        functools.update_wrapper(self, fn)

    def _signature(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[Any], bool]:
        """(signature, buffer per argument, whether every array argument is replayable)."""
        sig, bufs = [], []
        replayable = True
        for a in args:
            if is_weak(a):
                sig.append((type(a), a))
                bufs.append(None)
                continue
            device = _direct_device(a)
            if device is not None:  # hot path: a buffer the backend takes as it is
                sig.append((a.shape, a.dtype, device))
                bufs.append(a)
                replayable = replayable and device != "cpu" and _note_replayable(a)
                continue
            replayable = False
            x = a if isinstance(a, LazyArray) else asarray(a)
            buf = runtime.evaluate([x._node])[0]
            sig.append((x.shape, x.dtype, x._node.device))
            bufs.append(buf)
        return tuple(sig), bufs, replayable

    def _trace(self, sig: tuple[Any, ...], args: tuple[Any, ...]) -> _Trace:
        stats.bump("traces")
        tracers: list[Any] = []
        placeholders: dict[int, int] = {}
        for pos, (a, s) in enumerate(zip(args, sig, strict=False)):
            if is_weak(a):
                tracers.append(a)
                continue
            shape, dtype, device = s
            node = Node("input", (), shape, as_dtype(dtype), device=device)
            placeholders[id(node)] = pos
            tracers.append(LazyArray(node))
        outer, per_call = (getattr(_tracing, "per_call", None), getattr(_tracing, "assigned", None)), {}
        _tracing.per_call, _tracing.assigned = per_call, {}
        try:
            with build.fast_math(self.fast_math):
                leaves, structure = _flatten(self.fn(*tracers))
            assigned = [(r(), node) for r, node in _tracing.assigned.values()]
        finally:
            _tracing.per_call, _tracing.assigned = outer
        name = getattr(self.fn, "__name__", "the jit function")
        written = [pos for pos, t in enumerate(tracers) if isinstance(t, LazyArray) and id(t._node) not in placeholders]
        if written:
            raise TypeError(
                f"{name} assigns into its argument {written[0]} (x[...] = v, x += v, or a function that "
                f"writes into x): NumPy would change the caller's array, which a call of an sl.jit "
                f"function does not do. Assign into a copy (x = x.copy()) and return the new value"
            )
        kept = {id(x) for x in (*tracers, *leaves)}
        outside = [(x, node) for x, node in assigned if x is not None and id(x) not in kept]  # (locals are gone)
        for x, node in outside:
            x._node = node
        if outside:
            raise TypeError(
                f"{name} assigns into an array from outside the function (captured from the enclosing "
                f"scope, or kept there): it would stand for a traced value, and later calls would not "
                f"change it. Assign into a copy made inside the function (y = captured.copy()) and return it"
            )
        graph, sources = build_graph([x._node for x in leaves])
        device = next((n.device for n in graph.nodes if n.device is not None), None)
        backend = runtime.for_device(device)
        # per input slot: an argument's position, a per-call buffer, or a buffer captured now (a
        # constant the graph reads at run time included)
        binding = [placeholders[id(n)] if id(n) in placeholders else per_call.get(id(n), n.value) if n.op == "input"
                   else backend.constant(n) for n in sources]
        executable = backend.executable(graph)
        return _Trace(graph, binding, structure, executable)

    def __call__(self, *args: Any) -> Any:
        key: list[Any] = []
        for a in args:
            t = type(a)
            if t in _replayable_types:
                key.append((a.shape, a.dtype, a.data.device_id))
            elif t in WEAK_TYPES:
                key.append((t, a))
            else:
                return self._call(args, None)
        key_t = tuple(key)
        replay = self._replays.get(key_t)
        if replay is not None:
            return replay(args)
        return self._call(args, key_t)

    def _call(self, args: tuple[Any, ...], key: tuple[Any, ...] | None) -> Any:
        sig, bufs, replayable = self._signature(args)
        trace = self.traces.get(sig)
        if trace is None:
            if self.traces:
                from .._log import log_recompile

                log_recompile(getattr(self.fn, "__name__", "jit function"), _why(next(reversed(self.traces)), sig))
            trace = self.traces[sig] = self._trace(sig, args)
        if replayable and getattr(trace.executable, "bind", None) is not None:
            if key is None:  # the argument types were seen for the first time in this call
                key = tuple((a.shape, a.dtype, a.data.device_id) if not is_weak(a) else (type(a), a) for a in args)
            replay = self._replays[key] = _replay(trace, len(args))
            return replay(args)
        inputs = [bufs[b] if isinstance(b, int) else b.make() if isinstance(b, runtime.PerCall) else b for b in trace.binding]
        outs = trace.executable(inputs)
        stats.bump("evaluations")
        leaves = [_leaf(buf, node.shape, node.dtype, node.device) for node, buf in zip(trace.graph.outputs, outs, strict=True)]
        return _unflatten(leaves, trace.structure)


def _replay(trace: _Trace, n_args: int) -> Callable[[tuple[Any, ...]], Any]:
    """The whole call of ``trace`` for arguments that are device buffers and scalars: the bound
    executable, one counter, the outputs wrapped in their structure."""
    run = trace.executable.bind(trace.binding, n_args)
    counters = stats.counters
    meta = [(node.shape, node.dtype, node.device) for node in trace.graph.outputs]
    structure = trace.structure
    if structure is None:
        ((shape, dtype, device),) = meta

        def replay_one(args: tuple[Any, ...]) -> Any:
            buf = run(args)[0]
            counters["evaluations"] += 1
            return LazyArray(Node("input", (), shape, dtype, value=buf, device=device))

        return replay_one

    def replay(args: tuple[Any, ...]) -> Any:
        outs = run(args)
        counters["evaluations"] += 1
        return _unflatten([_leaf(b, *m) for b, m in zip(outs, meta, strict=True)], structure)

    return replay


def jit(fn: Callable[..., Any] | None = None, *, fast_math: bool = False) -> Any:
    """Trace ``fn`` once per input signature and replay the planned graph on later calls.

    The signature is each array argument's shape, dtype and device; Python scalar arguments are
    part of it by value. A second call with the same signature traces, plans and compiles
    nothing (see ``sl.stats()``).

    ``fast_math=True`` traces ``fn`` as inside :func:`~stitchlab.fast_math` (CUDA's hardware
    approximations of exp, log, sin, cos, tan, sigmoid and division); ``False`` (the default)
    traces it without them, whatever block the call is in. As a decorator with arguments:
    ``@sl.jit(fast_math=True)``.

    Example:
        >>> import stitchlab as sl, numpy as np
        >>> @sl.jit
        ... def softmax(x):
        ...     e = sl.exp(x - x.max(axis=-1, keepdims=True))
        ...     return e / e.sum(axis=-1, keepdims=True)
        >>> softmax(np.ones((2, 4), np.float32)).get()[0, 0]
        np.float32(0.25)
    """
    if not isinstance(fast_math, (bool, np.bool_)):
        raise TypeError(f"sl.jit(fast_math=...) must be True or False, not {fast_math!r}")
    if fn is None:
        return functools.partial(jit, fast_math=bool(fast_math))
    if not callable(fn):
        raise TypeError(f"sl.jit expects a function, got {type(fn).__name__}")
    return Jitted(fn, bool(fast_math))


