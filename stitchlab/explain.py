"""``sl.explain``: the plan the compiler makes for some lazy arrays, without running it."""

from __future__ import annotations

from typing import Any

from .codegen.program import build_plan
from .frontend.creation import asarray
from .ir.graph import build_graph
from .plan.device import DeviceProfile, current_profile, preset
from .plan.plan import Plan


def explain(*arrays: Any, device: str | DeviceProfile | None = None) -> Plan:
    """The plan that evaluating ``arrays`` together would run: kernels with their CUDA C source,
    schedule, launch dimensions, covered nodes and estimated time, plus the candidate plans.

    Works without a GPU: arrays on the CPU (or ``device="H200"``) are planned for the H200 preset.

    Args:
        *arrays: lazy arrays (already computed ones need no kernel).
        device: a preset name or a :class:`DeviceProfile`; default: the arrays' GPU, else "H200".

    Example:
        >>> import numpy as np, stitchlab as sl
        >>> x = sl.asarray(np.ones((4, 8), np.float32))
        >>> e = sl.exp(x - x.max(axis=-1, keepdims=True))
        >>> len(sl.explain(e / e.sum(axis=-1, keepdims=True)).kernels)
        1
    """
    nodes = [asarray(a)._node for a in arrays]
    graph, _ = build_graph(nodes)
    if isinstance(device, DeviceProfile):
        dev = device
    elif isinstance(device, str):
        dev = preset(device)
    else:
        on_gpu = any(n.device is not None and n.device.startswith("cuda") for n in graph.nodes)
        dev = current_profile(on_gpu)
    return build_plan(graph, dev)


__all__ = ["explain", "Plan"]
