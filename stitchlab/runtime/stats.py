"""Process-wide counters behind ``sl.stats()``."""

from __future__ import annotations

from collections import Counter

#: Counter names every caller may rely on (always present in ``sl.stats()``).
NAMES = (
    "evaluations",        # materializations of one or more arrays
    "traces",             # sl.jit traces (a new input signature)
    "plans",              # graphs planned (a new graph structure on a backend)
    "plan_cache_hits",    # evaluations that reused a planned graph
    "plans_loaded",       # graphs whose plan came from a recipe in the registry (no search, no codegen)
    "nvrtc_compiles",     # kernels compiled by NVRTC
    "registry_hits",      # kernels found in the kernel registry
    "registry_misses",    # kernels the registry did not have
    "launches",           # kernel launches
    "fallbacks",          # fused groups run unfused after a failed compile
)

counters: Counter[str] = Counter({name: 0 for name in NAMES})


def bump(name: str, n: int = 1) -> None:
    counters[name] += n


def stats() -> dict[str, int]:
    """A snapshot of the counters (a plain dict; later calls do not change it)."""
    return dict(counters)


def reset_stats() -> None:
    """Set every counter to zero."""
    for name in list(counters):
        counters[name] = 0
