"""Every script in bench/ still runs (README.md, `make bench`: benchmarks, each a ratio against a
baseline measured in the same run): each one as a child process in smoke mode (BENCH_SMOKE=1: tiny
sizes, one round, no aim), which must exit 0 and print its ratio line. A bench that a refactor broke
fails `make test`, not the next `make bench` months later. Tools a bench drives (Go tools, the
Kubernetes binaries) are installed by `make test`: missing, the test fails (never skips)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from authoring_fixtures import _GO_ENV  # the machine's Go caches (`go env` with the real HOME, at import)
from k8s_cluster import BIN as K8S_BIN  # resolved at import, with the real HOME (tests get their own)
from k8s_cluster import missing_tools
from lint_fixtures import GOLANGCI_CACHE, LINT_TOOLS  # the machine's (real HOME at import): built once, warm

from tests.conftest import REPO

BENCH = REPO / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))  # _seed.py: a shared module
NUMBER = r"\d+\.\d+x"
# The line each script prints its (first) ratio on. A new script needs its line here: the test of a
# script with none fails, so no bench is left out.
RATIO_LINES = {
    "auth.py": rf"authenticated / unauthenticated: {NUMBER}",
    "daemon.py": rf"file read \d+ MiB \(bulk side channel\): .*; {NUMBER}, median",
    "cluster.py": rf"cluster up / kwokctl alone: ratio {NUMBER}",
    "compose.py": rf"compose unchanged deploy / docker-compose up -d alone: ratio {NUMBER}",
    "dashboard.py": rf"trigger with 600 deliveries +[\d.]+ +{NUMBER}",
    "db.py": rf"^ +[\d.]+ +[\d.]+ +{NUMBER} <= 3x$",
    "debug.py": rf"debug start \+ break \+ continue until stopped +[\d.]+ +{NUMBER}",
    "deploy_plan.py": rf"plan for 50 images: .*; ratio {NUMBER}",
    "devstack_up.py": rf"ratio with realistic service start: {NUMBER}",
    "generate.py": rf"generate, 2 services x 2 RPCs: .*ratio {NUMBER}",
    "frontends.py": rf"generate, 2 services \+ 1 web frontend: .*ratio {NUMBER}",
    "hosted.py": rf"env status of 2 hosted environments: .*ratio {NUMBER}",
    "k8s.py": rf"^ratio {NUMBER}",
    "kcl_render.py": rf"render, warm cache: .*ratio +{NUMBER}",
    "lint.py": rf"whole lint, 2 services x 2 RPCs: .*ratio {NUMBER}",
    # three figures, all required: map (warm, against git ls-files + hashing), shapes (warm, against project
    # scaffolded), then upgrade --check (against generate --full)
    "project.py": rf"project map, warm cache: [\d.]+ ms; ratio {NUMBER}[\s\S]*project shapes warm: .*; ratio {NUMBER}"
                  rf"[\s\S]*project upgrade --check, 2 services x 2 RPCs: .*ratio {NUMBER}",
    "metrics.py": rf"ledger metrics over [\d,]+ promotions: .*; ratio {NUMBER}",
    "scaffold.py": rf"scaffold worker, 2 services: .*ratio {NUMBER}",
    "scaffold_operator.py": rf"scaffold operator, \d+ services: .*; ratio {NUMBER}",
    "startup.py": rf"framework env list --json +[\d.]+ +{NUMBER}",
    "status_history.py": rf"1,000 promotions .*; ratio {NUMBER}",
    "tools.py": rf"edit one line of 1 MB .*ratio +{NUMBER}",
    "webhooks.py": rf"ratio \(durable ingestion / bare\): {NUMBER}",
}
GO_TOOLS = {"db.py": ["migrate"], "debug.py": ["dlv"], "generate.py": ["buf", "protoc-gen-go", "protoc-gen-connect-go"],
            "lint.py": ["buf", "protoc-gen-go", "protoc-gen-connect-go", "golangci-lint"],
            "scaffold.py": ["buf", "protoc-gen-go", "protoc-gen-connect-go"],
            "scaffold_operator.py": ["buf", "protoc-gen-go", "protoc-gen-connect-go", "controller-gen"],
            "frontends.py": ["buf", "protoc-gen-go", "protoc-gen-connect-go"],
            "project.py": ["buf", "protoc-gen-go", "protoc-gen-connect-go"]}


def _tools_present(script: str) -> None:
    """The tools `make test` installs for this bench: a missing one fails the test, with the fix."""
    from database_fixtures import tool

    for name in GO_TOOLS.get(script, []):
        tool(name)  # fails: "`make go-tools` ... installs it"
    if script in ("k8s.py", "cluster.py") and missing_tools():
        pytest.fail(f"missing {', '.join(missing_tools())} in {K8S_BIN}: `make k8s-tools` (run by `make test`) "
                    "builds them")


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_bench_runs_in_smoke_mode(script: str) -> None:
    """README.md (`make bench`): the bench runs to the end and prints its ratio against the baseline
    it measured in the same run; BENCH_SMOKE=1 keeps it to seconds (bench/<script>'s docstring)."""
    assert script in RATIO_LINES, f"bench/{script} has no ratio line in tests/test_bench_smoke.py: add one"
    _tools_present(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}  # no sizes from the caller
    env.update(BENCH_SMOKE="1", FRAMEWORK_K8S_BIN=str(K8S_BIN))
    if script in GO_TOOLS or script == "debug.py":  # runs Go: the machine's build and module caches, not the test's
        env.update(_GO_ENV)  # HOME (a cold one compiles the standard library, fetches modules)
    if script in ("lint.py", "project.py"):  # and golangci-lint's, built once, warm
        env.update(**LINT_TOOLS, **GOLANGCI_CACHE)
    proc = subprocess.run([sys.executable, str(BENCH / script)], cwd=REPO, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=280, check=False)
    report = f"bench/{script} exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, report
    assert re.search(RATIO_LINES[script], proc.stdout, re.MULTILINE), f"no ratio line printed\n{report}"
    assert "Traceback" not in proc.stderr, report
