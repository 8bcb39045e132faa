"""KernelRegistry: compiled kernels and JSON records, in memory and on diskcache.

Lookup order: the in-memory front (no disk I/O), then the disk (one SQLite transaction
and one file read, the value checked against its checksum), then ``build()`` under a
per-key lock shared with other processes, so a kernel that several processes miss at once
is built once and stored once.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._envelope import CorruptEntry, Decoded, ForeignFormat, decode, encode
from ._keys import canonical_components, make_key
from ._locks import KeyLocks
from ._memory import Item, MemoryFront
from ._paths import (
    ENV_CACHE_DIR,
    ENV_MAX_SIZE,
    MEMORY,
    default_path,
    env_wants_memory,
    make_private_dir,
)
from ._sizes import MAX_SIZE, format_size, parse_size
from ._store import DISK_ERRORS, DiskStore

log = logging.getLogger("stitchlab.registry")

RECORD_PREFIX = "record/"
DEFAULT_MAX_SIZE = 2**30

Build = Callable[[], tuple[bytes, dict[str, Any]]]


class RegistryWarning(UserWarning):
    """The registry fell back to memory, or dropped a corrupt entry."""


@dataclass(frozen=True)
class Entry:
    """A compiled kernel as the registry returns it.

    Attributes:
        key: the registry key (``make_key(components)``).
        blob: the cubin bytes.
        meta: the metadata stored with it (a fresh dict, safe to modify).
        hit: True if no build ran in this call.
        components: the key components.
        created: when the entry was stored (seconds since the epoch).
    """

    key: str
    blob: bytes
    meta: dict[str, Any]
    hit: bool
    components: dict[str, str]
    created: float


def record_key(kind: str, name: str) -> str:
    """Return the registry key of the record ``kind``/``name``.

    Raises:
        ValueError: if ``kind`` is empty or contains "/", or ``name`` is empty.
    """
    if not isinstance(kind, str) or not kind or "/" in kind:
        raise ValueError(f"record kind {kind!r} must be a non-empty str without '/', e.g. 'plan'")
    if not isinstance(name, str) or not name:
        raise ValueError(f"record name {name!r} must be a non-empty str")
    for what, text in (("kind", kind), ("name", name)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, e.g. from a file name decoded badly
            raise ValueError(
                f"record {what} {text!r} is not valid Unicode text (a lone surrogate); "
                f"pass text that encodes as UTF-8"
            ) from None
    return f"{RECORD_PREFIX}{kind}/{name}"


class KernelRegistry:
    """A persistent, process-safe cache of compiled kernels (cubins) and JSON records.

    Args:
        path: the registry directory. None: ``$STITCHLAB_CACHE_DIR``, else the user cache
            directory (``~/.cache/stitchlab``); ``":memory:"`` means memory-only.
        max_size: size cap in bytes for the disk (least recently used entries are evicted)
            and for the in-memory front.
        memory_only: keep everything in this process's memory.
        lock_timeout: seconds to wait for another process building the same key before
            building it here as well (the first stored value then wins).

    Example:
        >>> reg = KernelRegistry(memory_only=True)
        >>> e = reg.get_or_build({"source_digest": "ab12", "gpu_arch": "sm_90"},
        ...                      lambda: (b"cubin", {"name": "k"}))
        >>> e.hit, reg.get_or_build(e.components, lambda: (b"x", {})).hit
        (False, True)
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        memory_only: bool = False,
        lock_timeout: float = 300.0,
    ) -> None:
        if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size <= 0:
            raise ValueError(f"max_size={max_size!r} must be a positive number of bytes")
        if max_size > MAX_SIZE:
            raise ValueError(f"max_size={max_size!r} is over the largest size {MAX_SIZE} bytes")
        if (
            isinstance(lock_timeout, bool)
            or not isinstance(lock_timeout, int | float)
            or not 0 <= lock_timeout < math.inf
        ):
            raise ValueError(
                f"lock_timeout={lock_timeout!r} must be a finite number of seconds >= 0"
            )
        if path is not None and not os.fspath(path):
            raise ValueError(
                "path='' names no directory (it would be the current directory); give a "
                f"directory, None for ${ENV_CACHE_DIR} or the user cache directory, or "
                f"{MEMORY!r} for memory-only"
            )
        self.max_size = max_size
        self.lock_timeout = lock_timeout
        self._lock = threading.RLock()
        self._front = MemoryFront(max_size)
        self._counters = dict.fromkeys(
            (
                "hits",
                "misses",
                "builds",
                "build_failures",
                "memory_hits",
                "disk_hits",
                "disk_reads",
                "disk_writes",
                "evictions",
                "front_evictions",
                "corrupt_dropped",
            ),
            0,
        )
        self._build_seconds = 0.0
        self._warned_keys: set[str] = set()
        self._degraded: str | None = None
        self._store: DiskStore | None = None
        memory = memory_only or (path is None and env_wants_memory()) or str(path) == MEMORY
        self.path: Path | None = None if memory else Path(default_path() if path is None else path)
        if self.path is not None:
            try:
                make_private_dir(self.path)
                self._store = DiskStore(self.path, max_size)
            except DISK_ERRORS as error:
                self._degrade(error)
        self._locks = KeyLocks(self.path if self._store is not None else None)

    # -- kernels --------------------------------------------------------------------------

    def get_or_build(self, components: Mapping[str, str], build: Build) -> Entry:
        """Return the kernel for ``components``, calling ``build()`` only on a miss.

        The build runs at most once per key across the processes sharing the directory
        (a per-key file lock; while one process builds, the others wait and then load its
        result). Where no lock can be had, both build and the first stored value wins.

        Args:
            components: the key components (see :data:`KEY_COMPONENTS`).
            build: returns ``(cubin, meta)``: ``bytes`` and a JSON-serializable dict.

        Returns:
            The :class:`Entry`; ``entry.hit`` is False if ``build`` ran in this call.

        Raises:
            TypeError: if ``build`` returns something other than ``(bytes, dict)``.
            Exception: whatever ``build`` raises (nothing is stored then).
        """
        components = canonical_components(components)
        key = make_key(components)
        entry = self._lookup(key)
        if entry is not None:
            return entry
        with self._locks.hold(key, self.lock_timeout) as exclusive:
            entry = self._lookup(key, after_wait=True)
            if entry is not None:
                return entry
            self._count("misses")
            blob, meta = self._run_build(key, build)
            return self._store_kernel(key, components, blob, meta, first_wins=not exclusive)

    def get(self, key: str) -> Entry | None:
        """Return the kernel stored under ``key``, or None (no build)."""
        entry = self._lookup(key)
        if entry is None:
            self._count("misses")
        return entry

    def put(self, components: Mapping[str, str], blob: bytes, meta: dict[str, Any]) -> Entry:
        """Store a kernel built elsewhere (replacing any entry with the same key).

        Raises:
            TypeError: if ``blob`` is not bytes or ``meta`` is not a JSON-serializable dict.
        """
        components = canonical_components(components)
        key = make_key(components)
        blob, meta = _check_built(key, (blob, meta))
        with self._locks.hold(key, self.lock_timeout):
            return self._store_kernel(key, components, blob, meta, first_wins=False)

    def explain_miss(self, components: Mapping[str, str]) -> str:
        """Say whether ``components`` are stored and, if not, how the nearest entry differs.

        The nearest entry is the kernel whose components differ in the fewest names.

        Example output::

            miss: key 3f2a9c1d0b7e… is not stored; the nearest entry 9d0e11aa42c5… differs in
            1 of 9 components: gpu_arch: stored 'sm_80', asked 'sm_90'
        """
        components = canonical_components(components)
        key = make_key(components)
        with self._lock:
            in_front = key in self._front
        if in_front or self._peek_disk(key):
            return f"hit: key {key} is stored"
        candidates = self._kernel_components()
        where = str(self.path) if self._store is not None else "memory"
        if not candidates:
            return f"miss: key {key[:12]}… is not stored; the registry ({where}) holds no kernels"

        def distance(item: tuple[str, dict[str, str]]) -> int:
            names = set(item[1]) | set(components)
            return sum(item[1].get(n) != components.get(n) for n in names)

        near_key, near = min(candidates.items(), key=distance)
        names = sorted(set(near) | set(components))
        diffs = []
        for name in names:
            stored, asked = near.get(name), components.get(name)
            if stored == asked:
                continue
            if stored is None:
                diffs.append(f"{name}: only in the request ({_short(asked)})")
            elif asked is None:
                diffs.append(f"{name}: only in the stored entry ({_short(stored)})")
            else:
                diffs.append(f"{name}: stored {_short(stored)}, asked {_short(asked)}")
        return (
            f"miss: key {key[:12]}… is not stored; the nearest entry {near_key[:12]}… "
            f"differs in {len(diffs)} of {len(names)} components: " + "; ".join(diffs)
        )

    # -- records (plans, autotuning results) ----------------------------------------------

    def put_record(self, kind: str, name: str, data: dict[str, Any]) -> None:
        """Store a JSON record, e.g. ``put_record("autotune", key, {"best": {...}})``.

        Raises:
            ValueError: if ``kind`` or ``name`` is not usable (see :func:`record_key`).
            TypeError: if ``data`` is not a JSON-serializable dict.
        """
        key = record_key(kind, name)
        if not isinstance(data, dict):
            raise TypeError(f"record {kind}/{name}: data is {type(data).__name__}; pass a dict")
        try:
            payload = json.dumps(data, sort_keys=True).encode("utf-8")
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"record {kind}/{name} is not JSON-serializable ({error}); "
                f"store only dicts, lists, str, numbers, bool and None"
            ) from None
        header = {"kind": "record", "record": {"kind": kind, "name": name}, "created": time.time()}
        value = encode(key, header, payload)
        tag = {"kind": "record", "record": header["record"]}
        self._write(key, value, tag, first_wins=False)
        self._remember(key, Item(header=dict(header, key=key), payload=payload, size=len(value)))

    def get_record(self, kind: str, name: str) -> dict[str, Any] | None:
        """Return the record ``kind``/``name`` (a fresh dict), or None."""
        key = record_key(kind, name)
        with self._lock:
            item = self._front.get(key)
        if item is None:
            decoded = self._read_disk(key)
            if decoded is None or decoded.kind != "record":
                return None
            item = Item(header=decoded.header, payload=decoded.payload, size=0)
            self._remember(key, item)
        return json.loads(item.payload)

    # -- management -----------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """``"disk"`` or ``"memory"``."""
        return "disk" if self._store is not None else "memory"

    def stats(self) -> dict[str, Any]:
        """Return the counters of this process and the size of the registry.

        Keys: ``hits``, ``misses``, ``builds``, ``disk_reads``, ``evictions``, ``entries``,
        ``bytes``, ``path``, ``mode``, and also ``memory_hits``, ``disk_hits``,
        ``disk_writes``, ``build_failures``, ``build_seconds``, ``front_evictions``,
        ``corrupt_dropped``, ``memory_entries``, ``memory_bytes``, ``max_size``,
        ``degraded`` (the reason, or None).
        """
        with self._lock:
            result: dict[str, Any] = dict(self._counters)
            result["build_seconds"] = round(self._build_seconds, 6)
            result["memory_entries"] = len(self._front)
            result["memory_bytes"] = self._front.bytes
        store = self._store
        entries, size = result["memory_entries"], result["memory_bytes"]
        if store is not None:
            try:
                entries, size = store.count(), store.volume()
            except DISK_ERRORS as error:
                self._degrade(error)
        result.update(
            entries=entries,
            bytes=size,
            path=str(self.path) if self.path is not None else None,
            mode=self.mode,
            max_size=self.max_size,
            degraded=self._degraded,
        )
        return result

    def entries(self) -> list[dict[str, Any]]:
        """Summaries of every entry, least recently used first.

        Each has ``key``, ``kind`` (``"kernel"``/``"record"``), ``size``, ``hits`` (loads
        from disk by any process plus this process's memory hits), ``components`` (kernels)
        or ``record`` (``{"kind", "name"}``), ``created``, ``last_access`` and ``location``.
        """
        with self._lock:
            front = {key: (item.hits, item.last_access, item) for key, item in self._front.items()}
        result = []
        seen = set()
        store = self._store
        if store is not None:
            try:
                rows = store.rows()
            except DISK_ERRORS as error:
                self._degrade(error)
                rows = []
            for row in rows:
                seen.add(row.key)
                tag = row.tag or {}
                hits, accessed, _ = front.get(row.key, (0, 0.0, None))
                summary = _summary(row.key, tag, row.size, row.loads + hits, row.created)
                summary.update(last_access=max(row.last_access, accessed), location="disk")
                result.append(summary)
        for key, (hits, accessed, item) in front.items():
            if key in seen:
                continue
            summary = _summary(key, item.header, item.size, hits, item.header.get("created", 0.0))
            summary.update(last_access=accessed, location="memory")
            result.append(summary)
        return result

    def evict(self, key: str) -> bool:
        """Remove ``key`` from memory and disk; return True if it was present."""
        with self._lock:
            found = self._front.pop(key) is not None
        store = self._store
        if store is not None:
            try:
                found = store.delete(key) or found
            except DISK_ERRORS as error:
                self._degrade(error)
        return found

    def clear(self) -> int:
        """Remove every entry and record; return how many were removed."""
        with self._lock:
            count = self._front.clear()
            self._warned_keys.clear()
        store = self._store
        if store is not None:
            try:
                count = store.clear()
            except DISK_ERRORS as error:
                self._degrade(error)
        return count

    def prune(self, max_size: int) -> list[str]:
        """Evict least recently used entries until the registry holds at most ``max_size`` bytes.

        Returns:
            The evicted keys.
        """
        max_size = parse_size(max_size)
        store = self._store
        if store is None:
            with self._lock:
                evicted = self._front.trim(max_size)
                self._counters["evictions"] += len(evicted)
            return evicted
        try:
            evicted = store.evict_to(max_size)
        except DISK_ERRORS as error:
            self._degrade(error)
            return []
        with self._lock:
            for key in evicted:
                self._front.pop(key)
            self._counters["evictions"] += len(evicted)
        return evicted

    def stored_value(self, key: str) -> bytes | None:
        """Return the checked stored value (header + payload) of ``key`` for export, or None."""
        with self._lock:
            item = self._front.peek(key)
        if item is not None:
            header = {k: v for k, v in item.header.items() if k != "key"}
            return encode(key, header, item.payload)
        if self._store is None:
            return None
        try:
            value = self._store.load(key)
            return value if value is not None and decode(key, value) else None
        except CorruptEntry:
            return None
        except DISK_ERRORS as error:
            self._degrade(error)
            return None

    def import_value(self, key: str, value: bytes) -> str:
        """Store a value exported by :meth:`stored_value` after checking it completely.

        Returns:
            The entry kind (``"kernel"`` or ``"record"``).

        Raises:
            CorruptEntry: if the value fails any check (checksum, key, components).
        """
        decoded = decode(key, value)
        header = decoded.header
        if decoded.kind == "kernel":
            tag = {"kind": "kernel", "components": header["components"]}
        else:
            tag = {"kind": "record", "record": header.get("record")}
        self._write(key, value, tag, first_wins=False)
        self._remember(key, Item(header=header, payload=decoded.payload, size=len(value)))
        return decoded.kind

    def close(self) -> None:
        """Close the database connection of this thread (the registry reopens on use)."""
        if self._store is not None:
            self._store.close()

    def __repr__(self) -> str:
        where = str(self.path) if self._store is not None else "memory"
        return f"KernelRegistry({where!r}, max_size={format_size(self.max_size)})"

    # -- internals ------------------------------------------------------------------------

    def _count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self._counters[name] += amount

    def _lookup(self, key: str, after_wait: bool = False) -> Entry | None:
        with self._lock:
            item = self._front.get(key)
            if item is not None:
                self._counters["hits"] += 1
                self._counters["memory_hits"] += 1
        if item is None:
            start = time.perf_counter()
            decoded = self._read_disk(key)
            if decoded is None or decoded.kind != "kernel":
                return None
            item = Item(header=decoded.header, payload=decoded.payload, size=0)
            self._remember(key, item)
            self._count("hits")
            self._count("disk_hits")
            log.debug(
                "registry hit (disk%s) %s in %.2f ms",
                ", built by another process" if after_wait else "",
                key[:12],
                (time.perf_counter() - start) * 1e3,
            )
        return _entry(key, item, hit=True)

    def _read_disk(self, key: str) -> Decoded | None:
        """Load and check ``key`` from disk; drop it (with one warning) if it is corrupt."""
        store = self._store
        if store is None:
            return None
        self._count("disk_reads")
        value: bytes | None = None
        try:
            value = store.load(key)
            return decode(key, value) if value is not None else None
        except ForeignFormat as error:
            log.debug("registry miss %s: %s", key[:12], error)
            return None
        except CorruptEntry as error:
            self._drop_corrupt(key, error, value)
            return None
        except DISK_ERRORS as error:
            self._degrade(error)
            return None

    def _peek_disk(self, key: str) -> bool:
        store = self._store
        if store is None:
            return False
        try:
            return store.contains(key)
        except DISK_ERRORS:
            return False

    def _drop_corrupt(self, key: str, error: Exception, seen: bytes | None) -> None:
        with self._lock:
            first = key not in self._warned_keys
            self._warned_keys.add(key)
            self._counters["corrupt_dropped"] += 1
        if first:
            warnings.warn(
                f"stitchlab registry: dropped the corrupt entry {key} in {self.path} "
                f"({error}); it is not used and will be rebuilt",
                RegistryWarning,
                stacklevel=4,
            )
        store = self._store
        if store is not None:
            try:
                store.delete_if_unchanged(key, seen)
            except DISK_ERRORS as disk_error:
                self._degrade(disk_error)

    def _run_build(self, key: str, build: Build) -> tuple[bytes, dict[str, Any]]:
        log.debug("registry miss %s: building", key[:12])
        self._count("builds")
        start = time.perf_counter()
        try:
            result = build()
        except BaseException:
            self._count("build_failures")
            raise
        finally:
            elapsed = time.perf_counter() - start
            with self._lock:
                self._build_seconds += elapsed
        blob, meta = _check_built(key, result)
        log.debug("registry built %s in %.3f s (%d bytes)", key[:12], elapsed, len(blob))
        return blob, meta

    def _store_kernel(
        self,
        key: str,
        components: dict[str, str],
        blob: bytes,
        meta: dict[str, Any],
        first_wins: bool,
    ) -> Entry:
        header = {"kind": "kernel", "components": components, "meta": meta, "created": time.time()}
        value = encode(key, header, blob)
        tag = {"kind": "kernel", "components": components}
        winner = self._write(key, value, tag, first_wins=first_wins)
        if winner is not None:  # another process stored it first: use its (equal) value
            item = Item(header=winner.header, payload=winner.payload, size=len(value))
        else:
            item = Item(header=dict(header, key=key), payload=blob, size=len(value))
        self._remember(key, item)
        return _entry(key, item, hit=False)

    def _write(
        self, key: str, value: bytes, tag: dict[str, Any], first_wins: bool
    ) -> Decoded | None:
        """Write ``value`` to disk; return the existing value if ``first_wins`` and one won."""
        store = self._store
        if store is None:
            return None
        if len(value) > self.max_size:
            warnings.warn(
                f"stitchlab registry: entry {key} ({format_size(len(value))}) is larger than "
                f"max_size ({format_size(self.max_size)}); it is not stored. Raise max_size "
                f"or ${ENV_MAX_SIZE}.",
                RegistryWarning,
                stacklevel=4,
            )
            return None
        try:
            if first_wins and not store.put(key, value, tag, only_if_absent=True):
                existing = self._read_disk(key)
                if existing is not None:
                    return existing
                store.put(key, value, tag)
            elif not first_wins:
                store.put(key, value, tag)
            self._count("disk_writes")
            evicted = store.evict_to(self.max_size)
        except DISK_ERRORS as error:
            self._degrade(error)
            return None
        if evicted:
            log.debug(
                "registry evicted %d entries to stay under %d bytes", len(evicted), self.max_size
            )
            with self._lock:
                self._counters["evictions"] += len(evicted)
        return None

    def _remember(self, key: str, item: Item) -> None:
        if item.size == 0:
            item.size = len(item.payload) + len(json.dumps(item.header))
        with self._lock:
            evicted = self._front.put(key, item)
            self._counters["front_evictions"] += len(evicted)
            if self._store is None:
                self._counters["evictions"] += len(evicted)

    def _kernel_components(self) -> dict[str, dict[str, str]]:
        found: dict[str, dict[str, str]] = {}
        with self._lock:
            for key, item in self._front.items():
                if item.header.get("kind") == "kernel":
                    found[key] = dict(item.header["components"])
        store = self._store
        if store is not None:
            try:
                for row in store.rows():
                    tag = row.tag or {}
                    if tag.get("kind") == "kernel" and isinstance(tag.get("components"), dict):
                        found.setdefault(row.key, tag["components"])
            except DISK_ERRORS as error:
                self._degrade(error)
        return found

    def _degrade(self, error: BaseException) -> None:
        """Switch to memory-only with one warning that names the directory and the fix."""
        with self._lock:
            if self._degraded is not None:
                self._store = None
                return
            self._degraded = f"{type(error).__name__}: {error}"
            store, self._store = self._store, None
            self._locks = KeyLocks(None)
        if store is not None:
            try:
                store.close()
            except DISK_ERRORS:
                pass
        warnings.warn(
            f"stitchlab registry: cannot use the directory {self.path} ({self._degraded}); "
            f"compiled kernels are kept in memory for this process only. Set ${ENV_CACHE_DIR} "
            f"to a writable directory, or ${ENV_CACHE_DIR}={MEMORY} to choose memory-only.",
            RegistryWarning,
            stacklevel=3,
        )


