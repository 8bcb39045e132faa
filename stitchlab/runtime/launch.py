"""The cupy executable of a plan: launch each kernel with CuPy-allocated outputs.

Everything that does not depend on the input buffers is computed once, when the executable is
built: the kernels are fetched from the registry and loaded, each launch's argument list is a
list of slots of one flat environment (inputs, intermediate buffers, sizes as NumPy scalars), and
output shapes are fixed. A call then allocates outputs, fills the environment and launches.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir.node import Node
from ..plan.groups import FREE_OPS
from ..plan.plan import KernelPlan, Plan
from . import kernels as kreg
from . import stats
from .interpreter import eval_node


def _itype(kernel: KernelPlan) -> type:
    return np.int64 if kernel.schedule.index == "long long" else np.int32


def _acc_dtype(red: Node) -> np.dtype:
    return np.dtype(np.float32) if red.dtype == np.float16 else red.dtype


def _interpret_group(kernel: KernelPlan, slot: dict[int, int]) -> Any:
    """A step that evaluates the kernel's nodes one by one with CuPy (the unfused fallback)."""
    import cupy as cp

    info = kernel.info
    assert info is not None
    members = {id(n) for n in info.members}
    outs = [(slot[id(n)], n) for n, _ in info.outputs]

    def run(env: list[Any]) -> None:
        memo: dict[int, Any] = {}

        def ev(n: Node) -> Any:
            if id(n) in memo:
                return memo[id(n)]
            if id(n) in slot and id(n) not in members:
                v = env[slot[id(n)]]
            elif id(n) in members or n.op in FREE_OPS or n.op in ("const", "iota"):
                with np.errstate(all="ignore"):
                    v = cp.asarray(eval_node(n, [ev(i) for i in n.inputs], cp))
                if v.dtype != n.dtype:
                    v = v.astype(n.dtype)
            else:
                raise RuntimeError(f"fallback: node {n!r} has no buffer")
            memo[id(n)] = v
            return v

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
    def run(env: list[Any]) -> None:
        for r in runs:
            r(env)

    return run


def build_executable(plan: Plan) -> Any:
    """The callable ``buffers -> outputs`` that runs ``plan`` on the current GPU."""
    import cupy as cp

    graph = plan.graph
    arch = plan.device.arch
    env0: list[Any] = [None] * len(graph.inputs)
    slot: dict[int, int] = {id(n): k for k, n in enumerate(graph.inputs)}

    def new_slot(value: Any = None) -> int:
        env0.append(value)
        return len(env0) - 1

    steps: list[tuple[Any, ...]] = []
    with _progress(len(plan.kernels)) as bar:
        for kernel in plan.kernels:
            parts = kernel.parts or [kernel]
            for part in parts:
                assert part.info is not None
                for n, _ in part.info.outputs:
                    slot[id(n)] = new_slot()
            n_members = sum(len(part.info.members) for part in parts)  # type: ignore[union-attr]
            step = None
            if kernel.source and kernel.error is None:
                comps = kreg.components(kernel, arch)
                try:
                    key, cubin, _hit = kreg.fetch(kernel, arch)
                    kernel.key = key
                    fn = kreg.load(key, cubin, kernel.name)
                    step = _kernel_step(kernel, fn, slot, new_slot, cp)
                except Exception as exc:  # compile or load failure: run the group unfused
                    key = kreg.key_of(comps)
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
                if kernel.schedule.family != "interpreted":
                    stats.bump("fallbacks")
                runs = [_interpret_group(part, slot) for part in parts]
                step = ("interp", runs[0] if len(runs) == 1 else _sequence(runs))
            steps.append(step)
            bar.update()

    out_slots: list[tuple[int, tuple[int, ...] | None]] = []
    for k, node in enumerate(graph.outputs):
        if k in plan.views:
            base = graph.nodes[plan.views[k]]
            out_slots.append((slot[id(base)], node.shape if base.shape != node.shape else None))
        else:
            out_slots.append((slot[id(node)], None))
    n_inputs = len(graph.inputs)
    empty = cp.empty
    bump = stats.bump

    def run(buffers: Sequence[Any]) -> list[Any]:
        env = list(env0)
        for k in range(n_inputs):
            b = buffers[k]
            if not b.flags.c_contiguous:
                b = cp.ascontiguousarray(b)
            env[k] = b
        launched = 0
        for step in steps:
            if step[0] == "k":
                _, fn, grid, block, smem, allocs, args, ws = step
                for s, shape, dtype in allocs:
                    env[s] = empty(shape, dtype)
                for s, size, dtype in ws:
                    env[s] = empty(size, dtype)
                if grid is not None:
                    fn(grid, block, tuple([env[a] for a in args]), shared_mem=smem)
                    launched += 1
            else:
                step[1](env)
        if launched:
            bump("launches", launched)
        out = []
        for s, shape in out_slots:
            v = env[s]
            out.append(v if shape is None else v.reshape(shape))
        return out

    run.plan = plan  # type: ignore[attr-defined]
    return run


def _kernel_step(kernel: KernelPlan, fn: Any, slot: dict[int, int], new_slot: Any, cp: Any) -> tuple[Any, ...]:
    parts = kernel.parts or [kernel]
    infos = [part.info for part in parts]
    assert all(i is not None for i in infos)
    info = infos[0]
    launch = kernel.launch
    allocs = [(slot[id(n)], n.shape, n.dtype) for i in infos for n, _ in i.outputs]  # type: ignore[union-attr]
    args: list[int] = []
    ws: list[tuple[int, int, np.dtype]] = []
    R, K = info.rows, info.cols  # type: ignore[union-attr]
    for p in kernel.params:
        if p.role in ("in", "out"):
            args.append(slot[id(p.node)])
        elif p.role == "n":
            part = parts[p.part]
            itype = np.int64 if part.schedule.index == "long long" else np.int32
            args.append(new_slot(itype(math.prod(part.info.shape))))  # type: ignore[union-attr]
        elif p.role == "blocks":
            args.append(new_slot(np.int32(parts[p.part].launch.grid[0])))
        elif p.role == "R":
            args.append(new_slot(_itype(kernel)(R)))
        elif p.role == "K":
            args.append(new_slot(_itype(kernel)(K)))
        elif p.role == "G":
            args.append(new_slot(np.int32(launch.split)))
        elif p.role == "ws":
            s = new_slot()
            ws.append((s, max(R * launch.split, 1), _acc_dtype(p.node)))
            args.append(s)
        elif p.role == "counter":
            args.append(new_slot(cp.zeros(max(R, 1), dtype=np.uint32)))
        else:
            raise ValueError(f"unknown kernel parameter role {p.role!r}")
    grid = launch.grid if launch.grid[0] > 0 else None
    return ("k", fn, grid, launch.block, launch.shared_mem, allocs, args, ws)
