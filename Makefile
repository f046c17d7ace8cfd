# The two commands a newcomer needs: `make run` and `make test` (see README.md).
# Every install comes from uv.lock, through uv, which this Makefile puts into .venv.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
UV_VERSION := 0.13.8
HOST ?= 127.0.0.1
PORT ?= 8000

# uv installs into .venv, with .venv's Python, whatever else the caller's
# environment says (an activated virtualenv, UV_PROJECT_ENVIRONMENT or
# UV_PYTHON of another project). Without UV_PYTHON, uv would replace a .venv
# whose Python does not satisfy requires-python by one with another Python,
# and uv itself with it; this way it stops with an error instead.
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_PYTHON := $(PY)
SYNC := $(UV) sync --locked --inexact

# Python caches the bytecode of what it imports (in .venv and in the tree's
# __pycache__ folders, which git ignores) even where PYTHONDONTWRITEBYTECODE is
# set, as on the CI machines. Without the cache every process compiles Django,
# scipy and the rest again: the four processes of `make run` took twice as long
# to the demo page, pytest's collection 17 s instead of 6. uv does not compile
# all of .venv ahead (--compile-bytecode took longer than the whole first start).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint install install-test gpu-worker

# uv comes from PyPI into .venv/bin. The venv gets no pip of its own when
# $(PYTHON) has one that can install into it (pip >= 22.3, --python): that
# saves seconds of ensurepip. The stamp names the uv version, so that changing
# UV_VERSION installs that one.
$(VENV)/.uv-$(UV_VERSION):
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	if $(PYTHON) -m pip --python $(PY) --version >/dev/null 2>&1; then \
	  $(PYTHON) -m pip --python $(PY) install --quiet --disable-pip-version-check uv==$(UV_VERSION); \
	else \
	  $(PY) -m ensurepip --default-pip >/dev/null \
	  && $(PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); \
	fi
	touch $@

# --inexact keeps what the other target installed (and pip and uv themselves).
# The stamps make a second `make run` or `make test` skip uv; they are renewed
# when pyproject.toml or uv.lock change.
$(VENV)/.synced-run: pyproject.toml uv.lock | $(VENV)/.uv-$(UV_VERSION)
	$(SYNC)
	touch $@

$(VENV)/.synced-test: pyproject.toml uv.lock | $(VENV)/.uv-$(UV_VERSION)
	$(SYNC) --extra test --extra zoo
	touch $@

# torch for the model zoo's tests, outside the lock (see pyproject.toml): pip takes the CPU
# build these machines keep on local disk (pip's find-links); pinned, so that nothing pulls a
# multi-GB CUDA build instead.
TORCH_VERSION := 2.13.0
$(VENV)/.torch-$(TORCH_VERSION): | $(VENV)/.uv-$(UV_VERSION)
	$(PYTHON) -m pip --python $(PY) install --quiet --disable-pip-version-check torch==$(TORCH_VERSION)
	touch $@

install: $(VENV)/.synced-run
install-test: $(VENV)/.synced-test $(VENV)/.torch-$(TORCH_VERSION)

# A GPU worker on this machine in one command (docs/operations.md#the-gpu-workers): the model zoo's
# packages (the `zoo` extra of uv.lock), torch $(TORCH_VERSION) built for this machine's GPU from
# PyTorch's index (not in the lock, as for docker/Dockerfile.gpu), the BACKBONES in
# MODELZOO_CHECKPOINT_DIR (downloaded once; `tiny-random`: tiny random ones made here, for a
# laptop), then a Celery worker on the `gpu` queue with the settings of the environment.
# TORCH_CUDA, found only for this target: cu126 (driver 560 or newer; GPUs up to Hopper), cu130
# for Blackwell (compute capability 10 and up; driver 580), cpu where nvidia-smi is missing.
BACKBONES ?= whisper-small xls-r-1b
GPU_WORKER_NAME ?= gpu@%h
ifneq ($(filter gpu-worker,$(MAKECMDGOALS)),)
TORCH_CUDA ?= $(shell command -v nvidia-smi >/dev/null 2>&1 || { echo cpu; exit; }; \
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader | awk -F. '$$1 >= 10 {new = 1} END {print new ? "cu130" : "cu126"}')
endif

$(VENV)/.synced-zoo: pyproject.toml uv.lock | $(VENV)/.uv-$(UV_VERSION)
	$(SYNC) --extra zoo
	touch $@

# The import check fails here, not at the first benchmark, when the driver cannot run this build.
$(VENV)/.torch-$(TORCH_VERSION)-$(TORCH_CUDA): | $(VENV)/.uv-$(UV_VERSION)
	$(UV) pip install --python $(PY) --index-url https://download.pytorch.org/whl/$(TORCH_CUDA) torch==$(TORCH_VERSION)
	$(PY) -c 'import sys, torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "GPUs", torch.cuda.device_count()); \
	  sys.exit("$(TORCH_CUDA)" != "cpu" and not torch.cuda.is_available() and "torch sees no GPU: the NVIDIA driver must be 560 or newer for cu126, 580 for cu130")'
	touch $@

gpu-worker: $(VENV)/.synced-zoo $(VENV)/.torch-$(TORCH_VERSION)-$(TORCH_CUDA)
	$(PY) manage.py backbones_prepare $(BACKBONES)
	$(PY) -m celery -A config worker -Q gpu --concurrency 1 --prefetch-multiplier 1 --max-tasks-per-child 1 \
	  --hostname $(GPU_WORKER_NAME) --loglevel INFO

run: install
	$(PY) manage.py demo_crowd --migrate
	@echo ""
	@echo "  Admin:             http://$(HOST):$(PORT)/admin/"
	@echo "  Demo participant:  http://$(HOST):$(PORT)/s/demo/"
	@echo "  (web server and background worker start now; Ctrl-C stops both)"
	@echo ""
	@$(PY) -m celery -A config worker --loglevel=WARNING --concurrency=1 & worker=$$!; \
	  trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	  $(PY) manage.py runserver --noreload --skip-checks $(HOST):$(PORT)

# pytest's exit status 5 means that it collected no tests: a failure, with a word why.
test: install-test
	SECRET_KEY=$${SECRET_KEY:-insecure-test-only-key} $(PY) -m pytest --durations=20 $(PYTEST_ARGS) || { \
	  status=$$?; [ $$status -ne 5 ] || echo "make test: pytest collected no tests (exit status 5); see PYTEST_ARGS" >&2; \
	  exit $$status; }

# The checks CI runs on the whole tree (.ci/run); `.venv/bin/ruff format .` fixes the format.
# lint-imports checks the import contracts of pyproject.toml ([tool.importlinter]): no import
# climbs a floor (annotation < evaluation < modelzoo) nor a layer inside an app (pages and API >
# services > selectors and data access > models), and the pure modules import no Django.
# mypy checks the types of the pure packages and of every app's services and selectors
# ([tool.mypy]); its Django plugin loads the settings, which need no more than a SECRET_KEY.
lint: install-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	SECRET_KEY=$${SECRET_KEY:-insecure-lint-only-key} $(VENV)/bin/mypy
