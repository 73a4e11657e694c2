"""A Compose file of a framework.Compose environment (docs/reference-env.md#rendering).

Secrets are interpolated by name from the environment of `docker compose` (`${NAME:?...}`),
so the file never holds a value.
"""

from __future__ import annotations

from typing import Any

from engine.environments.model import EnvironmentSpec, Workload
from engine.environments.render.k8s import RenderError, image_reference


def compose_service(w: Workload, image: str) -> dict[str, Any]:
    service: dict[str, Any] = {"image": image}
    if w.run:
        service["command"] = list(w.run)
    env: dict[str, str] = dict(sorted(w.env.items()))
    if w.ports:
        env["PORT"] = str(w.ports[0].port)
    for name in w.secrets:
        env[name] = f"${{{name}:?secret {name} is not set}}"
    if env:
        service["environment"] = env
    if w.ports:
        service["ports"] = [f"{p.port}:{p.port}" for p in w.ports]
    if w.health:
        port = w.port_named(w.health.port)
        if port is not None:
            url = f"http://127.0.0.1:{port.port}{w.health.path}"
            service["healthcheck"] = {
                "test": ["CMD-SHELL", f"wget -q -O /dev/null {url} || exit 1"],
                "interval": f"{w.health.period_seconds}s",
                "start_period": f"{w.health.initial_delay_seconds}s",
            }
    if w.replicas != 1:
        service["deploy"] = {"replicas": w.replicas}
    service["restart"] = "unless-stopped"
    return service


def render_services(
    spec: EnvironmentSpec, *, image_tag: str, digests: dict[str, str]
) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for w in spec.workloads:
        image = image_reference(w, image_tag, digests)
        if image is None:
            raise RenderError(
                f"workload {w.name!r} declares no image; a compose environment runs images",
                hint=f'set image = "<registry>/<repo>" on workload {w.name!r}',
            )
        out.append((w.name, compose_service(w, image)))
    return out


def compose_document(project_name: str, services: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"name": project_name, "services": dict(services)}
