"""Packaging, the light import, the command line, the backend choice."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import stitchlab as sl

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = ["stitchlab.registry", "stitchlab.topology", "stitchlab.compression"]


def run(code: str, cwd: Path | None = None, **env) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd,
                         env={**os.environ, **env}, check=True)
    return out.stdout.strip()


def test_import_is_light_and_needs_no_gpu():
    loaded = run("import sys, stitchlab; print(' '.join(sorted(sys.modules)))").split()
    for heavy in ("torch", "cupy", "ipywidgets", "horovod", "scipy", "tqdm", "diskcache", "ml_dtypes"):
        assert heavy not in loaded, f"import stitchlab imported {heavy}"


def test_editable_install_maps_the_top_level_folders(tmp_path):
    for name in SUBPACKAGES:
        folder = name.split(".")[1]
        path = run(f"import {name} as m; print(m.__file__)", cwd=tmp_path)
        assert Path(path).resolve() == ROOT / folder / "__init__.py"
    # the folders are not top-level import names (outside the source tree)
    for name in ("registry", "topology"):
        assert run(f"import importlib.util; print(importlib.util.find_spec({name!r}))", cwd=tmp_path) == "None"


@pytest.mark.slow
def test_regular_wheel_install_imports_every_subpackage(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("stitchlab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for name in SUBPACKAGES:
        assert name.replace(".", "/") + "/__init__.py" in names
    assert not any(n.startswith(("registry/", "topology/", "compression/")) for n in names)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    code = "import stitchlab, " + ", ".join(SUBPACKAGES) + "; print(stitchlab.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(target)}, check=True)
    assert str(target) in out.stdout


def test_cli_info_and_demo():
    info = run("from stitchlab.cli import main; main(['info'])")
    assert "backend    numpy" in info and "numpy      " in info and "nvrtc      " in info
    demo = subprocess.run([sys.executable, "-m", "stitchlab", "demo", "--rows", "64", "--cols", "128"],
                          capture_output=True, text=True, check=True).stdout
    assert "max |error| vs NumPy" in demo


def test_backend_choice(numpy_backend):
    assert sl.get_backend() == "numpy"
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        sl.set_backend("tpu")
    from stitchlab.runtime import gpu_usable

    if not gpu_usable():
        with pytest.raises(RuntimeError, match="no usable CUDA GPU"):
            sl.set_backend("cupy")
    assert run("import stitchlab as sl; print(sl.get_backend())", STITCHLAB_BACKEND="numpy") == "numpy"


def test_gpu_objects_on_the_cpu_backend_are_refused_clearly(numpy_backend):
    class FakeGpuArray:
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (0, False), "version": 3}

    with pytest.raises(TypeError, match="GPU object"):
        sl.asarray(FakeGpuArray())


def test_arrays_of_two_devices_cannot_be_combined():
    from stitchlab.ir.node import Node

    gpu_like = sl.LazyArray(Node("input", (), (3,), np.dtype("float32"), value=object(), device="cuda:0"))
    with pytest.raises(ValueError, match="different devices \\(cpu and cuda:0\\)"):
        sl.asarray(np.ones(3, np.float32)) + gpu_like


def test_tab_completion_lists_the_public_names_not_the_modules_imports():
    import stitchlab as sl

    names = dir(sl)
    assert set(sl.__all__) <= set(names)
    assert {"float32", "bfloat16", "registry", "topology", "__version__"} <= set(names)
    assert not {"np", "Any", "builtins", "math", "warnings", "OPS", "node_of"} & set(names)
    for name in names:
        assert getattr(sl, name) is not None or name in ("__version__", "newaxis")  # newaxis is None, as in NumPy
