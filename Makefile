# `make test` is the one command CI and contributors run: it installs what the tests need on a fresh
# machine (a virtualenv with the project, Debian's Prometheus and VictoriaMetrics binaries) and runs lint,
# types, the layer contract and the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: test deps lint typecheck layers unit prometheus victoria-metrics clean demo demo-prometheus

test: deps lint typecheck layers unit

deps: $(VENV)/.installed prometheus victoria-metrics

# `make demo [DURATION=seconds]` shows the autoscaler at work on one machine (README.md, autoscaler/demo): it
# installs what is missing (the virtualenv with the project and its demo extra; Prometheus from the
# distribution's packages when none is on the PATH), runs for DURATION seconds (0: until Ctrl-C), stops
# everything it started and writes a chart and the decision log into demo-output/.
DURATION ?= 120

# The virtualenv. A fresh Debian/Ubuntu has no venv module: as root, install it; otherwise say what to install.
MAKE_VENV = $(PYTHON) -m venv $(VENV) || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  apt-get update -qq && apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); } || \
	  { echo "make: cannot create a virtualenv with $(PYTHON): install python3-venv (apt-get install python3-venv, as root)" >&2; exit 1; }

demo: $(VENV)/.demo-installed demo-prometheus
	$(BIN)/python -m autoscaler.demo --duration $(DURATION) --output demo-output

$(VENV)/.demo-installed: pyproject.toml
	$(MAKE_VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[demo]'
	touch $@

# A prometheus on the PATH or under .tools/ is used as it is; otherwise Debian's package is fetched into .tools/
# (scripts/install-prometheus.sh: `apt-get download`, and `apt-get update` first on a machine without package
# lists, which needs root).
demo-prometheus:
	@if command -v prometheus >/dev/null 2>&1 || [ -x .tools/prometheus/usr/bin/prometheus ]; then :; \
	elif scripts/install-prometheus.sh; then :; \
	else echo "make demo: no prometheus on the PATH and none could be fetched: run make demo as root once (it fetches Debian's package into .tools/), install your distribution's prometheus package, or put a prometheus binary on the PATH" >&2; exit 1; fi

# An editable install in setuptools' default mode (an import hook): mypy, lint-imports and pytest run from the
# repository root, and the tests' subprocesses import the package through the hook.
$(VENV)/.installed: pyproject.toml
	$(MAKE_VENV)
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