def _check_built(key: str, result: object) -> tuple[bytes, dict[str, Any]]:
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(
            f"the build for registry key {key} returned {type(result).__name__}; "
            f"return a tuple (cubin: bytes, meta: dict)"
        )
    blob, meta = result
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(
            f"the build for registry key {key} returned a {type(blob).__name__} cubin; return bytes"
        )
    if not isinstance(meta, dict):
        raise TypeError(
            f"the build for registry key {key} returned {type(meta).__name__} metadata; return a dict"
        )
    try:
        meta = json.loads(json.dumps(meta))
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"the metadata for registry key {key} is not JSON-serializable ({error}); "
            f"use only dicts, lists, str, numbers, bool and None"
        ) from None
    return bytes(blob), meta


def _entry(key: str, item: Item, hit: bool) -> Entry:
    header = item.header
    return Entry(
        key=key,
        blob=item.payload,
        meta=json.loads(json.dumps(header.get("meta", {}))),
        hit=hit,
        components=dict(header.get("components", {})),
        created=float(header.get("created", 0.0)),
    )


def _summary(key: str, tag: dict[str, Any], size: int, hits: int, created: float) -> dict[str, Any]:
    kind = tag.get("kind", "unknown")
    summary: dict[str, Any] = {"key": key, "kind": kind, "size": size, "hits": hits}
    # the tag comes from the index, which may be damaged: only a dict is passed on
    field = "record" if kind == "record" else "components"
    value = tag.get(field)
    summary[field] = value if isinstance(value, dict) else None
    summary["created"] = created
    return summary


