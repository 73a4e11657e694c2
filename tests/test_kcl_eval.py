"""`framework kcl eval <file>` (docs/reference-env.md#shape-diff-config-new): -S selection, --format raw, -D, errors."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.kcl_fixtures import fw, fw_json

DEV = "deploy/kcl/dev/main.k"


def test_eval_prints_the_document_as_yaml(demo_project: Path) -> None:
    """kcl eval: evaluates the file (the framework package importable) and prints it."""
    result = fw(demo_project, "kcl", "eval", DEV)
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.stdout)["environment"]["name"] == "dev"


def test_select_with_numeric_list_index(demo_project: Path) -> None:
    """kcl eval -S: dotted paths, repeatable; a numeric segment indexes a list."""
    result = fw(
        demo_project,
        "kcl",
        "eval",
        DEV,
        "-S",
        "environment.workloads.1.ports.0.port",
        "-S",
        "environment.workloads.0.name",
        "--format",
        "raw",
    )
    assert result.exit_code == 0 and result.stdout == "8081\napi\n"
    one, doc = fw_json(demo_project, "kcl", "eval", DEV, "-S", "environment.workloads.0.env")
    assert doc["value"] == {"GREETING": "hello from dev"}
    as_json = fw(demo_project, "kcl", "eval", DEV, "-S", "environment.workloads.0.ports", "--format", "json")
    assert json.loads(as_json.stdout) == [{"name": "http", "port": 8080}]


def test_missing_path_names_what_the_document_has(demo_project: Path) -> None:
    """kcl eval -S: a path that does not exist is an error naming what the document has."""
    missing = fw(demo_project, "kcl", "eval", DEV, "-S", "environment.nope")
    assert missing.exit_code == 1
    assert (
        "has no key 'nope'" in missing.stderr and "workloads" in missing.stderr and "kind" in missing.stderr
    )
    out_of_range = fw(demo_project, "kcl", "eval", DEV, "-S", "environment.workloads.9")
    assert out_of_range.exit_code == 1 and "list of 2 items" in out_of_range.stderr


def test_raw_is_for_scalars_only(demo_project: Path) -> None:
    """kcl eval --format raw: scalars only; a mapping is an error and prints nothing on stdout."""
    result = fw(demo_project, "kcl", "eval", DEV, "-S", "environment.target", "--format", "raw")
    assert result.exit_code == 1 and result.stdout == "" and "scalars only" in result.stderr


def test_define_sets_an_option(tmp_path: Path) -> None:
    """kcl eval -D name=value: sets option(name); works outside a project too."""
    (tmp_path / "c.k").write_text(
        'region = option("region", default="us")\nn = option("n", type="int", default=1)\n'
    )
    result = fw(tmp_path, "kcl", "eval", "c.k", "-D", "region=eu", "-D", "n=3", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"region": "eu", "n": 3}
    assert fw(tmp_path, "kcl", "eval", "c.k", "-D", "oops").exit_code == 2
    assert fw(tmp_path, "kcl", "eval", "c.k", "--format", "toml").exit_code == 2


def test_eval_errors(tmp_path: Path) -> None:
    """kcl eval: a KCL error shows file and line; a missing file is an error."""
    (tmp_path / "bad.k").write_text("a = 1\nb = a +\n")
    result = fw(tmp_path, "kcl", "eval", "bad.k")
    assert result.exit_code == 1 and "bad.k:2" in result.stderr and "\x1b[" not in result.stderr
    assert fw(tmp_path, "kcl", "eval", "absent.k").exit_code == 1
