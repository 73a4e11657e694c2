"""End to end on a real terminal: `framework` in tmux, keys sent, the screen read back."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import BIN


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True, timeout=30).stdout


@pytest.fixture
def session(demo_project: Path, isolated_home: Path) -> Iterator[str]:
    name = f"fw-{uuid.uuid4().hex[:8]}"
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in
                   ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "FRAMEWORK_LEDGER_HOME"))
    command = f"cd {shlex.quote(str(demo_project))} && env {env} TERM=xterm-256color {BIN / 'framework'}"
    _tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "32", command)
    _tmux("set-option", "-t", name, "escape-time", "0")
    try:
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)


def _screen(name: str) -> str:
    return _tmux("capture-pane", "-p", "-t", name)


def _wait_for(name: str, text: str, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _screen(name)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared; screen:\n{_screen(name)}")


def _wait_gone(name: str, text: str, timeout: float = 60.0) -> None:
    """Wait until `text` has left the screen (a modal closed), failing with the screen if it stays."""
    deadline = time.monotonic() + timeout
    while text in _screen(name) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert text not in _screen(name), f"{text!r} never went away; screen:\n{_screen(name)}"


def _alive(name: str) -> bool:
    return subprocess.run(["tmux", "has-session", "-t", name], capture_output=True, check=False).returncode == 0


def test_dashboard_on_a_real_terminal(session: str) -> None:
    """README.md, Dashboard: no arguments on a TTY opens the dashboard; keys navigate; q quits."""
    screen = _wait_for(session, "5 environments in project demo")
    for env in ("cloud", "cluster", "dev", "prod", "staging"):
        assert env in screen
    _tmux("send-keys", "-t", session, "2")
    _wait_for(session, "Nothing in flight")  # Rollouts: its honest empty state
    _tmux("send-keys", "-t", session, "?")
    _wait_for(session, "Binding id")
    _tmux("send-keys", "-t", session, "Escape")
    _wait_gone(session, "Binding id")
    _tmux("send-keys", "-t", session, "q")
    deadline = time.monotonic() + 60
    while _alive(session) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(session), "the dashboard did not quit on q"
