"""`env deploy` on the process runtime, end to end with the real `framework` script
(docs/reference-deploy.md#env-deploy)."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401

FAST = ("--stability-window", "0.3")


def get(port: int, path: str = "/") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
        return resp.read().decode()


def promotions(demo, env: str = "dev") -> list[dict]:
    """The environment's promotions, as `ledger show <env>` reads them (its engine call, in-process: the
    command itself runs as a real process in test_from_env_deploys_exactly_what_that_env_runs)."""
    from engine.ledger.transfer import show
    from engine.project import Project

    return show(Project(demo.root), env).model_dump(mode="json")["promotions"]


def build_release(demo, name: str) -> None:
    """`framework env build dev --release <name>`'s engine call, in-process (a setup step here; the command
    runs as a real process in test_plan_writes_nothing_and_approve_applies_only_that_plan)."""
    from engine.builds.dispatch import env_build
    from engine.project import Project

    result = env_build(Project(demo.root), "dev", release=name)
    assert result.release is not None and all(b.status != "failed" for b in result.builds), result


def test_deploy_dev_starts_both_waits_healthy_and_records(demo):
    """Deploy form without a version: builds, cuts an auto-named release, promotes, applies, waits healthy."""
    code, doc = demo.json("env", "deploy", "dev", "--yes", *FAST)
    assert code == 0, doc
    assert doc["mode"] == "apply" and doc["applied"] and doc["confirmed"] and doc["refusal"] is None
    assert doc["queued"] is None
    release = doc["target"]["release"]
    assert __import__("re").fullmatch(r"\d{8}\.\d{6}-[0-9a-f]{12}", release)
    assert (demo.root / ".framework" / "releases" / f"{release}.json").is_file()
    assert doc["deploy_plan"]["digest"].startswith("sha256:")
    assert doc["current"]["promotion_id"] is None  # what the plan read
    assert {r["name"]: r["outcome"] for r in doc["rollout"]["resources"]} == {"api": "ready", "web": "ready"}
    assert get(demo.ports["api"], "/healthz") == "ok"
    assert json.loads(get(demo.ports["api"]))["message"] == "hello from dev"
    assert get(demo.ports["web"], "/healthz") == "ok"
    bundle = json.loads(
        (Path(demo.env["FRAMEWORK_LEDGER_HOME"]) / "demo" / "bundles" / "dev.json").read_text()
    )
    assert sorted(w["name"] for w in bundle["shape"]["workloads"]) == ["api", "web"]
    code, diff = demo.json("env", "diff", "dev")  # the recorded bundle is what `env diff` compares against
    assert code == 0 and diff["environments"][0]["baseline"] == "bundle"
    assert {c["change"] for c in diff["environments"][0]["changes"]} == {"unchanged"}


def test_redeploying_the_running_release_appends_nothing(demo):
    """Re-deploying the release already running (docs/reference-deploy.md#env-deploy: "already on this
    release") appends nothing, is not a conflict, still applies."""
    code, first = demo.json("env", "deploy", "dev", "--yes", *FAST)
    assert code == 0
    code, again = demo.json("env", "deploy", "dev", "--yes", *FAST)
    assert code == 0, again
    assert again["target"]["release"] == first["target"]["release"]  # auto name reused: same tree
    assert again["appended"] is False and again["applied"] is True
    assert again["deploy_plan"]["direction"] == "SAME"
    assert all(i["change"] == "unchanged" for i in again["deploy_plan"]["images"])
    assert len(promotions(demo)) == 1
    # same processes kept running (nothing to replace)
    pids = lambda d: sorted(i["pid"] for r in d["rollout"]["resources"] for i in r["instances"])  # noqa: E731
    assert pids(first) == pids(again)


def test_no_terminal_and_no_yes_exits_5_having_written_no_promotion(demo):
    """With no terminal and no --yes the command exits 5 (docs/reference-deploy.md#env-deploy) having
    written no promotion; the Forms order (cut, then confirm) means the auto-named release it names in
    `next_step` is cut."""
    proc = demo.run("env", "deploy", "dev", "--json")
    assert proc.returncode == 5
    doc = json.loads(proc.stdout)
    assert (
        doc["error"]["code"] == "plan_unconfirmed" and doc["confirmed"] is False and doc["applied"] is False
    )
    assert "--yes" in doc["error"]["hint"] or "--approve" in doc["error"]["hint"]
    assert (demo.root / ".framework" / "releases" / f"{doc['target']['release']}.json").is_file()
    assert promotions(demo) == []
    assert "Deploy plan" in proc.stderr  # human output on stderr with --json


def test_exit_5_next_step_run_as_printed_deploys_with_the_plan_digest(demo):
    """Forms, and no terminal without --yes exits 5 writing no promotion
    (docs/reference-deploy.md#env-deploy): the exit-5 document's `next_step`, run verbatim, deploys the
    auto-cut release (exit 0) and its promotion carries the plan digest; a rerun reuses the auto name
    ("reused when its tree matches the checkout")."""
    import shlex

    code, first = demo.json("env", "deploy", "dev")
    assert code == 5 and first["error"]["code"] == "plan_unconfirmed"
    code, again = demo.json("env", "deploy", "dev")
    assert code == 5 and again["target"]["release"] == first["target"]["release"]
    assert again["next_step"] == first["next_step"]
    argv = shlex.split(first["next_step"])
    assert argv[:4] == ["framework", "env", "deploy", "dev"] and "--approve" in argv
    code, done = demo.json(*argv[1:], *FAST)
    assert code == 0, done
    assert done["promotion"]["plan_digest"] == first["deploy_plan"]["digest"]
    assert [p["release"] for p in promotions(demo)] == [first["target"]["release"]]


def test_plan_writes_nothing_and_approve_applies_only_that_plan(demo):
    """--plan writes nothing; --approve <digest> applies that plan; a stale digest is refused with exit 3."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)  # the real command, once
    code, plan = demo.json("env", "deploy", "dev", "v1", "--plan")
    assert code == 0 and plan["mode"] == "dry_run" and plan["applied"] is False
    digest = plan["deploy_plan"]["digest"]
    assert plan["next_step"] == f"framework env deploy dev v1 --approve {digest}"
    assert promotions(demo) == []
    code, stale = demo.json("env", "deploy", "dev", "v1", "--approve", "sha256:" + "0" * 64, *FAST)
    assert code == 3 and stale["error"]["code"] == "promotion_conflict" and promotions(demo) == []
    code, applied = demo.json("env", "deploy", "dev", "v1", "--approve", digest, *FAST)
    assert code == 0 and applied["confirmed"] and applied["appended"]
    # the saved plan no longer matches live state once the environment moved
    demo.edit_api("v2 greeting")
    demo.commit("v2")
    build_release(demo, "v2")
    code, moved = demo.json("env", "deploy", "dev", "v2", "--approve", digest, *FAST)
    assert code == 3 and moved["refusal"]["code"] == "promotion_conflict"


def test_older_release_deploys_behind_byte_for_byte(demo):
    """No rollback (docs/reference-deploy.md#env-deploy): deploying an older release is an ordinary deploy
    labelled BEHIND, and runs its own bytes from the file store (releases redeploy exactly)."""
    build_release(demo, "v1")
    demo.edit_api("second")
    c2 = demo.commit("second greeting")
    build_release(demo, "v2")
    assert demo.json("env", "deploy", "dev", "v2", "--yes", *FAST)[0] == 0
    assert json.loads(get(demo.ports["api"]))["message"] == "hello from dev"  # env var wins over default
    code, doc = demo.json("env", "deploy", "dev", "v1", "--yes", *FAST)
    assert code == 0, doc
    plan = doc["deploy_plan"]
    assert plan["direction"] == "BEHIND"
    api = next(i for i in plan["images"] if i["name"] == "api")
    assert api["change"] == "changed" and api["from_digest"] != api["to_digest"]
    assert next(i for i in plan["images"] if i["name"] == "web")["change"] == "unchanged"
    assert [c["commit"] for c in plan["commits"]] == [c2]
    # the running api is v1's file, byte for byte, even though the checkout holds v2
    rel = json.loads((demo.root / ".framework" / "releases" / "v1.json").read_text())
    art = next(a for a in rel["artifacts"] if a["coordinate"] == "services/api/main.py")
    pid = doc["rollout"]["resources"][0]["instances"][0]["pid"]
    cwd = Path(f"/proc/{pid}/cwd").resolve()
    import hashlib

    assert (
        "sha256:" + hashlib.sha256((cwd / "services/api/main.py").read_bytes()).hexdigest() == art["digest"]
    )
    assert len(promotions(demo)) == 2


def test_unknown_version_and_rule_1_refusals_exit_1(demo):
    """Unknown version is an error (exit 1); --target/--frontends-only need a version unless
    --dry-run/--explain."""
    code, doc = demo.json("env", "deploy", "dev", "nope", "--yes")
    assert code == 1 and doc["error"]["code"] == "release_not_found"
    assert "framework release list" in doc["error"]["hint"]  # the hint names a command that exists
    code, doc = demo.json("env", "deploy", "dev", "--target", "api", "--yes")
    assert code == 1 and doc["refusal"]["code"] == "invalid_input"
    code, doc = demo.json("env", "deploy", "dev", "--target", "api", "--dry-run")
    assert code == 0 and doc["mode"] == "dry_run"
    code, doc = demo.json("env", "deploy", "dev", "--explain")
    assert code == 0 and doc["mode"] == "explain" and doc["explain"]
    assert promotions(demo) == []


def test_expect_current_and_expect_unbound(demo):
    """--expect-current <id> / --expect-unbound: compare-and-set preconditions refused with exit 3."""
    build_release(demo, "v1")
    code, doc = demo.json("env", "deploy", "dev", "v1", "--yes", "--expect-current", "prm_other", *FAST)
    assert code == 3
    code, doc = demo.json("env", "deploy", "dev", "v1", "--yes", "--expect-unbound", *FAST)
    assert code == 0
    pid = doc["promotion"]["id"]
    code, doc = demo.json("env", "deploy", "dev", "v1", "--yes", "--expect-unbound", *FAST)
    assert code == 3
    code, doc = demo.json("env", "deploy", "dev", "v1", "--yes", "--expect-current", pid, *FAST)
    assert code == 0 and doc["current"]["promotion_id"] == pid


def test_hosted_environment_without_reachable_control_plane_exits_2(demo):
    """Exit 2 (undetermined): a hosted environment's control plane is unreachable; nothing written."""
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 2 and doc["error"]["code"] == "control_plane_unreachable"
    cloud = demo.root / "deploy" / "kcl" / "cloud" / "main.k"
    cloud.write_text(
        cloud.read_text().replace(
            "framework.ControlPlane {}", 'framework.ControlPlane {endpoint = "http://127.0.0.1:9"}'
        )
    )
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 2 and "127.0.0.1:9" in doc["error"]["message"]
    assert not (demo.root / ".framework" / "releases").exists()


def test_k8s_environment_without_its_context_is_refused_before_anything_is_written(demo):
    """Applies target exactly the declared context, no override
    (docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster): a K8sCluster deploy applies to exactly
    its declared context; where kubectl or the `k3d-demo` context is missing (this test's HOME has no
    kubeconfig) the deploy and its dry run fail clearly (exit 1) and no release or promotion is written. The
    real cluster's tests are in tests/test_k8s_deploy.py."""
    proc = demo.run("env", "deploy", "cluster", "--yes")
    assert proc.returncode == 1
    assert ("k3d-demo" in proc.stderr or "kubectl" in proc.stderr) and "Traceback" not in proc.stderr
    code, doc = demo.json("env", "deploy", "cluster", "--dry-run")
    assert code == 1 and doc["error"]["code"] == "runtime_unavailable"
    assert "k3d-demo" in doc["error"]["message"] or "kubectl" in doc["error"]["message"]
    assert not (demo.root / ".framework" / "releases").exists()
    assert demo.run("env", "render", "cluster").returncode == 0
    for flags in (("--dry-run",), ("--yes", "--skip-preflight"), ("v1", "--yes", "--skip-preflight")):
        code, doc = demo.json("env", "deploy", "cluster", *flags)
        assert code == 1 and "Traceback" not in json.dumps(doc), (flags, doc)
    assert promotions(demo) == [] and promotions(demo, "cluster") == []


def test_events_stream_one_json_line_per_phase_change(demo):
    """--events streams one JSON line per rollout phase change (beyond the spec, for CI)."""
    proc = demo.run("env", "deploy", "dev", "--yes", "--events", *FAST)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    phases = [(e["workload"], e["phase"]) for e in events]
    for w in ("api", "web"):
        seq = [p for n, p in phases if n == w]
        assert seq == ["pending", "progressing", "stabilizing", "ready"]


def test_plan_only_cuts_but_promotes_nothing(demo):
    """--plan-only: stage one of a two-stage pipeline; cuts, writes no promotion."""
    code, doc = demo.json("env", "deploy", "dev", "--plan-only")
    assert code == 0 and doc["release_created"] and not doc["appended"]
    assert (demo.root / ".framework" / "releases" / f"{doc['target']['release']}.json").is_file()
    assert promotions(demo) == []


def test_from_env_deploys_exactly_what_that_env_runs(demo):
    """--from <env> deploys exactly what that environment runs (its frozen digests)."""
    gated = demo.root / "deploy" / "kcl" / "dev2"
    gated.mkdir()
    text = (demo.root / "deploy" / "kcl" / "dev" / "main.k").read_text().replace('"dev"', '"dev2"')
    from deploy_fixtures import free_port

    text = text.replace(f"port = {demo.ports['api']}", f"port = {free_port()}")
    text = text.replace(f"port = {demo.ports['web']}", f"port = {free_port()}")
    (gated / "main.k").write_text(text)
    assert demo.json("env", "deploy", "dev", "--yes", *FAST)[0] == 0
    code, doc = demo.json("env", "deploy", "dev2", "--from", "dev", "--yes", *FAST)
    assert code == 0, doc
    dev = demo.json("ledger", "show", "dev")[1]["promotions"][0]
    assert doc["promotion"]["images"] == dev["images"] and doc["promotion"]["release"] == dev["release"]
    code, doc = demo.json("env", "deploy", "dev", "--from", "staging", "--yes")
    assert code == 1  # the source runs nothing


def test_nil_plan_when_the_running_release_is_unknown_offers_the_yes_form(demo):
    """A missing plan (docs/reference-deploy.md#env-deploy: deploy_plan nil) means no plan could be
    computed; next_step offers --yes."""
    build_release(demo, "v1")
    assert demo.json("env", "deploy", "dev", "v1", "--yes", "--no-wait")[0] == 0
    demo.edit_api("two")
    demo.commit("two")
    build_release(demo, "v2")
    (demo.root / ".framework" / "releases" / "v1.json").unlink()  # the running release is not in this checkout
    code, doc = demo.json("env", "deploy", "dev", "v2", "--plan")
    assert code == 0 and doc["deploy_plan"] is None
    assert doc["next_step"] == "framework env deploy dev v2 --yes"
    code, doc = demo.json("env", "deploy", "dev", "v2", "--yes", "--no-wait")
    assert code == 0 and doc["appended"] and doc["promotion"]["direction"] == "UNKNOWN"


def test_compose_target_fails_clearly_without_docker_compose(demo):
    """docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets: the compose runtime calls the real
    Docker Compose; where it or its daemon is missing (here: no daemon at DOCKER_HOST), the deploy fails
    with a clear message (exit 1, `runtime_unavailable`) and writes no promotion; a dry run reports the same."""
    env_dir = demo.root / "deploy" / "kcl" / "box"
    env_dir.mkdir()
    (env_dir / "main.k").write_text(
        'import framework\n\nenvironment = framework.Environment {\n    name = "box"\n    kind = "self_managed"\n'
        '    target = framework.Compose {}\n    workloads = [framework.Workload {name = "api", '
        'run = ["python3", "services/api/main.py"]}]\n}\n')
    demo.env["DOCKER_HOST"] = f"unix://{demo.root}/no-docker.sock"
    code, doc = demo.json("env", "deploy", "box", "--yes")
    assert code == 1 and doc["error"]["code"] == "runtime_unavailable", doc
    assert "docker" in doc["error"]["message"].lower() and "compose" in doc["error"]["message"].lower()
    code, doc = demo.json("env", "deploy", "box", "--dry-run")  # preflight: the missing tool, named
    assert code == 1 and "docker" in doc["error"]["message"].lower()
    assert promotions(demo, "box") == []


def test_a_deploy_evaluates_its_environment_once(demo, monkeypatch):
    """One typed environment end to end: a deploy of the auto form (build, cut,
    plan, promote, apply, record the declared shape) evaluates the environment's KCL exactly once
    (the engine's deploy in this process, every KCL evaluation counted on its way through)."""
    import engine.kcl.evaluate as k
    from engine.deploy.deploy import DeployOptions, deploy
    from engine.project import find_project

    calls = []
    real = k.evaluate_tracked

    def counted(*a, **kw):
        calls.append(a[0])
        return real(*a, **kw)

    monkeypatch.setattr(k, "evaluate_tracked", counted)
    r = deploy(find_project(demo.root), "dev", DeployOptions(yes=True, wait=False))
    assert (r.exit_code, r.applied, len(calls)) == (0, True, 1), (r.exit_code, r.applied, calls)
    bundle = Path(demo.env["FRAMEWORK_LEDGER_HOME"]) / "demo" / "bundles" / "dev.json"
    assert json.loads(bundle.read_text())["env"] == "dev"  # the shape recorded from that one render
