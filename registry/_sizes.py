"""Human-readable sizes: ``parse_size("512MiB")`` and ``format_size(1536) == "1.5 KiB"``."""

from __future__ import annotations

import re
from fractions import Fraction

#: The largest size: the index (SQLite) holds sizes as signed 64-bit integers.
MAX_SIZE = 2**63 - 1

_UNITS = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "kib": 2**10,
    "kb": 10**3,
    "m": 2**20,
    "mib": 2**20,
    "mb": 10**6,
    "g": 2**30,
    "gib": 2**30,
    "gb": 10**9,
    "t": 2**40,
    "tib": 2**40,
    "tb": 10**12,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str | int) -> int:
    """Parse a size such as ``"1048576"``, ``"512K"``, ``"100MiB"``, ``"1.5GiB"`` or ``"2GB"``.

    ``K``/``KiB``, ``M``/``MiB``, ``G``/``GiB``, ``T``/``TiB`` are powers of 1024;
    ``KB``, ``MB``, ``GB``, ``TB`` are powers of 1000.

    Raises:
        ValueError: naming the text and the accepted forms, or a size over :data:`MAX_SIZE`.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise ValueError(f"size {text} is negative; give a size >= 0")
        size = text
    else:
        match = _SIZE.match(str(text))
        unit = match.group(2).lower() if match else ""
        if not match or unit not in _UNITS:
            raise ValueError(
                f"cannot read size {text!r}; write a number with an optional unit, "
                f"e.g. 1048576, 512K, 100MiB, 1.5GiB or 2GB"
            )
        size = int(Fraction(match.group(1)) * _UNITS[unit])  # exact: no float overflow
    if size > MAX_SIZE:
        raise ValueError(
            f"size {text!r} is larger than the largest size the registry can record, "
            f"{MAX_SIZE} bytes (8 EiB); give a smaller size"
        )
    return size


def format_size(size: int) -> str:
    """Format a byte count with binary units: ``"812 B"``, ``"1.5 KiB"``, ``"3.2 MiB"``."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")
