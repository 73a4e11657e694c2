"""Shared fixtures of the project-authoring tests (docs/reference-authoring.md): one generated project per session,
private copies for tests that change it, the real Go toolchain on the user's build caches.

The suite gives every test its own HOME; Go's build and module caches live under HOME by default,
so they are pinned back to the machine's (a generated project builds in seconds with a warm cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.go_caches import GO_ENV

_GO_ENV = GO_ENV  # the machine's Go caches (tests/go_caches.py)
TOOLS = REPO / ".tools" / "bin"


def goflags() -> str:
    """GOFLAGS of the helpers' Go and `framework` runs: `-buildvcs=false`, plus what a module opts into through
    FRAMEWORK_TEST_GOFLAGS (the `go_trimpath` fixture); unset, exactly `-buildvcs=false`."""
    return " ".join(["-buildvcs=false", *os.environ.get("FRAMEWORK_TEST_GOFLAGS", "").split()])


@pytest.fixture(autouse=True)
def go_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in _GO_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GOFLAGS", "-buildvcs=false")


@pytest.fixture
def go_trimpath(go_caches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opt-in (`pytest.mark.usefixtures("go_trimpath")`): every Go build of the test runs with `-trimpath`. Without
    it Go's build cache keys a package by its directory too, so each fresh copy of a generated project compiles
    all its own packages again; with it identical sources share the machine's cache whatever their copy's path
    (about 1.5 CPU-seconds saved per `go build`/`vet`/`test` of a copy). What is built is the same code."""
    monkeypatch.setenv("FRAMEWORK_TEST_GOFLAGS", "-trimpath")
    monkeypatch.setenv("GOFLAGS", goflags())


def fw(*args: str, cwd: Path, timeout: float = 300) -> tuple[int, dict, str]:
    """`framework <args> --json` as a real process: (exit code, document, stderr)."""
    result = run_cli("framework", *args, "--json", cwd=cwd, env={**_GO_ENV, "GOFLAGS": goflags()},
                     timeout=timeout)
    doc = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, doc, result.stderr


def fw_text(*args: str, cwd: Path, timeout: float = 300) -> tuple[int, str, str]:
    result = run_cli("framework", *args, cwd=cwd, env={**_GO_ENV, "GOFLAGS": goflags()}, timeout=timeout)
    return result.exit_code, result.stdout, result.stderr


def go(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["go", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **_GO_ENV, "GOFLAGS": goflags()})


def tree(root: Path) -> dict[str, str]:
    """Every file's sha256 (bin/ left out): byte-for-byte comparisons of a project."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "bin" not in p.relative_to(root).parts[:1]}


@pytest.fixture(scope="session")
def authored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`framework project new shop --mod example.com/shop --service order`: created once, read only."""
    parent = tmp_path_factory.mktemp("authored")
    for key, value in _GO_ENV.items():
        os.environ.setdefault(key, value)
    code, doc, err = fw("project", "new", "shop", "--mod", "example.com/shop", "--service", "order", cwd=parent)
    assert code == 0, err
    return parent / "shop"


@pytest.fixture
def project_copy(authored: Path, tmp_path: Path) -> Path:
    """A private copy of the session's project (tests may edit it)."""
    return Path(shutil.copytree(authored, tmp_path / "shop", symlinks=True))


@pytest.fixture
def served() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; all terminated at the end."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_http(url: str, deadline: float = 30) -> None:
    import httpx

    from tests.waiting import until

    def answered() -> bool:
        try:
            return httpx.get(url, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    until(answered, deadline, what=f"{url} to answer 200")


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=root,
                          capture_output=True, text=True, check=True)
    return proc.stdout
