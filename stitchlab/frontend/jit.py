"""``sl.jit``: trace a function once per input signature and replay its planned graph."""

from __future__ import annotations

import dis
import functools
import inspect
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import runtime
from ..ir.dtypes import SUPPORTED, WEAK_TYPES, as_dtype, is_bfloat16, is_supported, is_weak
from ..ir.graph import Graph, build_graph
from ..ir.node import Node
from ..runtime import stats
from ..runtime.scratch import keep_alive
from . import build
from .array import LazyArray
from .creation import asarray
from .scalars import Recorder, ValueNeeded, argument

_tracing = threading.local()


def tracing() -> bool:
    """Whether this thread is tracing a function for :func:`jit` (what it builds is replayed)."""
    return getattr(_tracing, "per_call", None) is not None


def current_trace() -> object | None:
    """What stands for the trace in progress on this thread (None outside one): a random generator
    made from a seed during it draws the same numbers at every call, as one made anew would."""
    return getattr(_tracing, "per_call", None)


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
    """What one trace recorded: the graph, how to bind its inputs, how to rebuild the output, and
    the numbers it reads at run time (:mod:`stitchlab.frontend.scalars`)."""

    __slots__ = ("graph", "binding", "structure", "executable", "scalars", "n_scalars")

    def __init__(self, graph: Graph, binding: list[int | Any], structure: Any, executable: Any,
                 scalars: Callable[[tuple[Any, ...]], tuple[tuple[Any, ...], bool]] | None, n_scalars: int) -> None:
        self.graph = graph
        # per input slot: argument position (int; the numbers read at run time are numbered after
        # the arguments), a captured buffer or a runtime.PerCall
        self.binding = binding
        self.structure = structure
        self.executable = executable
        # the call's arguments -> a 0-d buffer per number read at run time, and whether those are
        # the call's own (kept as long as its outputs)
        self.scalars = scalars
        self.n_scalars = n_scalars


class _Retrace(Exception):
    """A number read at run time took a value its trace does not hold (another Python type, an
    integer outside its array's dtype, an error computing it): this call is traced with the
    literal values, which gives NumPy's result or error."""


def _scalar_buffers(recorder: Recorder, backend: Any, shared: bool) -> Callable[[tuple[Any, ...]], tuple[tuple[Any, ...], bool]]:
    """For a call's arguments, the 0-d buffer of each number ``recorder`` made an input of (the
    number computed with Python's arithmetic, converted to its input's dtype as NumPy converts a
    Python scalar), and whether the buffers are the call's own (``Backend.numbers``; ``shared``:
    buffers that every call rewrites may serve)."""
    # as it is where storing converts it as NumPy does: a NumPy scalar into its own dtype, a float
    # into a float dtype (bfloat16's stores round twice: build.convert), an int into an int one
    specs = [(fn, kind, dtype, kind is dtype.type or (kind is float and dtype.kind == "f" and not is_bfloat16(dtype))
              or (kind is int and dtype.kind in "iu"))
             for _, fn, kind, dtype in recorder.inputs]
    fill = backend.numbers([dtype for _, _, _, dtype in recorder.inputs], shared)

    def buffers(args: tuple[Any, ...]) -> tuple[tuple[Any, ...], bool]:
        try:
            values = []
            for fn, kind, dtype, stored in specs:
                value = fn(args)
                if type(value) is not kind or not build.fits(value, dtype):
                    raise _Retrace
                values.append(value if stored else build.convert(value, dtype))
        except _Retrace:
            raise
        except Exception:
            raise _Retrace from None
        return fill(values)

    return buffers


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
    if kind is tuple or kind is list or not hasattr(kind, "_fields"):  # (hasattr is slow when it is False)
        return kind(out)
    return kind(*out)  # a namedtuple takes its fields


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


def _shown(entry: tuple[Any, ...]) -> str:
    """A signature's entry for a Python scalar: its value, or its type where it is read at run time."""
    if not isinstance(entry[0], type):
        return "an array"
    return repr(entry[1]) if len(entry) > 1 else f"any {entry[0].__name__} (read at run time)"


