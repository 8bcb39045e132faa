"""docs/api.md documents exactly the public namespace: every name in ``sl.__all__``, nothing stale."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import stitchlab as sl

API = Path(__file__).resolve().parents[2] / "docs" / "api.md"
DIRECTIVE = re.compile(r"^:::\s+(stitchlab(?:\.[A-Za-z_]\w*)+)\s*$", re.M)


def _documented() -> list[str]:
    return DIRECTIVE.findall(API.read_text(encoding="utf-8"))


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def _public_name(dotted: str) -> str | None:
    """The ``sl`` name a directive documents: ``stitchlab.NAME``, or the full path of the very
    object ``sl.NAME`` (used where a submodule has the same name, as ``stitchlab.explain``)."""
    name = dotted.rsplit(".", 1)[1]
    if dotted == f"stitchlab.{name}":
        return name
    try:
        return name if name in sl.__all__ and _resolve(dotted) is getattr(sl, name) else None
    except (ImportError, AttributeError):
        return None


def test_every_public_name_is_documented():
    documented = {_public_name(d) for d in _documented()}
    missing = sorted(set(sl.__all__) - documented)
    assert not missing, (
        f"add '::: stitchlab.NAME' blocks to docs/api.md (python tests/docs/write_api_page.py) for: {', '.join(missing)}"
    )


def test_every_documented_name_exists():
    stale = []
    for dotted in _documented():
        name = dotted.split(".", 1)[1]
        try:
            obj = _resolve(dotted)
        except (ImportError, AttributeError):
            stale.append(f"{dotted} (does not exist)")
            continue
        if "." not in name and not isinstance(obj, ModuleType) and name not in sl.__all__:
            stale.append(f"{dotted} (not in sl.__all__)")
    assert not stale, "docs/api.md documents names that are not public: " + ", ".join(stale)


def test_no_name_is_documented_twice():
    names = _documented()
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
