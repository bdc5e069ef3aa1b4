# Single-location regression: an executable textbook.
#
#   make book    set up .venv (first use), execute every chapter, build HTML into _build/html
#   make test    set up .venv (first use), library tests, then the same book build
#   make bench   set up .venv (first use), run benchmarks/ (if any)
#   make clean   remove _build/
#
# Only python3 (3.11) is needed beforehand; everything else is installed into .venv
# from the exact pins in requirements.lock.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Warnings are errors (-W), also for missing references (-n); --keep-going reports
# every warning before failing; --all rebuilds (and so re-executes) every chapter.
JB_FLAGS ?= --warningiserror --nitpick --keep-going --all
# Extra pytest arguments, e.g. `make test PYTEST_ARGS="-n 2"` (pytest-xdist).
PYTEST_ARGS ?=

.DEFAULT_GOAL := book
.PHONY: book test bench clean install

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@start=$$(date +%s); \
	if [ ! -x $(PY) ]; then python3 -m venv $(VENV); fi; \
	$(PY) -m pip install --disable-pip-version-check -r requirements.lock; \
	$(PY) -m pip install --disable-pip-version-check --no-deps --no-build-isolation -e .; \
	touch $@; \
	echo "install: $$(( $$(date +%s) - start )) s"

book: $(STAMP)
	@start=$$(date +%s); \
	$(VENV)/bin/jupyter-book build . $(JB_FLAGS); \
	echo "book build: $$(( $$(date +%s) - start )) s"; \
	echo "$(CURDIR)/_build/html/index.html"

test: $(STAMP)
	@start=$$(date +%s); \
	$(PY) -m pytest $(PYTEST_ARGS); \
	echo "pytest: $$(( $$(date +%s) - start )) s"
	@$(MAKE) --no-print-directory book

bench: $(STAMP)
	@if [ -f benchmarks/__main__.py ]; then \
		$(PY) -m benchmarks; \
	else \
		echo "no benchmarks yet"; \
	fi

clean:
	rm -rf _build
