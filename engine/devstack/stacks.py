"""The machine's dev-stack registry, ownership markers, `env down` and `env ps` (docs/reference-devstack.md).

A stack is one (project, env, worktree key). Its record lives under
`$FRAMEWORK_LEDGER_HOME/stacks/<id>/stack.json` with its logs beside it, so `env ps` sees every
project's stacks. Every process a stack starts carries ownership markers in its environment
(`FRAMEWORK_STACK=<project>/<env>/<key>`, `FRAMEWORK_STACK_ID`, plus the process runtime's
`FRAMEWORK_OWNED_BY`/`FRAMEWORK_INSTANCE`) and is recorded with its pid and start time. A process
is signalled only when its live /proc environ carries the markers AND its start time matches
the record (pid reuse), and never when it is the running command or one of its ancestors.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

from pydantic import BaseModel

from engine import names
from engine.paths import atomic_write_bytes, ledger_home
from engine.processes import ancestors, start_time

MARK_STACK = "FRAMEWORK_STACK"
MARK_STACK_ID = "FRAMEWORK_STACK_ID"


class StackProcess(BaseModel):
    name: str
    kind: str  # workload | frontend
    pid: int
    start_time: int  # /proc/<pid>/stat field 22 (clock ticks since boot): defeats pid reuse
    instance: str
    ports: list[int] = []
    command: list[str] = []
    cwd: str = ""
    log: str = ""
    record: str = ""  # the process runtime's instance record
    health: dict[str, object] | None = None
    watch: list[str] = []
    restarts: int = 0


class Stack(BaseModel):
    id: str
    token: str  # FRAMEWORK_STACK_ID of this `env up`
    project: str
    project_root: str
    env: str
    key: str
    block: int
    port_offset: int
    branch: str = ""
    started_at: float
    mode: str = "background"  # background | foreground
    holder_pid: int | None = None  # the foreground `env up`, when one holds the stack
    processes: list[StackProcess] = []

    @property
    def marker(self) -> str:
        return f"{self.project}/{self.env}/{self.key}"


class ProcessStatus(BaseModel):
    name: str
    kind: str
    pid: int
    ports: list[int]
    alive: bool
    log: str


class StackStatus(BaseModel):
    id: str
    project: str
    project_root: str
    env: str
    key: str
    block: int
    branch: str
    mode: str
    started_at: float
    status: str  # running | partial | stopped
    processes: list[ProcessStatus]


class PsResult(BaseModel):
    stacks: list[StackStatus]


class StopOutcome(BaseModel):
    name: str
    pid: int
    outcome: str  # stopped | gone | left_alone | survived


class StackDown(BaseModel):
    id: str
    project: str
    env: str
    key: str
    processes: list[StopOutcome]


class DownResult(BaseModel):
    stacks: list[StackDown]

    @property
    def survivors(self) -> list[StopOutcome]:
        return [p for s in self.stacks for p in s.processes if p.outcome == "survived"]


def stacks_root() -> Path:
    return ledger_home() / "stacks"


def stack_id(project: str, env: str, key: str) -> str:
    """Readable and unique: sanitized names plus a short hash of the exact triple."""
    digest = hashlib.sha256(f"{project}\0{env}\0{key}".encode()).hexdigest()[:8]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{project}.{env}.{key or 'primary'}")
    return f"{slug}-{digest}"


def stack_dir(sid: str) -> Path:
    return stacks_root() / sid


def save(stack: Stack) -> None:
    atomic_write_bytes(stack_dir(stack.id) / "stack.json", stack.model_dump_json(indent=2).encode())


def load(sid: str) -> Stack | None:
    try:
        return Stack.model_validate(json.loads((stack_dir(sid) / "stack.json").read_bytes()))
    except (OSError, ValueError):
        return None


def load_stacks() -> list[Stack]:
    out = []
    root = stacks_root()
    if root.is_dir():
        for path in sorted(root.glob("*/stack.json")):
            stack = load(path.parent.name)
            if stack is not None:
                out.append(stack)
    return out


def forget(stack: Stack) -> None:
    """Drop the record (logs stay beside it for reading after `env down`)."""
    (stack_dir(stack.id) / "stack.json").unlink(missing_ok=True)


# -- /proc ------------------------------------------------------------------------------------

def ownership(stack: Stack, proc: StackProcess) -> str:
    """`ours`, `gone`, or `left_alone` (markers, start time or ancestry do not allow a signal)."""
    from engine.runtime.process import read_markers

    marks = read_markers(proc.pid)
    if marks is None:
        return "gone"
    if (not marks or marks.get(MARK_STACK_ID) != stack.token or marks.get(MARK_STACK) != stack.marker
            or marks.get("FRAMEWORK_INSTANCE") != proc.instance):
        return "left_alone"  # not ours: a reused pid or someone else's process
    if start_time(proc.pid) != proc.start_time:
        return "left_alone"
    # never the running command or its ancestors, nor the group this command runs in
    me = ancestors()
    if proc.pid in me or os.getpgid(0) == proc.pid:
        return "left_alone"
    return "ours"


def is_alive(stack: Stack, proc: StackProcess) -> bool:
    return ownership(stack, proc) == "ours"


def stop_process(stack: Stack, proc: StackProcess, grace: float = 5.0) -> StopOutcome:
    """SIGTERM then SIGKILL the process group, through the process runtime, only if ours."""
    from engine.runtime.process import Instance

    state = ownership(stack, proc)
    if state != "ours":
        return StopOutcome(name=proc.name, pid=proc.pid, outcome=state)
    record = {"pid": proc.pid, "instance": proc.instance}
    Instance(record, Path(proc.record or os.devnull + ".none")).stop(grace=grace)
    outcome = "survived" if ownership(stack, proc) == "ours" else "stopped"
    return StopOutcome(name=proc.name, pid=proc.pid, outcome=outcome)


def status_of(stack: Stack) -> StackStatus:
    procs = [ProcessStatus(name=p.name, kind=p.kind, pid=p.pid, ports=p.ports, alive=is_alive(stack, p), log=p.log)
             for p in stack.processes]
    alive = sum(p.alive for p in procs)
    state = "running" if procs and alive == len(procs) else ("partial" if alive else "stopped")
    return StackStatus(id=stack.id, project=stack.project, project_root=stack.project_root, env=stack.env,
                       key=stack.key, block=stack.block, branch=stack.branch, mode=stack.mode,
                       started_at=stack.started_at, status=state, processes=procs)


def ps() -> PsResult:
    """`env ps`: every stack on this machine, across projects."""
    return PsResult(stacks=[status_of(s) for s in load_stacks()])


def stop_stack(stack: Stack, grace: float = 5.0) -> StackDown:
    """Stop every process of one stack that is ours; the record goes once none survives."""
    outcomes = [stop_process(stack, p, grace) for p in reversed(stack.processes)]
    if not any(o.outcome == "survived" for o in outcomes):
        forget(stack)
    _mark_session_stopped(stack)
    return StackDown(id=stack.id, project=stack.project, env=stack.env, key=stack.key,
                     processes=list(reversed(outcomes)))


def _mark_session_stopped(stack: Stack) -> None:
    """Best effort (`env down` marks the local session stopped)."""
    from engine.errors import EngineError
    from engine.ledger.store import Ledger

    try:
        with Ledger.open(stack.project) as ledger:
            ledger.mark_stopped(stack.key)
    except (EngineError, OSError, Exception):  # noqa: BLE001 - presence is best effort by spec
        pass


def down(project_key: str | None, env: str | None, key: str | None, *, all_stacks: bool = False) -> DownResult:
    """`env down [env]` / `--all`: signal only our marked processes; containers, cluster
    workloads and hosted environments are never touched (they are not in this registry)."""
    if env is not None:
        names.environment(env)
    chosen = [s for s in load_stacks()
              if all_stacks or (s.project == project_key and s.key == key and (env is None or s.env == env))]
    return DownResult(stacks=[stop_stack(s) for s in chosen])


def wait_gone(stack: Stack, deadline_s: float = 5.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end and any(is_alive(stack, p) for p in stack.processes):
        time.sleep(0.05)
