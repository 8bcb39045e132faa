"""stitchlab.registry: a persistent, process-safe registry of compiled kernels and records.

Knows nothing of the compiler. The compiler names what a kernel depends on (its key
components), asks for it, and hands over a build function for a miss::

    from stitchlab.registry import default_registry, digest

    components = {"source_digest": digest(source), "gpu_arch": "sm_90", ...}
    entry = default_registry().get_or_build(components, lambda: (compile(source), {"name": "k"}))
    entry.blob, entry.meta, entry.hit

Values are bytes (the cubin) and JSON text, each stored with a checksum; nothing is ever
pickled or unpickled. See docs/registry.md for where entries live, the environment
variables, the command line and the fault behaviour.
"""

from ._envelope import CorruptEntry
from ._keys import KEY_COMPONENTS, digest, make_key
from ._paths import ENV_CACHE_DIR, ENV_MAX_SIZE, ENV_REGISTRY, user_cache_dir
from ._registry import (
    Entry,
    KernelRegistry,
    RegistryWarning,
    default_registry,
    record_key,
    reset_default_registry,
)
from ._sizes import format_size, parse_size

__all__ = [
    "CorruptEntry",
    "ENV_CACHE_DIR",
    "ENV_MAX_SIZE",
    "ENV_REGISTRY",
    "Entry",
    "KEY_COMPONENTS",
    "KernelRegistry",
    "RegistryWarning",
    "default_registry",
    "digest",
    "format_size",
    "make_key",
    "parse_size",
    "record_key",
    "reset_default_registry",
    "user_cache_dir",
]
