"""The compose runtime: a `framework.Compose` environment applied with the real Docker Compose
(docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets).

A deploy writes the environment's compose file with the release's digests pinned
(`$FRAMEWORK_LEDGER_HOME/projects/<project>/runtime/<env>/compose.yaml`), runs `up -d` (which pulls
the images the daemon lacks; `--remove-orphans` unless `--target` selects services) and waits each
service with the rollout phases of the other runtimes: `pending` (no container yet), `progressing`
(created, starting, health `starting` or `unhealthy`), `stabilizing` (running and healthy, until it
stayed so for the stability window; a container `up -d` left running from before is ready at once),
`DEGRADED` (exited, or restarted `crash_limit` times), `SUPERSEDED`, and `timed_out` when the budget
expires. `env status` reads the live containers (Compose's own labels name project and service).

The Compose CLI is `docker-compose` on PATH (Debian's 1.29.2, which `make system-deps` installs, or a
v2 standalone binary), else the `docker compose` plugin; `$FRAMEWORK_DOCKER_COMPOSE` names another.
The file holds only `services` and the project name is passed with `-p`: both Compose versions read it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError
from engine.project import Project
from engine.runtime.compose_early import (
    ComposeFailed,
    PendingUp,
    compose_cli,
    last_line,
    remember,
    runtime_dir,
    up_args,
)
from engine.runtime.external import RuntimeUnavailable
from engine.runtime.process import Phase, Resource, RolloutEnd, RolloutOptions, Writing, unguarded, verdict

POLL = 0.2
PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"


def _run(argv: list[str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeUnavailable(f"cannot run {argv[0]}: {exc}") from exc


def check_compose() -> list[str]:
    """The Compose CLI, once `docker`, Compose and a daemon all answer; else RuntimeUnavailable (exit 1).
    A standalone `docker-compose` is taken as found (its first command reports its own failure); the
    plugin is asked its version; the daemon answers `docker info`."""
    if not shutil.which("docker"):
        raise RuntimeUnavailable("this environment deploys with Docker Compose, and `docker` is not installed",
                                 hint="install Docker and Docker Compose (`make system-deps` does on Debian)")
    cli = compose_cli()
    out = _run([*cli, "version"]) if cli == ["docker", "compose"] else None
    if out is not None and out.returncode != 0:
        raise RuntimeUnavailable("this environment deploys with Docker Compose, and `docker compose` is not available",
                                 hint=last_line(out.stderr, "install docker-compose"))
    sock, why = _engine_socket(), ""
    if sock is not None:
        try:
            _engine_get(sock, "/version")
        except OSError as exc:
            why = str(exc)
    else:
        info = _run(["docker", "info", "--format", "{{.ServerVersion}}"])
        if info.returncode != 0 or not info.stdout.strip():
            why = last_line(info.stderr, "start the Docker daemon (or set DOCKER_HOST)")
    if why:
        raise RuntimeUnavailable("this environment deploys with Docker Compose, and no Docker daemon is reachable",
                                 hint=why)
    return cli


def project_name(project: Project, env: str, spec: EnvironmentSpec) -> str:
    """The Compose project: the target's `project_name`, else the derived namespace (as `env render`)."""
    from engine.environments.derived import dns_label

    if spec.target is not None and spec.target.project_name:
        return spec.target.project_name
    return dns_label(f"{project.key}-{env}")


def _engine_socket() -> str | None:
    """The unix socket `DOCKER_HOST` names, read directly (Docker Engine API); None: ask the docker CLI
    (another host kind, or none set, where the CLI's context decides)."""
    host = os.environ.get("DOCKER_HOST", "")
    return host[len("unix://"):] if host.startswith("unix://") else None


