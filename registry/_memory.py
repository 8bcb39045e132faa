"""The in-memory front: a byte-capped LRU map, so a cached launch touches no disk."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Item:
    """One entry held in memory.

    Attributes:
        header: the entry's checked JSON header (kind, components or record, meta, created).
        payload: the cubin, or a record's JSON text.
        size: bytes charged against the cap (the stored value's length).
        hits: times this process served it from memory.
        last_access: wall-clock time of the last use in this process.
    """

    header: dict[str, Any]
    payload: bytes
    size: int
    hits: int = 0
    last_access: float = field(default_factory=time.time)


class MemoryFront:
    """Least-recently-used map of key -> :class:`Item`, at most ``max_bytes`` in total.

    Not thread-safe on its own; the registry holds its lock around every call.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[str, Item] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def get(self, key: str) -> Item | None:
        """Return the item and mark it most recently used, or None."""
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
            item.hits += 1
            item.last_access = time.time()
        return item

    def peek(self, key: str) -> Item | None:
        """Return the item without counting a use."""
        return self._items.get(key)

    def put(self, key: str, item: Item) -> list[str]:
        """Insert or replace ``key``; return the keys evicted to stay within the cap.

        An item larger than the whole cap is not kept (its key is returned as evicted).
        """
        self.pop(key)
        if item.size > self.max_bytes:
            return [key]
        self._items[key] = item
        self.bytes += item.size
        evicted = []
        while self.bytes > self.max_bytes:
            old_key, old = self._items.popitem(last=False)
            self.bytes -= old.size
            evicted.append(old_key)
        return evicted

    def pop(self, key: str) -> Item | None:
        item = self._items.pop(key, None)
        if item is not None:
            self.bytes -= item.size
        return item

    def clear(self) -> int:
        count = len(self._items)
        self._items.clear()
        self.bytes = 0
        return count

    def trim(self, max_bytes: int) -> list[str]:
        """Evict least recently used items until at most ``max_bytes`` are held."""
        evicted = []
        while self._items and self.bytes > max_bytes:
            old_key, old = self._items.popitem(last=False)
            self.bytes -= old.size
            evicted.append(old_key)
        return evicted

    def items(self) -> list[tuple[str, Item]]:
        """Snapshot of (key, item), least recently used first."""
        return list(self._items.items())
