# The two commands a newcomer needs: `make run` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test install install-test

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed-run
install-test: $(VENV)/.installed-test

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup
	@echo ""
	@echo "  Admin:             http://$(HOST):$(PORT)/admin/"
	@echo "  Demo participant:  http://$(HOST):$(PORT)/s/demo/"
	@echo "  (web server and background worker start now; Ctrl-C stops both)"
	@echo ""
	@$(PY) -m celery -A config worker --loglevel=WARNING --concurrency=1 & worker=$$!; \
	  trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	  $(PY) manage.py runserver --noreload $(HOST):$(PORT)

test: install-test
	SECRET_KEY=$${SECRET_KEY:-insecure-test-only-key} $(PY) -m pytest $(PYTEST_ARGS)
