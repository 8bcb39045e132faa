"""The cupy executable of a plan: launch each kernel with CuPy-allocated outputs.

Everything that does not depend on the input buffers is computed once, when the executable is
built: the kernels are fetched from the registry and loaded, each launch's argument list is a
list of slots of one flat environment (inputs, intermediate buffers, sizes as NumPy scalars), and
output shapes are fixed (an output returned in another shape than its node's, such as a full
reduction's 0-d result, is allocated in that shape: no reshape per call). A call then allocates
outputs, fills the environment and launches; split kernels' counters and workspaces are kept per
stream (:mod:`stitchlab.runtime.scratch`).

A plan is first lowered to a *recipe* (:mod:`stitchlab.runtime.plan_cache`: per kernel its
registry key, launch and arguments as graph positions and constants), which is then assembled
into the callable. A process that finds a graph's recipe in the registry assembles it directly
(:func:`executable_from_recipe`), with no plan search and no code generation. A plan with only one
kernel gets a call path of its own: the kernel's argument tuple is filled in place.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..ir.graph import Graph
from ..ir.node import Node
from ..plan.device import DeviceProfile
from ..plan.groups import FREE_OPS
from ..plan.plan import KernelPlan, Plan
from . import kernels as kreg
from . import pdl, plan_cache, stats
from .backend import PerCall
from .interpreter import eval_node, scan_source, scan_step
from .scratch import Scratch, capturing, keep_alive

log = logging.getLogger("stitchlab.runtime")

_DEVICE_GATHER = (
    "a gather with positions computed on the device (its bounds check reads a flag back to the "
    "host; host positions are checked when the call is made and can be captured)"
)
#: interpreted ops that cannot run while a stream is captured, and why (a gather only when its
#: positions were not checked on the host: ``attrs checked``)
_UNCAPTURABLE = {
    "matmul": "a matrix product (CuPy does not call cuBLAS while a stream is being captured)",
    "einsum": "an einsum (CuPy contracts through cuBLAS, which it does not call while a stream is "
              "being captured)",
    "take": _DEVICE_GATHER,
    "take_along_axis": _DEVICE_GATHER,
    "scatter": "an assignment at positions computed on the device (its bounds check reads a flag "
               "back to the host; host positions are checked when the assignment is made and can be captured)",
}


@contextlib.contextmanager
def _recording_allocations(cp: Any, held: list[Any] | None) -> Iterator[None]:
    """Inside, every buffer CuPy allocates on this thread is appended to ``held`` (None: nothing
    changes)."""
    if held is None:
        yield
        return
    allocate = cp.cuda.get_allocator()

    def recorded(size: int) -> Any:
        pointer = allocate(size)
        held.append(pointer)
        return pointer

    with cp.cuda.using_allocator(recorded):
        yield


def _interpret_group(kernel: KernelPlan, slot: dict[int, int]) -> Any:
    """A step that evaluates the kernel's nodes one by one with CuPy (the unfused fallback, an
    interpreted group). ``run(env, held)``: with a list ``held`` (a call being captured into a CUDA
    graph) every buffer CuPy allocates meanwhile (outputs, values between nodes and the
    temporaries inside one node's evaluation) is appended to it, to be kept alive with the call's
    outputs: a replay writes into them again."""
    import cupy as cp

    info = kernel.info
    assert info is not None
    members = {id(n) for n in info.members}
    outs = [(slot[id(n)], n) for n, _ in info.outputs]
    uncapturable = next((_UNCAPTURABLE[n.op] for n in info.members
                         if n.op in _UNCAPTURABLE and not n.attr("checked")), None)

    def run(env: list[Any], held: list[Any] | None = None) -> None:
        if uncapturable is not None and held is not None:
            raise RuntimeError(
                f"{uncapturable} cannot be captured into a CUDA graph. End the capture "
                f"(stream.end_capture()), and capture the work before and after it separately, or "
                f"run it uncaptured"
            )
        memo: dict[int, Any] = {}

        def ev(n: Node) -> Any:
            if id(n) in memo:
                return memo[id(n)]
            src = scan_source(n) if id(n) in members else None
            if id(n) in slot and id(n) not in members:
                v = env[slot[id(n)]]
            elif src is not None and id(n.inputs[0]) not in slot:  # (the scan converts as it reads)
                v = scan_step(n, ev(src), cp)
            elif id(n) in members or n.op in FREE_OPS or n.op in ("const", "iota"):
                with np.errstate(all="ignore"):
                    v = cp.asarray(eval_node(n, [ev(i) for i in n.inputs], cp))
                if v.dtype != n.dtype:
                    v = v.astype(n.dtype)
            else:
                raise RuntimeError(f"fallback: node {n!r} has no buffer")
            memo[id(n)] = v
            return v

        with _recording_allocations(cp, held):
            for s, n in outs:
                env[s] = cp.ascontiguousarray(ev(n)).reshape(n.shape)  # 0-d stays 0-d

    return run


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass


def _progress(total: int) -> Any:
    """A progress bar over a batch of kernel builds (``stitchlab.notebook.progress``): it shows
    only when the batch takes longer than half a second, i.e. when NVRTC compiles."""
    try:
        from ..notebook.progress import progress
    except ImportError:
        return contextlib.nullcontext(_NoBar())
    return progress(total, "compiling kernels")


def _sequence(runs: list[Any]) -> Any:
    def run(env: list[Any], held: list[Any] | None = None) -> None:
        for r in runs:
            r(env, held)

    return run


def build_executable(plan: Plan) -> CupyExecutable:
    """The executable that runs ``plan`` on the current GPU (compiling its kernels if needed).

    ``exe.recipe`` is the plan's recipe for the plan cache, or None when a group runs unfused.
    """
    import cupy as cp

    graph = plan.graph
    arch = plan.device.arch
    pos = {id(n): k for k, n in enumerate(graph.nodes)}
    steps: list[tuple[Any, ...]] = []
    with _progress(len(plan.kernels)) as bar:
        for kernel in plan.kernels:
            parts = kernel.parts or [kernel]
            n_members = sum(len(part.info.members) for part in parts if part.info is not None)
            step = None
            if kernel.source and kernel.error is None:
                try:
                    key, cubin, _hit = kreg.fetch(kernel, arch)
                    kernel.key = key
                    fn = kreg.load(key, cubin, kernel.name)
                    step = ("k", plan_cache.lower_kernel(kernel, key, pos), fn)
                except Exception as exc:  # compile or load failure: run the group unfused
                    key = kreg.key_of(kreg.components(kernel, arch))
                    kernel.key = key
                    first = str(exc).strip().splitlines()[:6]
                    warnings.warn(
                        f"stitchlab: kernel {kernel.name} (registry key {key}) could not be built; "
                        f"running its {n_members} node(s) unfused: " + " | ".join(first),
                        RuntimeWarning,
                        stacklevel=2,
                    )
            elif kernel.error is not None:
                warnings.warn(
                    f"stitchlab: no CUDA code for group {kernel.name} ({kernel.error}); running it unfused",
                    RuntimeWarning,
                    stacklevel=2,
                )
            if step is None:
                entry = None
                if kernel.schedule.family != "interpreted":
                    stats.bump("fallbacks")  # a failed kernel: not cached, the next process tries again
                else:
                    entry = plan_cache.lower_interpreted(kernel, pos)
                step = ("interp", kernel, entry)
            steps.append(step)
            bar.update()
    outputs = plan_cache.outputs_of(plan)
    recipe = None
    if steps and all(s[1 if s[0] == "k" else 2] is not None for s in steps):
        recipe = plan_cache.make_recipe(graph, [s[1] if s[0] == "k" else s[2] for s in steps], outputs)
    return _assemble(graph, plan.device, steps, outputs, cp, plan=plan, recipe=recipe)


def executable_from_recipe(graph: Graph, recipe: dict[str, Any], device: DeviceProfile) -> CupyExecutable | None:
    """The executable of ``graph`` from its recipe (already validated against ``graph``), or None
    when a kernel of it is no longer in the registry or cannot be loaded (plan it again then)."""
    import cupy as cp

    reg = kreg.registry()
    found = []
    for kern in recipe["kernels"]:
        if "interpret" in kern:
            found.append((kern, None, 0.0))
            continue
        start = time.perf_counter()
        entry = reg.get(kern["key"])
        if entry is None or entry.meta.get("name", kern["name"]) != kern["name"]:
            log.debug("plan cache: kernel %s (key %s) is not in the registry; planning again", kern["name"], kern["key"][:12])
            return None
        found.append((kern, entry, time.perf_counter() - start))
    steps: list[tuple[Any, ...]] = []
    for kern, entry, _ in found:
        if entry is None:
            steps.append(("interp", _library_step(graph, kern), kern))
            continue
        try:
            fn = kreg.load(kern["key"], entry.blob, kern["name"])
        except Exception as exc:  # noqa: BLE001 - planning again reports it the usual way
            log.debug("plan cache: kernel %s does not load (%s); planning again", kern["name"], exc)
            return None
        steps.append(("k", kern, fn))
    for kern, entry, seconds in found:
        if entry is not None:
            stats.bump("registry_hits")
            kreg.log_hit(kern["name"], kern["key"], seconds)
    return _assemble(graph, device, steps, recipe["outputs"], cp, plan=None, recipe=recipe)


def _library_step(graph: Graph, entry: dict[str, Any]) -> KernelPlan:
    """The plan entry of a step of the array library from its recipe entry (what
    :func:`_interpret_group` reads: its nodes and the ones it stores)."""
    from ..plan.cost import Launch, Schedule
    from ..plan.groups import ROW, GroupInfo

    nodes = [graph.nodes[p] for p in entry["interpret"]]
    stored = [graph.nodes[p] for p in entry["stores"]]
    info = GroupInfo(nodes, "interpreted", nodes[0].shape, outputs=[(n, ROW) for n in stored])
    return KernelPlan(name=entry["name"], source="", schedule=Schedule("interpreted"), launch=Launch((0, 1, 1), (0, 1, 1)),
                      nodes=nodes, node_info=[], members=list(entry["interpret"]), inputs=[],
                      outputs=list(entry["stores"]), edges=[], estimated_time=0.0, info=info)


class CupyExecutable:
    """The executable of one graph on the cupy backend: ``exe(buffers)`` takes the input buffers
    in slot order and returns the output buffers.

    Attributes:
        graph: the graph it runs.
        device: the device profile it was planned for.
        recipe: its plan-cache recipe (None when a group runs unfused).
        plan: the :class:`~stitchlab.plan.plan.Plan` (planned on first access when the executable
            was assembled from a stored recipe).
        returned_inputs: the input slots whose buffer an output is (as it is or reshaped).
    """

    __slots__ = ("graph", "device", "recipe", "returned_inputs", "_plan", "_run", "_bind")

    def __init__(self, graph: Graph, device: DeviceProfile, run: Callable[[Sequence[Any]], list[Any]],
                 bind: Callable[[list[Any], int], Callable[[tuple[Any, ...]], list[Any]]],
                 plan: Plan | None, recipe: dict[str, Any] | None, returned_inputs: frozenset[int] = frozenset()) -> None:
        self.graph = graph
        self.device = device
        self.recipe = recipe
        self.returned_inputs = returned_inputs
        self._plan = plan
        self._run = run
        self._bind = bind

    def __call__(self, buffers: Sequence[Any]) -> list[Any]:
        return self._run(buffers)

    def bind(self, binding: list[Any], n_args: int) -> Callable[[tuple[Any, ...]], list[Any]]:
        """A call taking a tuple of ``n_args`` arguments instead of the input buffers.

        Args:
            binding: per input slot, the position of its argument (an int) or a fixed buffer.
            n_args: how many arguments a call passes.
        """
        return self._bind(binding, n_args)

    @property
    def plan(self) -> Plan:
        """The plan this executable runs (planned now if it was assembled from a recipe)."""
        if self._plan is None:
            from ..codegen.program import build_plan

            plan = build_plan(self.graph, self.device)
            kernels = self.recipe["kernels"] if self.recipe is not None else []
            if [k.name for k in plan.kernels] == [k["name"] for k in kernels]:
                for k, r in zip(plan.kernels, kernels, strict=True):
                    k.key = r.get("key")  # (none for a step of the array library)
            self._plan = plan
        return self._plan


def _contiguous(b: Any) -> bool:
    try:
        return b._c_contiguous  # CuPy's flag itself: ``b.flags`` builds an object on each access
    except AttributeError:
        return b.flags.c_contiguous


def _assemble(graph: Graph, device: DeviceProfile, steps: list[tuple[Any, ...]], outputs: list[list[Any]],
              cp: Any, plan: Plan | None, recipe: dict[str, Any] | None) -> CupyExecutable:
    """The executable of ``steps``: ``("k", recipe kernel entry, loaded function)`` or
    ``("interp", KernelPlan, recipe entry or None)`` (a group run by the array library)."""
    nodes = graph.nodes
    n_inputs = len(graph.inputs)
    env0: list[Any] = [None] * n_inputs
    index = {id(n): k for k, n in enumerate(nodes)}
    slot_at = {index[id(n)]: k for k, n in enumerate(graph.inputs)}  # graph position -> env slot

    def new_slot(value: Any = None) -> int:
        env0.append(value)
        return len(env0) - 1

    runs: list[tuple[Any, ...]] = []
    counters: list[tuple[int, int, np.dtype]] = []  # (slot, length, dtype) of every kernel's counters
    workspaces: list[tuple[int, int, np.dtype]] = []  # and of its workspaces
    read: set[int] = set()  # the slots kernels read
    for step in steps:
        if step[0] == "k":
            _, kern, fn = step
            for p in kern["stores"]:
                slot_at[p] = new_slot()
            allocs = [(slot_at[p], nodes[p].shape, nodes[p].dtype) for p in kern["stores"]]
            args: list[int] = []
            for role, a, b in kern["params"]:
                if role in ("in", "out"):
                    args.append(slot_at[a])
                    if role == "in":
                        read.add(slot_at[a])
                elif role in ("ws", "counter"):  # per stream, or a captured call's own (scratch.py)
                    s = new_slot()
                    (workspaces if role == "ws" else counters).append((s, b, np.dtype(a)))
                    args.append(s)
                else:  # a size, as the kernel's scalar type
                    args.append(new_slot(np.dtype(a).type(b)))
            go = None
            if kern["grid"][0] > 0:  # else nothing to launch (an empty output)
                go = pdl.launcher(fn, kern["name"], kern["grid"], kern["block"], kern["shared_mem"],
                                  [env0[s] for s in args])
            runs.append(("k", go, allocs, args))
        else:
            kernel = step[1]
            for part in kernel.parts or [kernel]:
                assert part.info is not None
                for n, _ in part.info.outputs:
                    slot_at[index[id(n)]] = new_slot()
            slot = {id(nodes[p]): s for p, s in slot_at.items()}
            group = [_interpret_group(part, slot) for part in kernel.parts or [kernel]]
            runs.append(("interp", group[0] if len(group) == 1 else _sequence(group)))
    out_slots = [(slot_at[p], tuple(shape) if shape is not None else None) for p, shape in outputs]
    if all(r[0] == "k" for r in runs):  # an unfused step reads its inputs with their shapes
        out_slots = _allocate_as_returned(runs, out_slots, read)
    outs = {s for s, _ in out_slots}
    # the buffers a call allocates that are not its outputs: kept alive under graph capture
    temporaries = [s for r in runs if r[0] == "k" for s, _, _ in r[2] if s not in outs]
    scratch = Scratch(cp, counters, workspaces, temporaries) if counters or workspaces or temporaries else None

    one = None
    if len(runs) == 1 and runs[0][0] == "k" and runs[0][1] is not None:
        one = _one_kernel(runs[0], env0, n_inputs, out_slots, cp, scratch)
    if one is not None:
        run = one(list(range(n_inputs)))
        bind = _binder(one)
    else:
        run = _steps(runs, env0, n_inputs, out_slots, cp, scratch)
        bind = _binder(None, run)
    return CupyExecutable(graph, device, run, bind, plan, recipe, frozenset(s for s in outs if s < n_inputs))


def _allocate_as_returned(runs: list[tuple[Any, ...]], out_slots: list[tuple[int, tuple[int, ...] | None]],
                          read: set[int]) -> list[tuple[int, tuple[int, ...] | None]]:
    """Allocate each buffer that is returned reshaped (a full reduction's ``(1,)`` node returned
    0-d, a reduced axis dropped) in the shape it is returned in, so that a call does not reshape
    it: a kernel sees only the buffer's address. Changes ``runs``' allocations in place and returns
    the outputs without the reshapes no longer needed.

    A buffer keeps its node's shape, and its output the reshape, when it is returned in two shapes,
    read by a later kernel (as that kernel's input, of the node's shape) or not allocated by a
    kernel (an input of the call).
    """
    shapes: dict[int, set[tuple[int, ...] | None]] = {}
    for s, shape in out_slots:
        shapes.setdefault(s, set()).add(shape)
    allocated = {s for r in runs for s, _, _ in r[2]}
    final = {s: next(iter(v)) for s, v in shapes.items()
             if len(v) == 1 and None not in v and s in allocated and s not in read}
    if not final:
        return out_slots
    for r in runs:
        r[2][:] = [(s, final.get(s, shape), dtype) for s, shape, dtype in r[2]]
    return [(s, None if s in final else shape) for s, shape in out_slots]


def _positions(binding: list[Any], n_args: int) -> tuple[list[int], tuple[Any, ...]]:
    """Argument positions of each input slot; fixed buffers are numbered after the arguments."""
    positions, fixed = [], []
    for b in binding:
        if isinstance(b, int):
            positions.append(b)
        else:
            positions.append(n_args + len(fixed))
            fixed.append(b)
    return positions, tuple(fixed)


def _binder(one: Any, run: Any = None) -> Callable[[list[Any], int], Callable[[tuple[Any, ...]], list[Any]]]:
    def bind(binding: list[Any], n_args: int) -> Callable[[tuple[Any, ...]], list[Any]]:
        positions, fixed = _positions(binding, n_args)
        if any(isinstance(f, PerCall) for f in fixed):  # buffers made for each call
            def extend(args: tuple[Any, ...]) -> tuple[Any, ...]:
                return args + tuple(f.make() if isinstance(f, PerCall) else f for f in fixed)
        elif fixed:
            def extend(args: tuple[Any, ...]) -> tuple[Any, ...]:
                return args + fixed
        else:
            extend = None
        if one is not None:
            call = one(positions)
            if extend is None:
                return call
            return lambda args: call(extend(args))

        def bound(args: tuple[Any, ...]) -> list[Any]:
            if extend is not None:
                args = extend(args)
            return run([args[p] for p in positions])

        return bound

    return bind


def _steps(runs: list[tuple[Any, ...]], env0: list[Any], n_inputs: int,
           out_slots: list[tuple[int, tuple[int, ...] | None]], cp: Any,
           scratch: Scratch | None) -> Callable[[Sequence[Any]], list[Any]]:
    """The general call: fill the environment, run each step, count launches.

    ``scratch``: the executable's counters, workspaces and temporaries (None if it has none), see
    :mod:`stitchlab.runtime.scratch`."""
    empty = cp.empty
    ascontiguousarray = cp.ascontiguousarray
    counters = stats.counters
    current_stream = cp.cuda.get_current_stream
    interpreted = any(r[0] != "k" for r in runs)

    def run(buffers: Sequence[Any]) -> list[Any]:
        env = env0.copy()
        copies = []
        for k in range(n_inputs):
            b = buffers[k]
            if not _contiguous(b):
                b = ascontiguousarray(b)
                copies.append(b)
            env[k] = b
        captured, own, temporaries = False, [], ()
        if scratch is not None:
            own, captured = scratch.begin()
            for s, c in zip(scratch.slots, own, strict=True):
                env[s] = c
            temporaries = scratch.temporary_slots
        elif copies or interpreted:
            captured = capturing(current_stream())
        held: list[Any] | None = [] if captured and interpreted else None  # what CuPy allocates
        launched = 0
        for step in runs:
            if step[0] == "k":
                _, go, allocs, args = step
                for s, shape, dtype in allocs:
                    env[s] = empty(shape, dtype)
                if go is not None:
                    go([env[a] for a in args])
                    launched += 1
            else:
                step[1](env, held)
        if launched:
            counters["launches"] += launched
        results = [env[s] if shape is None else env[s].reshape(shape) for s, shape in out_slots]
        if captured:
            keep_alive(results, [*copies, *own, *(env[s] for s in temporaries), *(held or ())])
        return results

    return run


def _one_kernel(step: tuple[Any, ...], env0: list[Any], n_inputs: int, out_slots: list[tuple[int, tuple[int, ...] | None]],
                cp: Any, scratch: Scratch | None) -> Any:
    """For a plan of one launched kernel: ``make(positions)`` gives a call that fills the kernel's
    argument list directly from its sources (``positions[k]``: where input slot ``k`` is found),
    or None when an output is not one of the kernel's arguments (then the general call runs).
    ``scratch`` as for :func:`_steps`."""
    _, go, allocs, args = step
    template = [env0[s] if s >= n_inputs else None for s in args]
    at = {s: j for j, s in enumerate(args)}
    if any(s not in at for s, _ in out_slots) or any(s not in at for s, _, _ in allocs):
        return None
    reads = [(at_j, s) for at_j, s in enumerate(args) if s < n_inputs]
    if len({s for _, s in reads}) != n_inputs:
        return None  # an input the kernel does not read (its contiguity would go unchecked)
    news = [(at[s], shape, dtype) for s, shape, dtype in allocs]
    outs = [(at[s], shape) for s, shape in out_slots]
    own_at = [at[s] for s in scratch.slots] if scratch is not None else []
    temp_at = [at[s] for s in scratch.temporary_slots] if scratch is not None else []
    begin = scratch.begin if scratch is not None else None
    empty = cp.empty
    ascontiguousarray = cp.ascontiguousarray
    current_stream = cp.cuda.get_current_stream
    counters = stats.counters

    def make(positions: list[int]) -> Callable[[Sequence[Any]], list[Any]]:
        ins = [(j, positions[s]) for j, s in reads]

        def call(src: Sequence[Any]) -> list[Any]:
            a = template.copy()
            copies = None
            for j, k in ins:
                b = src[k]
                try:
                    contiguous = b._c_contiguous  # see _contiguous
                except AttributeError:
                    contiguous = b.flags.c_contiguous
                if not contiguous:
                    b = ascontiguousarray(b)
                    copies = (copies or []) + [b]
                a[j] = b
            for j, shape, dtype in news:
                a[j] = empty(shape, dtype)
            captured = False
            if begin is not None:
                own, captured = begin()
                for j, c in zip(own_at, own, strict=True):
                    a[j] = c
            elif copies:
                captured = capturing(current_stream())
            go(a)
            counters["launches"] += 1
            results = [a[j] if shape is None else a[j].reshape(shape) for j, shape in outs]
            if captured:
                keep_alive(results, (copies or []) + [a[j] for j in own_at + temp_at])
            return results

        return call

    return make
