"""The security property: nothing in a registry directory is ever unpickled."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import diskcache
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from registry_helpers import kernel_components, payload
from stitchlab.registry import KernelRegistry, RegistryWarning, make_key
from stitchlab.registry._archive import export_archive
from stitchlab.registry._envelope import CorruptEntry, decode, encode


class PlantedPayload:
    """Unpickling this creates the marker file: proof that something unpickled it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


@pytest.fixture
def no_unpickling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any call to pickle.load/loads (diskcache calls them through the pickle module) fails."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("something tried to unpickle a registry value")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)


def _plant(cache_dir: Path, marker: Path) -> list[str]:
    """Write pickles into the directory with plain diskcache, the way an attacker could."""
    KernelRegistry(cache_dir).put(kernel_components(9), payload(9), {})  # create the directory
    key_value = make_key(kernel_components(0))
    key_raw = make_key(kernel_components(1))
    with diskcache.Cache(str(cache_dir)) as plain:  # the default Disk pickles
        plain.set(key_value, PlantedPayload(marker))  # a row of mode "pickle"
        plain.set(key_raw, pickle.dumps(PlantedPayload(marker)))  # pickle bytes as a raw value
        plain.set(("pickled", "key"), b"x")  # a pickled key in the index
        plain.set("record/plan/p", PlantedPayload(marker))
    assert not marker.exists()
    return [key_value, key_raw]


def test_planted_pickles_are_never_unpickled(
    cache_dir: Path, tmp_path: Path, no_unpickling: None
) -> None:
    marker = tmp_path / "pwned"
    keys = _plant(cache_dir, marker)
    registry = KernelRegistry(cache_dir)
    with pytest.warns(RegistryWarning, match="dropped the corrupt entry"):
        for i, key in enumerate(keys):
            assert registry.get(key) is None
            entry = registry.get_or_build(kernel_components(i), lambda i=i: (payload(i), {}))
            assert entry.blob == payload(i) and not entry.hit
        assert registry.get_record("plan", "p") is None
    registry.entries()
    registry.explain_miss(kernel_components(5))
    registry.stats()
    export_archive(registry, tmp_path / "out.tar.gz")
    assert not marker.exists()


def test_planted_pickle_without_the_guard_would_have_run(cache_dir: Path, tmp_path: Path) -> None:
    """The control experiment: plain diskcache does run the planted payload."""
    marker = tmp_path / "pwned"
    _plant(cache_dir, marker)
    with diskcache.Cache(str(cache_dir)) as plain:
        plain.get(make_key(kernel_components(0)))
    assert marker.exists()


def test_registry_refuses_to_store_anything_but_bytes(cache_dir: Path) -> None:
    store = KernelRegistry(cache_dir)._store
    assert store is not None
    with pytest.raises(TypeError, match="registry values are bytes"):
        store._cache.set("k", {"a": 1})
    with pytest.raises(TypeError, match="registry keys are str"):
        store._cache.set(("a",), b"x")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_decode_as_trusted(data: bytes) -> None:
    with pytest.raises(CorruptEntry):
        decode("0" * 64, data)


@settings(max_examples=200, deadline=None)
@given(
    st.binary(min_size=1, max_size=200),
    st.integers(min_value=0, max_value=10_000),
    st.integers(1, 255),
)
def test_any_single_byte_change_is_detected(blob: bytes, position: int, flip: int) -> None:
    key = make_key(kernel_components(0))
    value = bytearray(
        encode(key, {"kind": "kernel", "components": kernel_components(0), "meta": {}}, blob)
    )
    value[position % len(value)] ^= flip
    with warnings.catch_warnings():
        with pytest.raises(CorruptEntry):
            decode(key, bytes(value))
