"""`env deploy --skip-frontend` / `--frontends-only` say exactly what they do today, never accepted and
ignored (docs/reference-deploy.md#frontends-in-a-deploy), with the real `framework` script."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401

FAST = ("--stability-window", "0.3")


def _add_frontend(demo, env: str) -> None:
    path = demo.root / "deploy" / "kcl" / env / "main.k"
    text = path.read_text()
    kind = next(line for line in text.splitlines() if line.strip().startswith("kind = "))
    frontends = '\n    frontends = [framework.Frontend {name = "site", dir = "site"}]'
    path.write_text(text.replace(kind, kind + frontends, 1))
    demo.commit(f"{env}: a frontend")


def test_skip_frontend_without_frontends_says_there_is_nothing_to_skip(demo):
    """docs/reference-deploy.md#frontends-in-a-deploy: on an environment declaring no frontends,
    `--skip-frontend` deploys as without it and says so (a notice in `notices` and on the human output)."""
    demo.run("env", "build", "staging", "--release", "v1", check=True)
    code, doc = demo.json("env", "deploy", "staging", "v1", "--skip-frontend", "--yes", *FAST)
    assert code == 0, doc
    assert doc["applied"] and doc["notices"] == ["--skip-frontend: staging declares no frontends; nothing to skip"]
    human = demo.run("env", "deploy", "staging", "v1", "--skip-frontend", "--plan")
    assert human.returncode == 0 and "note: --skip-frontend: staging declares no frontends" in human.stdout


def test_skip_frontend_on_the_process_runtime_says_it_deploys_no_frontends(demo):
    """docs/reference-deploy.md#frontends-in-a-deploy: a Process environment's deploy never deploys its
    frontends (`env up` serves them), so `--skip-frontend` changes nothing and says that."""
    _add_frontend(demo, "staging")
    demo.run("env", "build", "staging", "--release", "v1", check=True)
    code, doc = demo.json("env", "deploy", "staging", "v1", "--skip-frontend", "--yes", *FAST)
    assert code == 0, doc
    assert doc["notices"] == ["--skip-frontend: `env deploy` on the process runtime deploys no frontends "
                              "(`env up` serves them); nothing to skip"]
    code, doc = demo.json("env", "deploy", "staging", "v1", "--yes", *FAST)
    assert code == 0 and doc["notices"] == []  # without the flag: nothing to say


def test_frontends_only_is_refused_with_its_reason(demo):
    """docs/reference-deploy.md#frontends-in-a-deploy: `--frontends-only` is refused (exit 1,
    invalid_input) with the reason for this environment, and nothing is written."""
    demo.run("env", "build", "staging", "--release", "v1", check=True)
    code, doc = demo.json("env", "deploy", "staging", "v1", "--frontends-only", "--yes")
    assert code == 1 and doc["error"]["message"] == "--frontends-only: this environment declares no frontends"
    _add_frontend(demo, "staging")
    code, doc = demo.json("env", "deploy", "staging", "v1", "--frontends-only", "--yes")
    assert code == 1 and doc["error"]["code"] == "invalid_input"
    assert "not supported" in doc["error"]["message"] and "process runtime" in doc["error"]["message"]
    code, ledger = demo.json("ledger", "show", "staging")
    assert code == 0 and ledger["promotions"] == []


def test_frontend_flags_on_a_cluster_target_and_a_hosted_environment_without_frontends(demo):
    """docs/reference-frontends.md#deploying-frontends: a Kubernetes target deploys no frontends (`env up` serves
    them): --frontends-only is refused with that reason before the cluster is contacted; a hosted environment
    declaring no frontends refuses --frontends-only."""
    code, doc = demo.json("env", "deploy", "cloud", "v1", "--skip-frontend", "--frontends-only", "--yes")
    assert code == 1 and "declares no frontends" in doc["error"]["message"]
    _add_frontend(demo, "cluster")
    code, doc = demo.json("env", "deploy", "cluster", "v1", "--frontends-only", "--yes")
    assert code == 1 and doc["error"]["message"] == ("--frontends-only is not supported: `env deploy` on the k8s "
                                                     "runtime deploys no frontends (`env up` serves them)")
