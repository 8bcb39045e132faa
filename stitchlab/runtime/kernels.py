"""Kernels through the registry: key components, compile on a miss, load the cubin once.

The registry is ``stitchlab.registry.default_registry()`` (``STITCHLAB_CACHE_DIR=:memory:`` keeps
it in memory); the runtime uses only its ``get_or_build(components, build)`` call.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any

from ..codegen.preamble import PREAMBLE_DIGEST
from ..codegen.schedules import CODEGEN_VERSION
from ..plan.plan import KernelPlan
from ..registry import default_registry, make_key
from . import nvrtc, stats


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
        "nvrtc_version": nvrtc.version(),
        "codegen_version": CODEGEN_VERSION,
        "header_digest": PREAMBLE_DIGEST,
    }


def build_cubin(kernel: KernelPlan, arch: str) -> tuple[bytes, dict[str, Any]]:
    """Compile ``kernel`` (the registry's build function)."""
    cubin, log = nvrtc.compile_cubin(kernel.source, kernel.name, arch)
    return cubin, {"name": kernel.name, "arch": arch, "schedule": str(kernel.schedule), "nvrtc_log": log[:2000]}


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
