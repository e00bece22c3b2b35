# The two commands of the README, each doing its own set-up when it is missing.
#   make demo   runs memlite's main job on a throwaway data directory
#   make test   installs what the tests need and runs the whole suite
#   make constraints   re-resolves constraints.txt after a dependency change in pyproject.toml
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memlite-installed
DEMO_STAMP := $(VENV)/.memlite-runtime-installed
PYCHECK := $(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "memlite needs Python 3.11 or newer: set PYTHON=/path/to/python3.11")'

.PHONY: demo test bench venv clean constraints

venv: $(STAMP)

# The test venv installs exactly what constraints.txt pins (the versions the plugin's
# bootstrap installs too), with claude-agent-sdk from its wheel: the real-CLI e2e tests
# run the Claude Code CLI bundled in it. The plugin venv takes the sdist (no bundled CLI),
# and so does `make demo`: after one, the wheel replaces it here.
$(STAMP): pyproject.toml constraints.txt
	@$(PYCHECK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	if [ -f $(DEMO_STAMP) ]; then $(BIN)/python -m pip install --quiet --disable-pip-version-check \
	    --force-reinstall --no-deps --only-binary claude-agent-sdk -c constraints.txt claude-agent-sdk; fi
	touch $(STAMP)

# The demo needs memlite's runtime dependencies only, as the plugin's venv: not the test
# tools (Playwright, schemathesis, the extras) nor the 385 MB Claude Code CLI that
# claude-agent-sdk's wheel bundles (its sdist, as the plugin's bootstrap installs it).
# A venv that `make test` already filled has all of it.
$(DEMO_STAMP): pyproject.toml constraints.txt
	@$(PYCHECK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt constraints.txt ]; then :; \
	else $(BIN)/python -m pip install --quiet --disable-pip-version-check \
	    --no-binary claude-agent-sdk -c constraints.txt -e .; fi
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/memlite demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_storage.py --write
	$(BIN)/python bench/bench_worker.py --write
	$(BIN)/python bench/bench_http.py --write
	$(BIN)/python bench/bench_hooks.py --write
	$(BIN)/python bench/bench_cold_start.py --write
	$(BIN)/python bench/bench_mcp.py --write
	$(BIN)/python bench/bench_search.py --write
	$(BIN)/python -m bench.eval.run --write
	$(BIN)/python bench/bench_fuzz.py --write
	$(BIN)/python bench/bench_summary.py --write

constraints:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python tools/constraints.py

clean:
	rm -rf $(VENV) build *.egg-info
