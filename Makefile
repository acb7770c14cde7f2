# Two commands do all set-up on a fresh machine with only Python:
#   make demo   runs the demo
#   make test   runs the whole test suite
# Both create (or reuse) .venv and install the project with its dev extra into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mcp-resolve demo $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/python -m mypy --strict mcp_resolve
	$(BIN)/python -m ruff check .

docs: $(STAMP)
	$(BIN)/python -m mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/sdk.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
