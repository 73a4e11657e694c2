"""`framework env list` end to end: project discovery, real kcl-lib evaluation, JSON, errors, cache."""

from __future__ import annotations

import json
from pathlib import Path

from engine.environments.listing import list_environments
from engine.project import find_project
from tests.conftest import run_cli


def test_env_list_json_lists_the_declared_environments(demo_project: Path) -> None:
    """`env list` (README.md#commands) lists environments declared in deploy/kcl/, evaluated with kcl-lib."""
    result = run_cli("framework", "env", "list", "--json", cwd=demo_project)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["ok"] is True and doc["exit_code"] == 0 and doc["error"] is None
    assert doc["project"] == "demo" and Path(doc["root"]) == demo_project.resolve()
    rows = {e["name"]: e for e in doc["environments"]}
    assert list(rows) == ["cloud", "cluster", "dev", "prod", "staging"]
    assert (rows["dev"]["kind"], rows["dev"]["target"]) == ("local", "process")
    assert (rows["staging"]["kind"], rows["staging"]["target"]) == ("self_managed", "process")
    assert (rows["prod"]["kind"], rows["prod"]["target"]) == ("self_managed", "process")
    assert (rows["cluster"]["kind"], rows["cluster"]["target"]) == ("self_managed", "k8s")
    assert (rows["cloud"]["kind"], rows["cloud"]["target"]) == ("hosted", "hosted")
    assert rows["dev"]["workloads"] == ["api", "web"]
    assert rows["dev"]["file"] == "deploy/kcl/dev/main.k"


def test_env_list_human_table(demo_project: Path) -> None:
    """`env list`: human output is a table on stdout, nothing on stderr (README.md#output-and-exit-codes)."""
    result = run_cli("framework", "env", "list", cwd=demo_project)
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "TARGET", "WORKLOADS", "FILE"]
    assert [line.split()[0] for line in lines[1:]] == ["cloud", "cluster", "dev", "prod", "staging"]


def test_project_is_found_by_walking_up(demo_project: Path) -> None:
    """README.md#files: the project is found by walking up from the current directory to framework.yaml."""
    deep = demo_project / "services" / "api"
    result = run_cli("framework", "env", "list", "--json", cwd=deep)
    assert result.exit_code == 0 and Path(json.loads(result.stdout)["root"]) == demo_project.resolve()


def test_outside_a_project_is_a_clear_error(tmp_path: Path) -> None:
    """Outside a project, a clear error and a non-zero exit (README.md#output-and-exit-codes)."""
    result = run_cli("framework", "env", "list", cwd=tmp_path)
    assert result.exit_code == 1
    assert "not inside a framework project" in result.stderr and "framework.yaml" in result.stderr
    as_json = run_cli("framework", "env", "list", "--json", cwd=tmp_path)
    doc = json.loads(as_json.stdout)
    assert doc["ok"] is False and doc["error"]["code"] == "project_not_found"


def test_a_broken_environment_fails_the_command_but_others_are_listed(demo_project: Path) -> None:
    """`env list`: a KCL error names file and line (README.md#output-and-exit-codes); exit non-zero; nothing
    else lost."""
    bad = demo_project / "deploy" / "kcl" / "broken"
    bad.mkdir()
    (bad / "main.k").write_text("import framework\n\nenvironment = framework.Environment {\n    name =\n}\n")
    result = run_cli("framework", "env", "list", "--json", cwd=demo_project)
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["error"]["code"] == "kcl_error"
    rows = {e["name"]: e for e in doc["environments"]}
    assert set(rows) == {"broken", "cloud", "cluster", "dev", "prod", "staging"}
    broken = rows["broken"]["error"]
    assert broken["file"] == "deploy/kcl/broken/main.k" and broken["line"] == 4
    assert "\x1b[" not in broken["message"]
    human = run_cli("framework", "env", "list", cwd=demo_project)
    assert human.exit_code == 1 and "deploy/kcl/broken/main.k:4" in human.stderr


