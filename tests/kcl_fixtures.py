"""Helpers for the KCL / environment tests: purpose-built environments in a copy of the demo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Result, run_cli


def write_env(project: Path, name: str, source: str) -> Path:
    path = project / "deploy" / "kcl" / name / "main.k"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return path


def fw(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_cli("framework", *args, cwd=project, env=env)


def fw_json(project: Path, *args: str) -> tuple[Result, dict[str, Any]]:
    result = run_cli("framework", *args, "--json", cwd=project)
    return result, json.loads(result.stdout)


COMPOSE_ENV = """import framework

environment = framework.Environment {
    name = "box"
    kind = "self_managed"
    target = framework.Compose {project_name = "demo-box"}
    workloads = [
        framework.Workload {
            name = "api"
            image = "registry.example.test/demo/api"
            run = ["python3", "main.py"]
            env = {GREETING = "hi"}
            secrets = ["DATABASE_URL"]
            ports = [framework.Port {port = 8080}]
            health = framework.HealthCheck {}
            replicas = 2
        }
        framework.Workload {
            name = "web"
            image = "registry.example.test/demo/web:1.2"
            ports = [framework.Port {port = 8081}]
        }
    ]
}
"""

SYNTAX_ERROR_ENV = """import framework

environment = framework.Environment {
    name = "bad"
    kind = "local
}
"""

FAILED_CHECK_ENV = """import framework

environment = framework.Environment {
    name = "bad"
    kind = "self_managed"
    target = framework.K8sCluster {context = "k3d-demo"}
    workloads = [framework.Workload {name = "api", image = "x/api", ports = [framework.Port {port = 70000}]}]
}
"""

PLACEHOLDER_ENV = """import framework

environment = framework.Environment {
    name = "bad"
    kind = "self_managed"
    target = framework.K8sCluster {context = "REPLACE_ME_CONTEXT"}
    workloads = [framework.Workload {name = "api", image = "x/api"}]
}
"""

WRITING_ENV = """import framework
import file

_w = file.write("leak.txt", "written during render")
environment = framework.Environment {
    name = "bad"
    kind = "local"
    target = framework.Process {}
    workloads = [framework.Workload {name = "api", run = ["python3", "-c", "pass"]}]
}
"""
