# Two commands do all set-up on a fresh machine with only Python:
#   make demo   runs the demo
#   make test   runs the whole test suite
# Both create (or reuse) .venv and install the project with its dev extra into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint docs bench clean redis-server

# pip's own output is a wall of text; this shows one line that counts what pip collects, then
# what it installs. pip's errors (stderr) are shown as they are; pipefail keeps its status.
SHELL := /bin/bash
.SHELLFLAGS := -e -o pipefail -c
PROGRESS := awk '/^Collecting/ { n++; printf "\r  collecting packages: %d", n; fflush() } \
	/^Installing collected packages/ { printf "\n  installing %d packages...\n", n; fflush() } \
	/^Successfully installed/ { print "  installed" }'

$(STAMP): pyproject.toml
	@echo "Setting up $(VENV) (first run only, about a minute): the project, its dev extra, the MCP SDK"
	$(PYTHON) -m venv $(VENV)
	@echo "  upgrading pip"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@PYTHONUNBUFFERED=1 $(BIN)/python -m pip install --progress-bar off -e ".[dev]" | $(PROGRESS)
	@touch $(STAMP)
	@echo "$(VENV) is ready"

demo: $(STAMP)
	$(BIN)/mcp-resolve demo $(ARGS)

test: $(STAMP) redis-server
	$(BIN)/python -m pytest

# The Redis tests start their own redis-server (Debian package redis-server); install it once,
# quietly, when it is missing. As root (CI, the dev machines) apt-get runs as is; otherwise sudo.
redis-server:
	@command -v redis-server >/dev/null || { \
		echo "Installing redis-server (Debian package) for the Redis tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
			redis-server >/dev/null; \
		command -v redis-server >/dev/null; }

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
