"""The documentation site builds with warnings as errors (mkdocs build --strict).

The build executes the example notebooks (mkdocs-jupyter) on the CPU backend, renders the API
reference from the docstrings (mkdocstrings) and checks every link and nav entry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("mkdocs_jupyter")


def test_site_builds_strict(tmp_path):
    env = dict(
        os.environ,
        STITCHLAB_BACKEND="numpy",
        STITCHLAB_CACHE_DIR=str(tmp_path / "cache"),
        STITCHLAB_PROGRESS="0",
        NO_MKDOCS_2_WARNING="1",
    )
    env.pop("STITCHLAB_LOG", None)
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    for page in ["index.html", "getting-started/index.html", "user-guide/index.html", "api/index.html",
                 "notebooks/quickstart/index.html"]:
        assert (site / page).is_file(), page
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "logsumexp" in api and "LazyArray" in api
    quickstart = (site / "notebooks" / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert "<svg" in quickstart or "sl-repr" in quickstart  # executed: the views are in the page
    shutil.rmtree(site, ignore_errors=True)
