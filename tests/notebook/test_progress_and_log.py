"""Progress bars for batches of compiles, and the STITCHLAB_LOG log levels."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from stitchlab import _log as slog
from stitchlab.notebook.progress import SilentBar, progress


def test_progress_counts_steps():
    with progress(3, "compiling kernels", delay=0) as bar:
        for _ in range(3):
            bar.update()
        bar.set_postfix_str("k2")
    assert bar.n == 3


def test_progress_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("STITCHLAB_PROGRESS", "0")
    with progress(2, "autotuning") as bar:
        bar.update(2)
    assert isinstance(bar, SilentBar) and bar.n == 2


def test_log_compile_and_recompile_lines(caplog):
    with caplog.at_level(logging.INFO, logger="stitchlab"):
        slog.log_compile("softmax_row", "3f2a9c1d0b7e55aa", "compiled", 0.4123)
        slog.log_recompile("softmax_row", "dtype changed: float32 -> float16")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "compile softmax_row: compiled in 412.3 ms (key 3f2a9c1d0b7e…)",
        "recompile softmax_row: dtype changed: float32 -> float16",
    ]


def test_log_compile_rejects_an_unknown_outcome():
    with pytest.raises(ValueError, match="'maybe'"):
        slog.log_compile("k", "ab", "maybe", 0.1)


def test_source_is_logged_only_at_debug(caplog):
    with caplog.at_level(logging.INFO, logger="stitchlab"):
        slog.log_source("k", "__global__ void k() {}")
    assert not caplog.records
    with caplog.at_level(logging.DEBUG, logger="stitchlab"):
        slog.log_source("k", "__global__ void k() {}")
    assert "__global__" in caplog.records[0].getMessage()


@pytest.mark.parametrize("level, shown", [("info", True), ("debug", True), ("", False)])
def test_STITCHLAB_LOG_env_shows_compiles_on_stderr(level, shown):
    code = "import stitchlab, stitchlab._log as l; l.log_compile('k', 'abcdef', 'hit', 0.001)"
    env = dict(os.environ, STITCHLAB_LOG=level)
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    assert ("[stitchlab INFO] compile k: hit in 1.0 ms (key abcdef)" in err) == shown


def test_a_bad_STITCHLAB_LOG_value_warns_and_names_the_choices():
    code = "import stitchlab._log"
    env = dict(os.environ, STITCHLAB_LOG="loud")
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    assert "STITCHLAB_LOG='loud'" in err and "debug" in err


def test_set_level_attaches_and_detaches_one_handler():
    base = len(slog.logger.handlers)
    slog.set_level("debug")
    slog.set_level("info")
    assert len(slog.logger.handlers) == base + 1 and slog.logger.level == logging.INFO
    slog.set_level(None)
    assert len(slog.logger.handlers) == base


def test_importing_the_log_module_keeps_sl_log_the_function():
    import numpy as np

    import stitchlab as sl
    import stitchlab._log  # noqa: F401

    assert callable(sl.log) and np.isclose(float(sl.log(sl.asarray(np.e))), 1.0)


def test_a_batch_shorter_than_the_delay_leaves_no_bar_behind():
    with progress(1, "compiling kernels", delay=60) as bar:
        bar.update()
    assert bar.leave is False