def _short(value: str | None, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 2] + "…'"


_default: KernelRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> KernelRegistry:
    """Return the process-wide registry, created on first use from the environment.

    ``$STITCHLAB_CACHE_DIR`` names the directory (``":memory:"`` for memory-only, as does
    ``STITCHLAB_REGISTRY=memory``); ``$STITCHLAB_CACHE_MAX_SIZE`` the cap (e.g. ``4GiB``).
    """
    global _default
    with _default_lock:
        if _default is None:
            max_size = DEFAULT_MAX_SIZE
            configured = os.environ.get(ENV_MAX_SIZE, "").strip()
            if configured:
                max_size = env_max_size(configured)
            _default = KernelRegistry(memory_only=env_wants_memory(), max_size=max_size)
        return _default


def env_max_size(configured: str) -> int:
    """The size cap ``$STITCHLAB_CACHE_MAX_SIZE`` gives.

    Raises:
        ValueError: naming the variable, its value and the fix.
    """
    try:
        size = parse_size(configured)
    except ValueError as error:
        raise ValueError(f"${ENV_MAX_SIZE}: {error}") from None
    if size <= 0:
        raise ValueError(
            f"${ENV_MAX_SIZE}: size {configured!r} leaves no room at all; give a positive size "
            f"such as 512MiB, or ${ENV_CACHE_DIR}={MEMORY} for a memory-only registry"
        )
    return size


def reset_default_registry() -> None:
    """Forget the process-wide registry; the next :func:`default_registry` reads the environment again."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
        _default = None
