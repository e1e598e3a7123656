# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The reference MCP servers the integration tests run against: npm packages pinned by
# tests/reference_servers/package-lock.json, and each family of Python servers in a venv of its
# own (their dependencies stay out of proctor's): mcp-server-git; mcp-server-time and -fetch;
# the servers written for mcp 1.x (mcp-server-sqlite, mcp-server-calculator) on mcp<2.
# Each is installed once; its stamp says it is done.
REF := tests/reference_servers
REF_NPM_STAMP := $(REF)/node_modules/.installed-stamp
REF_GIT_VENV := $(REF)/.venv-git
REF_GIT_STAMP := $(REF_GIT_VENV)/.installed-stamp
REF_OFFICIAL_VENV := $(REF)/.venv-official
REF_OFFICIAL_STAMP := $(REF_OFFICIAL_VENV)/.installed-stamp
REF_MCP1_VENV := $(REF)/.venv-mcp1
REF_MCP1_STAMP := $(REF_MCP1_VENV)/.installed-stamp
# Chromium renders the HTML report in its browser test (Debian's package). Installed only when
# missing and we are root; otherwise that test skips and says why.
CHROMIUM_STAMP := $(VENV)/.chromium-stamp
# Inspect AI for the interop tests (tests/integration/test_inspect_interop.py) and bench_vs_inspect.
REF_INSPECT_VENV := $(REF)/.venv-inspect
REF_INSPECT_STAMP := $(REF_INSPECT_VENV)/.installed-stamp

.PHONY: demo test lint bench clean venv bytecode

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# Bytecode for proctor's own modules, written even where PYTHONDONTWRITEBYTECODE is set (as on
# these machines): an editable install compiles nothing, and each command then compiled ~300
# modules from source at start (about 0.1 s of every CLI call and of the console's first paint).
# Up to date, the check takes ~50 ms. The demo's pinned repository is data, not code: left as is.
bytecode: $(STAMP)
	$(PY) -m compileall -q -x 'scenarios/demo/repo/' app engine store widgets scenarios

$(REF_NPM_STAMP): $(REF)/package.json $(REF)/package-lock.json
	npm ci --prefix $(REF) --no-audit --no-fund
	touch $@

$(REF_GIT_STAMP): $(REF)/requirements-git.txt
	rm -rf $(REF_GIT_VENV)
	$(PYTHON) -m venv $(REF_GIT_VENV)
	$(REF_GIT_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(REF)/requirements-git.txt
	touch $@

# mcp-server-fetch reads HTML with readabilipy, which runs an unpinned `npm install` in its own
# folder the first time it converts a page (in the middle of a test): those packages are
# installed here instead, pinned by readabilipy-package-lock.json.
$(REF_OFFICIAL_STAMP): $(REF)/requirements-official.txt $(REF)/readabilipy-package-lock.json
	rm -rf $(REF_OFFICIAL_VENV)
	$(PYTHON) -m venv $(REF_OFFICIAL_VENV)
	$(REF_OFFICIAL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(REF)/requirements-official.txt
	js=$$(echo $(REF_OFFICIAL_VENV)/lib/python3*/site-packages/readabilipy/javascript) && \
		cp $(REF)/readabilipy-package-lock.json "$$js/package-lock.json" && \
		npm ci --prefix "$$js" --no-audit --no-fund --silent
	touch $@

$(REF_MCP1_STAMP): $(REF)/requirements-mcp1.txt
	rm -rf $(REF_MCP1_VENV)
	$(PYTHON) -m venv $(REF_MCP1_VENV)
	$(REF_MCP1_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(REF)/requirements-mcp1.txt
	touch $@

$(CHROMIUM_STAMP): $(STAMP)
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	fi
	@if [ -x /usr/bin/chromium ]; then touch $@; else echo "no chromium (not root): the HTML report's browser test will skip"; fi

$(REF_INSPECT_STAMP): $(REF)/requirements-inspect.txt
	rm -rf $(REF_INSPECT_VENV)
	$(PYTHON) -m venv $(REF_INSPECT_VENV)
	$(REF_INSPECT_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(REF)/requirements-inspect.txt
	touch $@

demo: $(STAMP) bytecode
	$(VENV)/bin/proctor demo

test: $(STAMP) $(REF_NPM_STAMP) $(REF_GIT_STAMP) $(REF_OFFICIAL_STAMP) $(REF_MCP1_STAMP) $(CHROMIUM_STAMP) $(REF_INSPECT_STAMP) bytecode
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) .ci/typecheck.py

bench: $(STAMP) bytecode
	$(PY) tests/bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
