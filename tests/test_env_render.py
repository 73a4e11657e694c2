"""`framework env render` on the demo and on purpose-built environments (docs/reference-env.md#rendering)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import yaml

from engine.environments.render import process_plan
from engine.project import find_project
from tests.kcl_fixtures import COMPOSE_ENV, PLACEHOLDER_ENV, WRITING_ENV, fw, fw_json, write_env
from tests.waiting import until


def _documents(stream: str) -> list[tuple[str, dict]]:
    """(cluster comment, document) pairs of a rendered YAML stream."""
    out = []
    for part in stream.split("---\n"):
        first, _, body = part.partition("\n")
        assert first.startswith("# cluster: "), part
        out.append((first.removeprefix("# cluster: "), yaml.safe_load(body)))
    return out


def test_k8s_render_is_valid_kubernetes(demo_project: Path) -> None:
    """docs/reference-env.md#rendering: a K8sCluster environment renders manifests valid against the
    Kubernetes schemas."""
    import kubernetes_validate

    result = fw(demo_project, "env", "render", "cluster")
    assert result.exit_code == 0, result.stderr
    docs = _documents(result.stdout)
    assert {c for c, _ in docs} == {"k3d-demo"}
    kinds = sorted(d["kind"] for _, d in docs)
    assert kinds == [
        "ConfigMap",
        "ConfigMap",
        "Deployment",
        "Deployment",
        "Ingress",
        "Ingress",
        "Namespace",
        "Service",
        "Service",
    ]
    version = kubernetes_validate.utils.latest_version()
    for _, doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)
    api = next(d for _, d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "api")
    container = api["spec"]["template"]["spec"]["containers"][0]
    refs = [e["valueFrom"]["secretKeyRef"] for e in container["env"] if "valueFrom" in e]
    assert refs == [{"name": "api-secrets", "key": "DATABASE_URL"}]  # secret referenced by name only
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert api["metadata"]["namespace"] == "demo-cluster"


def test_hosted_render_is_valid_kubernetes(demo_project: Path) -> None:
    """docs/reference-env.md#rendering: the hosted environment renders the manifests its control plane converges."""
    import kubernetes_validate

    result = fw(demo_project, "env", "render", "cloud")
    assert result.exit_code == 0, result.stderr
    for cluster, doc in _documents(result.stdout):
        assert cluster == "hosted"
        kubernetes_validate.validate(doc, kubernetes_validate.utils.latest_version(), strict=True)


def test_compose_render_matches_the_compose_specification(demo_project: Path) -> None:
    """docs/reference-env.md#rendering: a Compose environment renders a compose file the Compose
    specification accepts."""
    import jsonschema

    write_env(demo_project, "box", COMPOSE_ENV)
    result = fw(demo_project, "env", "render", "box")
    assert result.exit_code == 0, result.stderr
    ((cluster, doc),) = _documents(result.stdout)
    assert cluster == "demo-box"
    schema_file = resources.files("check_jsonschema") / "builtin_schemas" / "vendor" / "compose-spec.json"
    jsonschema.validate(doc, json.loads(schema_file.read_text()))
    api = doc["services"]["api"]
    assert api["image"] == "registry.example.test/demo/api:dev"
    assert api["environment"]["DATABASE_URL"].startswith("${DATABASE_URL:?")  # by name, never a value
    assert api["deploy"] == {"replicas": 2}
    assert doc["services"]["web"]["image"] == "registry.example.test/demo/web:1.2"


def test_process_render_is_the_process_plan(demo_project: Path) -> None:
    """docs/reference-env.md#rendering: a process environment renders the process runtime's plan (command,
    cwd, env, ports)."""
    plan = process_plan(find_project(demo_project), "dev")
    api = plan.process("api")
    assert api.command == ["python3", "services/api/main.py"]
    assert Path(api.cwd) == demo_project.resolve()
    assert api.env == {"GREETING": "hello from dev", "PORT": "8080"}
    assert api.health is not None and (api.health.path, api.health.port) == ("/healthz", 8080)
    assert (demo_project / api.command[1]).is_file()
    result = fw(demo_project, "env", "render", "dev")
    docs = _documents(result.stdout)
    assert [(c, d["name"], d["command"]) for c, d in docs] == [
        ("local", "api", ["python3", "services/api/main.py"]),
        ("local", "web", ["python3", "services/web/main.py"]),
    ]


def test_list_cluster_kind_and_target_filters(demo_project: Path) -> None:
    """`env render` (docs/reference-env.md#rendering): --list, --cluster, --kind k1,k2 and --target <app>
    select objects."""
    result, doc = fw_json(
        demo_project,
        "env",
        "render",
        "cluster",
        "--list",
        "--kind",
        "Deployment,service",
        "--target",
        "api",
        "--cluster",
        "k3d-demo",
    )
    assert result.exit_code == 0
    assert [(o["kind"], o["name"]) for o in doc["objects"]] == [("Deployment", "api"), ("Service", "api")]
    assert "document" not in doc["objects"][0] and "yaml" not in doc
    table = fw(demo_project, "env", "render", "cluster", "--list")
    assert table.stdout.splitlines()[0].split() == ["CLUSTER", "KIND", "NAMESPACE", "NAME", "WORKLOAD"]
    bad_cluster = fw(demo_project, "env", "render", "cluster", "--cluster", "elsewhere")
    assert bad_cluster.exit_code == 2 and "k3d-demo" in bad_cluster.stderr
    bad_target = fw(demo_project, "env", "render", "cluster", "--target", "ghost")
    assert bad_target.exit_code == 2 and "api, web" in bad_target.stderr


