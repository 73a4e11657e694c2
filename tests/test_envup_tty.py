"""`env up` on a terminal: holds the foreground with live status, tears down on interrupt
(docs/reference-devstack.md#env-up-flags)."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import devstack_fixtures as fx  # noqa: E402
from devstack_fixtures import BIN, framework_json, healthz, pid_alive  # noqa: E402

from tests.waiting import until

demo_repo, stacks_cleanup = fx.demo_repo, fx.stacks_cleanup  # fixtures


def test_terminal_holds_the_foreground_and_sigint_tears_the_stack_down(demo_repo, stacks_cleanup):
    """`env up` (docs/reference-devstack.md#env-up-flags): with a TTY it holds the foreground (live status)
    and tears down on interrupt."""
    repo, base = demo_repo
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    proc = subprocess.Popen([str(BIN / "framework"), "env", "up", "dev", "--no-build"], cwd=repo,
                            stdin=slave, stdout=slave, stderr=slave, env={**os.environ, "TERM": "xterm"})
    os.close(slave)
    stacks_cleanup.append(proc)
    screen: list[bytes] = []

    def pump() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            screen.append(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    until(lambda: b"Ctrl-C stops the stack" in b"".join(screen), timeout=60, what="the live status table")
    stacks = framework_json("env", "ps", cwd=repo)["stacks"]
    assert stacks[0]["mode"] == "foreground" and stacks[0]["status"] == "running"
    pids = [p["pid"] for p in stacks[0]["processes"]]
    assert healthz(base) and healthz(base + 1)
    assert proc.poll() is None  # still holding the foreground

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=90) == 130  # a ceiling: teardown stops each service in turn
    for pid in pids:
        until(lambda pid=pid: not pid_alive(pid), what=f"pid {pid} to stop")
    assert not healthz(base)
    assert framework_json("env", "ps", cwd=repo)["stacks"] == []
    reader.join(timeout=5)
    os.close(master)
    assert b"stopped on interrupt" in b"".join(screen)
