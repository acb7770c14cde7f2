# Two commands do all set-up on a fresh machine with only Python:
#   make demo   runs the demo
#   make test   runs the whole test suite
# (`make conformance` runs the official MCP conformance suite; it installs what it needs.
# `make typescript` runs the tests that drive the TypeScript SDK's client, `make browser` the ones
# that drive Debian's headless chromium; `make test` installs that client and that browser first.)
# Both create (or reuse) .venv and install the project with its dev extra into it, at the
# versions CI tests (constraints.txt; `make lock` renews it, `make test-latest` tries the newest).
# `make test-3.10` / `test-3.13` run the suite on another Python (pyenv's), `make test-lowest`
# with every declared dependency at its lower bound, `make dist` builds the release artefacts.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint docs docs-build bench clean redis-server haproxy conformance npm dist test-lowest \
	test-latest test-fastmcp42 lock typescript chromium browser sdk-suite

# pip's own output is a wall of text; this shows one line that counts what pip collects, then
# what it installs. pip's errors (stderr) are shown as they are; pipefail keeps its status.
SHELL := /bin/bash
.SHELLFLAGS := -e -o pipefail -c
PROGRESS := awk '/^Collecting/ { n++; printf "\r  collecting packages: %d", n; fflush() } \
	/^Installing collected packages/ { printf "\n  installing %d packages...\n", n; fflush() } \
	/^Successfully installed/ { print "  installed" }'

# Every venv but the lowest and the latest installs the versions CI tested (pip -c).
CONSTRAINTS := constraints.txt

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@echo "Setting up $(VENV) (first run only, about a minute): the project, its dev extra, the MCP SDK"
	$(PYTHON) -m venv $(VENV)
	@echo "  upgrading pip"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@PYTHONUNBUFFERED=1 $(BIN)/python -m pip install --progress-bar off -c $(CONSTRAINTS) \
		-e ".[dev]" | $(PROGRESS)
	@touch $(STAMP)
	@echo "$(VENV) is ready"

demo: $(STAMP)
	$(BIN)/mcp-resolve demo $(ARGS)

# The suite on both cores (pytest-xdist), each test file on one worker (`loadfile`: a module
# that builds something once, the demo's run or the wheel, builds it once), the slowest tests
# listed at the end. (Not `loadgroup`: on pytest 9.2 it no longer groups, pytest-xdist#1386.)
PYTEST := -m pytest -n auto --dist loadfile --durations=15

# The TypeScript SDK's client 2.x (and its tasks extension) with the Node >= 20 it needs (the
# npm package `node`), in $(TS_DIR), for the tests marked `typescript` (they fail, saying
# how to install it, where the folder is missing).
TS_DIR        := .typescript
TS_NODE       := 22.23.3
TS_CLIENT     := 2.4.0
TS_TASKS      := 0.2.2
TS_STAMP      := $(TS_DIR)/.installed-$(TS_NODE)-$(TS_CLIENT)-$(TS_TASKS)

test: $(STAMP) redis-server haproxy chromium $(TS_STAMP)
	$(BIN)/python $(PYTEST)

# The tests marked `browser` (a real headless chromium on the server's own pages).
browser: $(STAMP) chromium
	$(BIN)/python -m pytest -m browser tests

typescript: $(STAMP) $(TS_STAMP)
	$(BIN)/python -m pytest -m typescript tests/deploy

$(TS_STAMP): | npm
	@echo "Installing Node $(TS_NODE) and the TypeScript client $(TS_CLIENT) into $(TS_DIR)"
	@rm -rf $(TS_DIR) && mkdir -p $(TS_DIR)
	@echo '{"private": true}' > $(TS_DIR)/package.json
	@npm install --prefix $(TS_DIR) --no-audit --no-fund --loglevel=error node@$(TS_NODE) \
		@modelcontextprotocol/client@$(TS_CLIENT) @modelcontextprotocol/ext-tasks@$(TS_TASKS)
	@$(TS_DIR)/node_modules/.bin/node --version | grep -q '^v$(TS_NODE)$$'
	@touch $@