def _engine_get(sock: str, path: str, raw: bool = False) -> Any:
    """One GET on the Docker Engine API over a unix socket; OSError when it does not answer, or answers
    an error status."""
    import http.client
    import socket

    class Conn(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(20)
            self.sock.connect(sock)

    conn = Conn("localhost", timeout=20)
    try:
        conn.request("GET", path)
        reply = conn.getresponse()
        body = reply.read()
    except (http.client.HTTPException, ValueError) as exc:
        raise OSError(f"the Docker daemon at {sock}: {exc}") from exc
    finally:
        conn.close()
    if reply.status >= 400:
        raise OSError(f"the Docker daemon at {sock} answered {reply.status}: {body[:200].decode(errors='replace')}")
    return body if raw else json.loads(body)


def _demux(stream: bytes) -> str:
    """The text of a container's log as the Engine API sends it without a TTY: frames of an 8-byte header
    (stream, 3 zero bytes, big-endian length) and their payload."""
    out, at = [], 0
    while at + 8 <= len(stream):
        size = int.from_bytes(stream[at + 4:at + 8], "big")
        out.append(stream[at + 8:at + 8 + size])
        at += 8 + size
    return b"".join(out).decode(errors="replace")


def log_tail(container: str, lines: int) -> list[str]:
    """The last `lines` lines a container wrote (stdout and stderr), [] when unreadable."""
    sock = _engine_socket()
    if sock is not None:
        try:
            return _demux(_engine_get(sock, f"/containers/{container}/logs?stdout=1&stderr=1&tail={lines}",
                                      raw=True)).splitlines()[-lines:]
        except OSError:
            return []
    out = _run(["docker", "logs", "--tail", str(lines), container])
    return (out.stdout + out.stderr).splitlines()[-lines:] if out.returncode == 0 else []


def containers(name: str) -> list[dict[str, Any]]:
    """`docker inspect` of every container of Compose project `name` (running or not)."""
    from urllib.parse import quote

    sock = _engine_socket()
    if sock is not None:
        try:
            found = _engine_get(sock, "/containers/json?all=1&filters="
                                + quote(json.dumps({"label": [f"{PROJECT_LABEL}={name}"]})))
        except OSError as exc:
            raise RuntimeUnavailable(f"cannot list the containers of {name}: {exc}") from exc
        out = []
        for c in found:
            try:
                out.append(_engine_get(sock, f"/containers/{c['Id']}/json"))
            except OSError:  # removed since the list: read again next poll
                continue
        return out
    ids = _run(["docker", "ps", "-aq", "--no-trunc", "--filter", f"label={PROJECT_LABEL}={name}"])
    if ids.returncode != 0:
        raise RuntimeUnavailable(f"cannot list the containers of {name}: {last_line(ids.stderr, 'docker ps failed')}")
    if not ids.stdout.split():
        return []
    listed = _run(["docker", "inspect", *ids.stdout.split()])
    if listed.returncode != 0:  # a container removed between the two calls: read again next poll
        return []
    return list(json.loads(listed.stdout))


def service_of(c: dict[str, Any]) -> str:
    return str(((c.get("Config") or {}).get("Labels") or {}).get(SERVICE_LABEL, ""))


def running_digest(c: dict[str, Any]) -> str | None:
    """The digest a container runs: the one its image reference pins; None when it runs a tag only."""
    image = str((c.get("Config") or {}).get("Image") or "")
    return image.rsplit("@", 1)[1] if "@" in image else None


def classify(mine: list[dict[str, Any]], crash_limit: int) -> tuple[str, str, int]:
    """(state, message, ready containers) of one service: `pending`, `progressing`, `complete` or
    `DEGRADED`."""
    if not mine:
        return "pending", "no container yet", 0
    ready = 0
    for c in mine:
        state = c.get("State") or {}
        name = str(c.get("Name", "")).lstrip("/")
        restarts = int(c.get("RestartCount") or 0)
        if restarts >= crash_limit:
            return "DEGRADED", f"container {name} restarted {restarts} times", ready
        if state.get("Status") in ("exited", "dead") and not state.get("Restarting"):
            return "DEGRADED", f"container {name} exited with code {state.get('ExitCode')}", ready
        health = (state.get("Health") or {}).get("Status")
        if state.get("Running") and health in (None, "healthy"):
            ready += 1
    if ready == len(mine):
        return "complete", f"{ready}/{len(mine)} containers running and healthy", ready
    return "progressing", f"{ready}/{len(mine)} containers running and healthy", ready


def start_up(project: Project, env: str, spec: EnvironmentSpec, cli: list[str], targets: list[str] | None
             ) -> PendingUp:
    """The deploy's `up -d`: the one started before the deploy (engine/runtime/compose_early.py) when it
    matches, else started now, as soon as the daemon answered."""
    from engine.runtime.compose_early import take

    name = project_name(project, env, spec)
    return take(project.key, env, name, targets) or PendingUp(cli, name, runtime_dir(project.key, env),
                                                               targets or None)


class ComposeRuntime:
    """The compose runtime behind the deploy engine's one rollout interface (engine/deploy/apply.py)."""

    namespace: str | None = None  # no cluster namespace; the Compose project is named in the file's path

    def __init__(self, project: Project, env: str, spec: EnvironmentSpec, images: dict[str, Any],
                 targets: list[str] | None = None, pending: PendingUp | None = None) -> None:
        from engine.environments.render.pipeline import render_environment
        from engine.runtime.k8s_runtime import oci_digests

        self.cli = compose_cli()  # checked by the caller: the deploy's preflight, `env up`'s up_stack
        rendered = render_environment(project, env, image_digests=oci_digests(images), fail_on_write=True)
        self.project = rendered.compose_name or project_name(project, env, spec)
        self.services = {o.name: o.document for o in rendered.objects if o.kind == "ComposeService"}
        self.selected = [n for n in self.services if not targets or n in targets]
        self.partial = bool(targets)
        self.file = compose_file(project, env)
        self.pending, self.key, self.env = pending, project.key, env

    @property
    def names(self) -> list[str]:
        return list(self.selected)

    def compose(self, *args: str, timeout: float = 300.0) -> str:
        out = _run([*self.cli, "-p", self.project, "-f", str(self.file), *args], timeout=timeout)
        if out.returncode != 0:
            raise ComposeFailed(f"docker compose {args[0]}: {last_line(out.stderr, 'failed')}",
                                hint=f"the compose file is {self.file}")
        return out.stdout

    def rollout(self, options: RolloutOptions, *, on_phase: Callable[[str, Phase], None] | None = None,
                superseded: Callable[[], bool] | None = None, meanwhile: Callable[[], None] | None = None,
                writing: Writing = unguarded) -> tuple[RolloutEnd, list[Resource]]:
        """Write the file, `up -d` (which pulls the images the daemon lacks), then wait (module docstring).
        `meanwhile` runs while Compose applies (work the deploy needs whatever the outcome, with no
        effect of its own), as the k8s runtime runs it while kubectl applies. The file and `up`, to its
        answer, are one write (`writing`): superseded before it, nothing is written."""
        text = json.dumps({"services": self.services}, indent=2, sort_keys=True) + "\n"
        args = up_args(self.selected if self.partial else None)
        pending, self.pending = self.pending, None
        started = time.time()
        try:
            with writing() as ok:
                if not ok:
                    return "SUPERSEDED", [Resource(name=n, kind="ComposeService", phase="SUPERSEDED",
                                                   outcome="not_waited") for n in self.selected]
                self._up(text, args, pending, meanwhile)
        finally:
            if pending is not None:
                pending.cancel()
        remember(self.key, self.env, self.project)
        return wait_services(self.project, self.selected, started, options, on_phase=on_phase, superseded=superseded)

    def _up(self, text: str, args: list[str], pending: PendingUp | None, meanwhile: Callable[[], None] | None) -> None:
        """The file written, then `up` (through the early Compose when it was started for these arguments)."""
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(self.file)
        if pending is not None and pending.matches(self.project, args):
            pending.send(text, meanwhile)  # `meanwhile` runs while Compose applies
            return
        self.compose(*args)
        if meanwhile is not None:
            try:
                meanwhile()
            except Exception:  # noqa: BLE001 - done again after the apply (engine/deploy/apply.py)
                pass


def _started_at(c: dict[str, Any]) -> float:
    """The container's start as epoch seconds (docker's RFC 3339 with nanoseconds), 0.0 unreadable."""
    from datetime import datetime

    raw = str((c.get("State") or {}).get("StartedAt") or "")
    try:
        return datetime.fromisoformat(raw[:26].rstrip("Z") + "+00:00").timestamp()
    except ValueError:
        return 0.0


def wait_services(name: str, selected: list[str], started: float, options: RolloutOptions, *,
                  on_phase: Callable[[str, Phase], None] | None = None,
                  superseded: Callable[[], bool] | None = None) -> tuple[RolloutEnd, list[Resource]]:
    """Wait every selected service of project `name` (the phases of the module docstring)."""
    res = {n: Resource(name=n, kind="ComposeService") for n in selected}
    if not options.wait:
        for r in res.values():
            r.outcome = "not_waited"
        return "not_waited", list(res.values())
    deadline = time.monotonic() + options.timeout
    since: dict[str, float] = {}

    def set_phase(r: Resource, phase: Phase) -> None:
        if r.phase != phase:
            r.phase = phase
            if on_phase:
                on_phase(r.name, phase)

    first = True
    while True:
        if superseded is not None and superseded():
            for r in res.values():
                if r.outcome not in ("ready", "failed"):
                    r.outcome = "not_waited"
                    set_phase(r, "SUPERSEDED")
            return "SUPERSEDED", list(res.values())
        live = containers(name)
        now = time.monotonic()
        for n, r in res.items():
            if r.outcome in ("ready", "failed"):
                continue
            mine = [c for c in live if service_of(c) == n]
            state, r.message, ready = classify(mine, options.crash_limit)
            r.ready_replicas, r.replicas = ready, len(mine)
            r.restarts = sum(int(c.get("RestartCount") or 0) for c in mine)
            r.instances = [{"container": str(c.get("Name", "")).lstrip("/"),
                            "state": (c.get("State") or {}).get("Status")} for c in mine]
            if state == "DEGRADED":
                r.outcome = "failed"
                set_phase(r, "DEGRADED")
            elif state == "complete":
                # `up -d` left it running from before: nothing changed, ready at once
                untouched = first and all(_started_at(c) < started - 0.5 for c in mine)
                if untouched or now - since.setdefault(n, now) >= options.stability_window:
                    r.outcome = "ready"
                    set_phase(r, "ready")
                else:
                    set_phase(r, "stabilizing")
            else:
                since.pop(n, None)
                set_phase(r, "progressing" if mine else "pending")
        first = False
        end = verdict(list(res.values()), deadline)
        if end is not None:
            return end, list(res.values())
        time.sleep(POLL)


def compose_observation(project: Project, env: str, spec: EnvironmentSpec, images: dict[str, Any],
                        crash_limit: int = 3) -> dict[str, Any]:
    """`env status` of a Compose environment from its live containers, in the shape of the k8s
    runtime's observation: {"images", "workloads", "healthy", "wrong"}, or {"error"} when unreachable."""
    from engine.runtime.k8s_status import verify_state

    try:
        check_compose()
        live = containers(project_name(project, env, spec))
    except EngineError as exc:
        return {"error": exc.message}
    out_images, out_workloads, healthy_all, wrong = [], [], True, False
    for n, img in sorted(images.items()):
        mine = [c for c in live if service_of(c) == n]
        digests = [running_digest(c) for c in mine]
        state = verify_state(img.get("digest", ""), digests)
        running = sorted({d for d in digests if d})
        out_images.append({"name": n, "expected_digest": img.get("digest"),
                           "running_digest": running[0] if len(running) == 1 else (running or None),
                           "state": state,
                           "instances": [{"container": str(c.get("Name", "")).lstrip("/")} for c in mine]})
        wrong |= state != "match"
        kind_state, message, ready = classify(mine, crash_limit)
        healthy = kind_state == "complete"
        healthy_all &= healthy
        phase = {"complete": "ready", "pending": "missing"}.get(kind_state, kind_state)
        out_workloads.append({"name": n, "kind": "ComposeService", "phase": phase, "healthy": healthy,
                              "ready_replicas": ready, "replicas": len(mine), "checks": [message],
                              "containers": [str(c.get("Name", "")).lstrip("/") for c in mine]})
    return {"images": out_images, "workloads": out_workloads, "healthy": healthy_all, "wrong": wrong}


def compose_file(project: Project, env: str) -> Path:
    return runtime_dir(project.key, env) / "compose.yaml"


def up_stack(project: Project, env: str, spec: EnvironmentSpec, targets: list[str] | None,
             timeout: float = 300.0) -> str:
    """`env up`'s deploy phase for a Compose environment: the services at the built tag (no release,
    no promotion: a dev stack), `up -d` and the wait; its one-line detail, or EngineError (exit 1
    DEGRADED, 8 timed out) naming the first service that did not come up."""
    check_compose()
    runtime = ComposeRuntime(project, env, spec, {}, targets)
    end, resources = runtime.rollout(RolloutOptions(timeout=timeout))
    if end != "ready":
        bad = next((r for r in resources if r.outcome != "ready"), None)
        what = f"{bad.name}: {bad.message}" if bad else end
        raise EngineError(f"compose project {runtime.project}: rollout {end}: {what}",
                          code="degraded" if end == "DEGRADED" else "wait_timed_out",
                          exit_code=1 if end == "DEGRADED" else 8, hint=f"the compose file is {runtime.file}")
    return f"compose project {runtime.project}: {len(resources)} services ready"
