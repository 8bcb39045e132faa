"""The registry's promises in one process: hits, misses, records, stats, keys, paths."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from registry_helpers import kernel_components, payload
from stitchlab.registry import (
    KEY_COMPONENTS,
    Entry,
    KernelRegistry,
    default_registry,
    digest,
    format_size,
    make_key,
    parse_size,
    reset_default_registry,
)


def test_second_call_builds_nothing(registry: KernelRegistry) -> None:
    calls = []

    def build() -> tuple[bytes, dict]:
        calls.append(1)
        return payload(0), {"name": "scale", "regs": 12}

    first = registry.get_or_build(kernel_components(0), build)
    second = registry.get_or_build(kernel_components(0), build)
    assert len(calls) == 1
    assert (first.hit, second.hit) == (False, True)
    assert second.blob == payload(0) and second.meta == {"name": "scale", "regs": 12}
    assert second.key == make_key(kernel_components(0)) and second.components == kernel_components(
        0
    )


def test_real_cubin_round_trips_byte_identical(
    registry: KernelRegistry, cache_dir: Path, cubins: list[bytes]
) -> None:
    for number, cubin in enumerate(cubins):
        registry.get_or_build(
            kernel_components(number), lambda cubin=cubin, n=number: (cubin, {"n": n})
        )
    fresh = KernelRegistry(cache_dir)
    for number, cubin in enumerate(cubins):
        entry = fresh.get_or_build(kernel_components(number), lambda: pytest.fail("rebuilt"))
        assert entry.hit and entry.blob == cubin and entry.blob[:4] == b"\x7fELF"


def test_memory_hit_touches_no_disk(registry: KernelRegistry) -> None:
    registry.get_or_build(kernel_components(0), lambda: (payload(0), {}))
    reads = registry.stats()["disk_reads"]
    for _ in range(100):
        assert registry.get_or_build(kernel_components(0), lambda: (b"", {})).hit
    stats = registry.stats()
    assert stats["disk_reads"] == reads
    assert stats["memory_hits"] == 100


def test_entry_meta_is_a_fresh_dict(registry: KernelRegistry) -> None:
    entry = registry.get_or_build(kernel_components(0), lambda: (payload(0), {"a": [1]}))
    entry.meta["a"].append(2)
    assert registry.get(entry.key).meta == {"a": [1]}


def test_get_and_put(registry: KernelRegistry, cache_dir: Path) -> None:
    key = make_key(kernel_components(3))
    assert registry.get(key) is None
    put = registry.put(kernel_components(3), payload(3), {"x": 1})
    assert isinstance(put, Entry) and put.key == key and not put.hit
    got = KernelRegistry(cache_dir).get(key)
    assert got is not None and got.blob == payload(3) and got.meta == {"x": 1} and got.hit


def test_failed_build_stores_nothing(registry: KernelRegistry) -> None:
    def broken() -> tuple[bytes, dict]:
        raise RuntimeError("nvrtc said no")

    with pytest.raises(RuntimeError, match="nvrtc said no"):
        registry.get_or_build(kernel_components(0), broken)
    assert registry.get(make_key(kernel_components(0))) is None
    assert registry.stats()["build_failures"] == 1


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("cubin", "returned str; return a tuple"),
        (("cubin", {}), "returned a str cubin; return bytes"),
        ((b"x", ["meta"]), "returned list metadata; return a dict"),
        ((b"x", {"f": object()}), "not JSON-serializable"),
    ],
)
def test_bad_build_results_are_named(
    registry: KernelRegistry, result: object, message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        registry.get_or_build(kernel_components(0), lambda: result)


@pytest.mark.parametrize(
    ("components", "message"),
    [
        ({"gpu_arch": 90}, "key component 'gpu_arch' is int"),
        ({}, "empty"),
        ([("gpu_arch", "sm_90")], "must be a dict"),
    ],
)
def test_bad_components_are_named(components: object, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        make_key(components)  # type: ignore[arg-type]


def test_key_is_sha256_of_canonical_sorted_json() -> None:
    import hashlib
    import json

    components = kernel_components(7)
    canonical = json.dumps(components, sort_keys=True, separators=(",", ":"))
    assert make_key(components) == hashlib.sha256(canonical.encode()).hexdigest()
    assert make_key(dict(reversed(list(components.items())))) == make_key(components)
    # Pinned: a change here invalidates every registry in the field.
    assert (
        make_key(components) == "67fe153cddd69de4e194ea976fc255f718c510a735b95482b987fb119e190514"
    )
    assert set(KEY_COMPONENTS) == set(components)
    assert digest("abc") == hashlib.sha256(b"abc").hexdigest()


def test_records_round_trip_across_instances(registry: KernelRegistry, cache_dir: Path) -> None:
    registry.put_record("plan", "softmax/64x512", {"groups": [[0, 1, 2]], "score": 1.5})
    registry.put_record("autotune", "k1", {"best": {"block": 256}, "times_us": [3.1, 2.9]})
    fresh = KernelRegistry(cache_dir)
    assert fresh.get_record("plan", "softmax/64x512") == {"groups": [[0, 1, 2]], "score": 1.5}
    assert fresh.get_record("autotune", "k1")["best"] == {"block": 256}
    assert fresh.get_record("plan", "missing") is None
    registry.put_record("plan", "softmax/64x512", {"groups": []})
    assert KernelRegistry(cache_dir).get_record("plan", "softmax/64x512") == {"groups": []}


def test_bad_records_are_refused_with_the_fix(registry: KernelRegistry) -> None:
    with pytest.raises(ValueError, match="without '/'"):
        registry.put_record("a/b", "n", {})
    with pytest.raises(TypeError, match="pass a dict"):
        registry.put_record("plan", "n", [1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not JSON-serializable"):
        registry.put_record("plan", "n", {"x": {1, 2}})


def test_stats_have_the_documented_keys(registry: KernelRegistry, cache_dir: Path) -> None:
    registry.get_or_build(kernel_components(0), lambda: (payload(0), {}))
    registry.get_or_build(kernel_components(0), lambda: (payload(0), {}))
    stats = registry.stats()
    for name in (
        "hits",
        "misses",
        "builds",
        "disk_reads",
        "evictions",
        "entries",
        "bytes",
        "path",
        "mode",
    ):
        assert name in stats
    assert (stats["hits"], stats["misses"], stats["builds"]) == (1, 1, 1)
    assert stats["entries"] == 1 and stats["bytes"] > len(payload(0))
    assert stats["path"] == str(cache_dir) and stats["mode"] == "disk"


def test_entries_list_components_and_hits(registry: KernelRegistry, cache_dir: Path) -> None:
    registry.put(kernel_components(0), payload(0), {})
    registry.put_record("plan", "p", {"a": 1})
    KernelRegistry(cache_dir).get(make_key(kernel_components(0)))  # a load by another instance
    entries = {e["key"]: e for e in registry.entries()}
    kernel = entries[make_key(kernel_components(0))]
    assert kernel["kind"] == "kernel" and kernel["components"] == kernel_components(0)
    assert kernel["hits"] == 1 and kernel["size"] > len(payload(0))
    assert kernel["last_access"] >= kernel["created"] > 0
    assert entries["record/plan/p"]["record"] == {"kind": "plan", "name": "p"}


def test_evict_and_clear(registry: KernelRegistry, cache_dir: Path) -> None:
    for i in range(3):
        registry.put(kernel_components(i), payload(i), {})
    assert registry.evict(make_key(kernel_components(0)))
    assert not registry.evict(make_key(kernel_components(0)))
    assert KernelRegistry(cache_dir).get(make_key(kernel_components(0))) is None
    assert registry.clear() == 2
    assert registry.entries() == [] and KernelRegistry(cache_dir).stats()["entries"] == 0


def test_explain_miss_names_the_differing_component(registry: KernelRegistry) -> None:
    registry.put(kernel_components(0, gpu_arch="sm_80"), payload(0), {})
    registry.put(kernel_components(1), payload(1), {})
    text = registry.explain_miss(kernel_components(0, gpu_arch="sm_90"))
    assert text.startswith("miss:")
    assert "differs in 1 of 9 components: gpu_arch: stored 'sm_80', asked 'sm_90'" in text
    assert registry.explain_miss(kernel_components(1)).startswith("hit:")
    assert "only in the request" in registry.explain_miss({**kernel_components(1), "extra": "x"})


def test_explain_miss_on_an_empty_registry(registry: KernelRegistry) -> None:
    assert "holds no kernels" in registry.explain_miss(kernel_components(0))


def test_memory_only_creates_no_files(tmp_path: Path) -> None:
    registry = KernelRegistry(tmp_path / "never", memory_only=True)
    entry = registry.get_or_build(kernel_components(0), lambda: (payload(0), {}))
    assert registry.get_or_build(kernel_components(0), lambda: (b"", {})).blob == entry.blob
    registry.put_record("plan", "p", {"a": 1})
    assert registry.get_record("plan", "p") == {"a": 1}
    assert registry.stats()["mode"] == "memory" and registry.stats()["path"] is None
    assert not (tmp_path / "never").exists()
    assert [e["location"] for e in registry.entries()] == ["memory", "memory"]


def test_memory_only_evicts_least_recently_used() -> None:
    registry = KernelRegistry(memory_only=True, max_size=12_000)
    for i in range(3):
        registry.put(kernel_components(i), payload(i, 3500), {})
    registry.get(make_key(kernel_components(0)))  # 0 is now the most recently used
    registry.put(kernel_components(3), payload(3, 3500), {})
    assert registry.get(make_key(kernel_components(1))) is None
    assert registry.get(make_key(kernel_components(0))) is not None
    assert registry.stats()["evictions"] >= 1


@pytest.mark.parametrize(
    ("variable", "value"), [("STITCHLAB_CACHE_DIR", ":memory:"), ("STITCHLAB_REGISTRY", "memory")]
)
def test_default_registry_memory_from_environment(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    reset_default_registry()
    assert default_registry().mode == "memory"
    assert default_registry() is default_registry()


def test_default_registry_uses_cache_dir_and_max_size(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STITCHLAB_CACHE_DIR", str(tmp_path / "team"))
    monkeypatch.setenv("STITCHLAB_CACHE_MAX_SIZE", "64MiB")
    reset_default_registry()
    stats = default_registry().stats()
    assert stats["path"] == str(tmp_path / "team") and stats["max_size"] == 64 * 2**20


def test_default_directory_honours_xdg_and_is_owner_only(tmp_path: Path) -> None:
    registry = default_registry()
    expected = tmp_path / "xdg" / "stitchlab"
    assert registry.path == expected and registry.mode == "disk"
    assert stat.S_IMODE(os.stat(expected).st_mode) == 0o700


def test_sizes_parse_and_format() -> None:
    assert parse_size("512MiB") == 512 * 2**20
    assert parse_size("1.5G") == 3 * 2**29
    assert parse_size("2GB") == 2 * 10**9
    assert parse_size("1048576") == 2**20
    with pytest.raises(ValueError, match="cannot read size '12 parsecs'"):
        parse_size("12 parsecs")
    assert format_size(812) == "812 B"
    assert format_size(1536) == "1.5 KiB"
    assert format_size(3 * 2**30) == "3.0 GiB"


def test_import_stitchlab_registry_stays_light() -> None:
    code = (
        "import sys, stitchlab.registry; "
        "heavy = [m for m in ('torch', 'cupy', 'horovod', 'ipywidgets', 'cuda') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_registry_imports_nothing_else_from_stitchlab() -> None:
    import ast

    root = Path(__file__).parents[2] / "registry"
    for source in root.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{source.name} imports from above the package"
                names = [node.module or ""] if node.level == 0 else []
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith("stitchlab"), f"{source.name} imports {name}"


def test_threads_missing_one_key_build_it_once(registry: KernelRegistry) -> None:
    import threading
    import time

    calls = []

    def build() -> tuple[bytes, dict]:
        calls.append(1)
        time.sleep(0.2)
        return payload(0), {}

    results: list[Entry] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(registry.get_or_build(kernel_components(0), build))
        )
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert sorted(e.hit for e in results) == [False] + [True] * 7
    assert all(e.blob == payload(0) for e in results)


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_bad_max_size_is_named(size: object) -> None:
    with pytest.raises(ValueError, match=f"max_size={size!r} must be a positive number of bytes"):
        KernelRegistry(memory_only=True, max_size=size)  # type: ignore[arg-type]


def test_registry_directory_removed_under_a_live_registry_does_not_crash(
    cache_dir: Path,
) -> None:
    import shutil

    registry = KernelRegistry(cache_dir)
    registry.put(kernel_components(0), payload(0), {})
    registry.get(make_key(kernel_components(0)))
    shutil.rmtree(cache_dir)  # e.g. `rm -rf ~/.cache/stitchlab` while a notebook runs
    entry = registry.get_or_build(kernel_components(1), lambda: (payload(1), {}))
    assert entry.blob == payload(1)
    registry.close()
    fresh = KernelRegistry(cache_dir)
    assert fresh.get_or_build(kernel_components(1), lambda: (payload(1), {})).blob == payload(1)


@pytest.mark.parametrize("text", ["9" * 400, "9" * 40 + "TiB", 2**63, "10000000TB"])
def test_a_size_too_large_to_record_is_named_not_an_overflow(text: object) -> None:
    with pytest.raises(ValueError, match="larger than the largest size the registry can record"):
        parse_size(text)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="over the largest size"):
        KernelRegistry(memory_only=True, max_size=2**63)


def test_sizes_are_exact() -> None:
    assert parse_size("0.1KB") == 100
    assert parse_size("8191.99999999999999999TiB") == int(
        __import__("fractions").Fraction("8191.99999999999999999") * 2**40
    )


@pytest.mark.parametrize("timeout", [-1, -5.0, float("nan"), float("inf"), "3", None, True])
def test_bad_lock_timeout_is_named(timeout: object) -> None:
    with pytest.raises(ValueError, match=f"lock_timeout={timeout!r} must be a finite number"):
        KernelRegistry(memory_only=True, lock_timeout=timeout)  # type: ignore[arg-type]


def test_an_empty_path_is_refused_not_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="path='' names no directory"):
        KernelRegistry("")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [("0", "leaves no room at all"), ("banana", "cannot read size 'banana'"), ("9" * 30, "largest")],
)
def test_default_registry_names_a_bad_max_size_variable(
    monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    monkeypatch.setenv("STITCHLAB_CACHE_MAX_SIZE", value)
    with pytest.raises(ValueError, match=rf"^\$STITCHLAB_CACHE_MAX_SIZE: .*{message}"):
        default_registry()


def test_a_cache_dir_with_an_unknown_user_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: RuntimeError('Could not determine home directory.') from pathlib."""
    monkeypatch.setenv("STITCHLAB_CACHE_DIR", "~no-such-user-stitchlab/cache")
    with pytest.raises(ValueError, match=r"\$STITCHLAB_CACHE_DIR='~no-such-user-stitchlab/cache'"):
        default_registry()


def test_a_record_name_with_a_lone_surrogate_is_named(registry: KernelRegistry) -> None:
    """Before: UnicodeEncodeError "'utf-8' codec can't encode character" from deep in encode."""
    for call in (lambda: registry.put_record("plan", "x\udc80", {}),
                 lambda: registry.get_record("plan", "x\udc80")):
        with pytest.raises(ValueError, match=r"record name 'x\\udc80' is not valid Unicode"):
            call()