def test_declared_option_changes_the_render(demo_project: Path) -> None:
    """-D sets an option the environment declares (docs/reference-env.md#render-options)."""
    result = fw(
        demo_project,
        "env",
        "render",
        "cluster",
        "-D",
        "api_replicas=4",
        "-D",
        "host=qa.example.test",
        "--kind",
        "Deployment,Ingress",
        "--target",
        "api",
    )
    docs = [d for _, d in _documents(result.stdout)]
    assert docs[0]["spec"]["replicas"] == 4
    assert docs[1]["spec"]["rules"][0]["host"] == "qa.example.test"


def test_undeclared_and_derived_options_are_usage_errors(demo_project: Path) -> None:
    """docs/reference-env.md#render-options: undeclared names are refused; derived names are refused saying
    they are derived."""
    undeclared = fw(demo_project, "env", "render", "cluster", "-D", "nope=1")
    assert (
        undeclared.exit_code == 2
        and "not declared" in undeclared.stderr
        and "api_replicas" in undeclared.stderr
    )
    for name in ("env", "namespace", "image_tag", "image_digests", "worktree", "branch"):
        derived = fw(demo_project, "env", "render", "cluster", "-D", f"{name}=x")
        assert derived.exit_code == 2 and "derived" in derived.stderr, name
    wrong_type = fw(demo_project, "env", "render", "cluster", "-D", "api_replicas=many")
    assert wrong_type.exit_code == 2 and "int" in wrong_type.stderr
    malformed = fw(demo_project, "env", "render", "cluster", "-D", "novalue")
    assert malformed.exit_code == 2


def test_placeholder_left_in_is_refused(demo_project: Path) -> None:
    """`env new` placeholders (REPLACE_ME_*) are refused by every render (docs/reference-env.md#rendering)."""
    write_env(demo_project, "bad", PLACEHOLDER_ENV)
    result, doc = fw_json(demo_project, "env", "render", "bad")
    assert result.exit_code == 1 and doc["error"]["code"] == "placeholder_left"
    assert "environment.target.context" in doc["error"]["message"]


def test_missing_environment(demo_project: Path) -> None:
    """A missing environment exits 1 naming the declared ones (README.md#output-and-exit-codes)."""
    result = fw(demo_project, "env", "render", "nowhere")
    assert result.exit_code == 1 and "not declared" in result.stderr
    assert "cloud, cluster, dev, prod, staging" in result.stderr


def test_fail_on_write(demo_project: Path) -> None:
    """`env render --fail-on-write` (docs/reference-env.md#rendering): a render that writes files fails;
    without the flag it warns."""
    write_env(demo_project, "bad", WRITING_ENV)
    failed = fw(demo_project, "env", "render", "bad", "--fail-on-write")
    assert failed.exit_code == 1 and "leak.txt" in failed.stderr
    warned = fw(demo_project, "env", "render", "bad")
    assert warned.exit_code == 0 and "leak.txt" in warned.stderr and "name: api" in warned.stdout


def test_no_charts(demo_project: Path) -> None:
    """`env render --no-charts` (docs/reference-env.md#rendering): declared Helm charts are skipped (else
    helm, or a clear error)."""
    main = demo_project / "deploy" / "kcl" / "cluster" / "main.k"
    main.write_text(
        main.read_text().replace(
            "    workloads = [",
            '    charts = [framework.Chart {name = "redis", chart = "redis", repo = '
            '"https://charts.example.test"}]\n    workloads = [',
            1,
        )
    )
    skipped = fw(demo_project, "env", "render", "cluster", "--no-charts", "--list", "--json")
    assert skipped.exit_code == 0
    assert all(o["chart"] is None for o in json.loads(skipped.stdout)["objects"])
    with_charts = fw(demo_project, "env", "render", "cluster", "--list")
    if with_charts.exit_code != 0:  # no helm on this machine: the error says what to do
        assert "helm" in with_charts.stderr and "--no-charts" in with_charts.stderr


def test_process_plan_runs_the_demo_service(demo_project: Path) -> None:
    """docs/reference-env.md#rendering: the process plan is runnable as is: the demo api answers its health
    check on $PORT."""
    import os
    import socket
    import subprocess
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    plan = process_plan(find_project(demo_project), "dev", port_offset=free - 8080)
    api = plan.process("api")
    assert api.env["PORT"] == str(free) and api.health is not None and api.health.port == free
    proc = subprocess.Popen(
        api.command,
        cwd=api.cwd,
        env={**os.environ, **api.env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        def answered() -> bytes | None:
            try:
                url = f"http://127.0.0.1:{api.health.port}{api.health.path}"
                with urllib.request.urlopen(url, timeout=1) as resp:
                    return bytes(resp.read()) or b"(empty)"
            except OSError:
                assert proc.poll() is None, "the planned process exited"
                return None

        assert until(answered, 20, what="the planned process's health path") == b"ok"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
