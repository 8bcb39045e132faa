"""Fault injection: every fault gives the documented behaviour (docs/registry.md, "Faults")."""

from __future__ import annotations

import os
import sqlite3
import warnings
from pathlib import Path

import pytest
from registry_helpers import index_keys, kernel_components, payload, value_path
from stitchlab.registry import KernelRegistry, RegistryWarning, _store, make_key


def _stored(cache_dir: Path, i: int = 0, size: int = 3000) -> str:
    registry = KernelRegistry(cache_dir)
    return registry.put(kernel_components(i), payload(i, size), {"i": i}).key


def _rebuild(cache_dir: Path, i: int = 0) -> tuple[object, list[int]]:
    calls: list[int] = []

    def build() -> tuple[bytes, dict]:
        calls.append(i)
        return payload(i), {"i": i}

    return KernelRegistry(cache_dir).get_or_build(kernel_components(i), build), calls


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip_one_bit", "empty"])
def test_corrupt_value_is_dropped_and_rebuilt_with_one_warning(
    cache_dir: Path, damage: str
) -> None:
    key = _stored(cache_dir)
    path = value_path(cache_dir, key)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif damage == "flip_one_bit":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    else:
        path.write_bytes(b"")
    with pytest.warns(RegistryWarning, match=f"dropped the corrupt entry {key}") as caught:
        entry, calls = _rebuild(cache_dir)
    assert len([w for w in caught if issubclass(w.category, RegistryWarning)]) == 1
    assert calls == [0] and entry.blob == payload(0) and not entry.hit
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegistryWarning)
        again, calls = _rebuild(cache_dir)  # the rebuilt entry is now trusted
    assert calls == [] and again.hit and again.blob == payload(0)


def test_value_of_another_key_is_not_trusted(cache_dir: Path) -> None:
    """A valid value file behind the wrong index row (e.g. swapped files) is corrupt."""
    key_a, key_b = _stored(cache_dir, 0), _stored(cache_dir, 1)
    value_path(cache_dir, key_a).write_bytes(value_path(cache_dir, key_b).read_bytes())
    with pytest.warns(RegistryWarning, match="header belongs to key"):
        entry, calls = _rebuild(cache_dir, 0)
    assert calls == [0] and entry.blob == payload(0)


def test_deleted_value_file_is_a_clean_miss(cache_dir: Path) -> None:
    key = _stored(cache_dir)
    value_path(cache_dir, key).unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegistryWarning)
        entry, calls = _rebuild(cache_dir)
    assert calls == [0] and entry.blob == payload(0)
    assert index_keys(cache_dir) == [key]  # the stale row was replaced, not duplicated
    assert value_path(cache_dir, key).read_bytes()


def test_entry_of_another_format_version_misses_cleanly(cache_dir: Path) -> None:
    key = _stored(cache_dir)
    path = value_path(cache_dir, key)
    data = bytearray(path.read_bytes())
    data[5] = 99  # the format version byte after the magic
    path.write_bytes(bytes(data))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegistryWarning)
        entry, calls = _rebuild(cache_dir)
    assert calls == [0] and entry.blob == payload(0)


def test_entries_of_another_arch_or_version_miss_cleanly(cache_dir: Path) -> None:
    registry = KernelRegistry(cache_dir)
    registry.put(kernel_components(0, gpu_arch="sm_80"), b"old arch", {})
    registry.put(kernel_components(0, codegen_version="0"), b"old codegen", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegistryWarning)
        entry, calls = _rebuild(cache_dir)
    assert calls == [0] and entry.blob == payload(0)
    assert "codegen_version" in registry.explain_miss(kernel_components(0, codegen_version="2"))


def test_unusable_directory_degrades_to_memory_with_one_warning(tmp_path: Path) -> None:
    """Tests run as root, so chmod cannot make a directory read-only: a file is in the way."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.warns(RegistryWarning, match="cannot use the directory") as caught:
        registry = KernelRegistry(blocker / "registry")
        for i in range(3):
            registry.get_or_build(kernel_components(i), lambda i=i: (payload(i), {}))
            registry.get_or_build(kernel_components(i), lambda: pytest.fail("rebuilt"))
        registry.put_record("plan", "p", {"a": 1})
        registry.stats()
        registry.entries()
    assert len(caught) == 1
    assert "STITCHLAB_CACHE_DIR" in str(caught[0].message)
    stats = registry.stats()
    assert stats["mode"] == "memory" and stats["degraded"] and stats["builds"] == 3
    assert registry.get_record("plan", "p") == {"a": 1}


def test_directory_that_turns_read_only_degrades_once(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Simulated: SQLite reports a read-only database on every write from now on."""
    registry = KernelRegistry(cache_dir)
    registry.put(kernel_components(0), payload(0), {})

    def read_only(*args: object, **kwargs: object) -> bool:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(_store.DiskStore, "put", read_only)
    with pytest.warns(RegistryWarning, match="readonly database") as caught:
        for i in range(1, 4):
            entry = registry.get_or_build(kernel_components(i), lambda i=i: (payload(i), {}))
            assert entry.blob == payload(i)
    assert len(caught) == 1 and registry.mode == "memory"
    assert registry.get_or_build(kernel_components(2), lambda: pytest.fail("rebuilt")).hit
    assert registry.get(make_key(kernel_components(0))) is not None  # still in memory


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="root ignores directory permissions"
)
def test_read_only_directory_degrades_to_memory(cache_dir: Path) -> None:
    KernelRegistry(cache_dir).put(kernel_components(0), payload(0), {})
    os.chmod(cache_dir, 0o500)
    try:
        with pytest.warns(RegistryWarning, match="cannot use the directory"):
            registry = KernelRegistry(cache_dir)
            registry.get_or_build(kernel_components(1), lambda: (payload(1), {}))
        assert registry.mode == "memory"
    finally:
        os.chmod(cache_dir, 0o700)