# The suite on another Python, in its own venv: `make test-3.10`, `make test-3.13` (.venv-3.10,
# .venv-3.13). The interpreter is pyenv's newest 3.X where pyenv has one, else python3.X on
# PATH; a missing one stops the target with a message saying so.
find-python = py=$$(pyenv prefix "$$(pyenv latest $(1) 2>/dev/null)" 2>/dev/null)/bin/python$(1); \
	[ -x "$$py" ] || py=$$(command -v python$(1)) || { echo "Python $(1) not found (pyenv or PATH)"; exit 1; }

.PRECIOUS: .venv-%/.installed
.venv-%/.installed: pyproject.toml $(CONSTRAINTS)
	@$(call find-python,$*); echo "Setting up .venv-$* with $$py"; \
	[ -x .venv-$*/bin/python ] || "$$py" -m venv .venv-$*
	@.venv-$*/bin/python -m pip install --quiet --upgrade pip
	@PYTHONUNBUFFERED=1 .venv-$*/bin/python -m pip install --progress-bar off -c $(CONSTRAINTS) \
		-e ".[dev]" | $(PROGRESS)
	@touch $@

# The wheel test (tests/tooling/test_wheel.py), the TypeScript client's (marker typescript),
# the browser's (marker browser) and the soak, chaos, load and demo tests (marker slow) run on
# the default Python only: each takes minutes, and the packaging, the wire the TypeScript
# client and the browser see, and what a soak measures are the same on every Python.
test-%: .venv-%/.installed redis-server haproxy
	.venv-$*/bin/python $(PYTEST) -m "not wheel and not typescript and not browser and not slow"

# The fastmcp host on fastmcp's 4.2 line, in .venv-fastmcp42: fastmcp-tasks pins fastmcp-slim
# to its own version and has no 4.2 release, so `dev` (like the tasks extra) holds fastmcp at
# 4.1. This venv has the rest of `dev` at the versions constraints.txt pins and fastmcp
# $(FASTMCP42) (.ci/fastmcp42.py), and runs the tests of the fastmcp host that need no tasks
# (`-k fastmcp`: the fastmcp test files and each host test's fastmcp case). CI runs it, fatal.
FASTMCP42 := 4.2.3
F42 := .venv-fastmcp42
$(F42)/.installed: pyproject.toml $(CONSTRAINTS) .ci/fastmcp42.py
	@echo "Setting up $(F42): the fastmcp host on fastmcp $(FASTMCP42), without tasks"
	rm -rf $(F42) && $(PYTHON) -m venv $(F42)
	@$(F42)/bin/python -m pip install --quiet --upgrade pip
	$(F42)/bin/python .ci/fastmcp42.py --constraints > $(F42)/constraints.txt
	$(F42)/bin/python .ci/fastmcp42.py $(FASTMCP42) > $(F42)/requirements.txt
	@PYTHONUNBUFFERED=1 $(F42)/bin/python -m pip install --progress-bar off \
		-c $(F42)/constraints.txt -e . -r $(F42)/requirements.txt | $(PROGRESS)
	@touch $@

test-fastmcp42: $(F42)/.installed redis-server
	$(F42)/bin/python -c "from importlib.metadata import version as v; \
		assert v('fastmcp') == '$(FASTMCP42)' and v('fastmcp-slim') == '$(FASTMCP42)', v('fastmcp')"
	$(F42)/bin/python $(PYTEST) -k fastmcp -m "not wheel and not typescript and not browser and not slow" \
		tests/hosts tests/core tests/trust tests/tooling tests/state

