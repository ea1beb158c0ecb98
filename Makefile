# Two set-up commands for a fresh machine: `make demo` and `make test` (`make test-fast` for the
# quick loop while changing one module).
# Each creates the project virtualenv on first use (idempotent) and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
# The exporter is in the key too: a changed export (a new EXPORT_FORMAT) is made here, once, not
# inside the first test or command that loads the model.
EXPORTER := awai_engine/embedding_backends/onnx_export.py
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml $(EXPORTER) | cksum | cut -d' ' -f1)
# A failing pip must fail the recipe even though its output goes through a filter.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# pip warns once per package about each index folder of the machine's pip configuration that does
# not hold it; only these lines are dropped, every other warning and error still shows.
PIP_NOISE := ^WARNING: Location '[^']*' is ignored: it is neither a file nor a directory\.$$

.PHONY: demo test test-fast lint venv

$(STAMP): pyproject.toml $(EXPORTER)
	@echo "make: creating the environment in $(VENV): AWAI and its test tools (a few minutes, once)"
	@$(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install -q -e '.[dev]' 2>&1 | { grep -v "$(PIP_NOISE)" || true; }
	@echo "make: exporting the embedding model (MiniLM) for ONNX Runtime (about a minute, once)"
	@$(VENV)/bin/python -m awai_engine.embedding_backends.onnx_export
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/awai demo

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/python -m pytest -q -n auto --dist worksteal

# The tests not marked slow (pyproject.toml's markers): under a minute, for a change to one module.
test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -q -n auto --dist worksteal -m "not slow"

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