def test_a_failed_check_is_reported(demo_project: Path) -> None:
    """Environments in KCL (docs/reference-env.md#schemas): a failed schema `check:` is an evaluation error
    with its message."""
    bad = demo_project / "deploy" / "kcl" / "nocheck"
    bad.mkdir()
    (bad / "main.k").write_text('import framework\n\nenvironment = framework.Environment {\n'
                                '    name = "nocheck"\n    kind = "local"\n}\n')
    result = list_environments(find_project(demo_project))
    row = next(e for e in result.environments if e.name == "nocheck")
    assert row.error is not None and "declares a target" in row.error["message"]


def test_directory_and_declared_name_must_agree(demo_project: Path) -> None:
    """An environment is named by its directory deploy/kcl/<env>/ (README.md#files); a different declared
    name is an error."""
    path = demo_project / "deploy" / "kcl" / "dev" / "main.k"
    path.write_text(path.read_text().replace('name = "dev"', 'name = "devel"'))
    row = next(e for e in list_environments(find_project(demo_project)).environments if e.name == "dev")
    assert row.error is not None and "declares name 'devel'" in row.error["message"]


def test_evaluation_is_cached_by_content_and_invalidated_by_any_edit(demo_project: Path, isolated_home: Path) -> None:
    """Evaluated KCL is cached by content hash (docs/reference-env.md#rendering); an edit misses the cache."""
    project = find_project(demo_project)
    first = list_environments(project)
    cache = isolated_home / ".cache" / "framework" / "kcl"
    entries = set(cache.glob("*.json"))
    assert len(entries) == 5
    assert list_environments(project) == first  # served from the cache: no new entries
    assert set(cache.glob("*.json")) == entries
    path = demo_project / "deploy" / "kcl" / "dev" / "main.k"
    path.write_text(path.read_text().replace('name = "web"', 'name = "www"'))
    after = list_environments(project)
    dev = next(e for e in after.environments if e.name == "dev")
    assert dev.workloads == ["api", "www"]
    # Every environment's key covers the whole deploy/kcl tree (imports may cross directories).
    assert len(set(cache.glob("*.json")) - entries) == 5


def test_no_environments_is_an_empty_list(tmp_path: Path) -> None:
    """`env list` (README.md#commands): a project with no deploy/kcl lists nothing and succeeds."""
    (tmp_path / "framework.yaml").write_text("name: empty\n")
    result = run_cli("framework", "env", "list", "--json", cwd=tmp_path)
    assert result.exit_code == 0 and json.loads(result.stdout)["environments"] == []


def test_invalid_framework_yaml_is_a_clear_error(tmp_path: Path) -> None:
    """Standards: bad input gets a clear error and exit code, never a traceback."""
    (tmp_path / "framework.yaml").write_text("name: [unclosed\n")
    result = run_cli("framework", "env", "list", "--json", cwd=tmp_path)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "invalid_config"


def test_the_shipped_demo_runs_its_dev_database_by_default(tmp_path):
    """`env up` runs a dev database, migrated and auto-seeded on first boot
    (docs/reference-db.md#env-up-and-the-dashboard): the demo's
    `dev` as shipped declares the PostgreSQL workload and gives the api its DATABASE_URL; -D database=false
    leaves both out."""
    import shutil

    from engine.environments.evaluate import evaluate_environment
    from engine.project import find_project

    root = tmp_path / "demo"
    shutil.copytree(Path(__file__).resolve().parent.parent / "examples" / "demo", root,
                    ignore=shutil.ignore_patterns(".framework", "__pycache__"))
    project = find_project(root)
    spec = evaluate_environment(project, "dev")
    assert [w.name for w in spec.workloads] == ["api", "web", "db"]
    assert spec.workload("api").env["DATABASE_URL"].startswith("postgresql://")
    off = evaluate_environment(project, "dev", {"database": "false"})
    assert [w.name for w in off.workloads] == ["api", "web"] and "DATABASE_URL" not in off.workload("api").env
