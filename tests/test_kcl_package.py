"""The `framework` KCL package and kcl-lib evaluation: checks, errors, cache, nothing under $HOME."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.environments.evaluate import evaluate_environment
from engine.errors import KclError
from engine.project import find_project
from tests.kcl_fixtures import FAILED_CHECK_ENV, SYNTAX_ERROR_ENV, fw, fw_json, write_env


def test_nothing_is_written_under_home(demo_project: Path, tmp_path: Path) -> None:
    """docs/reference-env.md: the package is passed to kcl-lib as an external package; nothing written to $HOME."""
    home = tmp_path / "empty-home"
    home.mkdir()
    cache = tmp_path / "cache"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(cache)}
    env.pop("KCL_PKG_PATH", None)
    code = (
        "from engine.project import find_project; from engine.environments.evaluate import evaluate_environment; "
        "print(evaluate_environment(find_project(), 'staging').name)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=demo_project, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "staging"
    assert list(home.iterdir()) == []
    assert (cache / "framework" / "kcl-pkg").is_dir()


def test_syntax_error_names_file_and_line_without_ansi(demo_project: Path) -> None:
    """docs/reference-env.md (a KCL error is exit 1): a KCL error (raised by kcl-lib) shows file, line
    and message; no ANSI off a TTY."""
    write_env(demo_project, "bad", SYNTAX_ERROR_ENV)
    result = fw(demo_project, "env", "render", "bad")
    assert result.exit_code == 1
    assert "deploy/kcl/bad/main.k:5" in result.stderr
    assert "\x1b[" not in result.stderr and result.stdout == ""


def test_failed_check_is_reported_from_err_message(demo_project: Path) -> None:
    """docs/reference-env.md#schemas: a failed `check:` (in err_message) fails with file, line and the
    check's message."""
    write_env(demo_project, "bad", FAILED_CHECK_ENV)
    result, doc = fw_json(demo_project, "env", "render", "bad")
    assert result.exit_code == 1 and doc["ok"] is False
    assert doc["error"]["code"] == "kcl_error"
    assert "port must be between 1 and 65535" in doc["error"]["message"]
    assert doc["error"]["file"] and doc["error"]["line"]
    assert "\x1b[" not in result.stderr


LOCAL = 'kind = "local"\n    target = framework.Process {}\n    '


@pytest.mark.parametrize(
    ("fragment", "message"),
    [
        ('kind = "hosted"\n    workloads = []', "a hosted environment declares framework.ControlPlane"),
        ('kind = "local"\n    workloads = []', "declares a target"),
        (
            LOCAL + 'workloads = [framework.Workload {name = "a"}, framework.Workload {name = "a"}]',
            "workload names must be unique",
        ),
        (
            LOCAL + 'bindings = {ghost = framework.Binding {binder = "cluster"}}',
            "bindings name declared workloads or frontends",
        ),
        (
            LOCAL + 'workloads = [framework.Workload {name = "a", build = framework.Build {type = "shell"}}]',
            "a shell build declares its command",
        ),
        (
            LOCAL + 'workloads = [framework.Workload {name = "Bad_Name"}]',
            "lowercase DNS label",
        ),
    ],
)
def test_schema_checks(demo_project: Path, fragment: str, message: str) -> None:
    """docs/reference-env.md#schemas: the schemas' `check:` blocks reject invalid environments with their message."""
    write_env(
        demo_project,
        "bad",
        f'import framework\n\nenvironment = framework.Environment {{\n    name = "bad"\n    {fragment}\n}}\n',
    )
    with pytest.raises(KclError) as err:
        evaluate_environment(find_project(demo_project), "bad")
    assert message in err.value.message


def test_cache_misses_on_any_edit(demo_project: Path) -> None:
    """docs/reference-env.md#rendering: results are cached by content hash of every input; an edit is seen at once."""
    project = find_project(demo_project)
    assert evaluate_environment(project, "cloud").workloads[0].replicas == 3
    main = demo_project / "deploy" / "kcl" / "cloud" / "main.k"
    main.write_text(main.read_text().replace("replicas = 3", "replicas = 5"))
    assert evaluate_environment(project, "cloud").workloads[0].replicas == 5
