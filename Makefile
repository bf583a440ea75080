# Two commands do all the set-up on a fresh machine with Python 3.11:
#   make demo   creates .venv, installs jmbs and runs its main job
#   make test   installs the test extras and runs the test suite (what CI runs)
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed
	$(BIN)/pip install --quiet -e ".[docs]"
	touch $@

demo: $(VENV)/.installed
	$(BIN)/jmbs demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n 2 tests

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_assembly.py
	$(BIN)/python -c "import scipy" 2>/dev/null || $(BIN)/pip install --quiet "scipy>=1.11"
	$(BIN)/python benchmarks/bench_solvability.py
	$(BIN)/python -c "import exudyn" 2>/dev/null || $(BIN)/pip install --quiet -e ".[benchmarks]"
	$(BIN)/python benchmarks/bench_dynamics.py

# The documentation site (mkdocs-material + mkdocstrings) into site/; warnings are errors.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV)
