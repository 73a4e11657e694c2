# `make run` and `make test` bootstrap .venv themselves; both are quick once it is installed.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Four workers on the 2-core machine (with two, the cores were busy ~73% of a run, with three ~85%: tests wait
# on servers, rollouts and children; with four ~99%), each taking whole files (--dist loadfile): a module's
# module- and session-scoped fixtures (the k8s control plane, PostgreSQL, Go test streams, a generated project)
# are built once per worker. `make test PYTEST_ARGS=` runs serially.
PYTEST_ARGS ?= -n 4 --dist loadfile

.PHONY: run test test-deps bytecode bench bench-deps lint venv clean snapshots system-deps postgres go-tools npm-tools k8s-tools cluster-tools compose-tools

# System pieces the tests drive for real, as command:Debian-package pairs: tmux (terminal
# end-to-end tests), docker-registry (release verify against a real OCI registry), chromium +
# chromium-driver (the one login test driven by a real headless browser, tests/test_auth_browser.py),
# gdb (debugpy's attach-by-pid), openssl (the vuln-scan tests' throwaway CA); and, pinned, the Compose
# target's (docs/reference-cluster.md#compose-target): Debian's dockerd and docker-compose 1.29.2 (an apt
# install: building Compose v2 from source takes ~30 min of CI's 90), and busybox-static (the test image).
# Installed only when absent, so the check costs nothing on a prepared machine.
SYSTEM_TOOLS := tmux:tmux docker-registry:docker-registry chromium:chromium chromedriver:chromium-driver gdb:gdb \
  openssl:openssl dockerd:docker.io=20.10.24+dfsg1-1+deb12u1+b6 docker-compose:docker-compose=1.29.2-3 \
  busybox:busybox-static=1:1.35.0-4+deb12u1+b1

system-deps: postgres
	@missing=""; for pair in $(SYSTEM_TOOLS); do command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then echo "installing system packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing </dev/null >/dev/null; fi

# The install goes through uv (pinned; from PyPI): the same packages as pip would install, resolved and
# unpacked in parallel, about a twentieth of pip's CPU time on this 2-core machine. uv itself is installed
# once per machine (with pip, into ~/.cache/framework-tools/uv-<version>) and makes the venv too: a fresh
# clone then needs neither ensurepip nor pip. Bytecode is written as modules are first imported (the
# targets below run Python with PYTHONDONTWRITEBYTECODE unset), so only what runs is compiled.
UV_VERSION := 0.13.9
UV_HOME := $(HOME)/.cache/framework-tools/uv-$(UV_VERSION)
UV := $(UV_HOME)/bin/uv

$(UV):
	$(PYTHON) -m venv $(UV_HOME) && $(UV_HOME)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# The project is installed editable in compat mode: a .pth naming the checkout, where the default mode
# installs an import finder that every Python start of this venv then imports (~25 ms of CPU each: python
# -c pass 60 -> 15 ms; the suite starts hundreds). An installed (non-editable) product has neither.
$(STAMP): pyproject.toml | $(UV)
	@test -x $(BIN)/python || $(UV) venv --quiet --python $(PYTHON) $(VENV)
	$(UV) pip install --quiet --python $(BIN)/python -C editable_mode=compat -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

# Bytecode of the project's own modules, written once here, before any test or command runs: with
# PYTHONDONTWRITEBYTECODE set (as on CI machines) no process would write it, and every `framework ...` child
# a test starts would compile app/ and engine/ from source again (~80 ms of each call's ~0.3 CPU-s). The
# targets that run Python unset it (WRITE_BYTECODE) so installed packages are compiled once, on first import.
WRITE_BYTECODE := PYTHONDONTWRITEBYTECODE=
bytecode: $(STAMP)
	@$(WRITE_BYTECODE) $(BIN)/python -m compileall -q -j 0 app engine screens >/dev/null

run: $(STAMP) postgres bytecode
	cd examples/demo && $(WRITE_BYTECODE) ../../$(BIN)/framework

# What the suite needs, made side by side (`-j`): the Go installs, the npm installs and the venv's bytecode
# do not wait on each other (on a fresh clone ~90 s one after another). `--output-sync` keeps each one's lines
# together.
test-deps: $(STAMP) bytecode system-deps go-tools npm-tools k8s-tools cluster-tools

test:
	@$(MAKE) --no-print-directory -j 4 --output-sync=target test-deps
	$(WRITE_BYTECODE) $(BIN)/python -m pytest $(PYTEST_ARGS)

