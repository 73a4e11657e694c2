# `make run` and `make test` bootstrap .venv themselves; both are quick once it is installed.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: run test bench lint venv clean snapshots

# System pieces the tests drive for real (tmux for the terminal end-to-end test); installed when absent.
SYSTEM_TOOLS := tmux

$(STAMP): pyproject.toml
	@missing=""; for t in $(SYSTEM_TOOLS); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then echo "installing system packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	cd examples/demo && ../../$(BIN)/framework

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

snapshots: $(STAMP)
	$(BIN)/python -m pytest tests/test_snapshots.py --snapshot-update

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check app engine screens tests bench
	$(BIN)/mypy engine
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) build *.egg-info
