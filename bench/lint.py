"""Bench: `framework lint` on a generated project of 30 services x 10 RPCs (docs/reference-lint.md#speed).

Baselines, measured in the same run on the same tree:
- `golangci-lint run ./...` alone (the pinned release, its standard linters, govet included: what a Go project
  would run anyway): aim a whole lint <= 1.3x of it. A whole lint type-checks the Go packages once, in
  golangci-lint built with the framework's analyzers as a module plugin (go vet's passes, golangci-lint's
  linters and the analyzers in that one load), beside buf lint and the other analyzers in parallel;
- `go vet ./...` alone, and the same whole lint with two Go loads (the vet tool's beside golangci-lint's, as
  before the plugin: what `$FRAMEWORK_GOLANGCI_LINT` falls back to), printed for reference;
- the first lint: aim a second lint with nothing changed <= 0.2x of it (results cached by content);
- `framework lint --scope <one handler file>` as a command: aim < 1 s wall.
Go's build cache and golangci-lint's caches are warm for every side (one go vet, one golangci-lint and one lint
before timing). The rounds interleave the sides (alternating which goes first); each figure is printed as the
median and the best of the rounds, with the machine's load average, and the per-step times of the whole lint
(each linter's own wall time inside it) as medians. BENCH_SMOKE=1: 2 services x 2 RPCs, one round, no warm-up
(tests/test_bench_smoke.py). BENCH_ROUNDS=N: N rounds (default 7).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402
from engine.lint import golangci  # noqa: E402
from engine.lint.run import lint  # noqa: E402
from engine.paths import cache_dir  # noqa: E402
from engine.project import Project  # noqa: E402

SERVICES, RPCS = (2, 2) if SMOKE else (30, 10)
ROUNDS = 1 if SMOKE else int(os.environ.get("BENCH_ROUNDS", "7"))
FRAMEWORK = Path(sys.executable).parent / "framework"


def _fig(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.0f} ms (best {min(xs) * 1000:.0f})"


@contextmanager
def _two_loads() -> Iterator[None]:
    """The whole lint as before the plugin: `$FRAMEWORK_GOLANGCI_LINT` names the plain golangci-lint, so the Go
    analyzers run in the vet tool's own load; its results cache apart from the first side's."""
    saved = os.environ["FRAMEWORK_LINT_CACHE"]
    os.environ.update({golangci.OVERRIDE_ENV: golangci.binary(), "FRAMEWORK_LINT_CACHE": saved + "2"})
    try:
        yield
    finally:
        os.environ.pop(golangci.OVERRIDE_ENV)
        os.environ["FRAMEWORK_LINT_CACHE"] = saved


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-lint-") as tmp:
        base = Path(tmp)
        os.environ["FRAMEWORK_LINT_CACHE"] = str(base / "cache")
        os.environ.setdefault("FRAMEWORK_LINT_TOOLS", str(cache_dir() / "lint"))  # built tools outlive the run
        os.environ.setdefault("GOFLAGS", "-buildvcs=false")
        # golangci-lint's cache is keyed by content like Go's build cache: the machine's when given, so a smoke run
        # does not analyze the standard library again; every side is warmed before timing either way.
        golangci_cache = os.environ.setdefault("GOLANGCI_LINT_CACHE", str(base / "cache" / "golangci"))
        root = seed_project(base, SERVICES, RPCS)
        go = shutil.which("go") or "go"
        gl_env = {**os.environ, "GOLANGCI_LINT_CACHE": golangci_cache}
        gl = [golangci.binary(), "run", "--output.json.path", "stdout", "--show-stats=false", "./..."]
        if not SMOKE:  # warm-up (smoke: one cold round is proof enough that every side runs)
            subprocess.run([go, "vet", "./..."], cwd=root, check=True, capture_output=True)  # warm Go's build cache
            lint(Project(root))  # builds golangci-lint with the analyzers once and warms its cache
            with _two_loads():
                lint(Project(root))  # builds the vet tool, warms the plain golangci-lint's cache
            subprocess.run(gl, cwd=root, env=gl_env, capture_output=True, check=False)  # warms the plain binary's
        sides: dict[str, list[float]] = {"vet": [], "gl": [], "first": [], "two": [], "again": [], "scoped": []}
        steps: dict[str, list[float]] = {}
        handler = next((root / "internal" / "handlers").rglob("rpc_*.go")).relative_to(root).as_posix()

        def whole() -> None:
            shutil.rmtree(base / "cache" / "results", ignore_errors=True)
            sides["first"].append(timed(lambda: steps_of(lint(Project(root)))))

        def steps_of(report: object) -> None:
            for run in getattr(report, "linters", []):
                if run.status == "ran":
                    steps.setdefault(run.name, []).append(run.seconds or 0.0)

        def two_loads() -> None:  # as before the plugin: the vet tool's load beside golangci-lint's (without govet)
            shutil.rmtree(base / "cache2" / "results", ignore_errors=True)  # its own results, the first side's kept
            with _two_loads():
                sides["two"].append(timed(lambda: lint(Project(root))))

        def alone() -> None:
            sides["gl"].append(timed(lambda: subprocess.run(gl, cwd=root, env=gl_env, capture_output=True,
                                                            check=False)))

        loads = []
        for r in range(ROUNDS):
            loads.append(os.getloadavg()[0])
            for side in ((alone, whole, two_loads) if r % 2 == 0 else (two_loads, whole, alone)):
                side()
            sides["again"].append(timed(lambda: lint(Project(root))))
            sides["vet"].append(timed(lambda: subprocess.run([go, "vet", "./..."], cwd=root, check=True,
                                                             capture_output=True)))
            sides["scoped"].append(timed(lambda: subprocess.run([str(FRAMEWORK), "lint", "--scope", handler, "--quiet"],
                                                                cwd=root, capture_output=True, check=False)))
        report = lint(Project(root))
        assert all(r.status == "cached" for r in report.linters if r.status in ("ran", "cached")), report.linters
        med = {k: statistics.median(v) for k, v in sides.items()}
        best = {k: min(v) for k, v in sides.items()}
        print(f"whole lint, {SERVICES} services x {RPCS} RPCs: {_fig(sides['first'])}; golangci-lint alone: "
              f"{_fig(sides['gl'])}; ratio {med['first'] / med['gl']:.2f}x of medians, "
              f"{best['first'] / best['gl']:.2f}x of bests (aim <= 1.3x); go vet alone: {_fig(sides['vet'])}")
        print(f"  the same lint with two Go loads (the vet tool beside golangci-lint without govet, as before the "
              f"plugin): {_fig(sides['two'])}; ratio {med['two'] / med['gl']:.2f}x of medians")
        print("  steps inside the whole lint (median wall, in parallel): "
              + "; ".join(f"{name} {statistics.median(v) * 1000:.0f} ms" for name, v in sorted(steps.items())))
        print(f"second lint, nothing changed: {_fig(sides['again'])}; ratio to the first "
              f"{med['again'] / med['first']:.3f}x (aim <= 0.2x)")
        print(f"framework lint --scope {handler} (a command, wall): {_fig(sides['scoped'])} (aim < 1000 ms)")
        print(f"{ROUNDS} rounds, interleaved; load average (1 min) at each round's start: "
              + ", ".join(f"{x:.1f}" for x in loads))


if __name__ == "__main__":
    main()