# The PostgreSQL tests need server binaries (pg_ctl, initdb); quick when they are present.
postgres:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1 || \
	  (echo "installing PostgreSQL server binaries for the tests" && apt-get update -qq && \
	   DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql </dev/null >/dev/null)

# Go tools the tests drive, pinned, installed into .tools/bin only when absent: golang-migrate and
# goose (the database tests hand one database back and forth with them), delve (`dlv dap`, the Go
# debug adapter `framework debug` finds there).
TOOLS_BIN := $(CURDIR)/.tools/bin
MIGRATE_VERSION := v4.19.1
GOOSE_VERSION := v3.26.0
DELVE_VERSION := v1.27.2
GOVULNCHECK_VERSION := v1.1.4
# golangci-lint, driven by `framework lint` (pinned with engine/lint/golangci.py VERSION; a long build).
GOLANGCI_LINT_VERSION := v2.15.0

# Pinned Go tools are built once per machine: `go install` into a directory of ~/.cache/framework-tools named by
# the package, version, flags and environment (as the Kubernetes binaries below), then linked into .tools/bin; a
# second checkout of this machine (CI's fresh clone) only links. $(call go_tool,<package@version>,<flags>,<env>)
GO_TOOLS_CACHE := $(HOME)/.cache/framework-tools/go
define go_tool
	@key=$$(printf '%s' '$(1) $(2) $(3)' | sha256sum | cut -c1-12); dir=$(GO_TOOLS_CACHE)/$$key; \
	if [ ! -x "$$dir/$(notdir $@)" ]; then echo "go install $(1) (into $$dir)"; mkdir -p "$$dir" && \
	  GOBIN="$$dir" $(3) go install $(2) $(1) || exit 1; fi; \
	mkdir -p $(TOOLS_BIN) && { ln -f "$$dir/$(notdir $@)" $@ 2>/dev/null || cp -f "$$dir/$(notdir $@)" $@; }
endef

# govulncheck: `framework ci vuln-scan`'s Go scanner (its tests point -db at a local database).
$(TOOLS_BIN)/govulncheck:
	$(call go_tool,golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION),,GOFLAGS=-buildvcs=false)

# Project authoring (docs/reference-authoring.md): buf with the Go protobuf and Connect plugins, pinned to the
# versions engine/authoring/tools.py names (the generated go.mod requires the matching runtimes).
BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.11
PROTOC_GEN_CONNECT_GO_VERSION := v1.19.1
AUTHORING_TOOLS := $(TOOLS_BIN)/buf $(TOOLS_BIN)/protoc-gen-go $(TOOLS_BIN)/protoc-gen-connect-go
# controller-gen: `scaffold operator|crd` and `generate` (deep-copy, CRD manifests, RBAC from markers), pinned
# with engine/authoring/operator.py (CONTROLLER_TOOLS_VERSION; k8s.io v0.36 like the test control plane).
CONTROLLER_TOOLS_VERSION := v0.21.0
go-tools: $(TOOLS_BIN)/migrate $(TOOLS_BIN)/goose $(TOOLS_BIN)/dlv $(TOOLS_BIN)/govulncheck $(AUTHORING_TOOLS) \
  $(TOOLS_BIN)/controller-gen $(TOOLS_BIN)/golangci-lint

$(TOOLS_BIN)/golangci-lint:
	$(call go_tool,github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION),,GOFLAGS=-buildvcs=false)

$(TOOLS_BIN)/controller-gen:
	$(call go_tool,sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION),,GOFLAGS=-buildvcs=false)

$(TOOLS_BIN)/buf:
	$(call go_tool,github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION),,GOFLAGS=-buildvcs=false)

$(TOOLS_BIN)/protoc-gen-go:
	$(call go_tool,google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION),,)

$(TOOLS_BIN)/protoc-gen-connect-go:
	$(call go_tool,connectrpc.com/connect/cmd/protoc-gen-connect-go@$(PROTOC_GEN_CONNECT_GO_VERSION),,)

$(TOOLS_BIN)/dlv:
	$(call go_tool,github.com/go-delve/delve/cmd/dlv@$(DELVE_VERSION),,)

$(TOOLS_BIN)/migrate:
	$(call go_tool,github.com/golang-migrate/migrate/v4/cmd/migrate@$(MIGRATE_VERSION),-tags postgres,GOFLAGS=-buildvcs=false)

