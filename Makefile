# `make test` is the one command CI and contributors run: it installs what the tests need on a fresh
# machine (a virtualenv with the project, Debian's Prometheus and VictoriaMetrics binaries) and runs lint,
# types, the layer contract and the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: test deps lint typecheck layers unit prometheus victoria-metrics clean

test: deps lint typecheck layers unit

deps: $(VENV)/.installed prometheus victoria-metrics

# An editable install in setuptools' default mode (an import hook): mypy, lint-imports and pytest run from the
# repository root, and the tests' subprocesses import the package through the hook.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

prometheus:
	scripts/install-prometheus.sh

victoria-metrics:
	scripts/install-victoria-metrics.sh

lint: $(VENV)/.installed
	$(BIN)/ruff check autoscaler tests bench
	$(BIN)/ruff format --check autoscaler tests bench

typecheck: $(VENV)/.installed
	$(BIN)/mypy autoscaler

layers: $(VENV)/.installed
	$(BIN)/lint-imports

unit: $(VENV)/.installed
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache
