"""Start N local worker processes of a ``python -m`` module with torch.distributed's env
rendezvous (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``), or under ``horovodrun``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def horovodrun() -> str | None:
    """Path of ``horovodrun`` (next to this Python first, then on PATH), or None."""
    here = Path(sys.executable).with_name("horovodrun")
    return str(here) if here.exists() else shutil.which("horovodrun")


def _env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return env


def exit_worker() -> None:
    """End a worker process at once after its work is written: interpreter teardown with gloo's
    and DDP's C++ threads still alive sometimes aborts ("terminate called without an active
    exception"), which would turn a finished run into a failed one."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_workers(module: str, args: list[str], world_size: int, *, horovod: bool = False,
                threads: int = 1, timeout: float = 600) -> dict[str, Any]:
    """Run ``python -m module --worker --out FILE args...`` on ``world_size`` local processes and
    return the JSON rank 0 wrote to FILE.

    Raises:
        RuntimeError: a worker failed or timed out (the message holds its stderr tail).
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", module, "--worker", "--out", str(out), *args]
        if horovod:
            exe = horovodrun()
            if exe is None:
                raise RuntimeError("horovodrun is not installed; build Horovod (DESIGN.md §5)")
            procs = [subprocess.Popen([exe, "--gloo", "-np", str(world_size), "-H",
                                       f"localhost:{world_size}", *cmd, "--horovod"],
                                      env=_env(threads), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)]
        else:
            port = str(free_port())
            procs = []
            for rank in range(world_size):
                env = _env(threads)
                env.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                           MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
                procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, text=True))
        failed = []
        for p in procs:
            try:
                text, _ = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                text, _ = p.communicate()
                failed.append(f"timed out after {timeout} s:\n{text[-2000:]}")
                continue
            if p.returncode != 0:
                failed.append(f"exit {p.returncode}:\n{text[-2000:]}")
        if failed:
            raise RuntimeError(f"{module} workers failed: " + "\n".join(failed))
        return json.loads(out.read_text())
