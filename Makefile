# The two commands of the README: `make quickstart` and `make test`. Both install what they
# need first; a second run skips what is already there.
SHELL := /bin/bash
VENV := .venv
PYTHON ?= python3
STORE ?= accessbench.db

.PHONY: setup system-deps system-deps-build system-deps-run pg-servers tools workers worker-c worker-java worker-go worker-rust worker-node worker-cpp worker-ruby worker-php worker-perl quickstart test clean help

help:
	@echo "make quickstart   install everything, run the quick suite on PostgreSQL, MariaDB and SQLite, print the report"
	@echo "make test         install everything and run the tests"
	@echo "make setup        only install (Debian packages, virtual environment, accessbench)"

system-deps:
	@scripts/install-system-deps.sh

# What the builds read (compilers, headers, client libraries) before them; what only runs
# (servers, interpreters, browsers) beside them.
system-deps-build:
	@scripts/install-system-deps.sh build
system-deps-run:
	@$(LOW) scripts/install-system-deps.sh run

# The setup's builds run together, and their CPU time is mostly the Rust worker's, whose crate
# ends in minutes of one long compile: the Rust builds go first (plain priority) and the others
# fill the cores they leave (nice), so that the cores stay busy until the end.
LOW := nice -n 10

# uv (PyPI) installs the packages pip would, from the same index, in a third of pip's CPU time
# (11 CPU-s against 34 here); modules are compiled to bytecode as they are first imported.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(LOW) $(VENV)/bin/pip install --quiet uv
	UV_CACHE_DIR=$(CACHE)/uv $(LOW) $(VENV)/bin/uv pip install --quiet --python $(VENV)/bin/python -e '.[drivers,test]'
	@touch $@

# Native workers build with their own tools, each only when its sources changed; a missing
# toolchain is said loudly, never silently (its methods then show as unavailable).
CACHE := $(CURDIR)/.cache
have = $(shell for t in $(1); do command -v $$t >/dev/null || { echo no; break; }; done)
skip = @echo "*** SKIPPING the $(1) worker: $(2) not found; its methods will show as unavailable ***"

C_WORKER := workers/c/build/abworker-c
JAVA_WORKER := workers/java/target/abworker-java.jar
GO_WORKER := workers/go/build/abworker-go
RUST_WORKER := workers/rust/target/release/abworker-rust
NODE_WORKER := workers/node/node_modules/.package-lock.json
CPP_WORKER := workers/cpp/build/abworker-cpp

WORKERS := worker-c worker-java worker-go worker-rust worker-node worker-cpp worker-ruby worker-php worker-perl

# The builds are independent: run together they overlap one's downloads with another's
# compiling (each one's output appears, whole, when it is done).
workers: system-deps
	@$(MAKE) --no-print-directory -j9 --output-sync=target $(WORKERS)

worker-c:
ifeq ($(call have,cc pkg-config),)
	@$(LOW) $(MAKE) --no-print-directory -C workers/c
	@$(LOW) $(MAKE) --no-print-directory -C proxy
else
	$(call skip,C (and the latency proxy),cc or pkg-config)
endif

worker-java:
ifeq ($(call have,java mvn),)
	@[ ! -f workers/java/pom.xml ] || $(MAKE) --no-print-directory $(JAVA_WORKER)
else
	$(call skip,Java,java or mvn)
endif

$(JAVA_WORKER): workers/java/pom.xml $(shell find workers/java/src -type f 2>/dev/null)
	@# Maven 3.8 prints stray colour codes even in batch mode: strip them, keep its status.
	set -o pipefail; $(LOW) mvn -B -q -f workers/java/pom.xml -Dmaven.repo.local=$(CACHE)/m2 package -DskipTests 2>&1 \
		| sed 's/\x1b\[[0-9;]*m//g'

worker-go:
ifeq ($(call have,go),)
	@[ ! -f workers/go/go.mod ] || $(MAKE) --no-print-directory $(GO_WORKER)
else
	$(call skip,Go,go)
endif

