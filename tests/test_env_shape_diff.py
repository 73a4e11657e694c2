"""`env shape` and `env diff` (docs/reference-env.md#shape-diff-config-new): hashes per object, no secret
values, recorded bundles."""

from __future__ import annotations

from pathlib import Path

from engine.environments.bundles import record_bundle
from engine.environments.shape import compute_shape
from engine.project import find_project
from tests.kcl_fixtures import SYNTAX_ERROR_ENV, WRITING_ENV, fw, fw_json, write_env


def test_shape_json_fields_and_one_hash_per_object(demo_project: Path) -> None:
    """`env shape --json` (docs/reference-env.md#shape-diff-config-new): project, env, kind, shape (one hash
    per object), provenance."""
    result, doc = fw_json(demo_project, "env", "shape", "cluster")
    assert result.exit_code == 0, result.stderr
    assert (doc["project"], doc["env"], doc["kind"]) == ("demo", "cluster", "self_managed")
    objects = doc["shape"]["objects"]
    assert len({(o["kind"], o["name"]) for o in objects}) == len(objects) == 9
    assert all(o["hash"].startswith("sha256:") and len(o["hash"]) == 71 for o in objects)
    assert doc["shape"]["secret_names"] == ["DATABASE_URL"]
    assert doc["shape"]["clusters"] == ["k3d-demo"]
    assert doc["shape"]["domains"] == ["cluster.demo.example.test"]
    assert doc["provenance"]["file"] == "deploy/kcl/cluster/main.k" and doc["provenance"]["kcl_lib"]


def test_shape_carries_no_secret_values(demo_project: Path) -> None:
    """`env shape` carries no secret values (docs/reference-env.md#shape-diff-config-new), even when the
    secret is set in the environment."""
    secret = "postgres://user:s3cr3t-value@db/app"
    result = fw(demo_project, "env", "shape", "cluster", "--json", env={"DATABASE_URL": secret})
    assert result.exit_code == 0 and secret not in result.stdout and "s3cr3t" not in result.stdout


def test_shape_hash_follows_the_declaration(demo_project: Path) -> None:
    """`env shape` (docs/reference-env.md#shape-diff-config-new): the object hash changes exactly for the
    object whose declaration changed."""
    project = find_project(demo_project)
    before = compute_shape(project, "cluster").object_hashes()
    after = compute_shape(project, "cluster", {"api_replicas": "5"}).object_hashes()
    changed = sorted(k for k in before if before[k] != after[k])
    assert changed == ["k3d-demo/Deployment/demo-cluster/api"]


def test_shape_fails_if_the_render_wrote_files(demo_project: Path) -> None:
    """`env shape` fails if the render wrote files (docs/reference-env.md#rendering)."""
    write_env(demo_project, "bad", WRITING_ENV)
    result, doc = fw_json(demo_project, "env", "shape", "bad")
    assert result.exit_code == 1 and doc["error"]["code"] == "render_wrote_files"


def test_diff_without_bundle_lists_the_declared_shape(demo_project: Path) -> None:
    """`env diff` (docs/reference-env.md#shape-diff-config-new): with no recorded bundle the declared shape
    is the baseline; read-only."""
    result, doc = fw_json(demo_project, "env", "diff", "cluster")
    assert result.exit_code == 0
    (env,) = doc["environments"]
    assert (env["env"], env["status"], env["baseline"]) == ("cluster", "ok", "declared")
    assert {c["change"] for c in env["changes"]} == {"declared"} and len(env["changes"]) == 9


def test_diff_against_recorded_bundle(demo_project: Path, isolated_home: Path) -> None:
    """`env diff` (docs/reference-env.md#shape-diff-config-new): hashes against the last recorded bundle:
    unchanged, changed, added, removed."""
    project = find_project(demo_project)
    shape = compute_shape(project, "cluster").model_dump(mode="json")
    record_bundle(project.key, "cluster", shape)
    same, doc = fw_json(demo_project, "env", "diff", "cluster")
    assert same.exit_code == 0 and doc["environments"][0]["status"] == "ok"
    assert doc["environments"][0]["counts"] == {"unchanged": 9}
    main = demo_project / "deploy" / "kcl" / "cluster" / "main.k"
    text = main.read_text().replace('env = {GREETING = "hello from cluster"}\n', "")
    main.write_text(text.replace("replicas = _api_replicas", "replicas = 7"))
    moved, doc = fw_json(demo_project, "env", "diff", "cluster")
    assert moved.exit_code == 1 and doc["ok"] is False
    env = doc["environments"][0]
    assert env["status"] == "stale" and env["baseline"] == "bundle"
    changes = {c["key"]: c["change"] for c in env["changes"] if c["change"] != "unchanged"}
    assert changes == {
        "k3d-demo/Deployment/demo-cluster/api": "changed",
        "k3d-demo/ConfigMap/demo-cluster/api-env": "removed",
    }
    human = fw(demo_project, "env", "diff", "cluster")
    assert "~ k3d-demo/Deployment/demo-cluster/api" in human.stdout
    assert "- k3d-demo/ConfigMap/demo-cluster/api-env" in human.stdout


def test_diff_all_reports_errors_per_environment(demo_project: Path) -> None:
    """`env diff --all` (docs/reference-env.md#shape-diff-config-new): every environment with a guard
    status; a broken one is `error`, exit 1."""
    write_env(demo_project, "broken", SYNTAX_ERROR_ENV.replace('"bad"', '"broken"'))
    write_env(demo_project, "impure", WRITING_ENV.replace('"bad"', '"impure"'))
    result, doc = fw_json(demo_project, "env", "diff", "--all")
    assert result.exit_code == 1
    statuses = {e["env"]: e["status"] for e in doc["environments"]}
    assert statuses == {
        "broken": "error", "dev": "ok", "impure": "impure",
        "prod": "ok", "staging": "ok", "cloud": "ok", "cluster": "ok",
    }
    both = fw(demo_project, "env", "diff", "cluster", "--all")
    assert both.exit_code == 2


def test_diff_charts_flag_includes_chart_objects(demo_project: Path) -> None:
    """`env diff --charts` (docs/reference-env.md#shape-diff-config-new): chart objects of the recorded
    bundle are compared only with --charts."""
    project = find_project(demo_project)
    shape = compute_shape(project, "cluster").model_dump(mode="json")
    shape["shape"]["objects"].append(
        {
            "cluster": "k3d-demo",
            "kind": "StatefulSet",
            "name": "redis",
            "namespace": "demo-cluster",
            "chart": "redis",
            "hash": "sha256:" + "0" * 64,
        }
    )
    record_bundle(project.key, "cluster", shape)
    plain, doc = fw_json(demo_project, "env", "diff", "cluster")
    assert plain.exit_code == 0 and doc["environments"][0]["status"] == "ok"
    charts, doc = fw_json(demo_project, "env", "diff", "cluster", "--charts")
    assert charts.exit_code == 1
    removed = [c["key"] for c in doc["environments"][0]["changes"] if c["change"] == "removed"]
    assert removed == ["k3d-demo/StatefulSet/demo-cluster/redis"]
