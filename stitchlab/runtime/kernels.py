"""Kernels through the registry: key components, compile on a miss, load the cubin once.

The registry is ``stitchlab.registry.default_registry()`` (``STITCHLAB_CACHE_DIR=:memory:`` keeps
it in memory); the runtime uses only its ``get_or_build(components, build)`` call.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..codegen.preamble import PREAMBLE_DIGEST
from ..codegen.schedules import CODEGEN_VERSION
from ..ir.node import Node
from ..ir.ops import ARG_REDUCTIONS
from ..plan.plan import KernelPlan
from ..registry import default_registry, make_key
from . import nvrtc, stats

log = logging.getLogger("stitchlab.runtime")

#: ptxas options for kernels that compare integer values on an older NVRTC: without optimization
#: ptxas does not fuse min/max (correct code, slower kernels). (A float16 or bfloat16 absolute
#: value of converted bits, whose sign mask that ptxas dropped, is taken in float instead:
#: ``codegen.elemental.Writer._absolute_bits``.)
UNOPTIMIZED = ("--ptxas-options=-O0",)
#: IR ops whose CUDA code compares two values and keeps one (what ptxas turns into min/max)
#: (gcd and lcm take magnitudes; ldexp clamps its integer exponent)
_SELECTING = frozenset({"max", "min", "maximum", "minimum", "fmax", "fmin", "absolute", "where", "gcd", "lcm", "ldexp",
                        *ARG_REDUCTIONS})
_warned: set[str] = set()


def _old_ptxas_breaks(node: Node) -> bool:
    """Whether an older ptxas may miscompile ``node``: it compares integers of 32 bits or fewer
    and keeps one (an arg reduction compares its input's values)."""
    if node.op not in _SELECTING:
        return False
    dtype = node.inputs[0].dtype if node.op in ARG_REDUCTIONS else node.inputs[1].dtype if node.op == "ldexp" else node.dtype
    return _selects_small_ints(node.op, dtype)


def _selects_small_ints(op: str, dtype: np.dtype) -> bool:
    """Whether op ``op`` computed in ``dtype`` compares integers of 32 bits or fewer and keeps one."""
    return op in _SELECTING and dtype.kind in "biu" and dtype.itemsize <= 4


_COMPARES = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
#: ops through which a compared integer is still a position (``tri``'s ``j - i <= k``)
_POSITION_OPS = frozenset({"broadcast", "reshape", "astype", "slice", "add", "subtract", "multiply", "negative"})


def _compares_clamped_positions(kernel: KernelPlan) -> bool:
    """Whether ``kernel`` compares integer positions (an ``iota``) that it reads through a ``pad``
    along the pad's axis (a clamped, reflected or wrapped index: a concatenation, ``np.pad``). The
    ptxas of NVRTC 13.0 to 13.3 folds ``clamp(i - 1004, 0, 2) == 2`` into the predicate output of
    the clamp's ``VIMNMX.RELU``, which is also set below the bound: ``sl.r_[x, 0, 1:4, 0:1:3j]``'s
    ``linspace`` part (``where(iota == 2, 1.0, ...)`` read through the join) gave 1.0 for 0.0 and
    0.5 on the H200 (NVRTC 13.0; the SASS of 13.3 does the same, 13.4 and 13.5 compare with ISETP).

    Each pad's axis is followed down to the compared position (:func:`_clamped_inputs`): a
    position on another axis is no clamp's result (the row masks of a constant pad under its
    column pad, a 2-d stencil's), so its kernel keeps ptxas' optimization."""
    inside = {id(n) for n in kernel.nodes}
    boundary = {id(n) for n in kernel.info.inputs} if kernel.info is not None else set()
    stack: list[tuple[Node, frozenset[int], bool]] = [(n, frozenset(), False) for n in kernel.nodes]
    seen: set[tuple[int, frozenset[int], bool]] = set()
    while stack:
        node, clamped, compared = stack.pop()
        if (id(node), clamped, compared) in seen or id(node) in boundary and id(node) not in inside:
            continue
        seen.add((id(node), clamped, compared))
        if node.op == "iota" and compared and 0 in clamped:
            return True
        if node.op in _COMPARES and node.inputs[0].dtype.kind in "biu":
            compared = True  # (its operands, read through views, casts and integer arithmetic)
        elif node.op not in _POSITION_OPS or node.dtype.kind not in "biu":
            compared = False
        stack.extend((i, c, compared) for i, c in zip(node.inputs, _clamped_inputs(node, clamped), strict=True))
    return False


def _clamped_inputs(node: Node, clamped: frozenset[int]) -> list[frozenset[int]]:
    """For each input of ``node``: its axes whose positions depend on a position of ``clamped`` (axes
    of ``node`` read through a pad), as ``stitchlab.codegen.elemental`` computes the input's
    position from the output's: a pad adds its axis, a slice keeps the axes, a transpose permutes
    them, a broadcast drops those it repeats, a reshape maps axes through the linear index; an op
    whose input has the output's shape keeps them, any other (a reduction) gives every axis."""
    op = node.op
    if op == "pad":  # (a masked pad reads unclamped: its positions are the compared ones moved)
        return [clamped if node.attr("masked") else clamped | {node.attr("axis")}]
    if not clamped:
        return [clamped] * len(node.inputs)
    if op == "transpose":
        perm = node.attr("perm")
        return [frozenset(perm[a] for a in clamped)]
    if op == "broadcast" and len(node.inputs[0].shape) == len(node.shape):
        src = node.inputs[0].shape
        return [frozenset(a for a in clamped if src[a] == node.shape[a])]
    if op == "reshape":
        src = node.inputs[0].shape
        deps = _reshape_axes(src, node.shape)
        return [frozenset(a for a in range(len(src)) if deps[a] & clamped)]
    if op == "slice":
        return [clamped]
    return [clamped if i.shape == node.shape else frozenset(range(len(i.shape))) for i in node.inputs]


def _reshape_axes(src: tuple[int, ...], dst: tuple[int, ...]) -> list[frozenset[int]]:
    """For each axis of ``src``: the axes of ``dst`` whose positions its position (at the same
    linear index) depends on. Axes group where their extents' products meet; an axis of extent 1
    depends on none (its position is 0)."""
    if 0 in src or 0 in dst:
        return [frozenset(range(len(dst)))] * len(src)
    deps = [frozenset()] * len(src)
    i = j = 0
    while i < len(src) and j < len(dst):
        gi, gj, ps, pd = [i], [j], src[i], dst[j]
        i, j = i + 1, j + 1
        while ps != pd:
            if ps < pd:
                gi.append(i)
                ps, i = ps * src[i], i + 1
            else:
                gj.append(j)
                pd, j = pd * dst[j], j + 1
        wide = frozenset(b for b in gj if dst[b] != 1)
        for a in gi:
            deps[a] = wide if src[a] != 1 else frozenset()
    return deps


def ptxas_options(kernel: KernelPlan, version: str | None = None) -> tuple[str, ...]:
    """Extra NVRTC options ``kernel`` needs with the NVRTC of ``version`` (default: the one
    loaded): :data:`UNOPTIMIZED` where that NVRTC's ptxas drops negations
    (:func:`nvrtc.ptxas_drops_negations`) and the kernel compares integer values or compares
    positions it reads through a pad (:func:`_compares_clamped_positions`), else none.
    (:func:`build_cubin` logs a warning the first time it compiles with them.)"""
    version = nvrtc.version() if version is None else version
    if nvrtc.ptxas_drops_negations(version) and (any(_old_ptxas_breaks(n) for n in kernel.nodes)
                                                  or _compares_clamped_positions(kernel)):
        return UNOPTIMIZED  # (a packed kernel's nodes: its parts')
    return ()


def op_ptxas_options(op: str, dtype: np.dtype) -> tuple[str, ...]:
    """:func:`ptxas_options` for a kernel of the runtime's own that computes op ``op`` in
    ``dtype`` (:func:`fetch_source`)."""
    if nvrtc.ptxas_drops_negations(nvrtc.version()) and _selects_small_ints(op, dtype):
        return UNOPTIMIZED
    return ()


def registry() -> Any:
    """The kernel registry (``stitchlab.registry.default_registry()``)."""
    return default_registry()


def key_of(components: Mapping[str, str]) -> str:
    """The registry key of ``components`` (for messages about a kernel that failed to build)."""
    return make_key(components)


def components(kernel: KernelPlan, arch: str) -> dict[str, str]:
    """The key components of ``kernel`` (docs/registry.md names them)."""
    params = kernel.params
    dynamic = [p.role for p in params if p.role in ("n", "R", "K", "G")]
    return {
        "source_digest": hashlib.sha256(kernel.source.encode()).hexdigest(),
        "schedule": json.dumps(kernel.schedule.params(), sort_keys=True),
        "launch": json.dumps({"block": list(kernel.launch.block)}),
        "dtypes": ",".join(f"{p.role}:{p.node.dtype.name}" for p in params if p.node is not None),
        "shape_class": f"index={kernel.schedule.index}; runtime extents={','.join(dynamic)}",
        "gpu_arch": arch,
        # the options a workaround adds (ptxas_options) are part of what compiled the kernel
        "nvrtc_version": " ".join((nvrtc.version(), *ptxas_options(kernel))),
        "codegen_version": CODEGEN_VERSION,
        "header_digest": PREAMBLE_DIGEST,
    }


def build_cubin(kernel: KernelPlan, arch: str) -> tuple[bytes, dict[str, Any]]:
    """Compile ``kernel`` (the registry's build function)."""
    options = ptxas_options(kernel)
    version = nvrtc.version()
    if options and version not in _warned:
        _warned.add(version)
        log.warning(
            "NVRTC %s: its ptxas can drop a negation when it fuses integer min/max, and a compare "
            "of a clamped position (fixed in 13.4); kernels that take an integer min or max, or "
            "compare positions read through a pad or a join along its axis, compile without ptxas "
            "optimization (correct, slower). For full speed: pip install 'nvidia-cuda-nvrtc>=13.4'", version)
    cubin, messages = nvrtc.compile_cubin(kernel.source, kernel.name, arch, options)
    return cubin, {"name": kernel.name, "arch": arch, "schedule": str(kernel.schedule), "options": " ".join(options),
                   "nvrtc_log": messages[:2000]}


def fetch(kernel: KernelPlan, arch: str) -> tuple[str, bytes, bool]:
    """(registry key, cubin, hit) of ``kernel``, compiling it on a miss.

    Counts ``registry_hits`` / ``registry_misses`` (and ``nvrtc_compiles`` on a build).
    """
    comps = components(kernel, arch)
    start = time.perf_counter()
    entry = registry().get_or_build(comps, lambda: build_cubin(kernel, arch))
    stats.bump("registry_hits" if entry.hit else "registry_misses")
    try:
        from .._log import log_compile, log_source
    except ImportError:
        pass
    else:
        log_compile(kernel.name, entry.key, "hit" if entry.hit else "compiled", time.perf_counter() - start)
        if not entry.hit:
            log_source(kernel.name, kernel.source)
    return entry.key, entry.blob, entry.hit


def fetch_source(source: str, name: str, arch: str, options: tuple[str, ...] = ()) -> Any:
    """The CuPy function ``name`` of ``source``, a kernel of the runtime's own (not a planned
    group; the preamble included): through the registry as :func:`fetch`, keyed on the source,
    so it compiles once, with the planned kernels' NVRTC options (IEEE float32 subnormals, no
    contracted multiply-adds) and ``options``."""
    comps = {"source_digest": hashlib.sha256(source.encode()).hexdigest(), "gpu_arch": arch,
             "nvrtc_version": " ".join((nvrtc.version(), *options)), "header_digest": PREAMBLE_DIGEST,
             "codegen_version": CODEGEN_VERSION}

    def build() -> tuple[bytes, dict[str, Any]]:
        cubin, messages = nvrtc.compile_cubin(source, name, arch, options)
        return cubin, {"name": name, "arch": arch, "options": " ".join(options), "nvrtc_log": messages[:2000]}

    entry = registry().get_or_build(comps, build)
    stats.bump("registry_hits" if entry.hit else "registry_misses")
    return load(entry.key, entry.blob, name)


def log_hit(name: str, key: str, seconds: float) -> None:
    """Log a kernel found in the registry (as :func:`fetch` does for a hit)."""
    try:
        from .._log import log_compile
    except ImportError:
        return
    log_compile(name, key, "hit", seconds)


_functions: dict[tuple[str, int], tuple[Any, Any]] = {}


def load(key: str, cubin: bytes, name: str) -> Any:
    """The CuPy function ``name`` of ``cubin`` on the current device (each module loaded once)."""
    import cupy

    dev = cupy.cuda.Device().id
    found = _functions.get((key, dev))
    if found is None:
        module = cupy.cuda.function.Module()
        module.load(cubin)
        # the module stays alive; where threads load it at once, all use the first one stored
        found = _functions.setdefault((key, dev), (module, module.get_function(name)))
    return found[1]
