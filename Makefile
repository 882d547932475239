# The two commands of the README: `make quickstart` and `make test`. Both install what they
# need first; a second run skips what is already there.
SHELL := /bin/bash
VENV := .venv
PYTHON ?= python3
STORE ?= accessbench.db

.PHONY: setup system-deps workers quickstart test clean help

help:
	@echo "make quickstart   install everything, run the quick suite on PostgreSQL and SQLite, print the report"
	@echo "make test         install everything and run the tests"
	@echo "make setup        only install (Debian packages, virtual environment, accessbench)"

system-deps:
	@scripts/install-system-deps.sh

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[drivers,test]'
	@touch $@

# Native workers build with their own tools; a missing toolchain is said loudly, never silently.
workers: system-deps
	@if command -v cc >/dev/null && command -v pkg-config >/dev/null; then \
		$(MAKE) --no-print-directory -C workers/c; \
	else \
		echo "*** SKIPPING the C worker: no C compiler or pkg-config; c-* methods will show as unavailable ***"; \
	fi

setup: system-deps $(VENV)/.installed workers

quickstart: setup
	$(VENV)/bin/accessbench --store $(STORE) run

# pytest's exit status 5 means no test ran: that must fail, not pass quietly.
test: setup
	@$(VENV)/bin/python -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests"; exit 1; fi; exit $$status

clean:
	rm -rf $(VENV) .pytest_cache build src/*.egg-info workers/c/build
