# Two commands do all the set-up on a fresh machine with Python 3.12 (JAX 0.12 needs it):
#   make demo   creates .venv, installs jmbs and runs its main job
#   make test   installs the test extras and runs the test suite (what CI runs)
# PYTHON: python3.12 if it runs, else pyenv's 3.12 (installed but not selected); or say
# `make PYTHON=/path/to/python3.12 test`.
PYTHON ?= $(shell for p in python3.12 $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.12*/bin/python3.12; do \
	$$p -c "" 2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
# A .venv left by an older Python (jmbs needed 3.11 before JAX 0.12) is made anew.
ifneq ($(wildcard $(BIN)/python),)
ifneq ($(shell $(BIN)/python -c 'import sys; print(sys.version_info >= (3, 12))' 2>/dev/null),True)
$(shell rm -rf $(VENV))
endif
endif

.PHONY: demo test experiments lint bench docs clean bytecode

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python 3.12 not found: install it, or run make PYTHON=/path/to/python3.12"; exit 1; }
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

# jmbs's bytecode written ahead (a wheel's install does this; an editable one leaves it to
# the first import, which writes nothing where PYTHONDONTWRITEBYTECODE is set, and then
# every process compiles jmbs's sources again: about 0.1 s of each `import jmbs`). Only
# what changed is compiled again (0.03 s otherwise).
bytecode: $(VENV)/.installed
	$(BIN)/python -m compileall -q jmbs

demo: $(VENV)/.installed bytecode
	$(BIN)/jmbs demo

test: $(VENV)/.installed-test bytecode
	$(BIN)/python -m pytest -n 2 --dist worksteal tests

# The experiments/ scripts and `jmbs demo` end to end in their short modes
# (tests/test_experiments.py, tests/test_demo.py).
experiments: $(VENV)/.installed-test bytecode
	$(BIN)/python -m pytest -n 2 --dist worksteal -m experiment tests

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .

# The benchmarks whose numbers the pages quote (about an hour on 2 cores): they rewrite
# benchmarks/results/, benchmarks/headlines.json and the marked numbers of the pages.
bench: $(VENV)/.installed bytecode
	$(BIN)/pip install --quiet -e ".[benchmarks]"
	$(BIN)/python benchmarks/run_all.py --pages

# The documentation site (mkdocs-material + mkdocstrings) into site/; warnings are errors.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 JMBS_NOTEBOOK_SHORT=1 JUPYTER_PREFER_ENV_PATH=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV)
