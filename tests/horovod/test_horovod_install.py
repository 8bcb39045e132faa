"""scripts/install-horovod.sh: valid, idempotent and fast to skip once Horovod is built."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install-horovod.sh"


def test_install_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


def test_install_script_skips_when_horovod_is_importable():
    try:
        import horovod.torch  # noqa: F401
    except ImportError:
        pytest.skip("Horovod is not installed: run `make install` (it runs this script)")
    start = time.perf_counter()
    out = subprocess.run(
        ["bash", str(SCRIPT), sys.executable], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "nothing to do" in out.stdout
    assert time.perf_counter() - start < 30


def test_install_script_fails_loudly_on_a_missing_python(tmp_path):
    out = subprocess.run(
        ["bash", str(SCRIPT), str(tmp_path / "no-python")], capture_output=True, text=True
    )
    assert out.returncode != 0
    assert "not found" in out.stderr and "no-python" in out.stderr
