"""Call counting for the host-work tests (counts, not timings: the machine's speed does not matter)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

search_module = importlib.import_module("stitchlab.plan.search")  # (stitchlab.plan.search is the function)


def counted(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Count the calls of ``owner.name`` from now on (``calls[0]``)."""
    calls = [0]
    original = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls
