"""The compose runtime's `up -d`, started before the deploy knows its file (engine/runtime/compose.py).

Compose reads the file from stdin (`-f -`), so the process can start first and be handed the file
after the promotion: its own start (an interpreter, for Compose 1.29) overlaps the deploy's stages, as
the k8s runtime's early kubectl does. An approved deploy (`--yes`/`--approve`) starts it as soon as its
project is found, with the Compose project its last apply recorded (`runtime/<env>/compose.project`);
the deploy takes it once the environment is evaluated when project and arguments match, and ends it
otherwise. Ended before it was sent the file, it has read nothing and changed nothing.

Light on purpose (no pydantic, no KCL): the command imports it before the deploy engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from engine.errors import EngineError
from engine.paths import runtime_dir


class ComposeFailed(EngineError):
    """Compose or the daemon refused the apply (a pull, a bad file, a port in use): exit 2, as a refused
    kubectl apply."""

    code = "compose_failed"
    exit_code = 2


def compose_cli() -> list[str]:
    """The Compose CLI: `$FRAMEWORK_DOCKER_COMPOSE`, else `docker-compose` on PATH (Debian's 1.29.2 or a
    v2 standalone binary), else the `docker compose` plugin; [] when there is no `docker` either."""
    named = os.environ.get("FRAMEWORK_DOCKER_COMPOSE")
    if named:
        return [named]
    standalone = shutil.which("docker-compose")
    if standalone:
        return [standalone]
    return ["docker", "compose"] if shutil.which("docker") else []


def last_line(text: str, default: str) -> str:
    return (text.strip().splitlines() or [default])[-1]


def up_args(selected: list[str] | None) -> list[str]:
    """`up -d` of the whole project (its orphans removed), or of `--target`'s services only."""
    return ["up", "-d", "--no-deps", *selected] if selected else ["up", "-d", "--remove-orphans"]


class PendingUp:
    """One `up -d` reading its file from stdin (module docstring)."""

    def __init__(self, cli: list[str], name: str, workdir: Path, selected: list[str] | None) -> None:
        self.name, self.args, self.sent = name, up_args(selected), False
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            self.proc: subprocess.Popen[str] | None = subprocess.Popen(
                [*cli, "-p", name, "-f", "-", "--project-directory", str(workdir), *self.args],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True)
        except OSError as exc:
            raise EngineError(f"cannot run {cli[0]}: {exc}", code="runtime_unavailable") from exc

    def matches(self, name: str, args: list[str]) -> bool:
        return self.proc is not None and not self.sent and (name, args) == (self.name, self.args)

    def send(self, text: str, meanwhile: Callable[[], None] | None = None, timeout: float = 300.0) -> None:
        """Hand Compose the file (stdin, then closed), run `meanwhile` while it applies, wait its answer."""
        assert self.proc is not None and self.proc.stdin is not None
        self.sent = True
        try:
            self.proc.stdin.write(text)
            self.proc.stdin.close()
        except BrokenPipeError:
            pass  # it ended already: its answer below says why
        self.proc.stdin = None  # closed: communicate() only reads its answer
        if meanwhile is not None:
            try:
                meanwhile()
            except Exception:  # noqa: BLE001 - the caller runs it again after the apply, where its error surfaces
                pass
        try:
            _out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.cancel()
            raise ComposeFailed(f"docker compose up: no answer within {timeout:g}s") from exc
        if self.proc.returncode != 0:
            raise ComposeFailed(f"docker compose up: {last_line(err, 'failed')}")

    def cancel(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self.proc = None


_STARTED: dict[tuple[str, str], PendingUp] = {}  # (project key, env) -> the up started before the deploy


def remember(project_key: str, env: str, name: str) -> None:
    """Record the Compose project of `env`'s last apply (what the next deploy starts early with)."""
    path = runtime_dir(project_key, env) / "compose.project"
    if not path.is_file() or path.read_text(encoding="utf-8").strip() != name:
        path.write_text(name + "\n", encoding="utf-8")


def start_early(project_key: str, env: str, targets: list[str] | None) -> None:
    """Start `env`'s `up -d` with the project its last apply recorded; nothing when none was recorded,
    no Compose CLI is found, or one is already started."""
    from engine.names import environment

    try:
        environment(env)  # a name the deploy will refuse names no directory either
    except EngineError:
        return
    path = runtime_dir(project_key, env) / "compose.project"
    if (project_key, env) in _STARTED or not path.is_file():
        return
    cli = compose_cli()
    if not cli:
        return
    name = path.read_text(encoding="utf-8").strip()
    if name:
        _STARTED[(project_key, env)] = PendingUp(cli, name, path.parent, targets or None)


def take(project_key: str, env: str, name: str, targets: list[str] | None) -> PendingUp | None:
    """The `up -d` started early for this project and these arguments, or None (one that does not match
    is ended)."""
    early = _STARTED.pop((project_key, env), None)
    if early is not None and not early.matches(name, up_args(targets or None)):
        early.cancel()
        return None
    return early


def end_unused() -> None:
    """End every `up -d` started early and not taken (a deploy refused before its apply)."""
    while _STARTED:
        _STARTED.popitem()[1].cancel()