# The suite with every dependency we declare at its lower bound (.ci/lowest.py turns
# pyproject's `>=` bounds into `==` pins), in .venv-lowest, on the lowest Python we support.
LOWEST := .venv-lowest
LOWEST_PYTHON := 3.10
$(LOWEST)/.installed: pyproject.toml .ci/lowest.py
	@$(call find-python,$(LOWEST_PYTHON)); \
	echo "Setting up $(LOWEST) with $$py: every declared dependency at its lower bound"; \
	rm -rf $(LOWEST) && "$$py" -m venv $(LOWEST)
	@$(LOWEST)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST)/bin/python .ci/lowest.py > $(LOWEST)/constraints.txt
	@PYTHONUNBUFFERED=1 $(LOWEST)/bin/python -m pip install --progress-bar off \
		-c $(LOWEST)/constraints.txt -e ".[$$($(LOWEST)/bin/python .ci/lowest.py --extras)]" \
		| $(PROGRESS)
	@touch $@

test-lowest: $(LOWEST)/.installed redis-server haproxy
	$(LOWEST)/bin/python $(PYTEST) -m "not wheel and not typescript and not browser and not slow"

# The suite, the type checker and the linter on the newest release of every dependency
# (constraints.txt ignored), in a .venv-latest made anew each time: tells when an upstream
# release breaks us before `make lock` takes it in. CI runs it and says so loudly.
LATEST := .venv-latest
test-latest: redis-server haproxy
	@echo "Setting up $(LATEST): the newest release of every dependency"
	rm -rf $(LATEST) && $(PYTHON) -m venv $(LATEST)
	@$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	@PYTHONUNBUFFERED=1 $(LATEST)/bin/python -m pip install --progress-bar off --upgrade \
		-e ".[dev]" | $(PROGRESS)
	$(LATEST)/bin/python -m mypy --strict mcp_resolve
	$(LATEST)/bin/python -m ruff check .
	$(LATEST)/bin/python $(PYTEST) -m "not wheel and not typescript and not browser and not slow"

# constraints.txt anew: a fresh venv per supported Python with the newest releases
# pyproject.toml admits, their `pip freeze` merged by .ci/lock.py (a pin that differs
# between Pythons gets a marker). Run it, then `make test` and the matrix, then commit.
LOCK_PYTHONS := 3.10 3.11 3.12 3.13
lock:
	@for v in $(LOCK_PYTHONS); do \
		$(call find-python,$$v); echo "== freezing on $$py"; \
		rm -rf .venv-lock-$$v && "$$py" -m venv .venv-lock-$$v && \
		.venv-lock-$$v/bin/python -m pip install --quiet --upgrade pip && \
		.venv-lock-$$v/bin/python -m pip install --quiet -e ".[dev]" && \
		.venv-lock-$$v/bin/python -m pip freeze --exclude-editable > .venv-lock-$$v/freeze.txt \
		|| exit 1; \
	done
	$(PYTHON) .ci/lock.py $(foreach v,$(LOCK_PYTHONS),$(v)=.venv-lock-$(v)/freeze.txt) > $(CONSTRAINTS)
	rm -rf $(foreach v,$(LOCK_PYTHONS),.venv-lock-$(v))