$(GO_WORKER): workers/go/go.mod workers/go/go.sum $(shell find workers/go -name '*.go' 2>/dev/null)
	cd workers/go && GOMODCACHE=$(CACHE)/gomod GOCACHE=$(CACHE)/gobuild $(LOW) go build -mod=readonly -o build/abworker-go .

worker-rust:
ifeq ($(call have,cargo),)
	@[ ! -f workers/rust/Cargo.toml ] || CARGO_HOME=$(CACHE)/cargo cargo build -q --release --locked --manifest-path workers/rust/Cargo.toml
else
	$(call skip,Rust,cargo)
endif

worker-node:
ifeq ($(call have,node npm),)
	@[ ! -f workers/node/package.json ] || $(MAKE) --no-print-directory $(NODE_WORKER) $(PRISMA_CLIENT)
else
	$(call skip,Node.js,node or npm)
endif

worker-cpp:
ifeq ($(call have,c++ pkg-config),)
	@[ ! -f workers/cpp/Makefile ] || $(LOW) $(MAKE) --no-print-directory -C workers/cpp
else
	$(call skip,C++,c++ or pkg-config)
endif

# Ruby, PHP and Perl run from their sources with Debian's packages (scripts/install-system-deps.sh):
# nothing to build, only the interpreter to find.
worker-ruby: system-deps-run
	$(if $(call have,ruby),$(call skip,Ruby,ruby),@:)
worker-php: system-deps-run
	$(if $(call have,php),$(call skip,PHP,php),@:)
worker-perl: system-deps-run
	$(if $(call have,perl),$(call skip,Perl,perl),@:)

# better-sqlite3 compiles from source against the headers the nodejs package installs (no
# download of headers or prebuilt binaries: this machine reaches only package registries).
$(NODE_WORKER): workers/node/package.json workers/node/package-lock.json
	npm_config_build_from_source=true $(if $(wildcard /usr/include/node/node_api.h),npm_config_nodedir=/usr) \
		$(LOW) npm ci --prefix workers/node --no-audit --no-fund --loglevel=error

