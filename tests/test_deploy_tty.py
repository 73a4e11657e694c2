"""`env deploy` on a real terminal (tmux): the plan is shown, then confirmation is asked
(docs/reference-deploy.md#env-deploy)."""

from __future__ import annotations

import shlex
import subprocess
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import FRAMEWORK_BIN, demo_fixture  # noqa: E402,F401

from tests.waiting import until  # noqa: E402


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True, timeout=30).stdout


def showing(name: str, text: str, timeout: float = 60.0) -> str:
    """The pane's last 200 lines (wrapped lines joined) once `text` is among them."""
    def pane() -> str:
        return tmux("capture-pane", "-p", "-J", "-t", name, "-S", "-200")

    return until(lambda: screen if text in (screen := pane()) else "", timeout,
                 what=lambda: f"{text!r} on the pane:\n{tmux('capture-pane', '-p', '-t', name)}", interval=0.1)


def run_in_tmux(demo, args: str) -> str:
    name = f"fw4-{uuid.uuid4().hex[:8]}"
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in demo.env.items()
                   if k.startswith(("FRAMEWORK_", "GIT_", "XDG_")) or k in ("HOME", "PATH", "NO_COLOR"))
    command = (f"cd {shlex.quote(str(demo.root))} && env {env} TERM=xterm {FRAMEWORK_BIN} {args}; "
               f"echo EXIT=$?; sleep 120")
    tmux("new-session", "-d", "-s", name, "-x", "140", "-y", "50", command)
    return name


def test_terminal_confirmation_shows_plan_and_no_writes_no_promotion(demo):
    """Exit 0 when the confirmation is answered no (no promotion written; the Forms order cut the release
    first, and a rerun reuses it); yes promotes, applies and waits."""
    name = run_in_tmux(demo, "env deploy dev --stability-window 0.3")
    try:
        screen = showing(name, "to dev? [y/N]")
        assert "Deploy plan for `dev`" in screen and "| api | added |" in screen
        tmux("send-keys", "-t", name, "n", "Enter")
        screen = showing(name, "EXIT=")
        assert "EXIT=0" in screen and "no promotion written" in screen
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)
    assert len(list((demo.root / ".framework" / "releases").glob("*.json"))) == 1
    assert demo.json("ledger", "show", "dev")[1]["promotions"] == []
    name = run_in_tmux(demo, "env deploy dev --stability-window 0.3")
    try:
        showing(name, "to dev? [y/N]")
        tmux("send-keys", "-t", name, "y", "Enter")
        screen = showing(name, "EXIT=")
        assert "EXIT=0" in screen and "rollout: ready" in screen
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)
    code, doc = demo.json("env", "status", "dev")
    assert code == 0 and doc["environments"][0]["convergence"] == "converged"
