# One command each: `make run` sets up and starts the app on the demo corpus,
# `make test` sets up and runs the whole test suite (what .ci/run calls).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test bench package clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[gui,test]"
	touch $@

run: $(BIN)/.installed
	$(BIN)/ddr-explorer

test: $(BIN)/.installed
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest --ignore=tests/gui
	PY=$(BIN)/python tools/run_gui_tests.sh

bench: $(BIN)/.installed
	for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

package: $(BIN)/.installed
	PYTHON=$(CURDIR)/$(BIN)/python packaging/build.sh

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
