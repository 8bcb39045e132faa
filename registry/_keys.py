"""Registry keys: a SHA-256 digest of named, string-valued components.

A key is ``sha256(canonical JSON of the components)`` in hex, where the canonical JSON
has sorted names, no whitespace and ASCII escapes. It never depends on Python's ``hash()``,
so the same components give the same key in every process, whatever ``PYTHONHASHSEED``.

The compiler is expected to use the names in :data:`KEY_COMPONENTS`; any other names are
accepted too, and all of them are stored with the entry so a miss can be explained.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

#: The component names the compiler puts in a kernel key (see docs/registry.md).
KEY_COMPONENTS: tuple[str, ...] = (
    "source_digest",  # digest(kernel CUDA C source)
    "schedule",  # schedule family and its parameters
    "launch",  # launch parameters (block, rows per block, vector width, ...)
    "dtypes",  # input/output dtypes
    "shape_class",  # the shape class the kernel is valid for
    "gpu_arch",  # e.g. "sm_90"
    "nvrtc_version",  # e.g. "13.0"
    "codegen_version",  # stitchlab code-generation version
    "header_digest",  # digest of the included headers
)


def digest(data: str | bytes) -> str:
    """Return the SHA-256 hex digest of ``data`` (text is encoded as UTF-8).

    Use it for the ``source_digest`` and ``header_digest`` components.

    Example:
        >>> digest("abc")[:12]
        'ba7816bf8f01'
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"digest() takes str or bytes, got {type(data).__name__}")
    return hashlib.sha256(data).hexdigest()


def canonical_components(components: Mapping[str, str]) -> dict[str, str]:
    """Check ``components`` and return them as a plain dict sorted by name.

    Raises:
        TypeError: if ``components`` is not a mapping of ``str`` to ``str``; the message
            names the offending component.
        ValueError: if ``components`` is empty.
    """
    if not isinstance(components, Mapping):
        raise TypeError(
            f"key components must be a dict of str to str, got {type(components).__name__}"
        )
    if not components:
        raise ValueError("key components are empty; pass at least one named component")
    checked: dict[str, str] = {}
    for name in sorted(components, key=str):
        value = components[name]
        if not isinstance(name, str):
            raise TypeError(f"key component name {name!r} is {type(name).__name__}; use a str")
        if not isinstance(value, str):
            raise TypeError(
                f"key component {name!r} is {type(value).__name__} ({value!r}); "
                f"convert it to a str, e.g. str(value) or json.dumps(value, sort_keys=True)"
            )
        checked[name] = value
    return checked


def canonical_json(components: Mapping[str, str]) -> str:
    """Return the canonical JSON text that :func:`make_key` hashes."""
    return json.dumps(
        canonical_components(components),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )


def make_key(components: Mapping[str, str]) -> str:
    """Return the registry key for ``components``.

    Args:
        components: component name -> value, both ``str``. Order does not matter.

    Returns:
        64 lowercase hex characters.

    Example:
        >>> make_key({"gpu_arch": "sm_90", "source_digest": digest("k")}) == make_key(
        ...     {"source_digest": digest("k"), "gpu_arch": "sm_90"})
        True
    """
    return hashlib.sha256(canonical_json(components).encode("ascii")).hexdigest()


def is_kernel_key(key: str) -> bool:
    """Return True if ``key`` looks like a key made by :func:`make_key`."""
    return len(key) == 64 and all(c in "0123456789abcdef" for c in key)
