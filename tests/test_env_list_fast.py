"""`framework env list` without Typer, pydantic or a YAML parser when warm (app.cli.env_list_ops.fast,
engine.environments.listing, bench/startup.py): the same bytes, errors and exit codes as the Typer path,
and caches that any edit misses (docs/reference-env.md#env-list)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BIN, DEMO

# a document that KCL evaluates but the environment model refuses: its row is a validation error
PLAIN = 'environment = {name = "plain", kind = "weird"}\n'


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project plus an environment that fails validation (one copy per module)."""
    root = tmp_path_factory.mktemp("envlist")
    project = root / "demo"
    shutil.copytree(DEMO, project, ignore=shutil.ignore_patterns(".framework", "__pycache__"))
    (project / "deploy" / "kcl" / "plain").mkdir()
    (project / "deploy" / "kcl" / "plain" / "main.k").write_text(PLAIN)
    return project


def _run(project: Path, cache: str, *args: str) -> tuple[int, str, str]:
    home = project.parent / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(project.parent / cache),
           "FRAMEWORK_LEDGER_HOME": str(home / "ledger"), "NO_COLOR": "1"}
    proc = subprocess.run([str(BIN / "framework"), "env", "list", *args], cwd=project, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120, check=False, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_fast_path_says_what_typer_says_cold_and_warm(listed: Path) -> None:
    """docs/reference-env.md#env-list: `env list [--json]` answered without Typer prints the Typer path's
    bytes (stdout, stderr, exit code), from a cold cache and from the cached rows alike; a row that
    fails validation is an error row and the command exits 1."""
    cold = _run(listed, "cache-fast", "--json")
    warm = _run(listed, "cache-fast", "--json")
    typer = _run(listed, "cache-typer", "--json", "--")  # a trailing `--` is Typer's, from its own cold cache
    assert cold == warm == typer
    assert cold[0] == 1 and '"code": "kcl_error"' in cold[1]
    assert '"name": "plain",\n      "kind": null' in cold[1] and "environment.kind" in cold[1]
    assert '"name": "dev",\n      "kind": "local",\n      "target": "process"' in cold[1]
    human = _run(listed, "cache-fast")
    assert human == _run(listed, "cache-typer", "--")
    assert human[0] == 1 and human[1].splitlines()[0].split() == ["NAME", "KIND", "TARGET", "WORKLOADS", "FILE"]
    assert "error in plain" in human[2]


def test_warm_json_imports_no_typer_pydantic_or_yaml(listed: Path) -> None:
    """bench/startup.py (docs/reference-env.md#env-list): a warm `env list --json` imports neither Typer,
    pydantic, a YAML parser, rich nor kcl-lib."""
    _run(listed, "cache-imports", "--json")  # fills the caches
    home = listed.parent / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(listed.parent / "cache-imports"),
           "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run([str(BIN / "framework"), "env", "list", "--json"], cwd=listed, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120, check=False, env=env)
    modules = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
               if line.startswith("import time:")}
    assert proc.returncode == 1 and "engine" in modules
    assert not modules & {"typer", "click", "pydantic", "pydantic_core", "yaml", "rich", "kcl_lib"}


def test_cached_config_follows_every_edit(demo_project: Path, isolated_home: Path) -> None:
    """README.md#files (framework.yaml names the project): the parsed framework.yaml is cached by its
    bytes, so an edit is read at once; a file JSON cannot give back exactly (a date) is parsed each
    time, never cached."""
    from engine.environments.listing import environment_listing
    from engine.project import find_project

    config = demo_project / "framework.yaml"
    assert environment_listing(find_project(demo_project))["project"] == "demo"
    cache = isolated_home / ".cache" / "framework" / "config"
    assert len(list(cache.glob("*.json"))) == 1
    config.write_text(config.read_text().replace("name: demo", "name: renamed"))
    listing = environment_listing(find_project(demo_project))
    assert listing["project"] == "renamed" and listing["environments"][2]["name"] == "dev"
    config.write_text(config.read_text() + "released: 2024-01-02\n")
    project = find_project(demo_project)
    assert str(project.config["released"]) == "2024-01-02" and project.name == "renamed"
    assert len(list(cache.glob("*.json"))) == 2


def test_cached_rows_follow_the_kcl_and_the_validating_code(demo_project: Path, tmp_path: Path) -> None:
    """docs/reference-env.md#env-list: a row is cached under its evaluation's key (an edited main.k
    misses it) and the validating code's identity (its sources' bytes: any change misses it)."""
    from engine.environments.listing import environment_listing
    from engine.paths import code_identity
    from engine.project import find_project

    project = find_project(demo_project)
    first = environment_listing(project)
    assert environment_listing(find_project(demo_project)) == first
    main = demo_project / "deploy" / "kcl" / "dev" / "main.k"
    main.write_text(main.read_text().replace('name = "web"', 'name = "www"'))
    dev = next(r for r in environment_listing(find_project(demo_project))["environments"] if r["name"] == "dev")
    assert dev["workloads"] == ["api", "www"]
    source = tmp_path / "model.py"
    source.write_text("A = 1\n")
    before = code_identity((source,), ("pydantic",))
    source.write_text("A = 2\n")
    assert before and code_identity((source,), ("pydantic",)) not in ("", before)
    assert code_identity((tmp_path / "missing.py",), ()) == ""  # unreadable: nothing is cached
