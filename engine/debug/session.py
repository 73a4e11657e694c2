"""Reaching the session broker through `.framework/debug-session.json` (docs/reference-debug.md#how-it-works).

The CLI's `debug` commands and the Debug screen both go through `call`; `start` launches the
broker detached and waits for its ready line. A session file whose broker is gone is stale:
the next command stops whatever that session launched, removes the file and says so.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import EngineError
from engine.project import Project

if TYPE_CHECKING:
    from engine.debug.target import Target

SESSION_FILE = "debug-session.json"


class NoSession(EngineError):
    code = "no_debug_session"


class StaleSession(EngineError):
    code = "stale_debug_session"


class SessionLive(EngineError):
    code = "debug_session_live"


def session_path(project: Project) -> Path:
    return project.root / ".framework" / SESSION_FILE


def workdir(project: Project) -> Path:
    return project.root / ".framework" / "debug"


def read(project: Project) -> dict[str, Any] | None:
    try:
        return dict(json.loads(session_path(project).read_bytes()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StaleSession(f"{session_path(project)} is unreadable ({exc}); remove it") from None


def _request(doc: dict[str, Any], op: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
    host, _, port = str(doc["address"]).rpartition(":")
    with socket.create_connection((host, int(port)), timeout=2) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(timeout)
        sock.sendall(json.dumps({"token": doc["token"], "op": op, "args": args}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    if not data:
        raise ConnectionError("the broker closed the connection without answering")
    return dict(json.loads(data))


def _broker_alive(doc: dict[str, Any]) -> bool:
    from engine.processes import pid_alive

    pid = int(doc.get("pid") or 0)
    if pid <= 0 or not pid_alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"engine.debug.broker" in cmdline  # a reused pid is some other program


def clean_stale(project: Project, doc: dict[str, Any]) -> list[int]:
    """Stop what the dead broker's session launched and remove its file."""
    from engine.debug.procs import kill_marked

    killed = kill_marked(str(doc.get("token", ""))) if doc.get("token") else []
    session_path(project).unlink(missing_ok=True)
    return killed


def _stale(project: Project, doc: dict[str, Any], why: str) -> StaleSession:
    killed = clean_stale(project, doc)
    stopped = f"; stopped {len(killed)} process(es) it had launched" if killed else ""
    return StaleSession(f"the debug session of {doc.get('target', '?')} is gone ({why}): "
                        f"removed the stale session file{stopped}",
                        hint="start a new one with `framework debug start <service|path>`")


def live(project: Project) -> dict[str, Any] | None:
    """The session document when its broker is alive; a stale one is cleaned (and None returned)."""
    doc = read(project)
    if doc is None:
        return None
    if not _broker_alive(doc):
        clean_stale(project, doc)
        return None
    return doc


def call(project: Project, op: str, args: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """One request to the live session's broker; its refusal is raised as an EngineError."""
    doc = read(project)
    if doc is None:
        raise NoSession("no debug session in this project",
                        hint="start one with `framework debug start <service|path>`")
    if not _broker_alive(doc):
        raise _stale(project, doc, f"broker pid {doc.get('pid')} is not running")
    try:
        reply = _request(doc, op, args or {}, timeout + 5)
    except (OSError, ValueError) as exc:
        if not _broker_alive(doc):
            raise _stale(project, doc, f"broker pid {doc.get('pid')} died") from None
        raise EngineError(f"the debug session broker did not answer {op!r}: {exc}", code="broker_unreachable",
                          hint="end it with `framework debug stop`") from None
    if not reply.get("ok"):
        error = reply.get("error") or {}
        raise EngineError(str(error.get("message", "failed")), hint=error.get("hint"),
                          code=str(error.get("code", "error")), exit_code=int(reply.get("exit_code", 1)))
    return dict(reply.get("result") or {})


def start(project: Project, target: Target, *, port: int = 0, replace: bool = False,
          timeout: float = 90.0) -> dict[str, Any]:
    """Launch the broker for `target` (detached) and return the session document it wrote."""
    import secrets
    import subprocess

    current = live(project)
    replaced = None
    if current is not None:
        if not replace:
            raise SessionLive(f"a debug session is already live: {current.get('target')} "
                              f"({current.get('mode')}, broker pid {current.get('pid')})",
                              hint="end it with `framework debug stop`, or pass --replace")
        replaced = stop(project)
    work = workdir(project)
    work.mkdir(parents=True, exist_ok=True)
    spec = {"target": target.model_dump(mode="json"), "token": secrets.token_hex(16), "port": port,
            "session_file": str(session_path(project)), "workdir": str(work)}
    log = open(work / "broker.log", "ab")  # noqa: SIM115 - handed to the child
    env = {k: v for k, v in os.environ.items() if k != "FRAMEWORK_DEBUG_SESSION"}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "engine.debug.broker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log, cwd=str(project.root), env=env,
                                start_new_session=True)
    finally:
        log.close()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(spec).encode() + b"\n")
    proc.stdin.close()
    line = _read_line(proc, timeout)
    try:
        answer = json.loads(line) if line else None
    except ValueError:
        answer = None
    if not answer:
        proc.kill()
        from engine.debug.procs import kill_marked

        kill_marked(str(spec["token"]))
        session_path(project).unlink(missing_ok=True)
        raise EngineError(f"the debug session broker did not start (see {work / 'broker.log'})",
                          code="broker_failed")
    if not answer.get("ok"):
        proc.wait(timeout=10)
        error = answer.get("error") or {}
        raise EngineError(str(error.get("message")), hint=error.get("hint"), code=str(error.get("code", "error")))
    result = dict(answer["session"])
    if target.ports:  # a service: ready when it listens, as `env up` waits for it
        result["listening"] = _wait_listening(project, target.ports[0], timeout=30.0)
    if replaced is not None:
        result["replaced"] = replaced
    return result


def _wait_listening(project: Project, port: int, timeout: float) -> bool:
    """Poll the service's port until it accepts, the target exits, or `timeout` passes."""
    deadline = time.monotonic() + timeout
    checked = 0.0
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            pass
        if time.monotonic() - checked > 0.25:
            checked = time.monotonic()
            if call(project, "status", {"tail": 0}).get("state") == "exited":
                return False
        time.sleep(0.02)
    return False


def _read_line(proc: Any, timeout: float) -> bytes:
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n") and time.monotonic() < deadline:
        if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
            break
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        data += chunk
    sel.close()
    proc.stdout.close()
    return data


def stop(project: Project) -> dict[str, Any]:
    """End the session: kill what it launched, detach from what it attached to, end the broker."""
    doc = read(project)
    if doc is None:
        raise NoSession("no debug session in this project",
                        hint="start one with `framework debug start <service|path>`")
    if not _broker_alive(doc):
        killed = clean_stale(project, doc)
        return {"target": doc.get("target"), "mode": doc.get("mode"), "killed": killed, "stale": True}
    try:
        result = call(project, "stop", {}, timeout=20)
    except EngineError as exc:
        if exc.code != "broker_unreachable":
            raise
        import signal

        os.kill(int(doc["pid"]), signal.SIGKILL)  # a hung broker: end it and what it launched
        return {"target": doc.get("target"), "mode": doc.get("mode"), "killed": clean_stale(project, doc),
                "forced": True}

    from engine.processes import pid_alive

    deadline = time.monotonic() + 10
    while pid_alive(int(doc["pid"])) and time.monotonic() < deadline:
        time.sleep(0.02)
    session_path(project).unlink(missing_ok=True)
    return result
