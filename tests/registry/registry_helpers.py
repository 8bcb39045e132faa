"""Helpers shared by the registry tests and their subprocess worker (no pytest import)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
WORKER = HERE / "registry_worker.py"

KERNEL_SOURCES = [
    'extern "C" __global__ void scale(float* x, float a, int n) {'
    " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }",
    'extern "C" __global__ void add(const float* x, const float* y, float* z, int n) {'
    " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = x[i] + y[i]; }",
    'extern "C" __global__ void relu(float* x, int n) {'
    " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] > 0.f ? x[i] : 0.f; }",
]


def kernel_components(i: int, **overrides: str) -> dict[str, str]:
    """Realistic key components for test kernel number ``i``."""
    components = {
        "source_digest": hashlib.sha256(f"kernel-{i}".encode()).hexdigest(),
        "schedule": "elementwise:vec4",
        "launch": "block=256",
        "dtypes": "float32->float32",
        "shape_class": "1d",
        "gpu_arch": "sm_90",
        "nvrtc_version": "13.0",
        "codegen_version": "1",
        "header_digest": "none",
    }
    components.update(overrides)
    return components


def payload(i: int, size: int = 3000) -> bytes:
    """Deterministic pseudo-cubin bytes for key number ``i``."""
    seed = hashlib.sha256(f"payload-{i}".encode()).digest()
    return b"\x7fELF" + (seed * (size // 32 + 1))[: size - 4]


def value_path(directory: Path, key: str) -> Path:
    """The file holding ``key``'s stored value, read from the diskcache index."""
    with sqlite3.connect(directory / "cache.db") as con:
        row = con.execute("SELECT filename FROM Cache WHERE key = ? AND raw = 1", (key,)).fetchone()
    assert row is not None and row[0], f"no value file for {key}"
    return directory / row[0]


def index_keys(directory: Path) -> list[str]:
    with sqlite3.connect(directory / "cache.db") as con:
        return [k for (k,) in con.execute("SELECT key FROM Cache")]


def run_worker(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run registry_worker.py in a new Python process and return its stdout."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    done = subprocess.run(
        [sys.executable, str(WORKER), *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )
    assert done.returncode == 0, f"worker {args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def compile_cubin(nvrtc: Any, source: str) -> bytes:
    """Compile ``source`` for sm_90 with NVRTC (``cuda.bindings.nvrtc``) and return the cubin."""
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"k.cu", 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    (err,) = nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=sm_90"])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    err, size = nvrtc.nvrtcGetCUBINSize(prog)
    buffer = bytearray(size)  # never b" " * size: that can be CPython's shared one-byte object
    (err,) = nvrtc.nvrtcGetCUBIN(prog, buffer)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    nvrtc.nvrtcDestroyProgram(prog)
    return bytes(buffer)


def start_workers(
    argv: list[list[str]], env: dict[str, str] | None = None
) -> list[subprocess.Popen]:
    """Start one registry_worker.py process per argument list, all at once."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return [
        subprocess.Popen(
            [sys.executable, str(WORKER), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
        )
        for args in argv
    ]


def wait_workers(processes: list[subprocess.Popen], timeout: float = 120) -> list[str]:
    """Wait for every worker; fail with its output if one failed. Returns their stdouts."""
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=timeout)
        assert process.returncode == 0, f"worker {process.args} failed:\n{out}\n{err}"
        outputs.append(out)
    return outputs