def test_size_cap_evicts_least_recently_used(cache_dir: Path) -> None:
    cap = 400 * 1024
    registry = KernelRegistry(cache_dir, max_size=cap)
    for i in range(8):
        registry.put(kernel_components(i), payload(i, 30_000), {})
    # Load kernel 0 through another instance (its memory front is empty): it is now recent.
    assert KernelRegistry(cache_dir, max_size=cap).get(make_key(kernel_components(0))) is not None
    for i in range(8, 24):
        registry.put(kernel_components(i), payload(i, 30_000), {})
        assert registry.stats()["bytes"] <= cap
    stats = registry.stats()
    assert stats["evictions"] > 0
    kept = set(index_keys(cache_dir))
    assert make_key(kernel_components(23)) in kept  # the newest
    assert make_key(kernel_components(1)) not in kept  # the least recently used
    fresh = KernelRegistry(cache_dir, max_size=cap)
    assert fresh.get(make_key(kernel_components(1))) is None
    assert fresh.get(make_key(kernel_components(23))).blob == payload(23, 30_000)


def test_entry_larger_than_the_cap_is_used_but_not_stored(cache_dir: Path) -> None:
    registry = KernelRegistry(cache_dir, max_size=64 * 1024)
    with pytest.warns(RegistryWarning, match="larger than max_size"):
        entry = registry.get_or_build(kernel_components(0), lambda: (payload(0, 100_000), {}))
    assert entry.blob == payload(0, 100_000)
    assert index_keys(cache_dir) == []


def test_corrupt_index_database_degrades_to_memory(cache_dir: Path) -> None:
    KernelRegistry(cache_dir).put(kernel_components(0), payload(0), {})
    for name in ("cache.db-wal", "cache.db-shm"):
        (cache_dir / name).unlink(missing_ok=True)
    (cache_dir / "cache.db").write_bytes(b"this is not a database" * 100)
    with pytest.warns(RegistryWarning, match="cannot use the directory"):
        registry = KernelRegistry(cache_dir)
    entry = registry.get_or_build(kernel_components(0), lambda: (payload(0), {}))
    assert entry.blob == payload(0) and registry.mode == "memory"


def _damage_index(cache_dir: Path, statement: str, *params: object) -> None:
    with sqlite3.connect(cache_dir / "cache.db") as db:
        db.execute(statement, params)
    db.close()


def test_index_row_naming_a_file_outside_the_directory_never_touches_it(
    cache_dir: Path, tmp_path: Path
) -> None:
    """A damaged or planted row's file name is not opened, and dropping the row removes nothing."""
    _stored(cache_dir)
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    _damage_index(cache_dir, "UPDATE Cache SET filename = ?", str(victim))
    with pytest.warns(RegistryWarning, match="not one diskcache makes"):
        entry, calls = _rebuild(cache_dir)
    assert calls == [0] and entry.blob == payload(0)
    assert victim.read_text() == "keep me"
    _stored(cache_dir, 1)
    _damage_index(cache_dir, "UPDATE Cache SET filename = ?", "../precious.txt")
    KernelRegistry(cache_dir).clear()
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE Cache SET filename = NULL",
        "UPDATE Cache SET size = 'x', store_time = 'x', access_time = NULL, access_count = 'x'",
        "UPDATE Settings SET value = 'garbage' WHERE key IN ('count', 'size')",
    ],
)
def test_damaged_index_columns_are_a_miss_or_ignored_never_a_crash(
    cache_dir: Path, statement: str
) -> None:
    _stored(cache_dir)
    _damage_index(cache_dir, statement)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegistryWarning)
        registry = KernelRegistry(cache_dir)
        entry = registry.get_or_build(kernel_components(0), lambda: (payload(0), {"i": 0}))
        assert entry.blob == payload(0) and entry.meta == {"i": 0}
        stats = registry.stats()
        assert stats["entries"] == 1 and stats["bytes"] > 0
        assert [e["key"] for e in registry.entries()] == [entry.key]
        assert registry.prune(0) == [entry.key]
