# One command each: `make run` sets up and starts the app on the demo corpus,
# `make test` sets up and runs the whole test suite (what .ci/run calls).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test bench docs screenshots package clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[gui,test]"
	touch $@

run: $(BIN)/.installed
	$(BIN)/ddr-explorer

# pytest-xdist: a worker process per core (at most 4), a test file per worker, so one traces or compiles
# while another samples; the run gets its own empty fit and compile cache (tests/conftest.py), as on CI.
test: $(BIN)/.installed
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest --ignore=tests/gui -n auto --maxprocesses 4 --dist loadfile
	PY=$(BIN)/python tools/run_gui_tests.sh

# The benchmarks a maintainer reruns (bench/investigations/ holds one-off studies, not run here).
bench: $(BIN)/.installed
	for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# The user guide (docs/guide/, MkDocs with the Material theme) into site/; not part of CI.
$(BIN)/.docs: pyproject.toml $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@

docs: $(BIN)/.docs
	$(BIN)/python -m mkdocs build --strict --site-dir site

# Every screenshot and DDR-sheet page of the README and the guide (slow: real fits and analyses).
screenshots: $(BIN)/.installed
	QT_QPA_PLATFORM=offscreen $(BIN)/python docs/screenshots.py all

package: $(BIN)/.installed
	PYTHON=$(CURDIR)/$(BIN)/python packaging/build.sh

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache
