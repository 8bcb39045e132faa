"""A separate Python process for the registry tests: ``registry_worker.py MODE ARGS...``.

Modes print one JSON object on stdout. Any RegistryWarning (a degrade to memory, a corrupt
entry) is turned into an error, so a worker that silently lost the disk fails.
"""

from __future__ import annotations

import json
import random
import sys
import time
import warnings

from registry_helpers import KERNEL_SOURCES, compile_cubin, kernel_components, payload
from stitchlab.registry import KernelRegistry, RegistryWarning, make_key

warnings.simplefilter("error", RegistryWarning)


def wait_until(start_at: float) -> None:
    while time.time() < start_at:
        time.sleep(0.001)


def mode_key() -> dict:
    """The key of fixed components, and a salted hash to show PYTHONHASHSEED differs."""
    return {"key": make_key(kernel_components(7)), "hash": hash("stitchlab")}


def mode_stress(directory: str, seed: str, seconds: str, keys: str, start_at: str) -> dict:
    """Hammer one directory: get_or_build, get, records, fresh registry objects."""
    rng = random.Random(int(seed))
    n_keys = int(keys)
    wait_until(float(start_at))
    registry = KernelRegistry(directory)
    builds: list[int] = []
    errors: list[str] = []
    ops = 0
    deadline = time.time() + float(seconds)
    while time.time() < deadline:
        ops += 1
        i = rng.randrange(n_keys)
        expected = payload(i, size=1000 + (i * 977) % 40000)
        roll = rng.random()
        if ops % 15 == 0:
            registry = KernelRegistry(directory)  # a fresh front: the next lookups read disk
        if roll < 0.7:

            def build(i: int = i, expected: bytes = expected) -> tuple[bytes, dict]:
                builds.append(i)
                time.sleep(0.02)  # a compile takes time: widen the race window
                return expected, {"i": i}

            entry = registry.get_or_build(kernel_components(i), build)
            if entry.blob != expected or entry.meta != {"i": i}:
                errors.append(f"get_or_build {i}: wrong value")
        elif roll < 0.85:
            entry = registry.get(make_key(kernel_components(i)))
            if entry is not None and entry.blob != expected:
                errors.append(f"get {i}: wrong value")
        else:
            name = f"r{i % 8}"
            data = {"name": name, "values": list(range(i % 8 * 10))}
            if rng.random() < 0.5:
                registry.put_record("stress", name, data)
            else:
                got = registry.get_record("stress", name)
                if got is not None and got != data:
                    errors.append(f"record {name}: wrong value {got}")
    return {"ops": ops, "builds": builds, "errors": errors, "mode": registry.mode}


def mode_same_key(directory: str, start_at: str) -> dict:
    """Miss one key at the same moment as other processes; the build is slow."""
    wait_until(float(start_at))
    registry = KernelRegistry(directory)
    builds = []

    def build() -> tuple[bytes, dict]:
        builds.append(1)
        time.sleep(0.5)
        return payload(1), {"by": "whoever"}

    entry = registry.get_or_build(kernel_components(1), build)
    return {"builds": len(builds), "hit": entry.hit, "ok": entry.blob == payload(1)}


def mode_create(directory: str, start_at: str) -> dict:
    """Open a registry in a directory nobody has created yet, all at the same moment."""
    wait_until(float(start_at))
    registry = KernelRegistry(directory)
    registry.put(kernel_components(0), payload(0), {})
    return {"mode": registry.mode}


def mode_warm(directory: str) -> dict:
    """Get every test kernel, compiling with NVRTC on a miss; time each lookup."""
    from cuda.bindings import nvrtc

    registry = KernelRegistry(directory)
    compiles = 0
    timings = []
    for number, source in enumerate(KERNEL_SOURCES * 1):
        components = kernel_components(number, source_digest=make_key({"src": source}))

        def build(source: str = source) -> tuple[bytes, dict]:
            nonlocal compiles
            compiles += 1
            return compile_cubin(nvrtc, source), {"entry": "k"}

        start = time.perf_counter()
        entry = registry.get_or_build(components, build)
        timings.append((time.perf_counter() - start) * 1e3)
        assert entry.blob[:4] == b"\x7fELF"
    reads_before = registry.stats()["disk_reads"]
    for number, source in enumerate(KERNEL_SOURCES):
        components = kernel_components(number, source_digest=make_key({"src": source}))
        registry.get_or_build(components, lambda: (b"", {}))
    stats = registry.stats()
    return {
        "compiles": compiles,
        "timings_ms": timings,
        "second_pass_disk_reads": stats["disk_reads"] - reads_before,
        "stats": {k: stats[k] for k in ("hits", "misses", "builds", "disk_reads")},
    }


if __name__ == "__main__":
    modes = {
        "key": mode_key,
        "stress": mode_stress,
        "same_key": mode_same_key,
        "create": mode_create,
        "warm": mode_warm,
    }
    print(json.dumps(modes[sys.argv[1]](*sys.argv[2:])))