# node-prisma+pg's client, generated from the built-in suites' tables (npm ci's postinstall makes
# it too): remade when a suite changes, so a new built-in suite needs only `make`.
PRISMA_CLIENT := workers/node/node_modules/.abw-prisma/tables.json
$(PRISMA_CLIENT): $(wildcard src/accessbench/suites/*.toml) src/accessbench/conformance/script.toml | $(NODE_WORKER)
	$(LOW) node workers/node/scripts/prisma-generate.mjs

# PostgreSQL servers of the majors Debian 12 does not ship (13, 14, 16, 17, 18), for --target
# postgresql@VERSION: the npm packages of PostgreSQL's relocatable binaries, pinned in
# servers/postgresql/package-lock.json. Their install step only recreates the shared libraries'
# symlinks (native/pg-symlinks.json); it is run here, as npm would, for each package.
PG_SERVERS := servers/postgresql/node_modules/.package-lock.json
pg-servers:
ifeq ($(call have,node npm),)
	@$(MAKE) --no-print-directory $(PG_SERVERS)
else
	@echo "*** SKIPPING PostgreSQL 13, 14, 16, 17 and 18 (--target postgresql@VERSION): node or npm not found ***"
endif

$(PG_SERVERS): servers/postgresql/package.json servers/postgresql/package-lock.json
	$(LOW) npm ci --prefix servers/postgresql --ignore-scripts --no-audit --no-fund --loglevel=error
	for d in servers/postgresql/node_modules/postgresql-*; do (cd $$d && node scripts/hydrate-symlinks.js) || exit 1; done
	@touch $@

# run --profile folds perf's stacks and draws flame graphs with inferno (crates.io), built once
# into .cache/tools; without cargo, profiles of native code say so and the rest still runs.
INFERNO := $(CACHE)/tools/bin/inferno-flamegraph
tools:
ifeq ($(call have,cargo),)
	@$(MAKE) --no-print-directory $(INFERNO)
else
	@echo "*** SKIPPING inferno: cargo not found; run --profile's native profiles and flame graphs will say so ***"
endif

# Only the three programs accessbench runs (profile/): inferno builds eleven. One codegen unit
# per crate (no local ThinLTO pass across units): 40 CPU-s instead of 47.
$(INFERNO):
	CARGO_HOME=$(CACHE)/cargo CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 $(LOW) cargo install -q --locked --root $(CACHE)/tools inferno@0.12.8 \
		--bin inferno-flamegraph --bin inferno-diff-folded --bin inferno-collapse-perf

# Methods at other versions of their driver (py-psycopg@3.2.10, go-pgx@v5.8.0), each installed
# beside the pinned one: the versions src/accessbench/methods/versions.toml declares
# (methods/versions.py). A Go or Rust version is a build of its worker: remade when the worker's
# sources change (or, Rust, the suites its build reads); a language without its tools is skipped
# loudly. Rust's are built in a target directory of their own, alongside the worker's build (whose
# long last compile leaves a core idle at times); the others alongside the workers' builds
# (after Go's and Java's, whose caches they share).
VERSIONS := $(CACHE)/versions/.installed
RUST_VERSIONS := $(CACHE)/versions/.installed-rust
install_versions = $(VENV)/bin/python -c 'import sys; from accessbench.methods.versions import install; \
	sys.exit(install($(1)))'
$(VERSIONS): src/accessbench/methods/versions.toml src/accessbench/methods/versions.py $(VENV)/.installed \
		$(wildcard workers/go/*.go workers/go/go.mod workers/go/go.sum) | worker-go worker-java
	$(LOW) $(call install_versions,skip=["rust"])
	@touch $@
$(RUST_VERSIONS): src/accessbench/methods/versions.toml src/accessbench/methods/versions.py $(VENV)/.installed \
		$(wildcard workers/rust/Cargo.* workers/rust/build.rs src/accessbench/suites/*.toml src/accessbench/conformance/script.toml) \
		$(shell find workers/rust/src -name '*.rs' 2>/dev/null)
	$(LOW) $(call install_versions,only=["rust"])
	@touch $@

# The web tier's Python pages run under gunicorn as an unprivileged user (www-data, when we are
# root), who cannot run an interpreter kept in root's home: they get Debian's python3 with the
# app server and the drivers at the versions of accessbench's own environment.
WEB_PYTHON := $(CACHE)/web-python
WEB_PACKAGES := gunicorn psycopg psycopg-binary psycopg-pool mysqlclient
$(WEB_PYTHON)/.installed: $(VENV)/.installed
	/usr/bin/python3 -m venv $(WEB_PYTHON)
	$(LOW) $(WEB_PYTHON)/bin/pip install --quiet $$($(VENV)/bin/python -c 'import sys; from importlib.metadata import version; \
		print(" ".join(f"{p}=={version(p)}" for p in sys.argv[1:]))' $(WEB_PACKAGES))
	@touch $@

SETUP_GOALS := system-deps-run $(VENV)/.installed $(WORKERS) pg-servers tools $(WEB_PYTHON)/.installed $(VERSIONS) \
	$(RUST_VERSIONS)
setup: system-deps-build
	@echo "installing the Python environment, the servers and building the workers, together (each one's output appears when it is done)"
	@$(MAKE) --no-print-directory -j12 --output-sync=target $(SETUP_GOALS)
	@# accessbench's own modules compiled once (only those changed since): every run, worker and
	@# test process imports them, and where PYTHONDONTWRITEBYTECODE is set each would compile them again
	@$(VENV)/bin/python -m compileall -q src/accessbench

# The first run answers in minutes: the quick suite at --quick sizes on every DBMS, every default
# method, trials added for precision within 3 minutes (README: its measured time).
quickstart: setup
	$(VENV)/bin/accessbench --store $(STORE) run --quick --budget 3min

# pytest's exit status 5 means no test ran: that must fail, not pass quietly.
test: setup
	@$(VENV)/bin/python -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests"; exit 1; fi; exit $$status

clean:
	rm -rf $(VENV) .pytest_cache build src/*.egg-info .cache workers/c/build workers/java/target workers/go/build \
		workers/rust/target workers/node/node_modules workers/cpp/build servers/postgresql/node_modules
