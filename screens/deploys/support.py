"""The deploy call shared by the Plans and Rollouts screens: the engine's `env deploy` with
`--approve <digest>` (or `--supersede`), run inside a thread worker, phases posted as messages.
No Textual widgets here: messages and the command line each action is equivalent to.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class PlanComputed(Message):
    """A dry-run deploy (`env deploy <env> <version> --plan`): `result` is the DeployResult."""

    env: str
    version: str
    result: Any = None
    error: Any = None


@dataclass
class DeployProgress(Message):
    """One progress line or rollout phase change of a deploy running in a worker."""

    env: str
    line: str
    event: dict[str, Any] = field(default_factory=dict)


@dataclass
class DeployFinished(Message):
    env: str
    version: str
    result: Any = None
    error: Any = None


def deploy_argv(env: str, version: str, *, approve: str | None = None, supersede: bool = False,
                acknowledge: list[str] | None = None, timeout: float = 300.0, plan: bool = False) -> list[str]:
    argv = ["framework", "env", "deploy", env, version]
    if plan:
        return [*argv, "--plan"]
    argv += ["--approve", approve] if approve else ["--yes"]
    if supersede:
        argv.append("--supersede")
    if acknowledge:
        argv += ["--acknowledge-destructive", ",".join(acknowledge)]
    if timeout != 300.0:
        argv += ["--timeout", f"{timeout:g}"]
    return argv


def command_line(argv: list[str]) -> str:
    return shlex.join(argv)


def compute_plan(project_dir: Any, env: str, version: str) -> Any:
    """The same engine call as `framework env deploy <env> <version> --plan` (writes nothing)."""
    from engine.deploy.deploy import DeployOptions, deploy
    from engine.project import find_project

    return deploy(find_project(project_dir), env, DeployOptions(version=version, plan=True))


def run_deploy(sender: Any, project_dir: Any, env: str, version: str, *, approve: str | None,
               supersede: bool = False, acknowledge: list[str] | None = None, timeout: float = 300.0) -> None:
    """Run the deploy (blocking: call from a thread worker) and post progress / the final result to `sender`."""
    from engine.deploy.deploy import DeployOptions, deploy
    from engine.errors import EngineError
    from engine.project import find_project

    def say(line: str) -> None:
        sender.post_message(DeployProgress(env, line))

    def emit(event: dict[str, Any]) -> None:
        sender.post_message(DeployProgress(env, f"{event['workload']}: {event['phase']}", event))

    opts = DeployOptions(version=version, approve=approve, yes=approve is None, supersede=supersede,
                         acknowledge_destructive=acknowledge or [], timeout=timeout)
    try:
        result = deploy(find_project(project_dir), env, opts, progress=say, emit=emit)
    except EngineError as exc:
        sender.post_message(DeployFinished(env, version, error=exc))
        return
    sender.post_message(DeployFinished(env, version, result=result))
