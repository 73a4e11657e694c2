"""Bench: `framework lint` on a generated project of 30 services x 10 RPCs (docs/reference-lint.md#cache).

Baselines, measured in the same run on the same tree:
- `golangci-lint run ./...` alone (its standard linters, govet included; what a Go project would run anyway) and
  `go vet ./...` alone: aim a whole lint (go vet's passes and the analyzers in one load, golangci-lint without its
  govet, buf lint and the other analyzers in parallel) <= 1.3x of golangci-lint alone;
- the first lint: aim a second lint with nothing changed <= 0.2x of it (results cached by content);
- `framework lint --scope <one handler file>` as a command: aim < 1 s wall.
Go's build cache and golangci-lint's cache are warm for every side (one go vet, one golangci-lint and one lint
before timing; golangci-lint's cache is shared). Each figure is the best of a few rounds.
BENCH_SMOKE=1: 2 services x 2 RPCs, one round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.authoring.generate import generate  # noqa: E402
from engine.authoring.new import new_project  # noqa: E402
from engine.lint import golangci  # noqa: E402
from engine.lint.run import lint  # noqa: E402
from engine.project import Project  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
SERVICES, RPCS, ROUNDS = (2, 2, 1) if SMOKE else (30, 10, 3)
FRAMEWORK = Path(sys.executable).parent / "framework"


def _proto(module: str, i: int) -> str:
    rpcs = "\n".join(f"  rpc Do{j}(Do{j}Request) returns (Do{j}Response) {{}}" for j in range(RPCS))
    msgs = "\n".join(f"message Do{j}Request {{\n  string id = 1;\n  int64 n = 2;\n}}\n\n"
                     f"message Do{j}Response {{\n  string id = 1;\n}}\n" for j in range(RPCS))
    return (f'syntax = "proto3";\n\npackage s{i}.v1;\n\noption go_package = "{module}/gen/s{i}/v1;s{i}v1";\n\n'
            f"service S{i}Service {{\n{rpcs}\n}}\n\n{msgs}")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-lint-") as tmp:
        base = Path(tmp)
        os.environ["FRAMEWORK_LINT_CACHE"] = str(base / "cache")
        os.environ.setdefault("GOFLAGS", "-buildvcs=false")
        new_project("bench", parent=base, module="example.com/bench", disable=["observability"])
        root = base / "bench"
        shutil.rmtree(root / "proto" / "bench")
        shutil.rmtree(root / "internal" / "handlers" / "bench")
        for i in range(SERVICES):
            path = root / "proto" / f"s{i}" / "v1" / f"s{i}.proto"
            path.parent.mkdir(parents=True)
            path.write_text(_proto("example.com/bench", i))
        generate(Project(root))
        go = shutil.which("go") or "go"
        subprocess.run([go, "vet", "./..."], cwd=root, check=True, capture_output=True)  # warm Go's build cache
        lint(Project(root))  # builds the vet tool once and warms its facts and golangci-lint's cache
        gl_env = {**os.environ, "GOLANGCI_LINT_CACHE": str(base / "cache" / "golangci")}
        gl = [golangci.binary(), "run", "--output.json.path", "stdout", "--show-stats=false", "./..."]
        vet, gl_alone, first, again, scoped = [], [], [], [], []
        handler = next((root / "internal" / "handlers").rglob("rpc_*.go")).relative_to(root).as_posix()
        for _ in range(ROUNDS):
            shutil.rmtree(base / "cache" / "results", ignore_errors=True)
            vet.append(_timed(lambda: subprocess.run([go, "vet", "./..."], cwd=root, check=True,
                                                     capture_output=True)))
            gl_alone.append(_timed(lambda: subprocess.run(gl, cwd=root, env=gl_env, capture_output=True,
                                                          check=False)))
            first.append(_timed(lambda: lint(Project(root))))
            again.append(_timed(lambda: lint(Project(root))))
            scoped.append(_timed(lambda: subprocess.run([str(FRAMEWORK), "lint", "--scope", handler, "--quiet"],
                                                        cwd=root, capture_output=True, check=False)))
        report = lint(Project(root))
        assert all(r.status == "cached" for r in report.linters if r.status in ("ran", "cached")), report.linters
        v, g, f, a, s = min(vet), min(gl_alone), min(first), min(again), min(scoped)
        print(f"whole lint, {SERVICES} services x {RPCS} RPCs: {f * 1000:.0f} ms; "
              f"golangci-lint alone: {g * 1000:.0f} ms; ratio {f / g:.2f}x (aim <= 1.3x); "
              f"go vet alone: {v * 1000:.0f} ms")
        print(f"second lint, nothing changed: {a * 1000:.0f} ms; ratio to the first {a / f:.3f}x (aim <= 0.2x)")
        print(f"framework lint --scope {handler} (a command, wall): {s * 1000:.0f} ms (aim < 1000 ms)")


if __name__ == "__main__":
    main()
