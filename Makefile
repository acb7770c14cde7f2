# Two commands do all set-up on a fresh machine with only Python:
#   make demo   runs the demo
#   make test   runs the whole test suite
# (`make conformance` runs the official MCP conformance suite; it installs what it needs.)
# Both create (or reuse) .venv and install the project with its dev extra into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint docs bench clean redis-server conformance npm

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

# The official MCP conformance suite (npm @modelcontextprotocol/conformance), both lines at
# pinned versions, and the Node >= 22 it needs (the npm package `node`), all in $(SUITES),
# which only this target uses. tests/conformance/run.py prints `conformance: P passed, F failed`
# and fails the target if any scenario run failed or warned.
SUITES        := .conformance
NODE_VERSION  := 22.23.3
SUITE_STABLE  := 0.1.16
SUITE_ALPHA   := 0.2.0-alpha.12
SUITES_STAMP  := $(SUITES)/.installed-$(NODE_VERSION)-$(SUITE_STABLE)-$(SUITE_ALPHA)

conformance: $(STAMP) $(SUITES_STAMP)
	$(BIN)/python tests/conformance/run.py --node $(SUITES)/node_modules/.bin/node \
		--suites $(SUITES)/node_modules

$(SUITES_STAMP): | npm
	@echo "Installing Node $(NODE_VERSION) and the conformance suite ($(SUITE_STABLE), $(SUITE_ALPHA)) into $(SUITES)"
	@rm -rf $(SUITES) && mkdir -p $(SUITES)
	@echo '{"private": true}' > $(SUITES)/package.json
	@npm install --prefix $(SUITES) --no-audit --no-fund --loglevel=error \
		node@$(NODE_VERSION) \
		stable@npm:@modelcontextprotocol/conformance@$(SUITE_STABLE) \
		alpha@npm:@modelcontextprotocol/conformance@$(SUITE_ALPHA)
	@$(SUITES)/node_modules/.bin/node --version | grep -q '^v$(NODE_VERSION)$$'
	@touch $@

# npm itself (any version: it only downloads), from Debian when missing, as for redis-server.
npm:
	@command -v npm >/dev/null || { \
		echo "Installing npm (Debian package) for the conformance suite"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
			npm >/dev/null; \
		command -v npm >/dev/null; }

lint: $(STAMP)
	$(BIN)/python -m mypy --strict mcp_resolve
	$(BIN)/python -m ruff check .

docs: $(STAMP)
	$(BIN)/python -m mkdocs build --strict

bench: $(STAMP) redis-server
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/host.py
	$(BIN)/python benchmarks/sdk.py
	$(BIN)/python benchmarks/hops.py
	$(BIN)/python benchmarks/cliff.py
	$(BIN)/python benchmarks/throughput.py
	$(BIN)/python benchmarks/redis_guard.py
	$(BIN)/python benchmarks/tasks.py

clean:
	rm -rf $(VENV) $(SUITES) .pytest_cache .mypy_cache .ruff_cache .hypothesis
