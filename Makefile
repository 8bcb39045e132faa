# Two commands set up a fresh machine: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
STAMP  := $(VENV)/.stamp-install

.PHONY: demo test install lint docs gpu-check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip setuptools wheel

# Editable install with every extra the tests use; torch pinned to the CPU build (constraints.txt);
# then Horovod 0.28.1 built from its PyPI source with the C++17 patch (DESIGN.md section 5).
$(STAMP): $(BIN)/python setup.py pyproject.toml constraints.txt Makefile scripts/install-horovod.sh
	$(PIP) install -q -c constraints.txt -e '.[dev]'
	bash scripts/install-horovod.sh $(BIN)/python
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/stitchlab demo

test: install
	$(BIN)/ruff check stitchlab registry topology compression tests
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider

lint: install
	$(BIN)/ruff check stitchlab registry topology compression tests

# On the GPU machine (device tool): installs the carried wheels, runs `pytest -m gpu` and the benchmarks.
gpu-check:
	bash scripts/gpu-check.sh

clean:
	rm -rf $(VENV) build *.egg-info site