$(TOOLS_BIN)/goose:
	$(call go_tool,github.com/pressly/goose/v3/cmd/goose@$(GOOSE_VERSION),-tags 'no_mysql no_sqlite3 no_mssql no_clickhouse no_vertica no_ydb no_turso no_libsql no_duckdb',GOFLAGS=-buildvcs=false)

# npm tools the tests drive, pinned in tests/npm-tools/package.json, installed into .tools/npm only when
# absent: verdaccio (a local npm registry for `release verify` npm artifacts). The override pins a
# dist-tag (`node-fetch@cjs`) that some registry mirrors do not carry.
NPM_TOOLS := $(CURDIR)/.tools/npm
NPM_LINT_TOOLS := $(CURDIR)/.tools/npm-lint
npm-tools: $(NPM_TOOLS)/node_modules/.bin/verdaccio $(NPM_LINT_TOOLS)/node_modules/.bin/eslint

# Pinned npm tools are installed once per machine and package.json: into ~/.cache/framework-tools/npm/<hash of
# the package.json>, marked complete only after `npm install` succeeded, and linked into .tools.
NPM_TOOLS_CACHE := $(HOME)/.cache/framework-tools/npm
define npm_tools
	@key=$$(sha256sum $(1) | cut -c1-12); dir=$(NPM_TOOLS_CACHE)/$$key; \
	if [ ! -e "$$dir/.complete" ]; then echo "npm install $(1) (into $$dir)"; rm -rf "$$dir" && mkdir -p "$$dir" && \
	  cp $(1) "$$dir/package.json" && (cd "$$dir" && npm install --no-audit --no-fund --loglevel=error) && \
	  touch "$$dir/.complete" || exit 1; fi; \
	mkdir -p $(dir $(2)) && rm -rf $(2) && ln -sfn "$$dir" $(2) && touch -h $@
endef

$(NPM_TOOLS)/node_modules/.bin/verdaccio: tests/npm-tools/package.json
	$(call npm_tools,tests/npm-tools/package.json,$(NPM_TOOLS))

# eslint and tsc for `framework lint`'s frontend tests (docs/reference-lint.md#linters), pinned in
# tests/npm-lint-tools/package.json; a project's frontends install their own with `npm ci`.
$(NPM_LINT_TOOLS)/node_modules/.bin/eslint: tests/npm-lint-tools/package.json
	$(call npm_tools,tests/npm-lint-tools/package.json,$(NPM_LINT_TOOLS))

# The Kubernetes control plane the k8s runtime's tests and bench/k8s.py run against (tests/k8s_cluster.py):
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl built from the pinned module in
# tools/k8s (k8s.io/kubernetes with its staging modules pinned to the matching release), and KWOK to simulate
# the node. Built once per version into a cache shared by every checkout; a second run finds them there.
K8S_VERSION := v1.36.3
KWOK_VERSION := v0.8.0
K8S_BIN := $(HOME)/.cache/framework-k8s/$(K8S_VERSION)/bin
K8S_CMDS := kube-apiserver kube-controller-manager kube-scheduler kubectl
k8s-tools: $(addprefix $(K8S_BIN)/,etcd $(K8S_CMDS) kwok)

$(K8S_BIN)/etcd:
	cd tools/k8s && GOFLAGS=-buildvcs=false go build -trimpath -o $@ go.etcd.io/etcd/server/v3

# The version stamp the Kubernetes build itself links in (hack/lib/version.sh): without it the binaries
# report v0.0.0-master+$$Format:%H$$, which `kubectl version` cannot parse. The recipe file is named after
# a hash of these flags: a cache holding binaries built by an older recipe (no such file, or an older one)
# has the four rebuilt once; etcd and kwok carry no such stamp and are kept.
K8S_MAJOR_MINOR := $(subst ., ,$(patsubst v%,%,$(K8S_VERSION)))
K8S_LDFLAGS := $(foreach pkg,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
  -X $(pkg).gitVersion=$(K8S_VERSION) -X $(pkg).gitMajor=$(word 1,$(K8S_MAJOR_MINOR)) \
  -X $(pkg).gitMinor=$(word 2,$(K8S_MAJOR_MINOR)) -X $(pkg).gitTreeState=clean)
K8S_RECIPE := $(K8S_BIN)/.recipe-$(shell printf '%s' '$(strip $(K8S_LDFLAGS))' | sha256sum | cut -c1-12)

$(K8S_RECIPE):
	mkdir -p $(K8S_BIN) && rm -f $(K8S_BIN)/.recipe-* && touch $@

