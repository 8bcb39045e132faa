"""The examples in the public API's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["stitchlab", "stitchlab.frontend.api", "stitchlab.frontend.array", "stitchlab.frontend.jit",
           "stitchlab.frontend.library", "stitchlab.frontend.manipulation", "stitchlab.frontend.linalg",
           "stitchlab.frontend.random", "stitchlab.frontend.index_tricks", "stitchlab.frontend.io",
           "stitchlab.frontend.assign", "stitchlab.frontend.selection", "stitchlab.frontend.vectorize",
           "stitchlab.frontend.ufunc", "stitchlab.frontend.creation"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, numpy_backend):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
