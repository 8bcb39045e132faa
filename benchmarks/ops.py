"""Ops adapters: the few functions the workload bodies call, for each array library.

The bodies in :mod:`benchmarks.workloads` call ``o.exp(x)``, ``o.max(x, axis, keepdims)`` and so
on; an adapter maps them onto NumPy, CuPy, stitchlab or torch. NumPy-like modules go through
module-level functions (``xp.max(x, axis=..., keepdims=...)``), so ``cupy.fuse`` sees CuPy's own
functions and either fuses them or raises, which the harness records.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np


class ArrayOps:
    """Adapter for NumPy-like modules (numpy, cupy, stitchlab)."""

    def __init__(self, xp: ModuleType, name: str) -> None:
        self.xp = xp
        self.name = name
        self.exp, self.log, self.tanh, self.sqrt = xp.exp, xp.log, xp.tanh, xp.sqrt
        self.maximum, self.where = xp.maximum, xp.where

    def max(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.xp.max(x, axis=axis, keepdims=keepdims)

    def sum(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.xp.sum(x, axis=axis, keepdims=keepdims)

    def mean(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.xp.mean(x, axis=axis, keepdims=keepdims)

    def std(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.xp.std(x, axis=axis, keepdims=keepdims)

    def rsqrt(self, x: Any) -> Any:
        f = getattr(self.xp, "rsqrt", None)
        return f(x) if f is not None else 1.0 / self.xp.sqrt(x)

    def sigmoid(self, x: Any) -> Any:
        f = getattr(self.xp, "sigmoid", None)
        return f(x) if f is not None else 1.0 / (1.0 + self.xp.exp(-x))

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return self.xp.reshape(x, shape)

    def arange(self, n: int, like: Any) -> Any:
        return self.xp.arange(n, dtype=like.dtype)


class TorchOps:
    """Adapter for torch tensors (eager, and the functions torch.compile traces)."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.name = "torch"
        self.exp, self.log, self.tanh, self.sqrt = torch.exp, torch.log, torch.tanh, torch.sqrt
        self.rsqrt, self.sigmoid = torch.rsqrt, torch.sigmoid

    def max(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.torch.amax(x, dim=axis, keepdim=keepdims)

    def sum(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.torch.sum(x, dim=axis, keepdim=keepdims)

    def mean(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.torch.mean(x, dim=axis, keepdim=keepdims)

    def std(self, x: Any, axis: Any, keepdims: bool = False) -> Any:
        return self.torch.std(x, dim=axis, keepdim=keepdims, correction=0)

    def maximum(self, x: Any, y: Any) -> Any:
        if isinstance(y, (int, float)):
            return self.torch.clamp_min(x, y)
        return self.torch.maximum(x, y)

    def where(self, c: Any, x: Any, y: Any) -> Any:
        return self.torch.where(c, x, y)

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return self.torch.reshape(x, shape)

    def arange(self, n: int, like: Any) -> Any:
        return self.torch.arange(n, dtype=like.dtype, device=like.device)


NUMPY = ArrayOps(np, "numpy")


def stitchlab_ops() -> ArrayOps:
    import stitchlab as sl

    return ArrayOps(sl, "stitchlab")


def cupy_ops() -> ArrayOps:
    import cupy

    return ArrayOps(cupy, "cupy")
