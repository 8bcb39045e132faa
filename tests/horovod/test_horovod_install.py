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


# --- the opt-in modes (local sdist, NCCL build), checked as a dry run on any machine -----------


def _fake_sdist(tmp_path: Path) -> Path:
    """A tarball laid out like horovod-0.28.1.tar.gz with just the files the script patches."""
    import tarfile

    src = tmp_path / "src" / "horovod-0.28.1"
    for rel in ("CMakeLists.txt", "horovod/torch/CMakeLists.txt"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(
            "set(CMAKE_CXX_STANDARD 14)\nexecute_process(COMMAND ${PY_EXE} -c "
            '"from distutils.sysconfig import get_python_inc; print(get_python_inc())")\n'
        )
    (src / "setup.py").write_text("if True:\n    require_list.append('cffi>=1.4.0')\n")
    (src / "horovod/runner").mkdir(parents=True)
    (src / "horovod/runner/js_run.py").write_text("from distutils.spawn import find_executable\n")
    sdist = tmp_path / "horovod-0.28.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(src, arcname="horovod-0.28.1")
    return sdist


def _fake_cuda_and_nccl(tmp_path: Path) -> tuple[Path, Path]:
    """A CUDA 'toolkit' whose nvcc is reached through a wrapper script on PATH (as on some
    images), and an nvidia-nccl wheel's layout (include/nccl.h, lib/libnccl.so.2 only)."""
    real = tmp_path / "cuda-13.0" / "bin" / "nvcc"
    real.parent.mkdir(parents=True)
    real.write_text("#!/bin/sh\necho 'Build cuda_13.0.fake'\n")
    real.chmod(0o755)
    wrapper = tmp_path / "wrapper-bin" / "nvcc"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    nccl = tmp_path / "site" / "nvidia" / "nccl"
    (nccl / "include").mkdir(parents=True)
    (nccl / "include" / "nccl.h").write_text("#define NCCL_MAJOR 2\n")
    (nccl / "lib").mkdir()
    (nccl / "lib" / "libnccl.so.2").write_bytes(b"")
    return wrapper.parent, nccl


def _run(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith(("HOROVOD_", "STITCHLAB_HOROVOD"))}
    full.update(env)
    return subprocess.run(["bash", str(SCRIPT), sys.executable], capture_output=True, text=True,
                          env=full, timeout=120, cwd=tmp_path)


def test_nccl_dry_run_patches_the_sdist_and_points_the_build_at_cuda_and_the_nccl_wheel(tmp_path):
    pytest.importorskip("torch")
    import shutil

    if shutil.which("cmake") is None and not Path(sys.executable).with_name("cmake").exists():
        pytest.skip("no cmake: the offline (HOROVOD_SDIST) mode checks for it")
    wrapper_bin, nccl = _fake_cuda_and_nccl(tmp_path)
    work = tmp_path / "work"
    import os

    out = _run({"HOROVOD_SDIST": str(_fake_sdist(tmp_path)), "STITCHLAB_HOROVOD_NCCL": "1",
                "STITCHLAB_HOROVOD_DRY_RUN": "1", "HOROVOD_WORKDIR": str(work),
                "HOROVOD_NCCL_HOME": str(nccl), "PATH": f"{wrapper_bin}:{os.environ['PATH']}",
                "STITCHLAB_HOROVOD_TARGET": str(tmp_path / "target")}, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    env = dict(line.strip().split("=", 1) for line in out.stdout.splitlines()
               if line.startswith("  ") and "=" in line and not line.strip().startswith("pip"))
    cuda = str(tmp_path / "cuda-13.0")
    assert env["HOROVOD_GPU_OPERATIONS"] == "NCCL"
    assert env["HOROVOD_CUDA_HOME"] == env["CUDA_HOME"] == cuda  # through the wrapper script
    assert env["HOROVOD_BUILD_CUDA_CC_LIST"] == "90"
    assert env["HOROVOD_NCCL_LINK"] == "SHARED"
    assert env["CMAKE_POLICY_VERSION_MINIMUM"] == "3.5"
    lib = Path(env["HOROVOD_NCCL_LIB"])
    assert (lib / "libnccl.so").resolve() == (nccl / "lib" / "libnccl.so.2").resolve()
    assert (Path(env["HOROVOD_NCCL_INCLUDE"]) / "nccl.h").exists()
    assert f"--target {tmp_path / 'target'}" in out.stdout
    src = work / "horovod-0.28.1"
    for rel in ("CMakeLists.txt", "horovod/torch/CMakeLists.txt"):
        assert "set(CMAKE_CXX_STANDARD 17)" in (src / rel).read_text()
    import importlib.util

    if importlib.util.find_spec("cffi") is None:  # offline: the unused requirement is dropped
        assert "cffi" not in (src / "setup.py").read_text().split("#")[0]
    if importlib.util.find_spec("distutils") is None:  # Python >= 3.12 without setuptools' shim
        assert "distutils" not in (src / "horovod/torch/CMakeLists.txt").read_text()
        assert "shutil import which" in (src / "horovod/runner/js_run.py").read_text()


def test_a_missing_sdist_is_named(tmp_path):
    out = _run({"HOROVOD_SDIST": str(tmp_path / "nope.tar.gz")}, tmp_path)
    assert out.returncode != 0
    assert "nope.tar.gz is not a file" in out.stderr and "pip download" in out.stderr


def test_a_bad_nccl_switch_is_refused(tmp_path):
    out = _run({"STITCHLAB_HOROVOD_NCCL": "yes"}, tmp_path)
    assert out.returncode != 0
    assert "STITCHLAB_HOROVOD_NCCL=yes; expected 0 or 1" in out.stderr


def test_nccl_mode_without_nccl_says_where_to_point(tmp_path):
    pytest.importorskip("torch")
    wrapper_bin, _ = _fake_cuda_and_nccl(tmp_path)
    import os

    out = _run({"STITCHLAB_HOROVOD_NCCL": "1", "STITCHLAB_HOROVOD_DRY_RUN": "1",
                "HOROVOD_SDIST": str(_fake_sdist(tmp_path)),
                "HOROVOD_NCCL_HOME": str(tmp_path / "no-nccl"),
                "PATH": f"{wrapper_bin}:{os.environ['PATH']}"}, tmp_path)
    assert out.returncode != 0
    assert "no-nccl/include/nccl.h not found" in out.stderr