# The release artefacts: the sdist, then the wheel built from it, in dist/, both checked.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist
	$(BIN)/python -m twine check --strict dist/*

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

# The load-balancer tests run HAProxy (Debian package haproxy) in front of two workers;
# installed the same way. Debian puts it in /usr/sbin, which a user's PATH may lack.
haproxy:
	@PATH="$$PATH:/usr/sbin:/usr/local/sbin" command -v haproxy >/dev/null || { \
		echo "Installing haproxy (Debian package) for the load-balancer tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
			haproxy >/dev/null; \
		PATH="$$PATH:/usr/sbin:/usr/local/sbin" command -v haproxy >/dev/null; }

# The browser tests (marker browser) drive Debian's headless chromium through Debian's
# chromium-driver (built from the same source, so always of the same version); installed the
# same way.
chromium:
	@{ command -v chromium && command -v chromedriver; } >/dev/null || { \
		echo "Installing chromium and chromium-driver (Debian packages) for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
			chromium chromium-driver >/dev/null; \
		command -v chromium >/dev/null && command -v chromedriver >/dev/null; }

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

# The official SDK's own tests, with ResolvingMCPServer wherever they build an MCPServer
# (tests/sdk_suite/: the swap, a pytest plugin, and the known differences, each explained).
# The tests come from the sdist of the SDK version constraints.txt pins, checked against its
# sha256, into $(SDK_SUITE); none of their code is committed here. Their own dependencies
# (tests/sdk_suite/requirements.txt) go into a venv of their own, not ours.
SDK_SUITE   := .sdk-suite
SDK_VERSION := 2.3.0
SDK_SHA256  := 8b147a50441cf059dc88c684e0aeed3687f0aa0f39c6cde7b90330effd2b34d8
SDK_VENV    := .venv-sdk-suite
SDK_TESTS   := $(SDK_SUITE)/mcp-$(SDK_VERSION)

sdk-suite: $(SDK_VENV)/.installed $(SDK_TESTS)/.unpacked
	cd $(SDK_TESTS) && PYTHONPATH=$(CURDIR)/tests/sdk_suite:examples \
		$(CURDIR)/$(SDK_VENV)/bin/python -m pytest -p swap_mcpserver -p no:cacheprovider \
		-o addopts="-p anyio" -o log_cli=false -q tests

$(SDK_VENV)/.installed: pyproject.toml $(CONSTRAINTS) tests/sdk_suite/requirements.txt
	@echo "Setting up $(SDK_VENV): mcp_resolve and what the SDK's own tests import"
	rm -rf $(SDK_VENV) && $(PYTHON) -m venv $(SDK_VENV)
	@$(SDK_VENV)/bin/python -m pip install --quiet --upgrade pip
	@PYTHONUNBUFFERED=1 $(SDK_VENV)/bin/python -m pip install --progress-bar off -c $(CONSTRAINTS) \
		-e ".[mcp]" -r tests/sdk_suite/requirements.txt | $(PROGRESS)
	@$(SDK_VENV)/bin/python -c 'import importlib.metadata as m, sys; v = m.version("mcp"); \
		v == "$(SDK_VERSION)" or sys.exit(f"mcp {v} is installed; set SDK_VERSION and SDK_SHA256 to its sdist")'
	@touch $@

$(SDK_TESTS)/.unpacked: | $(SDK_VENV)/.installed
	@echo "Fetching the tests of mcp $(SDK_VERSION) (its sdist) into $(SDK_SUITE)"
	@rm -rf $(SDK_SUITE) && mkdir -p $(SDK_SUITE)
	@$(SDK_VENV)/bin/python -m pip download --quiet --no-binary :all: --no-deps \
		--dest $(SDK_SUITE) mcp==$(SDK_VERSION)
	@echo "$(SDK_SHA256)  $(SDK_SUITE)/mcp-$(SDK_VERSION).tar.gz" | sha256sum --check --quiet
	@tar -xzf $(SDK_SUITE)/mcp-$(SDK_VERSION).tar.gz -C $(SDK_SUITE)
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

# The documentation site (mkdocs, the reference rendered by mkdocstrings): `make docs` serves it
# on http://127.0.0.1:8000 and rebuilds on every change; `make docs-build` builds it into site/
# as CI does (strict: a broken link, anchor or reference entry fails the build).
docs: $(STAMP)
	$(BIN)/python -m mkdocs serve --strict --dev-addr 127.0.0.1:8000

docs-build: $(STAMP)
	$(BIN)/python -m mkdocs build --strict

bench: $(STAMP) redis-server
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/host.py
	$(BIN)/python benchmarks/sdk.py
	$(BIN)/python benchmarks/fastmcp_depends.py
	$(BIN)/python benchmarks/hops.py
	$(BIN)/python benchmarks/cliff.py
	$(BIN)/python benchmarks/throughput.py
	$(BIN)/python benchmarks/redis_guard.py
	$(BIN)/python benchmarks/tasks.py

clean:
	rm -rf $(VENV) .venv-* $(SUITES) $(SDK_SUITE) dist .pytest_cache .mypy_cache .ruff_cache .hypothesis
