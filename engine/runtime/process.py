"""The `process` runtime: workloads as supervised processes on this machine
(docs/reference-deploy.md#the-process-runtime).

Every instance carries ownership markers in its environment (`FRAMEWORK_OWNED_BY`,
`FRAMEWORK_INSTANCE`, project, env, workload, release, digest, promotion) and a record file;
only a process whose /proc environ carries the record's instance id is ever signalled.
A rollout moves each workload pending -> progressing -> stabilizing -> ready; a crash loop is
DEGRADED, a newer promotion makes it SUPERSEDED, an expired wait budget is `timed_out`.
The new version must stay healthy for the stability window before the old one stops.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from engine.errors import EngineError
from engine.paths import atomic_write_bytes, runtime_dir
from engine.processes import environ_markers, free_port, port_free

OWNER = "framework"
POLL = 0.1

# Each write of a rollout to its runtime (start or stop a process, kubectl apply, compose up) runs inside
# `with writing() as ok`: the deploy's ordering of writes (docs/reference-deploy.md#supersede); `ok`
# False: the rollout was superseded and must not write. The control plane's converger passes none.
Writing = Callable[[], AbstractContextManager[bool]]


@contextmanager
def unguarded() -> Iterator[bool]:
    yield True


class RolloutOptions(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    wait: bool = True
    timeout: float = 300.0  # the wait budget (exit 8 when it expires while progressing)
    stability_window: float = 2.0  # the new version stays healthy this long before the old one stops
    grace: float = 30.0  # transient health failures tolerated this long
    crash_limit: int = 3  # restarts inside one rollout before it is DEGRADED


class WorkloadSpec(BaseModel):
    """What the runtime runs for one workload of one release."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    name: str
    run: list[str]
    env: dict[str, str] = {}
    ports: list[int] = []
    replicas: int = 1
    health: dict[str, Any] | None = None
    digest: str = ""
    workdir: str = ""
    base_env: dict[str, str] | None = None  # the environment it starts from; None: this process's

# Rollout phases and the outcome per resource (docs/reference-deploy.md#env-deploy, `--json`); the overall
# rollout ends in one of RolloutEnd.
Phase = Literal["pending", "progressing", "stabilizing", "ready", "DEGRADED", "SUPERSEDED"]
Outcome = Literal["ready", "failed", "timed_out", "not_waited"]
RolloutEnd = Literal["ready", "not_waited", "DEGRADED", "SUPERSEDED", "timed_out"]