$(addprefix $(K8S_BIN)/,$(K8S_CMDS)): $(K8S_RECIPE)
	cd tools/k8s && GOFLAGS=-buildvcs=false go build -trimpath -ldflags '$(strip $(K8S_LDFLAGS))' \
	  -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

$(K8S_BIN)/kwok:
	GOBIN=$(K8S_BIN) go install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)

# Local cluster providers (docs/reference-cluster.md#providers), pinned, into .tools/bin when absent:
# kwokctl (the kwok provider: binary runtime over the binaries above) and the k3d CLI. k3d is built from
# its module source (the proxy serves the version's source but not the module's version list, which
# `go install` reads), outside its go.work, with its go.mod's requirements.
K3D_VERSION := v5.8.3
# the k3s image k3d v5.8.3 was released with (its own Makefile asks update.k3s.io at build time)
K3S_TAG := v1.31.5-k3s1
K3D_LDFLAGS := -X github.com/k3d-io/k3d/v5/version.Version=$(K3D_VERSION) -X github.com/k3d-io/k3d/v5/version.K3sVersion=$(K3S_TAG)
cluster-tools: $(TOOLS_BIN)/kwokctl $(TOOLS_BIN)/k3d

$(TOOLS_BIN)/kwokctl:
	$(call go_tool,sigs.k8s.io/kwok/cmd/kwokctl@$(KWOK_VERSION),,GOFLAGS=-buildvcs=false)

# Docker Compose v2, pinned, built from its module source as k3d is. Not part of `make test`: the Compose
# target drives Debian's docker-compose 1.29.2 (system-deps); a v2 binary first on PATH as `docker-compose`
# (or $FRAMEWORK_DOCKER_COMPOSE) is used instead (docs/reference-cluster.md#compose-target). A long build.
COMPOSE_VERSION := v2.32.4
compose-tools: $(TOOLS_BIN)/docker-compose

$(TOOLS_BIN)/docker-compose:
	src=$$(go mod download -json github.com/docker/compose/v2@$(COMPOSE_VERSION) | sed -n 's/.*"Dir": "\(.*\)",/\1/p') && \
	  cd "$$src" && GOWORK=off GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath \
	  -ldflags '-X github.com/docker/compose/v2/internal.Version=$(COMPOSE_VERSION)' -o $@ ./cmd

$(TOOLS_BIN)/k3d:  # built once per machine into the Go tools' cache (go_tool above), then linked
	@dir=$(GO_TOOLS_CACHE)/k3d-$(K3D_VERSION)-$(K3S_TAG); if [ ! -x "$$dir/k3d" ]; then \
	  src=$$(go mod download -json github.com/k3d-io/k3d/v5@$(K3D_VERSION) | sed -n 's/.*"Dir": "\(.*\)",/\1/p') && \
	  mkdir -p "$$dir" && cd "$$src" && GOWORK=off GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath \
	  -ldflags '$(K3D_LDFLAGS)' -o "$$dir/k3d" . || exit 1; fi; \
	mkdir -p $(TOOLS_BIN) && { ln -f "$$dir/k3d" $@ 2>/dev/null || cp -f "$$dir/k3d" $@; }

snapshots: $(STAMP)
	$(BIN)/python -m pytest tests/test_snapshots.py --snapshot-update

# wrk, the load generator of bench/webhooks.py (it falls back to a Python client without it).
bench-deps:
	@command -v wrk >/dev/null 2>&1 || (echo "installing wrk for the benchmarks" && apt-get update -qq && \
	   DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk </dev/null >/dev/null) || \
	   echo "wrk not installed: bench/webhooks.py uses its Python client"

# Every script runs even when one fails; the failures are listed at the end and make the target fail.
# BENCH_SMOKE=1 (`make bench BENCH_SMOKE=1`): tiny sizes, one round, no aim (what tests/test_bench_smoke.py runs).
bench: $(STAMP) bytecode bench-deps go-tools k8s-tools cluster-tools
	@failed=""; for b in bench/*.py; do echo "== $$b"; $(WRITE_BYTECODE) $(BIN)/python $$b || failed="$$failed $$b (exit $$?)"; done; \
	if [ -n "$$failed" ]; then echo "bench scripts that failed:$$failed" >&2; exit 1; fi; echo "every bench script ran"

lint: $(STAMP)
	$(BIN)/ruff check app engine screens tests bench
	$(BIN)/mypy engine
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) build *.egg-info
