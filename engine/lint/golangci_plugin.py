"""golangci-lint with the framework's Go analyzers inside it (docs/reference-lint.md#go-analyzers): what
`golangci-lint custom` builds from assets/lint/.custom-gcl.yml, made offline from the pinned release's sources in
the Go module cache, cached by the hash of the analyzers' sources. A whole run then loads and type-checks the
packages once (golangci-lint's load) for go vet's passes, golangci-lint's linters and the framework's analyzers,
and golangci-lint's own cache covers all three.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

from engine.lint import golang
from engine.lint.golangci import VERSION
from engine.paths import assets_dir

LINTER = "framework"  # the plugin's name: golangci-lint's FromLinter of the analyzers' findings
MODULE = "github.com/golangci/golangci-lint/v2"
_CONFIG = """version: "2"
run:
  relative-path-mode: wd
linters:
  default: standard
  enable: [framework]
  settings:
    custom:
      framework:
        type: module
        description: the framework's go/analysis analyzers (docs/reference-lint.md#analyzers)
issues:
  max-issues-per-linter: 0
  max-same-issues: 0
  uniq-by-line: false
"""


def _spec() -> dict:
    import yaml

    spec = yaml.safe_load((assets_dir() / "lint" / ".custom-gcl.yml").read_text(encoding="utf-8"))
    return spec if isinstance(spec, dict) else {}


def _key() -> str:
    return hashlib.sha256(f"{VERSION}\0{golang.source_hash()}\0{_CONFIG}".encode()).hexdigest()[:16]


def config() -> Path:
    """golangci-lint's configuration of a whole run: its `standard` linters (govet included) and the plugin."""
    path = golang.tools_dir() / f"golangci-framework-{_key()}.yml"
    if not path.is_file():
        from engine.paths import atomic_write_bytes

        atomic_write_bytes(path, _CONFIG.encode())
    return path


def binary() -> Path | None:
    """The custom golangci-lint, built on first use; None when it cannot be built (no Go toolchain, the pinned
    release's sources neither in the module cache nor on the module proxy): the caller falls back to two loads."""
    out = golang.tools_dir() / f"golangci-lint-{VERSION}-framework-{_key()}"
    if out.is_file():
        return out
    import fcntl

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with (out.parent / f"{out.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build per machine when several runs start cold
            return out if out.is_file() else _build(out)
    except (OSError, subprocess.SubprocessError, golang.LinterCannotRun):
        return None


def _go_env() -> dict[str, str]:
    return {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=mod -buildvcs=false"}


def _release_sources(go: str) -> Path | None:
    spec = _spec()
    if spec.get("version") != VERSION:
        return None
    proc = subprocess.run([go, "mod", "download", "-json", f"{MODULE}@{VERSION}"], capture_output=True, text=True,
                          env=_go_env(), timeout=600, cwd=golang.tools_dir())
    import json

    try:
        found = Path(json.loads(proc.stdout)["Dir"])
    except (ValueError, KeyError, TypeError):
        return None
    return found if (found / "cmd" / "golangci-lint" / "main.go").is_file() else None


def _build(out: Path) -> Path | None:
    go = golang._go()
    src = _release_sources(go)
    if src is None:
        return None
    work = out.parent / f"{out.name}.{os.getpid()}.build"
    shutil.rmtree(work, ignore_errors=True)
    repo = work / "golangci-lint"
    try:
        shutil.copytree(src, repo, ignore=shutil.ignore_patterns("testdata", "docs", "assets", "*_test.go"))
        for dirpath, _dirs, files in os.walk(repo):  # the module cache is read-only
            os.chmod(dirpath, stat.S_IRWXU)
            for name in files:
                path = os.path.join(dirpath, name)
                os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)
        plugins = _spec().get("plugins") or []
        imports = "".join(f'\t_ "{p["import"]}"\n' for p in plugins)
        (repo / "cmd" / "golangci-lint" / "plugins.go").write_text(f"package main\n\nimport (\n{imports})\n",
                                                                  encoding="utf-8")
        plugin_dir = assets_dir() / "lint"
        edits = []
        for p in plugins:
            edits += ["-require", f"{p['module']}@v0.0.0", "-replace", f"{p['module']}={(plugin_dir / p['path'])}"]
        env = _go_env()
        subprocess.run([go, "mod", "edit", *edits], cwd=repo, check=True, capture_output=True, env=env, timeout=60)
        with (repo / "go.sum").open("a", encoding="utf-8") as fh:  # the plugin's own requirements' sums
            for p in plugins:
                fh.write((plugin_dir / p["path"] / "go.sum").read_text(encoding="utf-8"))
        version = f"{VERSION.lstrip('v')}-custom-gcl-{_key()}"  # golangci-lint salts its cache with it
        tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
        proc = subprocess.run([go, "build", "-ldflags", f"-s -w -X main.version={version} -X main.date=custom",
                               "-o", str(tmp), "./cmd/golangci-lint"], cwd=repo, capture_output=True, text=True,
                              env=env, timeout=1800)
        if proc.returncode != 0:
            return None
        os.replace(tmp, out)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)
