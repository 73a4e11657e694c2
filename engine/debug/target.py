"""What `debug start` runs: a workload of the local environment, a program path, or a pid.

A workload starts with the environment's resolved config exactly as `env up` would place it
(the process plan at this worktree's port-block offset: command, cwd, env, PORT); a path starts
with the caller's environment. The adapter follows from the program: Python (a `.py` file, a
`python` command, a directory with `main.py`) is debugged by debugpy, Go (a directory with
`go.mod` or `.go` files, or a Go binary) by delve.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from engine.errors import EngineError, UsageError
from engine.project import Project

Adapter = Literal["debugpy", "delve"]


class TargetError(EngineError):
    code = "debug_target"


class Target(BaseModel):
    """Everything the broker needs to start (or attach to) one program under an adapter."""

    name: str
    kind: Literal["service", "path", "pid"]
    adapter: Adapter
    mode: Literal["launch", "attach"]
    program: str = ""          # a .py file or a Go package directory
    module: str | None = None  # python -m <module>
    args: list[str] = []
    cwd: str = ""
    env: dict[str, str] = {}   # on top of the caller's environment
    python: str | None = None  # the interpreter named by the workload's command
    pid: int | None = None     # --attach
    ports: list[int] = []
    env_name: str | None = None

    def describe(self) -> str:
        if self.kind == "pid":
            return f"pid {self.pid} ({self.adapter})"
        return f"{self.name} ({self.adapter}, {self.kind})"


def _is_python(word: str) -> bool:
    base = os.path.basename(word)
    return base.startswith("python") or base.endswith(".py")


def _is_go_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "go.mod").is_file() or any(path.glob("*.go")))


def _python_target(name: str, command: list[str], cwd: Path, kind: Literal["service", "path"]) -> Target:
    python, rest = (command[0], command[1:]) if not command[0].endswith(".py") else (None, command)
    if rest[:1] == ["-m"] and len(rest) > 1:
        return Target(name=name, kind=kind, adapter="debugpy", mode="launch", module=rest[1], args=rest[2:],
                      cwd=str(cwd), python=python)
    if not rest or rest[0].startswith("-"):
        raise TargetError(f"{name}: cannot tell which Python program `{shlex.join(command)}` runs",
                          hint="debug a workload whose command is `python <file.py> ...` or `python -m <module>`")
    program = (cwd / rest[0]).resolve()
    if not program.is_file():
        raise TargetError(f"{name}: program {rest[0]} not found in {cwd}")
    return Target(name=name, kind=kind, adapter="debugpy", mode="launch", program=str(program), args=rest[1:],
                  cwd=str(cwd), python=python)


def from_path(project: Project, what: str, args: list[str]) -> Target:
    """A program path, relative to the current directory or the project root."""
    candidates = [Path(what)] if os.path.isabs(what) else [Path.cwd() / what, project.root / what]
    path = next((p.resolve() for p in candidates if p.exists()), None)
    if path is None:
        raise TargetError(f"{what}: neither a workload of the local environment nor a file or directory",
                          hint="name a workload (`framework env config dev`) or a path to a .py file or Go package")
    if _is_go_dir(path):
        return Target(name=what, kind="path", adapter="delve", mode="launch", program=str(path), args=args,
                      cwd=str(path))
    if path.is_file() and path.suffix == ".go":
        return Target(name=what, kind="path", adapter="delve", mode="launch", program=str(path.parent),
                      args=args, cwd=str(path.parent))
    if path.is_dir() and (path / "main.py").is_file():
        path = path / "main.py"
    if path.is_file() and path.suffix == ".py":
        return _python_target(what, [str(path), *args], path.parent, "path")
    raise TargetError(f"{what}: no debug adapter for this program",
                      hint="Python programs (.py, a directory with main.py) use debugpy; Go packages use delve")


def from_service(project: Project, env: str, name: str) -> Target | None:
    """The workload `name` of `env` as `env up` would start it; None when `env` has no such workload."""
    from engine.devstack.blocks import BLOCK_SIZE, allocate
    from engine.devstack.checkout import detect
    from engine.environments.render import plan_of
    from engine.environments.render.pipeline import render_environment

    rendered = render_environment(project, env)  # once: the typed environment and its process plan
    spec = rendered.environment
    if spec.workload(name) is None:
        return None
    if spec.kind != "local":
        raise UsageError(f"environment {env!r} is {spec.kind}: debug runs workloads of a local environment",
                         hint="pass --env with a local environment (kind = \"local\")")
    entry = allocate(project, kind="dev_stack", checkout=detect(project.root))  # env up's ports for this worktree
    plan = plan_of(project, rendered, port_offset=entry.block * BLOCK_SIZE)
    planned = plan.process(name)
    env_vars = dict(planned.env)
    env_vars.update({s: os.environ[s] for s in planned.secrets if s in os.environ})
    cwd = Path(planned.cwd)
    command = list(planned.command)
    ports = [p.port for p in planned.ports]
    if command and _is_python(command[0]):
        target = _python_target(name, command, cwd, "service")
    elif command and _is_go_dir((cwd / command[-1]).resolve()):
        target = Target(name=name, kind="service", adapter="delve", mode="launch",
                        program=str((cwd / command[-1]).resolve()), cwd=str(cwd))
    else:
        raise TargetError(f"workload {name!r} runs `{shlex.join(command)}`: no debug adapter for it",
                          hint="Python workloads use debugpy, Go packages delve")
    return target.model_copy(update={"env": env_vars, "ports": ports, "env_name": env})


def _exe_of(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except FileNotFoundError:
        raise TargetError(f"--attach {pid}: no such process") from None
    except OSError as exc:
        raise TargetError(f"--attach {pid}: cannot inspect the process ({exc.strerror})") from None


def _is_go_binary(exe: str) -> bool:
    try:
        with open(exe, "rb") as fh:
            data = fh.read(4 * 1024 * 1024)
    except OSError:
        return False
    return b"\xff Go buildinf:" in data or b"go:buildid" in data or b"runtime.goexit" in data


def from_pid(pid: int) -> Target:
    exe = _exe_of(pid)
    if _is_python(exe):
        from engine.debug.attach import check_pid_injection

        check_pid_injection(pid)
        adapter: Adapter = "debugpy"
    elif _is_go_binary(exe):
        adapter = "delve"
    else:
        raise TargetError(f"--attach {pid}: {exe} is neither a Python interpreter nor a Go program")
    return Target(name=f"pid {pid}", kind="pid", adapter=adapter, mode="attach", pid=pid)


def resolve(project: Project, what: str | None, *, attach: int | None, env: str, args: list[str]) -> Target:
    if attach is not None:
        if what:
            raise UsageError("give either a service or path, or --attach <pid>, not both")
        return from_pid(attach)
    if not what:
        raise UsageError("debug start needs a service or path (or --attach <pid>)",
                         hint="framework debug start api   |   framework debug start services/worker")
    looks_like_path = "/" in what or what.endswith((".py", ".go"))
    if not looks_like_path:
        from engine.environments.evaluate import declared_names

        if env in declared_names(project):
            target = from_service(project, env, what)
            if target is not None:
                return target.model_copy(update={"args": [*target.args, *args]})
        if not (Path.cwd() / what).exists() and not (project.root / what).exists():
            raise TargetError(f"unknown service {what!r}: not a workload of {env!r} and not a path",
                              hint=f"workloads: framework env config {env}")
    return from_path(project, what, args)
