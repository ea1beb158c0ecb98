# Two set-up commands for a fresh machine: `make demo` and `make test`.
# Each creates the project virtualenv on first use (idempotent) and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test lint venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -e '.[dev]'
	$(VENV)/bin/python -m awai_engine.embedding_backends.onnx_export  # MiniLM for ONNX Runtime, once
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/awai demo

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest -q -n auto --dist worksteal

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
