"""The on-disk half of the registry: a diskcache ``Cache`` that stores bytes and never pickles.

diskcache's default ``Disk`` pickles any value that is not bytes/str/int/float and unpickles
rows marked as pickles when reading them back, so a planted row would run code on load.
:class:`SafeDisk` refuses to write anything but ``bytes`` under ``str`` keys and refuses to
read any row that is not raw bytes: such a row raises :class:`UnsafeValue` and is dropped.

Every value is written to its own file (``disk_min_file_size=0``), the SQLite index holds
the key, the times, the access count, the size and a JSON tag (the entry's components), so
listing the registry reads no values. Eviction is least-recently-used on the index's access
time. A load from disk takes no write lock: the use is noted in memory and written to the
index in one batch (before this process lists or evicts, every 256 loads, when the store is
closed or collected, and at exit), so other processes see it a little later.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import MODE_BINARY, MODE_RAW, UNKNOWN

from ._envelope import CorruptEntry
from ._locks import creation_lock

log = logging.getLogger("stitchlab.registry")

#: Errors that mean "the directory cannot be used": degrade to memory.
DISK_ERRORS: tuple[type[BaseException], ...] = (OSError, sqlite3.Error, diskcache.Timeout)

#: Recorded uses kept in memory before they are written to the index in one batch.
_MAX_PENDING = 256

_MODE_NAMES = {0: "none", 1: "raw", 2: "binary", 3: "text", 4: "pickle"}

#: The value file names diskcache makes (``Disk.filename``): ``ab/cd/<28 hex>.val`` under the
#: directory. The index is only a file: a name of any other form (absolute, ``..``, None) is
#: never opened or removed, so a damaged or planted row cannot point the registry outside it.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val")


def _is_value_file(name: object) -> bool:
    return isinstance(name, str) and _VALUE_FILE.fullmatch(name) is not None


class UnsafeValue(CorruptEntry):
    """A row that is not raw bytes under a text key (e.g. a pickle): refused, never loaded."""


class SafeDisk(diskcache.Disk):
    """A diskcache ``Disk`` that only handles ``str`` keys and ``bytes`` values.

    Nothing here ever calls ``pickle``: non-raw keys and pickle/text rows raise
    :class:`UnsafeValue` instead of being decoded.
    """

    def put(self, key: Any) -> tuple[Any, bool]:
        if type(key) is not str:
            raise TypeError(f"registry keys are str, got {type(key).__name__}")
        return super().put(key)

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise UnsafeValue("index row has a pickled key; refusing to unpickle it")
        return super().get(key, raw)

    def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> tuple[Any, ...]:
        if read or type(value) is not bytes:
            raise TypeError(f"registry values are bytes, got {type(value).__name__}")
        return super().store(value, read, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if read or mode not in (MODE_RAW, MODE_BINARY):
            name = _MODE_NAMES.get(mode, str(mode))
            raise UnsafeValue(f"row is stored as diskcache mode {name!r}; only bytes are loaded")
        if mode == MODE_BINARY and not _is_value_file(filename):
            raise UnsafeValue(f"row names the value file {filename!r}, not one diskcache makes")
        return super().fetch(mode, filename, value, read)

    def remove(self, file_path: Any) -> None:
        if not _is_value_file(file_path):
            log.warning("registry: not removing %r, named by an index row: not a value file "
                        "diskcache makes", file_path)
            return
        super().remove(file_path)


@dataclass(frozen=True)
class Row:
    """One row of the index, read without loading the value."""

    key: str
    size: int
    created: float
    last_access: float
    loads: int
    tag: dict[str, Any] | None
    filename: str | None


class DiskStore:
    """diskcache under ``directory`` with :class:`SafeDisk` and LRU access times.

    Args:
        directory: an existing directory.
        max_size: the size cap in bytes that :meth:`evict_to` is called with.
        timeout: SQLite busy timeout in seconds.

    Raises:
        OSError, sqlite3.Error, diskcache.Timeout: if the directory cannot be used.
    """

    def __init__(self, directory: Path, max_size: int, timeout: float = 60.0) -> None:
        self.directory = directory
        self.max_size = max_size
        self._cache = _open_cache(directory, max_size, timeout)
        self._access = _AccessLog(self._cache)
        # Written when this store is garbage collected or at interpreter exit.
        weakref.finalize(self, self._access.flush)

    # -- values ---------------------------------------------------------------------------

    def load(self, key: str) -> bytes | None:
        """Return the stored bytes for ``key`` or None.

        A read takes no write lock: one SELECT and one file read. The use is recorded in
        memory and written to the index (access time and count, which drive LRU eviction)
        in one batch later: before this process writes, lists or evicts, and at exit.
        A row whose value file has gone (evicted meanwhile) is reported as missing.

        Raises:
            UnsafeValue: the row is not raw bytes (e.g. a planted pickle).
        """
        rows = self._cache._sql(
            "SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1", (key,)
        ).fetchall()
        if not rows:
            return None
        ((mode, filename, db_value),) = rows
        try:
            value = self._cache.disk.fetch(mode, filename, db_value, False)
        except OSError:
            return None
        if type(value) is not bytes:
            raise UnsafeValue(f"row holds a {type(value).__name__}, not bytes")
        self._access.record(key)
        return value

    def flush_access(self) -> None:
        """Write the recorded uses to the index now."""
        self._access.flush()

    def put(
        self, key: str, value: bytes, tag: dict[str, Any], only_if_absent: bool = False
    ) -> bool:
        """Store ``value`` under ``key``; return False if ``only_if_absent`` and it existed."""
        text = json.dumps(tag, sort_keys=True, separators=(",", ":"))
        if only_if_absent:
            return bool(self._cache.add(key, value, tag=text))
        return bool(self._cache.set(key, value, tag=text))

    def contains(self, key: str) -> bool:
        """Return True if the index has a row for ``key`` (its value is not checked)."""
        return key in self._cache

    def delete(self, key: str) -> bool:
        """Remove ``key``; return True if it was there."""
        return bool(self._cache.delete(key))

    def delete_if_unchanged(self, key: str, seen: bytes | None) -> bool:
        """Remove ``key`` only if it still holds ``seen`` (None: a row refused as unsafe).

        Atomic (one write transaction), so a value another process has just rebuilt in
        place of a corrupt one is not removed by mistake.
        """
        cache = self._cache
        with cache.transact():
            try:
                current = cache.get(key, default=None)
            except UnsafeValue:
                return bool(cache.delete(key))
            if current is not None and current == seen:
                return bool(cache.delete(key))
        return False

    def clear(self) -> int:
        """Remove every row (including rows this module would refuse to read)."""
        return int(self._cache.clear())

    # -- index ----------------------------------------------------------------------------

    def rows(self) -> list[Row]:
        """Return every readable row, least recently used first."""
        self._access.flush()
        cursor = self._cache._sql(
            "SELECT key, size, store_time, access_time, access_count, tag, filename"
            " FROM Cache WHERE raw = 1 ORDER BY access_time ASC"
        )
        rows = []
        for key, size, created, accessed, loads, tag, filename in cursor.fetchall():
            if not isinstance(key, str):
                continue
            rows.append(
                Row(
                    key=key,
                    size=int(_number(size)),
                    created=_number(created),
                    last_access=_number(accessed),
                    loads=int(_number(loads)),
                    tag=_parse_tag(tag),
                    filename=filename if isinstance(filename, str) else None,
                )
            )
        return rows

    def count(self) -> int:
        """Number of rows."""
        return self._setting("count", "SELECT COUNT(*) FROM Cache")

    def value_bytes(self) -> int:
        """Total size of the value files."""
        return self._setting("size", "SELECT COALESCE(SUM(size), 0) FROM Cache")

    def volume(self) -> int:
        """Value files plus the SQLite index: what the size cap is compared with."""
        ((pages,),) = self._cache._sql("PRAGMA page_count").fetchall()
        return int(self._cache._page_size * pages + self.value_bytes())

    def _setting(self, name: str, recount: str) -> int:
        """diskcache's running total ``name`` from its Settings table; a damaged one (not a
        non-negative integer) is counted again with ``recount`` and written back."""
        value = self._cache.reset(name)
        if type(value) is int and value >= 0:
            return value
        ((counted,),) = self._cache._sql(recount).fetchall()
        log.debug("registry: index setting %s was %r; recounted %r", name, value, counted)
        return int(self._cache.reset(name, int(_number(counted))))

    def evict_to(self, limit: int) -> list[str]:
        """Evict least-recently-used rows until :meth:`volume` is at most ``limit``.

        Returns:
            The keys this call removed (another process may remove some concurrently).
        """
        if self.volume() <= limit:
            return []
        evicted = []
        for row in self.rows():
            if self.volume() <= limit:
                break
            if self.delete(row.key):
                evicted.append(row.key)
        return evicted

    def close(self) -> None:
        self._access.flush()
        self._cache.close()


class _AccessLog:
    """Uses of values recorded in memory, written to the index in one transaction."""

    def __init__(self, cache: diskcache.Cache) -> None:
        self._cache = cache
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[float, int]] = {}

    def record(self, key: str) -> None:
        with self._lock:
            _, count = self._pending.get(key, (0.0, 0))
            self._pending[key] = (time.time(), count + 1)
            backlog = len(self._pending)
        if backlog >= _MAX_PENDING:
            self.flush()

    def flush(self) -> None:
        """Write access times and counts; failures are ignored (this is bookkeeping only)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return
        update = (
            "UPDATE Cache SET access_time = MAX(access_time, ?),"
            " access_count = access_count + ? WHERE key = ? AND raw = 1"
        )
        try:
            with self._cache.transact():
                for key, (when, count) in pending.items():
                    self._cache._sql(update, (when, count, key))
        except Exception as error:  # noqa: BLE001 - may run in a finalizer, must not raise
            # Bookkeeping only: a read-only, busy or removed index keeps the older times.
            log.debug("registry: access times not written (%s)", error)


