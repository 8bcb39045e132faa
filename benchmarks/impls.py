"""Implementations under test: one callable per (implementation, workload case).

GPU: ``stitchlab`` (an ``sl.jit`` function on the cupy backend), ``stitchlab_eager`` (the body over
``sl.asarray`` inputs, evaluated by ``sl.compute`` at every call: what notebook code without
``sl.jit`` pays), ``cupy`` (eager), ``cupy_fuse`` (the same body under ``cupy.fuse``), ``torch``
(eager) and ``torch_compile`` (``torch.compile``, default mode). CPU dry run: ``stitchlab`` and
``stitchlab_eager`` on the numpy backend, ``numpy`` and ``torch`` (eager, CPU).
All of them run the same workload body through an ops adapter (:mod:`benchmarks.ops`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import ops as _ops
from .workloads import Case, Workload

GPU_IMPLS = ("stitchlab", "stitchlab_eager", "cupy", "cupy_fuse", "torch", "torch_compile")
CPU_IMPLS = ("stitchlab", "stitchlab_eager", "numpy", "torch")

# cupy.fuse and torch.compile look at the function's signature: give the body a fixed arity.
_ARITY: dict[int, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    1: lambda fn: lambda a: fn(a),
    2: lambda fn: lambda a, b: fn(a, b),
    3: lambda fn: lambda a, b, c: fn(a, b, c),
    4: lambda fn: lambda a, b, c, d: fn(a, b, c, d),
}


def fixed_arity(fn: Callable[..., Any], n: int, name: str = "body") -> Callable[..., Any]:
    """``fn`` with exactly ``n`` positional parameters, named ``name`` (cupy.fuse puts the
    function's name into the CUDA source: ``<lambda>`` does not compile there)."""
    f = _ARITY[n](fn)
    f.__name__ = f.__qualname__ = name
    return f


@dataclass
class Prepared:
    """A ready-to-time implementation: ``call()`` runs one evaluation, ``host(out)`` fetches it."""

    call: Callable[[], Any]
    host: Callable[[Any], list[np.ndarray]]
    clock: Any
    info: dict[str, Any] = field(default_factory=dict)


class Inputs:
    """One case's inputs on every side that needs them (host, CuPy, torch views of CuPy)."""

    def __init__(self, case: Case, gpu: bool) -> None:
        self.host = case.inputs
        self.gpu = gpu
        self._cupy: list[Any] | None = None
        self._torch: list[Any] | None = None

    @property
    def cupy(self) -> list[Any]:
        if self._cupy is None:
            import cupy

            self._cupy = [cupy.asarray(a) for a in self.host]
        return self._cupy

    @property
    def torch(self) -> list[Any]:
        if self._torch is None:
            import torch

            if self.gpu:
                self._torch = [torch.from_dlpack(a) for a in self.cupy]  # same memory as CuPy's
            else:
                self._torch = [_torch_from_host(torch, a) for a in self.host]
        return self._torch


def _tuple(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


def _torch_from_host(torch: Any, a: np.ndarray) -> Any:
    """A CPU tensor of ``a`` (bfloat16 through its bits: torch takes no NumPy bfloat16)."""
    a = np.ascontiguousarray(a)
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _torch_to_host(t: Any) -> np.ndarray:
    t = t.detach().cpu()
    if str(t.dtype) == "torch.bfloat16":
        import ml_dtypes
        import torch

        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _host_generic(out: Any) -> list[np.ndarray]:
    res = []
    for o in _tuple(out):
        if hasattr(o, "detach"):  # torch
            res.append(_torch_to_host(o))
        elif hasattr(o, "get"):  # cupy, stitchlab
            res.append(np.asarray(o.get()))
        else:
            res.append(np.asarray(o))
    return res


def stitchlab_kernels(workload: Workload, case: Case, arrays: list[Any]) -> dict[str, Any]:
    """Kernel count of the stitchlab plan from ``sl.explain`` (``"n/a"`` until it exists)."""
    import stitchlab as sl

    explain = getattr(sl, "explain", None)
    if explain is None:
        return {"kernels": "n/a", "kernels_note": "sl.explain does not exist yet (no stitching compiler)"}
    try:
        lazy = [sl.asarray(a) for a in arrays]
        plan = explain(*_tuple(workload.run(_ops.stitchlab_ops(), case, lazy)))
        kernels = list(plan.kernels)
        return {
            "kernels": len(kernels),
            "kernel_schedules": [str(getattr(k, "schedule", "")) for k in kernels][:16],
        }
    except Exception as exc:  # a planner error is a result, not a crash of the harness
        return {"kernels": "n/a", "kernels_note": f"sl.explain failed: {type(exc).__name__}: {str(exc)[:300]}"}


def prepare(impl: str, workload: Workload, case: Case, inputs: Inputs) -> Prepared:
    """Build implementation ``impl`` of ``workload`` over ``inputs`` (raises if it cannot)."""
    from .timing import CpuClock, CupyClock, TorchClock

    n = len(case.inputs)
    if impl == "stitchlab":
        import stitchlab as sl

        o = _ops.stitchlab_ops()
        arrays = inputs.cupy if inputs.gpu else inputs.host
        fn = sl.jit(fixed_arity(lambda *a: workload.run(o, case, list(a)), n, workload.name))
        info = stitchlab_kernels(workload, case, arrays)
        info["backend"] = sl.get_backend()
        return Prepared(lambda: fn(*arrays), _host_generic, CupyClock() if inputs.gpu else CpuClock(), info)
    if impl == "stitchlab_eager":
        import stitchlab as sl

        o = _ops.stitchlab_ops()
        lazy = [sl.asarray(a) for a in (inputs.cupy if inputs.gpu else inputs.host)]
        return Prepared(lambda: sl.compute(*_tuple(workload.run(o, case, lazy))), _host_generic,
                        CupyClock() if inputs.gpu else CpuClock(), {"backend": sl.get_backend()})
    if impl in ("cupy", "cupy_fuse"):
        o = _ops.cupy_ops()
        arrays = inputs.cupy
        body = fixed_arity(lambda *a: workload.run(o, case, list(a)), n, workload.name)
        if impl == "cupy_fuse":
            import cupy

            body = cupy.fuse(body)
        return Prepared(lambda: body(*arrays), _host_generic, CupyClock())
    if impl == "numpy":
        arrays = inputs.host
        return Prepared(lambda: workload.run(_ops.NUMPY, case, arrays), _host_generic, CpuClock())
    if impl in ("torch", "torch_compile"):
        import torch

        o = _ops.TorchOps()
        arrays = inputs.torch
        body = fixed_arity(lambda *a: workload.run(o, case, list(a)), n, workload.name)
        info: dict[str, Any] = {"torch": torch.__version__}
        if impl == "torch_compile":
            # Dynamo keeps its compiled-frame cache per code object, and every case shares these
            # lambdas' code: past torch's recompile limit (8) it would silently run eagerly.
            torch._dynamo.reset()
            body = torch.compile(body)
            info["mode"] = "default"
        clock = TorchClock() if inputs.gpu else CpuClock()
        return Prepared(lambda: body(*arrays), _host_generic, clock, info)
    raise ValueError(f"unknown implementation {impl!r}; choose from {GPU_IMPLS + CPU_IMPLS}")
