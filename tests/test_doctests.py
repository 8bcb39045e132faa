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


def test_every_docstring_example_parses():
    # an invalid directive (``# doctest: +SKIP  (a note)``) makes doctest raise ValueError while it
    # collects a module, for `python -m doctest` and `pytest --doctest-modules` alike
    import pkgutil

    import stitchlab

    bad = []
    for info in pkgutil.walk_packages(stitchlab.__path__, "stitchlab."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional dependency (torch, horovod) that is not installed
            continue
        try:
            doctest.DocTestFinder().find(module)
        except ValueError as error:
            bad.append(f"{info.name}: {error}")
    assert not bad, "\n".join(bad)