def _number(value: Any) -> float:
    """A number column of an index row; NULL, text or a negative/non-finite value (a damaged
    row) reads as 0."""
    if type(value) not in (int, float) or not 0 <= value < float("inf"):
        return 0.0
    return float(value)


def _parse_tag(tag: Any) -> dict[str, Any] | None:
    if not isinstance(tag, str):
        return None
    try:
        parsed = json.loads(tag)
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _open_cache(directory: Path, max_size: int, timeout: float) -> diskcache.Cache:
    """Open (or create) the cache, guarding against "database is locked" on creation.

    Opening runs schema and settings statements; when several processes create one
    directory at once some of them can fail with ``database is locked``. A file lock
    serializes the open; retries with backoff cover systems without file locks.
    """
    settings = {
        "eviction_policy": "least-recently-used",
        "size_limit": max_size,
        "cull_limit": 0,  # eviction is done by DiskStore.evict_to, so it can be counted
        "disk_min_file_size": 0,  # every value in its own file; the index stays small
        "statistics": 0,
        "tag_index": 0,
    }
    attempts = 8
    for attempt in range(attempts):
        try:
            with creation_lock(directory):
                return diskcache.Cache(str(directory), timeout=timeout, disk=SafeDisk, **settings)
        except (sqlite3.OperationalError, diskcache.Timeout) as error:
            transient = isinstance(error, diskcache.Timeout) or any(
                word in str(error).lower() for word in ("locked", "busy")
            )
            if not transient or attempt == attempts - 1:
                raise
            time.sleep(min(0.05 * 2**attempt, 2.0))
    raise AssertionError("unreachable")
