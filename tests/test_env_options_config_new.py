"""`env options`, `env config`, `env new` and `ci validate-kcl` (docs/reference-env.md#render-options,
docs/reference-env.md#shape-diff-config-new)."""

from __future__ import annotations

from pathlib import Path

from tests.kcl_fixtures import FAILED_CHECK_ENV, PLACEHOLDER_ENV, fw, fw_json, write_env


def test_options_lists_name_type_default_help(demo_project: Path) -> None:
    """`env options` (docs/reference-env.md#render-options): lists render options (name, type, default,
    help); derived ones are not settable."""
    result, doc = fw_json(demo_project, "env", "options", "cluster")
    assert result.exit_code == 0
    assert doc["options"] == [
        {
            "name": "api_replicas",
            "type": "int",
            "default": "2",
            "required": False,
            "help": "Replicas of the api Deployment",
        },
        {
            "name": "host",
            "type": "str",
            "default": "cluster.demo.example.test",
            "required": False,
            "help": "Hostname the ingress routes",
        },
    ]
    assert doc["derived"] == ["env", "namespace", "image_tag", "image_digests", "worktree", "branch"]
    human = fw(demo_project, "env", "options", "cluster")
    assert human.stdout.splitlines()[0].split() == ["NAME", "TYPE", "DEFAULT", "HELP"]
    assert fw(demo_project, "env", "options", "nowhere").exit_code == 1


def test_config_resolves_variables_and_hides_secret_values(demo_project: Path) -> None:
    """`env config` (docs/reference-env.md#shape-diff-config-new): resolved variables per workload;
    --workload; secret values never shown."""
    secret = "postgres://u:very-secret@db/app"
    result = fw(
        demo_project, "env", "config", "cluster", "--workload", "api", "--json", env={"DATABASE_URL": secret}
    )
    assert result.exit_code == 0 and "very-secret" not in result.stdout
    import json

    doc = json.loads(result.stdout)
    (api,) = doc["workloads"]
    rows = {v["name"]: v for v in api["vars"]}
    assert rows["GREETING"]["value"] == "hello from cluster" and rows["PORT"]["value"] == "8080"
    assert rows["DATABASE_URL"]["value"] is None and rows["DATABASE_URL"]["secret"] is True
    assert rows["DATABASE_URL"]["origin"] == "Secret api-secrets"
    human = fw(demo_project, "env", "config", "dev", "-D", "greeting=bonjour")
    assert "bonjour" in human.stdout and "GREETING" in human.stdout
    unknown = fw(demo_project, "env", "config", "dev", "--workload", "ghost")
    assert unknown.exit_code == 2 and "api, web" in unknown.stderr


def test_new_from_env_turns_danger_knobs_into_placeholders(demo_project: Path) -> None:
    """`env new --from` (docs/reference-env.md#shape-diff-config-new): copies it; danger knobs become
    REPLACE_ME_*; renders refuse them."""
    result, doc = fw_json(demo_project, "env", "new", "qa", "--from", "cluster")
    assert result.exit_code == 0, result.stderr
    text = (demo_project / "deploy" / "kcl" / "qa" / "main.k").read_text()
    assert 'context = "REPLACE_ME_CONTEXT"' in text and "k3d-demo" not in text
    assert "cluster.demo.example.test" not in text  # route hosts are danger knobs too
    assert doc["created"] is True and any("REPLACE_ME_CONTEXT" in p for p in doc["placeholders"])
    assert fw(demo_project, "env", "render", "qa").exit_code == 1
    check = fw(demo_project, "env", "new", "qa", "--check")
    assert check.exit_code == 1 and "REPLACE_ME_" in check.stderr
    path = demo_project / "deploy" / "kcl" / "qa" / "main.k"
    text = path.read_text().replace("REPLACE_ME_CONTEXT", "k3d-qa")
    path.write_text(text.replace("REPLACE_ME_HOST_1", "qa.demo.example.test"))
    assert fw(demo_project, "env", "new", "qa", "--check").exit_code == 0
    rendered = fw(demo_project, "env", "render", "qa", "--list")
    assert rendered.exit_code == 0 and "k3d-qa" in rendered.stdout
    again = fw(demo_project, "env", "new", "qa")
    assert again.exit_code == 1 and "already exists" in again.stderr


def test_new_with_bindings(demo_project: Path) -> None:
    """`env new --bind <name>=hosted|cluster|bucket` (docs/reference-env.md#shape-diff-config-new); a bucket
    binding leaves a bucket placeholder."""
    result, doc = fw_json(
        demo_project, "env", "new", "edge", "--from", "dev", "--bind", "web=bucket", "--bind", "api=cluster"
    )
    assert result.exit_code == 0, result.stderr
    assert doc["placeholders"] == ["environment.bindings.web.bucket = 'REPLACE_ME_BUCKET'"]
    hosted, doc = fw_json(demo_project, "env", "new", "saas", "--bind", "api=hosted", "--bind", "web=hosted")
    assert hosted.exit_code == 0
    listed, envs = fw_json(demo_project, "env", "list")
    kinds = {e["name"]: e["kind"] for e in envs["environments"]}
    assert kinds["saas"] == "hosted" and kinds["edge"] == "local"
    bad = fw(demo_project, "env", "new", "x1", "--bind", "api=moon")
    assert bad.exit_code == 2 and not (demo_project / "deploy" / "kcl" / "x1").exists()
    ghost = fw(demo_project, "env", "new", "x2", "--bind", "ghost=hosted")
    assert ghost.exit_code == 2 and not (demo_project / "deploy" / "kcl" / "x2").exists()
    assert fw(demo_project, "env", "new", "Bad_Name").exit_code == 2
    assert fw(demo_project, "env", "new", "x3", "--from", "nowhere").exit_code == 1


def test_ci_validate_kcl(demo_project: Path) -> None:
    """`ci validate-kcl` (docs/reference-env.md#shape-diff-config-new): every environment must render
    deployable manifests."""
    ok, doc = fw_json(demo_project, "ci", "validate-kcl")
    assert ok.exit_code == 0 and [e["status"] for e in doc["environments"]] == ["ok", "ok", "ok", "ok", "ok"]
    write_env(demo_project, "bad", FAILED_CHECK_ENV)
    write_env(demo_project, "held", PLACEHOLDER_ENV.replace('"bad"', '"held"'))
    failed, doc = fw_json(demo_project, "ci", "validate-kcl")
    assert failed.exit_code == 1 and doc["ok"] is False
    statuses = {e["env"]: e["status"] for e in doc["environments"]}
    assert statuses == {
        "bad": "error", "dev": "ok", "held": "error", "prod": "ok", "staging": "ok", "cloud": "ok", "cluster": "ok"
    }
    assert "bad, held" in doc["error"]["message"]
