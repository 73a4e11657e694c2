"""The demo's walk-through on the process runtime (docs/reference-deploy.md#commands: release, deploy, status, gate).

A new user cuts releases of the demo's `staging`, deploys one, sees it in `env status`, deploys an older
one (labelled BEHIND), records a gate, and deploys `prod` beside it: real processes, a real git copy.
"""

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


def test_demo_staging_and_prod_walkthrough_on_the_process_runtime(demo):
    """docs/reference-deploy.md#commands: cut (env build --release), deploy a version, status shows it
    healthy, an older release deploys labelled BEHIND (no rollback), gate record/list on the running
    promotion; prod deploys the same release."""
    code, cut = demo.json("env", "build", "staging", "--release", "v1")
    assert code == 0, cut
    demo.edit_api("second")
    demo.commit("api: second greeting")
    code, cut = demo.json("env", "build", "staging", "--release", "v2")
    assert code == 0, cut

    code, dep = demo.json("env", "deploy", "staging", "v2", "--yes", *FAST)
    assert code == 0, dep
    assert dep["target"]["release"] == "v2" and dep["applied"] and dep["deploy_plan"]["direction"] == "INITIAL"
    assert {r["name"]: r["outcome"] for r in dep["rollout"]["resources"]} == {"api": "ready", "web": "ready"}
    assert json.loads(get(demo.ports["staging.api"]))["message"] == "hello from staging"
    assert get(demo.ports["staging.web"], "/healthz") == "ok"

    code, status = demo.json("env", "status", "staging")
    assert code == 0, status
    st = status["environments"][0]
    assert (st["env"], st["release"], st["health"], st["convergence"]) == ("staging", "v2", "healthy", "converged")
    assert st["promotion"]["id"] == dep["promotion"]["id"]
    assert "v2" in demo.run("env", "status", "staging", check=True).stdout

    code, older = demo.json("env", "deploy", "staging", "v1", "--yes", *FAST)
    assert code == 0, older
    assert older["deploy_plan"]["direction"] == "BEHIND" and older["target"]["release"] == "v1"
    api = next(i for i in older["deploy_plan"]["images"] if i["name"] == "api")
    assert api["change"] == "changed"
    assert demo.json("env", "status", "staging")[1]["environments"][0]["release"] == "v1"

    code, gate = demo.json("gate", "record", "staging", "--name", "smoke", "--status", "passed")
    assert code == 0, gate
    code, gates = demo.json("gate", "list", "staging")
    assert code == 0, gates
    assert gates["promotion_id"] == older["promotion"]["id"]
    assert [(g["name"], g["status"]) for g in gates["gates"]] == [("smoke", "passed")]
    assert "smoke" in demo.run("gate", "list", "staging", check=True).stdout

    code, prod = demo.json("env", "deploy", "prod", "v2", "--yes", *FAST)
    assert code == 0, prod
    assert prod["target"]["release"] == "v2" and prod["applied"]
    assert json.loads(get(demo.ports["prod.api"]))["message"] == "hello from prod"
    code, both = demo.json("env", "status", "prod")
    assert code == 0 and both["environments"][0]["release"] == "v2"
    assert both["environments"][0]["health"] == "healthy"
    # staging still runs v1 beside prod: each environment on its own ports
    assert get(demo.ports["staging.api"], "/healthz") == "ok"