class Resource(BaseModel):
    """Rollout outcome per resource: ready, failed, timed_out or not_waited (the deploy's `--json`)."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    name: str
    outcome: Outcome = "not_waited"
    phase: Phase = "pending"
    restarts: int = 0
    message: str = ""
    instances: list[dict[str, Any]] = []
    kind: str | None = None  # the k8s runtime: Deployment, StatefulSet, DaemonSet or Job
    ready_replicas: int | None = None
    replicas: int | None = None


def verdict(resources: list[Resource], deadline: float) -> RolloutEnd | None:
    """A waiting rollout's end once its resources' outcomes decide it (the k8s and Compose runtimes' loops):
    a failed one makes it DEGRADED, all ready makes it ready, the deadline passed makes it timed_out; the
    undecided are then closed (`not_waited`, or `timed_out`). None: keep waiting."""
    import time

    outcomes = [r.outcome for r in resources]
    end: RolloutEnd | None = None
    if "failed" in outcomes:
        end, close = "DEGRADED", "not_waited"
    elif all(o == "ready" for o in outcomes):
        return "ready"
    elif time.monotonic() >= deadline:
        end, close = "timed_out", "timed_out"
    if end is not None:
        for r in resources:
            if r.outcome not in ("ready", "failed"):
                r.outcome = close  # type: ignore[assignment]
    return end


def _records(project_key: str, env: str, root: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted((runtime_dir(project_key, env, root) / "instances").glob("*.json")):
        try:
            out.append((path, json.loads(path.read_bytes())))
        except (OSError, ValueError):
            continue
    return out


def read_markers(pid: int) -> dict[str, str] | None:
    """The FRAMEWORK_* markers of a live process, or None when it is gone or unreadable."""
    return environ_markers(pid, b"FRAMEWORK_")


def owned(record: dict[str, Any]) -> bool:
    marks = read_markers(int(record["pid"]))
    if not marks:
        return False
    return marks.get("FRAMEWORK_OWNED_BY") == OWNER and marks.get("FRAMEWORK_INSTANCE") == record["instance"]


class PortBusy(EngineError):
    """The declared port is held by a process that is not this environment's: fail fast, say so."""

    code = "port_in_use"


class Instance:
    def __init__(
        self, record: dict[str, Any], path: Path, proc: subprocess.Popen[bytes] | None = None
    ) -> None:
        self.record = record
        self.path = path
        self.proc = proc

    @property
    def pid(self) -> int:
        return int(self.record["pid"])

    def alive(self) -> bool:
        if self.proc is not None:
            # Our own child: the Popen is the truth. Its /proc environ still shows the parent's
            # (no markers) between fork and exec, which made a just-started process look dead.
            return self.proc.poll() is None
        return owned(self.record)

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM the instance's process group, SIGKILL after `grace`; only if it carries our markers."""
        if self.alive():
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and self.alive():
                time.sleep(0.05)
            if self.alive():
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                deadline = time.monotonic() + grace
                while time.monotonic() < deadline and self.alive():
                    time.sleep(0.05)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self._release_port(grace)
        self.path.unlink(missing_ok=True)

    def _release_port(self, grace: float) -> None:
        """Wait until the instance's port is free while processes of this instance still live: the group
        leader can be gone while a child the workload started (it inherits the instance's markers) still holds
        the socket, and the replacement started on the same port at once would find it busy. Those processes
        are killed if they still hold it after `grace`. A port held by anything else returns at once (the start
        reports it: PortBusy)."""
        port = self.record.get("port")
        if not port:
            return
        deadline = time.monotonic() + grace
        killed = False
        while not port_free(int(port)):
            members = self._members()
            if not members:
                return
            if time.monotonic() >= deadline:
                if killed:
                    return
                for pid in members:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                killed, deadline = True, time.monotonic() + grace
            time.sleep(0.05)

    def _members(self) -> list[int]:
        """Live processes carrying this instance's markers (the workload and its children)."""
        wanted = {"FRAMEWORK_OWNED_BY": OWNER, "FRAMEWORK_INSTANCE": self.record.get("instance")}
        return [pid for pid, _ in marked(wanted)]


def marked(wanted: dict[str, Any]) -> list[tuple[int, dict[str, str]]]:
    """Live processes whose FRAMEWORK_* markers hold every item of `wanted`, with their markers."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            marks = read_markers(int(entry.name))
            if marks and all(marks.get(k) == v for k, v in wanted.items()):
                found.append((int(entry.name), marks))
    return found


def observe(project_key: str, env: str, root: Path | None = None) -> list[dict[str, Any]]:
    """Instances on record, each with `alive` and the digest actually running (from its markers)."""
    out = []
    for path, rec in _records(project_key, env, root):
        marks = read_markers(int(rec["pid"]))
        alive = bool(marks) and (marks or {}).get("FRAMEWORK_INSTANCE") == rec.get("instance")
        out.append(
            {
                **rec,
                "alive": alive,
                "running_digest": (marks or {}).get("FRAMEWORK_DIGEST") if alive else None,
                "unreadable": marks == {},
                "record": str(path),
            }
        )
    return out


def instances(
    project_key: str, env: str, workload: str | None = None, root: Path | None = None
) -> list[Instance]:
    return [
        Instance(rec, path)
        for path, rec in _records(project_key, env, root)
        if workload is None or rec.get("workload") == workload
    ]


def stop_env(project_key: str, env: str, root: Path | None = None, workload: str | None = None) -> int:
    """Stop every instance of one environment (or one workload) that carries our markers; how many."""
    items = instances(project_key, env, workload, root)
    for inst in items:
        inst.stop()
    return len(items)


def check_health(
    spec: WorkloadSpec, port: int | None, inst: Instance, timeout: float = 1.0
) -> tuple[bool, str]:
    """Health checks by default: http GET (declared path, else /healthz), tcp, or a command."""
    health = spec.health or {}
    kind = health.get("type") or ("http" if port else "process")
    if not inst.alive():
        return False, "process exited"
    if kind == "command":
        try:
            rc = subprocess.run(
                health.get("command") or ["true"],
                shell=isinstance(health.get("command"), str),
                cwd=spec.workdir or None,
                capture_output=True,
                timeout=max(timeout, 5),
            ).returncode
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"health command failed: {exc}"
        return rc == 0, f"health command exited {rc}"
    if kind == "process" or port is None:
        return True, "process running"
    port = int(health.get("port") or port)
    if kind == "tcp":
        try:
            socket.create_connection(("127.0.0.1", port), timeout=timeout).close()
        except OSError as exc:
            return False, f"tcp {port}: {exc.strerror or exc}"
        return True, f"tcp {port} open"
    import http.client

    path = health.get("path") or "/healthz"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        status = conn.getresponse().status
    except OSError as exc:
        return False, f"http {port}{path}: {exc.strerror or exc}"
    finally:
        conn.close()
    return 200 <= status < 400, f"http {port}{path}: {status}"


class ProcessRuntime:
    """Applies one release of one environment as processes on this machine."""

    def __init__(
        self, project_key: str, env: str, release: str, promotion_id: str | None, root: Path | None = None
    ) -> None:
        self.project_key = project_key
        self.env = env
        self.release = release
        self.promotion_id = promotion_id or ""
        self.root = root
        self.dir = runtime_dir(project_key, env, root)

    def _stop_orphans(self, workload: str, port: int) -> None:
        """Stop the processes carrying this environment's and workload's markers whose instance has no record, as
        any instance stops (Instance.stop: its process group, SIGKILL after the grace, until `port` is released):
        a deploy killed between starting an instance and writing its record leaves one (in its own session)."""
        known = {rec.get("instance") for _, rec in _records(self.project_key, self.env, self.root)}
        leaders: dict[str, int] = {}  # instance -> its lowest pid (the session leader the deploy started)
        for pid, marks in marked({"FRAMEWORK_OWNED_BY": OWNER, "FRAMEWORK_PROJECT": self.project_key,
                                  "FRAMEWORK_ENV": self.env, "FRAMEWORK_WORKLOAD": workload}):
            instance = marks.get("FRAMEWORK_INSTANCE", "")
            if instance not in known:
                leaders[instance] = min(pid, leaders.get(instance, pid))
        for instance, pid in leaders.items():  # no record file: the path names none (unlinking it is a no-op)
            Instance({"instance": instance, "pid": pid, "port": port},
                     self.dir / "instances" / f"{workload}.unrecorded.{instance[:8]}.json").stop()

    def start(self, spec: WorkloadSpec, replica: int, port: int | None) -> Instance:
        if port is not None and not port_free(port):
            self._stop_orphans(spec.name, port)  # ours, left without a record: stopped; a stranger's port stays
        if port is not None and not port_free(port):
            raise PortBusy(f"workload {spec.name!r}: port {port} is in use by another process",
                           hint=f"stop what listens on {port} (e.g. `ss -ltnp 'sport = :{port}'`) or change the port")
        instance = uuid.uuid4().hex
        logs = self.dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        env = {
            **(os.environ if spec.base_env is None else spec.base_env),
            **spec.env,
            "FRAMEWORK_OWNED_BY": OWNER,
            "FRAMEWORK_INSTANCE": instance,
            "FRAMEWORK_PROJECT": self.project_key,
            "FRAMEWORK_ENV": self.env,
            "FRAMEWORK_WORKLOAD": spec.name,
            "FRAMEWORK_RELEASE": self.release,
            "FRAMEWORK_DIGEST": spec.digest,
            "FRAMEWORK_PROMOTION": self.promotion_id,
        }
        if port is not None:
            env["PORT"] = str(port)
        log = (logs / f"{spec.name}.{replica}.log").open("ab")
        try:
            proc = subprocess.Popen(
                spec.run,
                cwd=spec.workdir or None,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineError(
                f"workload {spec.name!r}: cannot start {spec.run[0]!r}: {exc.strerror}", code="start_failed"
            ) from exc
        finally:
            log.close()
        record = {
            "instance": instance,
            "pid": proc.pid,
            "workload": spec.name,
            "replica": replica,
            "port": port,
            "digest": spec.digest,
            "release": self.release,
            "promotion_id": self.promotion_id,
            "run": spec.run,
            "started_at": time.time(),
        }
        path = self.dir / "instances" / f"{spec.name}.{replica}.{instance[:8]}.json"
        atomic_write_bytes(path, json.dumps(record).encode())
        return Instance(record, path, proc)

    def rollout(
        self,
        specs: list[WorkloadSpec],
        options: RolloutOptions,
        on_phase: Callable[[str, Phase], None] | None = None,
        superseded: Callable[[], bool] | None = None,
        declared: set[str] | None = None,
        writing: Writing = unguarded,
    ) -> tuple[RolloutEnd, list[Resource]]:
        """Apply every workload of `specs`; returns (overall phase, resources). Overall: ready,
        DEGRADED, SUPERSEDED, timed_out or not_waited. Instances of workloads not in `declared`
        (default: the names of `specs`) are stopped; a partial apply (`env deploy --target`) passes
        every workload the environment declares, so the ones it did not select keep running."""
        declared = {s.name for s in specs} if declared is None else declared

        def guard(r: _WorkloadRollout, fn: Callable[[], None]) -> None:
            try:
                fn()
            except PortBusy as exc:
                r.resource.outcome = "failed"
                r.resource.message = exc.message
                r.set_phase("DEGRADED", on_phase)

        deadline = time.monotonic() + options.timeout
        with writing() as ok:  # what runs is read inside: a superseded rollout may have written before
            if not ok:
                return "SUPERSEDED", [Resource(name=s.name, phase="SUPERSEDED", outcome="failed",
                                               message="a newer promotion landed before it applied") for s in specs]
            for inst in instances(self.project_key, self.env, root=self.root):  # no longer declared: removed
                if inst.record.get("workload") not in declared:
                    inst.stop()
            rollouts = [_WorkloadRollout(self, s, options, writing) for s in specs]
            if not options.wait:
                for r in rollouts:
                    guard(r, r.replace_now)
                end: RolloutEnd = "DEGRADED" if any(r.resource.phase == "DEGRADED" for r in rollouts) else "not_waited"
                return end, [r.resource for r in rollouts]
            for r in rollouts:
                guard(r, lambda r=r: r.begin(on_phase))  # type: ignore[misc]
        while True:
            if any(r.resource.phase == "DEGRADED" for r in rollouts):
                return "DEGRADED", [r.resource for r in rollouts]
            active = [r for r in rollouts if r.resource.outcome == "not_waited"]
            if not active:
                break
            if superseded is not None and superseded():
                for r in active:
                    r.set_phase("SUPERSEDED", on_phase)
                    r.resource.outcome = "failed"
                    r.resource.message = "a newer promotion landed during the wait"
                return "SUPERSEDED", [r.resource for r in rollouts]
            if time.monotonic() > deadline:
                for r in active:
                    r.resource.outcome = "timed_out"
                    r.resource.message = (
                        f"wait budget of {options.timeout:g}s expired while {r.resource.phase}"
                    )
                return "timed_out", [r.resource for r in rollouts]
            for r in active:
                guard(r, lambda r=r: r.step(on_phase))  # type: ignore[misc]
            if any(r.resource.phase == "DEGRADED" for r in rollouts):
                return "DEGRADED", [r.resource for r in rollouts]
            time.sleep(POLL)
        return "ready", [r.resource for r in rollouts]


class _WorkloadRollout:
    """One workload's rollout: new instances prove themselves healthy, then replace the old ones."""

    def __init__(self, rt: ProcessRuntime, spec: WorkloadSpec, options: RolloutOptions,
                 writing: Writing = unguarded) -> None:
        self.rt = rt
        self.writing = writing
        self.spec = spec
        self.options = options
        self.resource = Resource(name=spec.name)
        self.old = instances(rt.project_key, rt.env, spec.name, rt.root)
        self.new: list[tuple[Instance, int | None, int]] = []  # (instance, port, replica)
        self.canary = False
        self.unhealthy_since: float | None = None
        self.healthy_since: float | None = None

    def set_phase(self, phase: Phase, on_phase: Callable[[str, Phase], None] | None) -> None:
        if self.resource.phase != phase:
            self.resource.phase = phase
            if on_phase:
                on_phase(self.spec.name, phase)

    def _ports(self) -> list[int | None]:
        declared = self.spec.ports[0] if self.spec.ports else None
        return [
            declared if i == 0 else (free_port() if declared else None) for i in range(self.spec.replicas)
        ]

    def _unchanged(self) -> bool:
        live = [i for i in self.old if i.alive()]
        return len(live) == self.spec.replicas and all(
            i.record.get("digest") == self.spec.digest and i.record.get("run") == self.spec.run for i in live
        )

    def replace_now(self) -> None:
        if self._unchanged():
            return
        for inst in self.old:
            inst.stop()
        for replica, port in enumerate(self._ports()):
            self.new.append((self.rt.start(self.spec, replica, port), port, replica))

    def begin(self, on_phase: Callable[[str, Phase], None] | None) -> None:
        if on_phase:
            on_phase(self.spec.name, "pending")
        self.set_phase("progressing", on_phase)
        if self._unchanged():  # already on this release: keep it running, still wait for health
            self.new = [(i, i.record.get("port"), int(i.record.get("replica", 0))) for i in self.old]
            self.old = []
            return
        live_old = [i for i in self.old if i.alive()]
        self.canary = bool(live_old) and bool(self.spec.ports)
        # with an old version holding the declared port, the new one proves itself on a spare port first
        ports = [free_port() for _ in range(self.spec.replicas)] if self.canary else self._ports()
        for inst in self.old:
            if not inst.alive():
                inst.stop()
        self.old = live_old
        for replica, port in enumerate(ports):
            self.new.append((self.rt.start(self.spec, replica, port), port, replica))

    def _restart(self, idx: int) -> None:
        inst, port, replica = self.new[idx]
        inst.stop(grace=1)
        self.resource.restarts += 1
        self.new[idx] = (self.rt.start(self.spec, replica, port), port, replica)

    def step(self, on_phase: Callable[[str, Phase], None] | None) -> None:
        now = time.monotonic()
        healthy = True
        reasons = []
        for idx, (inst, port, _replica) in enumerate(self.new):
            if not inst.alive():
                # crash loop fails fast; a single crash is restarted within the crash limit
                if self.resource.restarts >= self.options.crash_limit:
                    self.resource.message = (
                        f"crash loop: exited {self.resource.restarts + 1} times (see {self.rt.dir / 'logs'})"
                    )
                    self.resource.outcome = "failed"
                    self.set_phase("DEGRADED", on_phase)
                    for i, _p, _r in self.new:
                        i.stop(grace=1)
                    return
                with self.writing() as ok:
                    if not ok:  # superseded: the rollout's next look ends it
                        return
                    self._restart(idx)
                healthy = False
                reasons.append("restarted after exit")
                continue
            ok, why = check_health(self.spec, port, inst)
            healthy &= ok
            reasons.append(why)
        self.resource.message = "; ".join(reasons)
        if not healthy:
            self.healthy_since = None
            self.unhealthy_since = self.unhealthy_since or now
            if self.resource.phase == "stabilizing":
                self.set_phase("progressing", on_phase)
            if now - self.unhealthy_since > self.options.grace:
                self.resource.outcome = "failed"
                self.resource.message = (
                    f"unhealthy for longer than the {self.options.grace:g}s grace: " + self.resource.message
                )
                self.set_phase("DEGRADED", on_phase)
                for i, _p, _r in self.new:
                    i.stop(grace=1)
            return
        self.unhealthy_since = None
        if self.healthy_since is None:
            self.healthy_since = now
            self.set_phase("stabilizing", on_phase)
        if now - self.healthy_since < self.options.stability_window:
            return
        # stable: now the old version stops; a canary moves onto the declared port
        with self.writing() as ok:
            if not ok:  # superseded: the rollout's next look ends it
                return
            for inst in self.old:
                inst.stop()
            self.old = []
            if self.canary:
                self.canary = False
                for inst, _p, _r in self.new:
                    inst.stop()
                self.new = [(self.rt.start(self.spec, r, p), p, r) for r, p in enumerate(self._ports())]
                self.healthy_since = None
                self.set_phase("progressing", on_phase)
                # the proven release gets one more health confirmation on its real port, without a window
                self.options = self.options.model_copy(update={"stability_window": 0.0})
                return
        self.resource.outcome = "ready"
        self.resource.instances = [{"pid": i.pid, "port": p, "replica": r} for i, p, r in self.new]
        self.set_phase("ready", on_phase)
