"""Shared fixtures of the `framework ci ...` tests: real `go test -json` streams, a tiny project,
and the real `framework` console script.

The Go packages are written and tested once per session (`go test -json ./...` over all of them,
then the stream split by package): pass, fail, skip (all skipped), mixed (mostly skipped), panic
(a panic mid-run), build (a compile error), none (no test files), plus `go test -v` text (not JSON).
Import with: sys.path.insert(0, str(Path(__file__).parent)); from ci_fixtures import ...
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cli_fork
import pytest

FRAMEWORK_BIN = str(Path(sys.executable).parent / "framework")
MODULE = "example.test/m"

GO_PACKAGES = {
    "pass": 'func TestA(t *testing.T) {}\nfunc TestB(t *testing.T) { t.Run("sub", func(t *testing.T) {}) }\n',
    "fail": 'func TestOK(t *testing.T) {}\nfunc TestBad(t *testing.T) { t.Fatal("boom") }\n',
    "skip": "".join(f'func TestS{i}(t *testing.T) {{ t.Skip("needs docker") }}\n' for i in range(2)),
    "mixed": 'func TestRan(t *testing.T) {}\n' + "".join(
        f'func TestS{i}(t *testing.T) {{ t.Skip("flaky") }}\n' for i in range(3)),
    "panic": 'func TestFirst(t *testing.T) {}\n'
             'func TestPanics(t *testing.T) { var m map[string]int; m["x"] = 1 }\nfunc TestNever(t *testing.T) {}\n',
    "build": "func TestX(t *testing.T) { undefined() }\n",
}


@dataclass
class GoStreams:
    dir: Path
    by_package: dict[str, str]  # short name -> that package's lines of the real stream
    verbose_text: str  # `go test -v` output: not a JSON stream

    def write(self, name: str, *packages: str, cut: int = 0) -> Path:
        """A stream file holding these packages' events (the last `cut` lines dropped)."""
        lines = "".join(self.by_package[p] for p in packages).splitlines(keepends=True)
        path = self.dir / f"{name}.json"
        path.write_text("".join(lines[: len(lines) - cut]))
        return path


def _go_env() -> dict[str, str]:
    return {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}


@pytest.fixture(scope="session", name="go_streams")
def go_streams_fixture(tmp_path_factory: pytest.TempPathFactory) -> GoStreams:
    assert shutil.which("go"), "the Go toolchain is required (the project's Go builds need it too)"
    root = tmp_path_factory.mktemp("gotests")
    (root / "go.mod").write_text(f"module {MODULE}\n\ngo 1.22\n")
    for name, body in GO_PACKAGES.items():
        (root / name).mkdir()
        (root / name / f"{name}_test.go").write_text(f'package {name}\n\nimport "testing"\n\n{body}')
    (root / "none").mkdir()
    (root / "none" / "none.go").write_text("package none\n")
    proc = subprocess.run(["go", "test", "-json", "./..."], cwd=root, env=_go_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1 and proc.stdout, proc.stderr  # fail, panic and build fail by design
    by_package: dict[str, str] = {}
    for line in proc.stdout.splitlines(keepends=True):
        event = json.loads(line)
        pkg = (event.get("Package") or event.get("ImportPath", "")).split(" [", 1)[0]
        short = pkg.removeprefix(MODULE + "/")
        by_package[short] = by_package.get(short, "") + line
    assert set(by_package) == {*GO_PACKAGES, "none"}, sorted(by_package)
    verbose = subprocess.run(["go", "test", "-v", "./pass"], cwd=root, env=_go_env(), capture_output=True,
                             text=True, timeout=120)
    assert verbose.returncode == 0 and "--- PASS" in verbose.stdout
    out = root / "streams"
    out.mkdir()
    return GoStreams(dir=out, by_package=by_package, verbose_text=verbose.stdout)


@dataclass
class Project:
    root: Path
    env: dict[str, str]

    def run(self, *args: str, input: str | None = None, extra_env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return cli_fork.run([FRAMEWORK_BIN, *args], cwd=self.root, env={**self.env, **(extra_env or {})},
                              input=input, capture_output=True, text=True, timeout=timeout)

    def json(self, *args: str, **kw: Any) -> tuple[int, dict[str, Any]]:
        proc = self.run(*args, "--json", **kw)
        try:
            doc = json.loads(proc.stdout)
        except ValueError as exc:
            raise AssertionError(f"not one JSON document:\n{proc.stdout}\n--- stderr\n{proc.stderr}") from exc
        assert doc["exit_code"] == proc.returncode and doc["ok"] == (proc.returncode == 0)
        return proc.returncode, doc

    def config(self, text: str) -> None:
        (self.root / "framework.yaml").write_text("name: citest\n" + text)


@pytest.fixture(name="project")
def project_fixture(tmp_path: Path) -> Project:
    """A bare framework project (framework.yaml only) with HOME and the ledger in tmp dirs."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "framework.yaml").write_text("name: citest\n")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FRAMEWORK_", "GITHUB_", "PLATFORM_"))}
    env.update({"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1",
                "XDG_CONFIG_HOME": str(home / ".config"),
                "FRAMEWORK_LEDGER_HOME": str(tmp_path / "ledger")})
    return Project(root=root, env=env)