def _scalar_entry(a: Any, read_at_run_time: bool) -> tuple[Any, ...]:
    """A Python scalar argument in a signature: its type, where it is read at run time (an int or
    a float); else its type and value (0.0 and -0.0 apart)."""
    if read_at_run_time and type(a) is not bool:
        return (type(a),)
    return build.scalar_key(a)


def _why(old: tuple[Any, ...], new: tuple[Any, ...]) -> str:
    """What differs between two signatures, for the recompile log."""
    if len(old) != len(new):
        return f"{len(new)} arguments instead of {len(old)}"
    names = ("shape", "dtype", "device")
    changes = []
    for pos, (a, b) in enumerate(zip(old, new, strict=False)):
        if a == b:
            continue
        if isinstance(a[0], type) or isinstance(b[0], type):  # Python scalars
            changes.append(f"argument {pos}: scalar {_shown(a)} -> {_shown(b)}")
            continue
        for name, x, y in zip(names, a, b, strict=False):
            if x != y:
                changes.append(f"argument {pos}: {name} {x} -> {y}")
    return "new input signature (" + "; ".join(changes) + ")"


def _is_leaf(a: Any) -> bool:
    """Whether the argument ``a`` is traced as it is: an array (anything :func:`asarray` takes as
    one, a NumPy number included) or a Python number."""
    t = type(a)
    if t is LazyArray or t in WEAK_TYPES or t is np.ndarray or isinstance(a, LazyArray):
        return True
    if isinstance(a, type) or isinstance(a, (tuple, list, dict)):  # (np.float32 has an __array__ too)
        return False
    if isinstance(a, np.generic):
        return a.dtype.kind in "biufc"  # (a np.str_ is a static value)
    return any(hasattr(a, name) for name in ("__cuda_array_interface__", "__array_interface__", "__array__", "__dlpack__"))


def _static_key(a: Any, where: str, name: str) -> Any:
    """What stands for the static argument ``a`` in a signature: its type and value (equal values
    share a trace); a TypeError naming the argument and the fix where it has no value to compare."""
    if type(a) is slice:  # (unhashable before Python 3.12)
        key: Any = (slice, (a.start, a.stop, a.step))
    else:
        key = (type(a), a)
    try:
        hash(key)
    except TypeError:
        raise TypeError(
            f"sl.jit: argument {where} of {name} is a {type(a).__name__}, which is neither an array, a number, "
            f"a tuple, list or dict of them, nor a hashable value that a trace could be kept for: pass it to "
            f"the function through a closure or functools.partial({name}, ...) instead"
        ) from None
    return key


def _tree(a: Any, where: str, name: str, leaves: list[Any], statics: list[Any]) -> Any:
    """The part of a call's layout that the argument ``a`` makes, its traced leaves (arrays and
    numbers) appended to ``leaves`` and its static values to ``statics``: ``None`` for a leaf,
    ``(type, items)`` for a tuple (a namedtuple too) or list, ``(dict, keys, items)`` for a dict,
    ``("static", key)`` for a value passed as itself (a tuple of integers, a shape or an axis, is
    one)."""
    t = type(a)
    if t is tuple and all(type(v) is int or isinstance(v, np.integer) for v in a):
        statics.append(a)
        return ("static", (tuple, a, tuple(map(type, a))))  # (2,) and (np.int64(2),) apart
    if t is list or t is tuple or (isinstance(a, tuple) and hasattr(t, "_fields")):
        return (t, tuple(_tree(v, f"{where}[{i}]", name, leaves, statics) for i, v in enumerate(a)))
    if t is dict:
        return (dict, tuple(a), tuple(_tree(v, f"{where}[{k!r}]", name, leaves, statics) for k, v in a.items()))
    if _is_leaf(a):
        leaves.append(a)
        return None
    key = _static_key(a, where, name)
    statics.append(a)
    return ("static", key)


