"""`framework env up <env>` (docs/reference-devstack.md#commands): build, deploy, host, frontend — a local dev stack.

Local environments only. The stack's host processes get ports from this worktree's block
(host port = base + block*100), carry ownership markers, log to files under the stack's
directory and run detached (new session), so without a terminal the command returns and leaves
them running. One stack per (project, env, worktree): an existing one is stopped first.
With `hold` (a terminal, or `--watch`) the foreground is held until interrupted, then the stack
is torn down; `--background` beats `--watch`.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.devstack import stacks as registry
from engine.devstack.blocks import BLOCK_SIZE, allocate
from engine.devstack.checkout import Checkout, detect, refresh_session
from engine.devstack.stacks import Stack, StackProcess, StackStatus
from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, UsageError
from engine.processes import port_free
from engine.project import Project

Progress = Callable[[str], None]
SEED_UNAVAILABLE = "skipped: --target runs part of the stack (the dev database is prepared by a whole `env up`)"


class NotLocal(EngineError):
    code = "not_local"


class PortBusy(EngineError):
    code = "port_busy"


class StartFailed(EngineError):
    code = "start_failed"


class UpOptions(BaseModel):
    no_build: bool = False
    no_deploy: bool = False
    no_seed: bool = False
    targets: list[str] = []
    defines: dict[str, str] = {}
    watch: bool = False
    background: bool = False
    dev_args: list[str] = []  # tokens after `--`: each frontend's dev server
    timeout: float = 60.0     # start-to-healthy budget per phase
    hold: bool = False        # hold the foreground (decided by the caller: terminal or --watch)


class Phase(BaseModel):
    name: str  # build | deploy | host | frontend
    status: str  # done | skipped | failed
    detail: str = ""
    seconds: float = 0.0


class UpResult(BaseModel):
    project: str
    env: str
    key: str
    block: int
    port_offset: int
    stack_id: str
    stack_dir: str
    replaced: bool = False
    phases: list[Phase] = []
    processes: list[dict[str, Any]] = []
    seed: str = SEED_UNAVAILABLE
    held: bool = False
    watch: bool = False
    interrupted: bool = False
    events: list[str] = []


def _say(progress: Progress | None, message: str) -> None:
    if progress:
        progress(message)


def _watch_paths(root: Path, cwd: Path, command: list[str], context: str | None) -> list[str]:
    """What a change to restarts this process: its build context, else the directories of the
    project files its command names, else its working directory."""
    if context:
        return [str((root / context).resolve())]
    dirs = []
    for arg in command[1:]:
        candidate = (cwd / arg).resolve()
        if candidate.is_file() and root.resolve() in candidate.parents:
            dirs.append(str(candidate.parent))
    return sorted(set(dirs)) or [str(cwd)]


class Launcher:
    """Starts (and restarts) a stack's processes through the process runtime, in the stack's dir."""

    def __init__(self, project: Project, env: str, stack: Stack, defines: dict[str, str],
                 progress: Progress | None) -> None:
        from engine.runtime.process import ProcessRuntime

        self.project = project
        self.env = env
        self.stack = stack
        self.defines = defines
        self.progress = progress
        self.runtime = ProcessRuntime(project.key, env, "dev", None)
        self.runtime.dir = registry.stack_dir(stack.id)  # logs and instance records under the stack's dir
        self.specs: dict[str, Any] = {}
        self.instances: dict[str, Any] = {}

    def spec_for(self, planned: Any, extra_args: list[str]) -> Any:
        from engine.runtime.process import WorkloadSpec

        env = dict(planned.env)
        missing = [name for name in planned.secrets if name not in os.environ]
        env.update({name: os.environ[name] for name in planned.secrets if name in os.environ})
        if missing:
            _say(self.progress, f"{planned.name}: secrets not set in this shell: {', '.join(missing)}")
        env[registry.MARK_STACK] = self.stack.marker
        env[registry.MARK_STACK_ID] = self.stack.token
        if planned.health is not None:
            health: dict[str, Any] | None = {"type": "http", "path": planned.health.path, "port": planned.health.port}
        elif planned.ports:
            health = {"type": "tcp"}
        else:
            health = {"type": "process"}
        return WorkloadSpec(name=planned.name, run=[*planned.command, *extra_args], env=env,
                            ports=[p.port for p in planned.ports], replicas=1, health=health, workdir=planned.cwd)

    def start(self, spec: Any, kind: str, watch: list[str]) -> StackProcess:
        port = spec.ports[0] if spec.ports else None
        inst = self.runtime.start(spec, 0, port)
        self.specs[spec.name] = spec
        self.instances[spec.name] = inst
        proc = StackProcess(name=spec.name, kind=kind, pid=inst.pid, start_time=registry.start_time(inst.pid) or 0,
                            instance=inst.record["instance"], ports=list(spec.ports), command=spec.run,
                            cwd=spec.workdir, log=str(self.runtime.dir / "logs" / f"{spec.name}.0.log"),
                            record=str(inst.path), health=spec.health, watch=watch)
        self.stack.processes = [p for p in self.stack.processes if p.name != spec.name] + [proc]
        registry.save(self.stack)  # recorded before waiting: a crash here still leaves `env down` able to stop it
        return proc

    def start_keeper(self, checkout: Checkout) -> None:
        import sys

        from engine.runtime.process import WorkloadSpec

        spec = WorkloadSpec(name="keeper", run=[sys.executable, "-m", "engine.devstack.keeper", self.stack.id,
                                                 checkout.root],
                            env={registry.MARK_STACK: self.stack.marker, registry.MARK_STACK_ID: self.stack.token},
                            health={"type": "process"}, workdir=checkout.root)
        self.start(spec, "keeper", [])

    def wait_healthy(self, names: list[str], timeout: float) -> None:
        from engine.runtime.process import check_health

        pending = list(names)
        deadline = time.monotonic() + timeout
        while pending:
            for name in list(pending):
                spec, inst = self.specs[name], self.instances[name]
                port = spec.ports[0] if spec.ports else None
                # our own child: its exit status is the truth (its /proc environ may still be mid-exec)
                code = inst.proc.poll() if inst.proc is not None else (None if inst.alive() else -1)
                if code is not None:
                    raise StartFailed(f"{name} exited during start (exit {code})",
                                      hint=_log_tail(self.runtime.dir / "logs" / f"{name}.0.log"))
                ok, why = check_health(spec, port, inst, timeout=0.5)
                if ok:
                    pending.remove(name)
                    _say(self.progress, f"{name} healthy ({why})")
            if pending and time.monotonic() > deadline:
                raise StartFailed(f"not healthy within {timeout:g}s: {', '.join(pending)}",
                                  hint=_log_tail(self.runtime.dir / "logs" / f"{pending[0]}.0.log"))
            if pending:
                time.sleep(0.01)


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        tail = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        tail = []
    return f"log {path}" + (":\n  " + "\n  ".join(tail) if tail else " is empty")


def _build(project: Project, env: str, spec: EnvironmentSpec, targets: list[str], progress: Progress | None) -> str:
    from engine.builds.dispatch import build_workload

    built = []
    for w in spec.workloads:
        if targets and w.name not in targets or w.build is None:
            continue
        _say(progress, f"building {w.name} ({w.build.type})")
        build_workload(project, env, w, None)
        built.append(w.name)
    return f"built {', '.join(built)}" if built else "nothing declares a build"


def _select(plan: Any, targets: list[str]) -> list[Any]:
    names = [p.name for p in plan.processes]
    unknown = [t for t in targets if t not in names]
    if unknown:
        raise UsageError(f"--target {unknown[0]}: no workload or frontend of that name in {plan.env}",
                         hint=f"names: {', '.join(names) or 'none'}")
    return [p for p in plan.processes if not targets or p.name in targets]


def env_up(project: Project, env: str, opts: UpOptions, progress: Progress | None = None,
           on_status: Callable[[StackStatus], None] | None = None) -> UpResult:
    """Bring the stack up; hold it in the foreground when `opts.hold` (then tear it down)."""
    from engine.environments.options import validate_options
    from engine.environments.render import plan_of
    from engine.environments.render.pipeline import render_environment

    defines = validate_options(project, env, opts.defines)  # declared names only; derived refused (exit 2)
    rendered = render_environment(project, env, defines)  # once: the typed environment, planned below
    env_spec = rendered.environment
    if env_spec.kind != "local":
        raise NotLocal(f"environment {env!r} is {env_spec.kind}: `env up` runs local environments only",
                       hint=f"deploy it with: framework env deploy {env}")
    from engine.environments.bindings import up_refusal

    bound = up_refusal(env, env_spec)
    if bound is not None:  # docs/reference-env.md#bindings: non-local bindings refused, pointing to `env deploy`
        raise NotLocal(bound, hint=f"deploy it with: framework env deploy {env}")
    checkout = detect(project.root)
    entry = allocate(project, kind="dev_stack", checkout=checkout)
    offset = entry.block * BLOCK_SIZE
    sid = registry.stack_id(project.key, env, checkout.key)
    result = UpResult(project=project.key, env=env, key=checkout.key, block=entry.block, port_offset=offset,
                      stack_id=sid, stack_dir=str(registry.stack_dir(sid)), watch=opts.watch and opts.hold,
                      seed="disabled (--no-seed)" if opts.no_seed else SEED_UNAVAILABLE)
    existing = registry.load(sid)
    if existing is not None:  # one stack per (project, env); an existing one is stopped first
        _say(progress, f"stopping the existing {env} stack ({len(existing.processes)} processes)")
        registry.stop_stack(existing)
        result.replaced = True
    target = env_spec.target
    phase_start = time.monotonic()
    if opts.no_build:
        result.phases.append(Phase(name="build", status="skipped", detail="--no-build"))
    else:
        _say(progress, "build")
        result.phases.append(Phase(name="build", status="done", detail=_build(project, env, env_spec, opts.targets,
                                                                              progress),
                                   seconds=round(time.monotonic() - phase_start, 3)))
    if opts.no_deploy:
        result.phases.append(Phase(name="deploy", status="skipped", detail="--no-deploy"))
    elif target is not None and target.type == "process":
        result.phases.append(Phase(name="deploy", status="skipped",
                                   detail="process target: no cluster or compose workloads to deploy"))
    elif target is not None and target.type == "compose":
        from engine.runtime.compose import up_stack

        _say(progress, "deploy")
        phase_start = time.monotonic()
        detail = up_stack(project, env, env_spec, opts.targets, opts.timeout)
        result.phases.append(Phase(name="deploy", status="done", detail=detail,
                                   seconds=round(time.monotonic() - phase_start, 3)))
        # its services run as containers under the Docker daemon, not as this stack's processes: nothing is
        # held, and `env down` leaves them (docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets)
        return result
    elif target is not None:
        from engine.runtime.external import check_target

        check_target(target, env)  # raises: `env up` runs local stacks; a cluster is deployed with `env deploy`
    plan = plan_of(project, rendered, port_offset=offset)
    chosen = _select(plan, opts.targets)
    busy = [(p.name, port.port) for p in chosen for port in p.ports if not port_free(port.port)]
    if busy:
        name, number = busy[0]
        raise PortBusy(f"port {number} for {name} (block {entry.block} of key {checkout.key!r}) is already in use "
                       "by a process this stack did not start; it was left alone",
                       hint="stop whatever listens there, or move this worktree with `framework env devstack release`")
    stack = Stack(id=sid, token=uuid.uuid4().hex, project=project.key, project_root=str(project.root), env=env,
                  key=checkout.key, block=entry.block, port_offset=offset, branch=checkout.branch,
                  started_at=time.time(), mode="foreground" if opts.hold else "background",
                  holder_pid=os.getpid() if opts.hold else None)
    launcher = Launcher(project, env, stack, defines, progress)
    watcher = None
    if opts.hold and opts.watch:
        from engine.devstack.hold import Watcher

        watcher = Watcher(project.root).start()  # before the processes: no change is missed
    try:
        for phase, kind, extra in (("host", "workload", []), ("frontend", "frontend", opts.dev_args)):
            group = [p for p in chosen if p.kind == kind]
            if not group:
                result.phases.append(Phase(name=phase, status="skipped", detail=f"no {kind}s to run"))
                continue
            _say(progress, phase)
            began = time.monotonic()
            for planned in group:  # all start at once, then wait together: services start in parallel
                spec = launcher.spec_for(planned, extra)
                declared = env_spec.workload(planned.name)
                context = declared.build.context if declared and declared.build else None
                proc = launcher.start(spec, kind, _watch_paths(project.root, Path(planned.cwd), spec.run, context))
                _say(progress, f"started {planned.name} pid {proc.pid} ports {', '.join(map(str, proc.ports)) or '-'}")
            launcher.wait_healthy([p.name for p in group], opts.timeout)
            result.phases.append(Phase(name=phase, status="done", detail=", ".join(p.name for p in group),
                                       seconds=round(time.monotonic() - began, 3)))
    except BaseException:
        if watcher is not None:
            watcher.stop()
        registry.stop_stack(stack)  # a failed or interrupted start leaves nothing running
        raise
    if not opts.targets:  # dev database: migrate, first-boot seed (docs/reference-db.md#env-up-and-the-dashboard)
        from engine.database.devstack import prepare_dev_database

        result.seed = prepare_dev_database(project, env_spec, offset, opts.no_seed, progress)
    try:
        refresh_session(project, checkout, env)
    except EngineError as exc:  # presence is best effort (a local session); the stack runs
        _say(progress, f"local session not recorded: {exc.message}")
    if not opts.hold:  # nobody holds a background stack: the keeper refreshes its session
        launcher.start_keeper(checkout)
    result.processes = [p.model_dump(include={"name", "kind", "pid", "ports", "log"}) for p in stack.processes
                        if p.kind != "keeper"]
    if opts.hold:
        from engine.devstack.hold import hold

        result.held = True
        try:
            hold(launcher, opts, checkout, progress, on_status, result.events, watcher)
        except KeyboardInterrupt:
            result.interrupted = True
        finally:
            current = registry.load(sid) or stack
            _say(progress, f"stopping the {env} stack")
            registry.stop_stack(current)
    return result


