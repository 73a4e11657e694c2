"""`env deploy <env> <version> --target <app>`: a partial deploy of an existing release
(docs/reference-deploy.md#--target-partial-deploys), end to end with the real `framework` script,
real processes and real HTTP requests."""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401

FAST = ("--stability-window", "0.3")


def get(port: int, path: str = "/") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
        return resp.read().decode()


def _pids(doc: dict, name: str) -> list[int]:
    return [i["pid"] for r in doc["rollout"]["resources"] if r["name"] == name for i in r["instances"]]


def test_target_deploys_the_named_workload_and_leaves_the_others_running(demo):
    """docs/reference-deploy.md#--target-partial-deploys: `--target api` replaces only api; web keeps its
    process and release and still serves; the promotion records the workloads it covered, and freezes
    for the others the digests they run, so `env status` reports every workload running (exit 0)."""
    demo.run("env", "build", "staging", "--release", "v1", check=True)
    demo.edit_api("second")
    web = demo.root / "services" / "web" / "main.py"
    web.write_text(web.read_text() + "\n# v2 of web: another digest\n")
    demo.commit("api and web change")
    demo.run("env", "build", "staging", "--release", "v2", check=True)

    code, first = demo.json("env", "deploy", "staging", "v1", "--yes", *FAST)
    assert code == 0, first
    assert first["promotion"]["targets"] == []  # a whole deploy covers every workload
    web_pids = _pids(first, "web")
    v1_web_digest = first["target"]["images"]["web"]["digest"]

    code, doc = demo.json("env", "deploy", "staging", "v2", "--target", "api", "--yes", *FAST)
    assert code == 0, doc
    assert doc["target"]["targets"] == ["api"]
    assert doc["promotion"]["targets"] == ["api"] and doc["promotion"]["release"] == "v2"
    assert [r["name"] for r in doc["rollout"]["resources"]] == ["api"]
    # the promotion freezes what runs: v2's api, v1's web (left as it was)
    assert doc["promotion"]["images"]["web"]["digest"] == v1_web_digest
    assert doc["promotion"]["images"]["api"]["digest"] != first["promotion"]["images"]["api"]["digest"]
    web_plan = next(i for i in doc["deploy_plan"]["images"] if i["name"] == "web")
    assert web_plan["change"] == "unchanged"

    # web: the same process, still serving (and reaching the api)
    assert get(demo.ports["staging.web"], "/healthz") == "ok"
    assert "hello from staging" in get(demo.ports["staging.web"], "/")
    assert all(Path(f"/proc/{pid}").exists() for pid in web_pids)

    code, status = demo.json("env", "status", "staging")
    assert code == 0, status
    st = status["environments"][0]
    assert {i["name"]: i["state"] for i in st["images"]} == {"api": "match", "web": "match"}
    assert {w["name"]: w["healthy"] for w in st["workloads"]} == {"api": True, "web": True}
    assert st["promotion"]["targets"] == ["api"]
    human = demo.run("env", "status", "staging").stdout
    assert "covered     api" in human

    code, ledger = demo.json("ledger", "show", "staging")
    assert code == 0
    assert [p["targets"] for p in ledger["promotions"] if p["env"] == "staging"][:2] in (
        [["api"], []], [[], ["api"]])


def test_target_on_a_hosted_environment_is_refused_before_the_control_plane(demo):
    """docs/reference-deploy.md#--target-partial-deploys: a hosted environment is converged as a whole by its
    control plane, so `--target` is refused (exit 1, invalid_input) instead of deploying every workload;
    nothing is contacted (without the refusal an unreachable control plane answers exit 2)."""
    code, doc = demo.json("env", "deploy", "cloud", "v1", "--target", "api", "--yes")
    assert code == 1, doc
    assert doc["error"]["code"] == "invalid_input" and "--target" in doc["error"]["message"]
    assert "hosted" in doc["error"]["message"]