def _rebuild(spec: Any, leaves: Any, statics: Any) -> Any:
    """The argument that :func:`_tree` made ``spec`` of, from iterators over the leaves (traced
    arrays and numbers) and static values."""
    if spec is None:
        return next(leaves)
    kind = spec[0]
    if kind == "static":
        return next(statics)
    if kind is dict:
        return {k: _rebuild(s, leaves, statics) for k, s in zip(spec[1], spec[2], strict=True)}
    items = [_rebuild(s, leaves, statics) for s in spec[1]]
    return kind(*items) if hasattr(kind, "_fields") else kind(items)


def _layout_why(old: tuple[Any, ...], new: tuple[Any, ...]) -> str:
    """What differs between two layouts of a call's arguments, for the recompile log."""
    if old[:2] != new[:2]:
        return f"new keyword layout ({new[0]} positional, keywords {list(new[1])})"
    names = [str(pos) for pos in range(new[0])] + [repr(k) for k in new[1]]
    changed = [n for n, a, b in zip(names, old[2], new[2], strict=True) if a != b]
    return f"new static values or containers in argument {', '.join(changed)}"


def _reads_type(fn: Callable[..., Any]) -> bool:
    """Whether the code of ``fn`` (unwrapped, its nested functions and comprehensions included)
    reads the builtin ``type``: ``type(s) is int`` cannot give the number's answer for a number
    read at run time (``isinstance`` can), so such a function takes its numbers by value."""
    fn = inspect.unwrap(fn)
    stack = [getattr(fn, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is None:
            continue
        if "type" in code.co_names and any(ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval == "type"
                                           for ins in dis.get_instructions(code)):
            return True
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return False


#: Array types whose instances took the direct path before and expose ``a.data.device_id`` (CuPy's
#: ``ndarray``): a call whose arguments are all such arrays or Python scalars may replay at once.
_replayable_types: set[type] = set()
#: NumPy scalar types of the supported dtypes (``np.float32(lr)``): arguments read at run time,
#: each a 0-d array of its dtype (its signature entry: shape ``()``, dtype, device ``HOST``)
_numpy_scalar_types = frozenset(dt.type for dt in SUPPORTED.values())
HOST = "host"


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


class _NumpyScalar(LazyArray):
    """A NumPy scalar argument while a function is traced: the 0-d array of its dtype read at
    run time, immutable as the scalar is (``s += 1`` makes a new one, as NumPy's does)."""

    __slots__ = ()

    def _is_numpy_scalar(self) -> bool:
        return True


def _leaf(buf: Any, shape: tuple[int, ...], dtype: np.dtype, device: str | None) -> LazyArray:
    return LazyArray(Node("input", (), shape, dtype, value=buf, device=device))


class Jitted:
    """A function traced once per input signature (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any], fast_math: bool = False) -> None:
        self.fn = fn
        self.fast_math = fast_math
        self.traces: dict[tuple[Any, ...], _Trace] = {}
        # replay key (per argument: shape, dtype and device id, or a scalar's signature entry) ->
        # a call that binds, launches and wraps with nothing else in between
        self._replays: dict[tuple[Any, ...], Callable[[tuple[Any, ...]], Any]] = {}
        # positions of int and float arguments read at run time (their value changed between
        # calls), and of those whose value a trace needed (part of the signature by value)
        self._dynamic: set[int] = set()
        self._static: set[int] = set()
        # a function that calls type() (on a number, perhaps) is traced for each value of its numbers
        self._numbers_by_value = _reads_type(fn)
        # layout of a call with keyword, container or static arguments (positional count, keyword
        # names, _tree of each argument) -> the function taking the leaves by position, jitted on its own
        self._layouts: dict[tuple[int, tuple[str, ...], tuple[Any, ...]], Jitted] = {}
        functools.update_wrapper(self, fn)

    def _signature(self, args: tuple[Any, ...], literal: bool = False) -> tuple[tuple[Any, ...], list[Any], bool]:
        """(signature, buffer per argument, whether every array argument is replayable).
        ``literal``: every scalar by value (a call whose numbers its trace cannot read)."""
        sig, bufs = [], []
        replayable = True
        dynamic = () if literal else self._dynamic
        for pos, a in enumerate(args):
            if is_weak(a):
                sig.append(_scalar_entry(a, pos in dynamic))
                bufs.append(None)
                continue
            if isinstance(a, np.generic) and is_supported(a.dtype):  # read at run time, in its dtype
                sig.append(((), a.dtype, HOST))
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
        recorder = Recorder()
        for pos, (a, s) in enumerate(zip(args, sig, strict=False)):
            if is_weak(a):  # by value, or (a signature entry of its type alone) read at run time
                tracers.append(a if len(s) > 1 else argument(pos, type(a), recorder))
                continue
            shape, dtype, device = s
            if device == HOST:  # a NumPy scalar
                tracers.append(_NumpyScalar(recorder.numpy_scalar(pos, dtype)))
                continue
            node = Node("input", (), shape, as_dtype(dtype), device=device)
            placeholders[id(node)] = pos
            tracers.append(LazyArray(node))
        outer, per_call = (getattr(_tracing, "per_call", None), getattr(_tracing, "assigned", None)), {}
        _tracing.per_call, _tracing.assigned = per_call, {}
        try:
            with build.fast_math(self.fast_math):
                leaves, structure = _flatten(self.fn(*tracers))
            assigned = list(_tracing.assigned.values())
        except Exception as exc:
            if recorder.needed:  # (a ValueNeeded, or what the function made of one)
                raise ValueNeeded(sorted(recorder.needed)) from exc
            raise
        finally:
            _tracing.per_call, _tracing.assigned = outer
        if recorder.needed:  # the function went on after a ValueNeeded
            raise ValueNeeded(sorted(recorder.needed))
        name = getattr(self.fn, "__name__", "the jit function")
        numbers = {id(node) for node, _, _, _ in recorder.inputs}
        written = [pos for pos, t in enumerate(tracers)
                   if isinstance(t, LazyArray) and id(t._node) not in placeholders and id(t._node) not in numbers]
        if written:
            raise TypeError(
                f"{name} assigns into its argument {written[0]} (x[...] = v, x += v, or a function that "
                f"writes into x): NumPy would change the caller's array, which a call of an sl.jit "
                f"function does not do. Assign into a copy (x = x.copy()) and return the new value"
            )
        outputs = [x._node for x in leaves]
        # the locals are gone, and with the results the arrays only they held (a view of a view
        # holds the view it was taken of): an array assigned into that still lives is the caller's
        del leaves
        arguments = {id(x) for x in tracers}
        outside = [(x, node) for x, node in ((r(), node) for r, node in assigned)
                   if x is not None and id(x) not in arguments]
        for x, node in outside:
            x._node = node
        if outside:
            raise TypeError(
                f"{name} assigns into an array from outside the function (captured from the enclosing "
                f"scope, or kept there): it would stand for a traced value, and later calls would not "
                f"change it. Assign into a copy made inside the function (y = captured.copy()) and return it"
            )
        graph, sources = build_graph(outputs)
        device = next((n.device for n in graph.nodes if n.device is not None), None)
        backend = runtime.for_device(device)
        for i, (node, _, _, _) in enumerate(recorder.inputs):  # numbered after the arguments
            placeholders[id(node)] = len(args) + i
        # per input slot: an argument's position, a per-call buffer, or a buffer captured now (a
        # constant the graph reads at run time included)
        binding = [placeholders[id(n)] if id(n) in placeholders else per_call.get(id(n), n.value) if n.op == "input"
                   else backend.constant(n) for n in sources]
        executable = backend.executable(graph)
        # a number returned as an output (sl.full((), t)) must not be a buffer the next call rewrites
        returned = any(id(sources[s]) in numbers for s in getattr(executable, "returned_inputs", ()))
        scalars = _scalar_buffers(recorder, backend, shared=not returned) if recorder.inputs else None
        return _Trace(graph, binding, structure, executable, scalars, len(recorder.inputs))

    def _changed(self, sig: tuple[Any, ...]) -> set[int]:
        """Positions of int and float arguments whose value alone tells ``sig`` from a signature
        traced before (none if anything else differs too)."""
        for old in reversed(self.traces):
            if len(old) != len(sig):
                continue
            diff = {pos for pos, (a, b) in enumerate(zip(old, sig, strict=True)) if a != b}
            if all(isinstance(old[p][0], type) and {old[p][0], sig[p][0]} <= {int, float} for p in diff):
                return diff - self._static
        return set()

    def _new_trace(self, args: tuple[Any, ...], literal: bool) -> tuple[tuple[Any, ...], _Trace]:
        """Trace for a signature not seen before: the int and float arguments whose value changed
        are read at run time from now on, unless tracing needs their value."""
        from .._log import log_recompile

        name = getattr(self.fn, "__name__", "jit function")
        sig = self._signature(args, literal)[0]
        old = next(reversed(self.traces), None)
        if not literal and old is not None and not self._numbers_by_value:
            changed = self._changed(sig)
            if changed:
                self._dynamic |= changed
                sig = self._signature(args)[0]
        unsure: set[int] = set()  # taken back after an error that a trace by value may raise too
        while True:
            trace = self.traces.get(sig)
            if trace is not None:
                return sig, trace
            read = {pos for pos, entry in enumerate(sig) if len(entry) == 1}
            if old is not None:
                log_recompile(name, _why(old, sig))
            try:
                trace = self.traces[sig] = self._trace(sig, args)
                return sig, trace
            except ValueNeeded as exc:  # those positions are traced by value from now on
                blamed = set(exc.args[0])
                log_recompile(name, f"{exc.__cause__ or 'tracing needs the value of ' + str(sorted(blamed))}: "
                                    f"traced for each of its values from now on")
            except Exception:
                if not read:  # the function fails with the values themselves: not the reading's fault
                    self._dynamic |= unsure
                    self._static -= unsure
                    raise
                blamed = read
                unsure |= read
            self._dynamic -= blamed
            self._static |= blamed
            sig = self._signature(args, literal)[0]

    def _key(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The replay key of a call whose arguments are replayable arrays, Python scalars and
        NumPy scalars."""
        dynamic = self._dynamic
        return tuple(_scalar_entry(a, pos in dynamic) if is_weak(a) else ((), a.dtype, HOST) if isinstance(a, np.generic)
                     else (a.shape, a.dtype, a.data.device_id) for pos, a in enumerate(args))

    def _structured(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call with keyword arguments, or with tuples, lists, dicts or static values among its
        arguments: the function of this layout (its own traces) takes the arrays and numbers in
        them by position, and is passed the containers rebuilt and the static values as they are."""
        name = getattr(self.fn, "__name__", "the function")
        leaves: list[Any] = []
        statics: list[Any] = []
        spec = tuple(_tree(a, str(pos), name, leaves, statics) for pos, a in enumerate(args)) + tuple(
            _tree(a, repr(k), name, leaves, statics) for k, a in kwargs.items())
        layout = (len(args), tuple(kwargs), spec)
        inner = self._layouts.get(layout)
        if inner is None:
            if self._layouts:
                from .._log import log_recompile

                log_recompile(name, _layout_why(next(reversed(self._layouts)), layout))
            fn, n, names, kept = self.fn, len(args), tuple(kwargs), tuple(statics)  # (equal to later ones)

            def by_leaves(*flat: Any) -> Any:
                it, static = iter(flat), iter(kept)
                values = [_rebuild(s, it, static) for s in spec]
                return fn(*values[:n], **dict(zip(names, values[n:], strict=True)))

            functools.update_wrapper(by_leaves, fn)
            inner = self._layouts[layout] = Jitted(by_leaves, self.fast_math)
        return inner(*leaves)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return self._inline(args, kwargs) if tracing() else self._structured(args, kwargs)
        key: list[Any] = []
        dynamic = self._dynamic
        for pos, a in enumerate(args):
            t = type(a)
            if t in _replayable_types:
                key.append((a.shape, a.dtype, a.data.device_id))
            elif t in WEAK_TYPES:
                key.append(_scalar_entry(a, pos in dynamic))
            elif t in _numpy_scalar_types:
                key.append(((), a.dtype, HOST))
            else:
                return self._unkeyed(args)
        replay = self._replays.get(tuple(key))
        if replay is not None:
            try:
                return replay(args)
            except _Retrace:
                return self._call(args, literal=True)
        return self._unkeyed(args)

    def _unkeyed(self, args: tuple[Any, ...]) -> Any:
        """A call without a replay ready: traced (or its trace found), structured, or inline."""
        if tracing():
            return self._inline(args, {})
        return self._call(args) if all(map(_is_leaf, args)) else self._structured(args, {})

    def _inline(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Called by a function being traced (or by itself): part of that trace."""
        with build.fast_math(self.fast_math):
            return self.fn(*args, **kwargs)

    def _call(self, args: tuple[Any, ...], literal: bool = False) -> Any:
        sig, bufs, replayable = self._signature(args, literal)
        trace = self.traces.get(sig)
        if trace is None:
            sig, trace = self._new_trace(args, literal)
        if replayable and not literal and getattr(trace.executable, "bind", None) is not None:
            replay = self._replays[self._key(args)] = _replay(trace, len(args))
            try:
                return replay(args)
            except _Retrace:
                return self._call(args, literal=True)
        own: tuple[Any, ...] = ()
        if trace.scalars is not None:
            try:
                extra, mine = trace.scalars(args)
            except _Retrace:
                return self._call(args, literal=True)
            bufs += extra
            own = extra if mine else ()
        inputs = [bufs[b] if isinstance(b, int) else b.make() if isinstance(b, runtime.PerCall) else b for b in trace.binding]
        outs = trace.executable(inputs)
        keep_alive(outs, list(own))
        stats.bump("evaluations")
        leaves = [_leaf(buf, node.shape, node.dtype, node.device) for node, buf in zip(trace.graph.outputs, outs, strict=True)]
        return _unflatten(leaves, trace.structure)


def _replay(trace: _Trace, n_args: int) -> Callable[[tuple[Any, ...]], Any]:
    """The whole call of ``trace`` for arguments that are device buffers and scalars: the bound
    executable, one counter, the outputs wrapped in their structure."""
    run = trace.executable.bind(trace.binding, n_args + trace.n_scalars)
    if trace.scalars is not None:  # the numbers read at run time follow the arguments
        launch, scalars = run, trace.scalars

        def run(args: tuple[Any, ...]) -> list[Any]:
            extra, own = scalars(args)
            outs = launch(args + extra)
            if own:  # (under capture: the graph reads them at every replay)
                keep_alive(outs, list(extra))
            return outs

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

    The signature is each array argument's shape, dtype and device, each Python scalar
    argument's value, and the value of each static argument: a tuple of integers (a shape, an
    axis) or another hashable value that is neither an array nor a number (``None``, a string, a
    dtype, a slice, a function), passed to ``fn`` as itself. Tuples, lists and dicts of arguments
    are passed as they are, the arrays and numbers in them traced as arguments are. A second call
    with the same signature traces, plans and compiles nothing (see ``sl.stats()``). An ``int`` or ``float`` argument whose value changes is traced once
    more and read at run time from then on (a learning rate, a step count): Python arithmetic on
    it is done again at each call, and the results are those of a trace with its value (a
    divisor read at run time divides exactly, as NumPy does, where a literal one is a multiply
    by its reciprocal). Where tracing needs the value (an ``if`` on it, a shape, ``int()``, an
    exponent) it stays part of the signature by value; a ``bool`` always does. Arguments may be
    passed by keyword; each layout of keyword names is traced on its own.

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


