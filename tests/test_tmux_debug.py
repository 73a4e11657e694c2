"""End to end on a real terminal (docs/reference-debug.md#the-debug-screen): the dashboard in tmux, a debug
session started with `:debug start api`, a breakpoint hit by a real HTTP request, a step by key, stop by
key."""

from __future__ import annotations

import os
import shlex
import subprocess
import uuid
from collections.abc import Iterator

import pytest

from tests.conftest import BIN
from tests.debug_fixtures import Debug, Request, debug  # noqa: F401
from tests.test_tmux_e2e import _gone, _showing, _tmux

API = "services/api/main.py"


@pytest.fixture
def terminal(debug: Debug) -> Iterator[str]:  # noqa: F811
    name = f"fw-dbg-{uuid.uuid4().hex[:8]}"
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in
                   ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "FRAMEWORK_LEDGER_HOME"))
    command = f"cd {shlex.quote(str(debug.root))} && env {env} TERM=xterm-256color {BIN / 'framework'}"
    _tmux("new-session", "-d", "-s", name, "-x", "140", "-y", "40", command)
    _tmux("set-option", "-t", name, "escape-time", "0")
    subprocess.run(["tmux", "resize-window", "-t", name, "-x", "140", "-y", "40"], capture_output=True, check=False)
    try:
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)


def _command(name: str, line: str) -> None:
    _tmux("send-keys", "-t", name, ":")
    _showing(name, "Command")
    _tmux("send-keys", "-t", name, "-l", line)
    _tmux("send-keys", "-t", name, "Enter")


def test_debug_session_from_the_dashboard_on_a_real_terminal(terminal: str, debug: Debug) -> None:  # noqa: F811
    """`:debug start api` from the Debug screen starts the session; a request stops at the
    breakpoint and the screen shows where; n steps; x stops; the CLI agrees at each point."""
    _showing(terminal, "environments in project")
    _tmux("send-keys", "-t", terminal, "8")
    _showing(terminal, "No debug session in this project")
    _command(terminal, "debug start api")
    _showing(terminal, "debugging api")
    _tmux("send-keys", "-t", terminal, "Escape")
    _gone(terminal, "esc closes")  # the header behind the result modal already says "running"
    _showing(terminal, "running - api")
    line = debug.line_of(API, 'body = json.dumps({"message"')
    _command(terminal, f"debug break {API}:{line}")
    _showing(terminal, "verified")
    _tmux("send-keys", "-t", terminal, "Escape")
    _gone(terminal, "esc closes")
    request = Request(debug.base, "/tmux")
    _showing(terminal, f"main.py:{line} in do_GET")
    _tmux("send-keys", "-t", terminal, "n")
    _showing(terminal, f"main.py:{line + 1} in do_GET")
    assert debug.ok("status")["stopped"]["line"] == line + 1
    _tmux("send-keys", "-t", terminal, "x")
    _showing(terminal, "No debug session in this project")
    assert request.done.wait(30)
    assert debug.session() is None
