"""Fixtures for debug-session tests: a git copy of the demo with free ports, the real CLI, real
adapters (debugpy, delve), real HTTP requests, and a teardown that stops the session and fails
the test if any process the session launched is still alive."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cli_fork
import pytest

from tests.authoring_fixtures import _GO_ENV
from tests.devstack_fixtures import BIN, free_base, make_demo_repo, pid_alive, pids_whose_environ
from tests.waiting import until

REPO = Path(__file__).resolve().parent.parent
MARKER = b"FRAMEWORK_DEBUG_SESSION="
# A small program with a call to step into: `outer` calls `inner` in a loop.
CALC = '''import os
import time


def inner(x):
    y = x + 1  # INNER
    return y * 2


def outer(n):
    a = inner(n)  # CALL
    b = a + 1  # AFTER
    return b


if __name__ == "__main__":
    print("calc ready", flush=True)
    while True:
        outer(int(os.environ.get("CALC_N", "4")))
        time.sleep(0.02)
'''


def needs_dlv() -> str:
    """delve from `make tools` (.tools/bin) or PATH; `make test` installs it, so absence is a failure."""
    for candidate in (os.environ.get("FRAMEWORK_DLV"), str(REPO / ".tools" / "bin" / "dlv"), shutil.which("dlv")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise AssertionError("dlv is not installed: run `make tools` (make test does it)")


def marked_pids(token: str | None = None) -> list[int]:
    """Live processes carrying a debug-session marker (this session's token when given)."""
    needle = MARKER + token.encode() if token else MARKER
    carried = pids_whose_environ(lambda environ: any(item.startswith(needle) for item in environ))
    return [pid for pid in carried if pid_alive(pid)]


@dataclass
class Debug:
    root: Path
    base: int
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return cli_fork.run([str(BIN / "framework"), "debug", *args], cwd=self.root, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=timeout, check=False,
                              env={**os.environ, **self.env})

    def json(self, *args: str, timeout: float = 120) -> dict:
        out = self.run(*args, "--json", timeout=timeout)
        assert "Traceback" not in out.stderr, out.stderr
        try:
            return json.loads(out.stdout)
        except ValueError as exc:
            raise AssertionError(f"not one JSON document: {out.stdout!r} {out.stderr!r}") from exc

    def ok(self, *args: str, timeout: float = 120) -> dict:
        doc = self.json(*args, timeout=timeout)
        assert doc["ok"], doc
        return doc

    def session(self) -> dict | None:
        path = self.root / ".framework" / "debug-session.json"
        return json.loads(path.read_text()) if path.exists() else None

    def line_of(self, rel: str, text: str) -> int:
        """The 1-based line of `text` in a project file (tests never hard-code line numbers)."""
        for number, line in enumerate((self.root / rel).read_text().splitlines(), 1):
            if text in line:
                return number
        raise AssertionError(f"{text!r} not in {rel}")


class Request:
    """A real HTTP GET on a thread: it blocks while the target is stopped at a breakpoint."""

    def __init__(self, port: int, path: str) -> None:
        self.body: str | None = None
        self.error: Exception | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._get, args=(port, path), daemon=True)
        self.thread.start()

    def _get(self, port: int, path: str) -> None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as resp:
                self.body = resp.read().decode()
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.done.set()

    def result(self, timeout: float = 60) -> str:
        assert self.done.wait(timeout), "the request never completed"
        assert self.error is None, self.error
        assert self.body is not None
        return self.body


def get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return resp.read().decode()


def serves(port: int) -> bool:
    """The service on `port` answers its health check."""
    try:
        return get(port, "/healthz") == "ok"
    except OSError:
        return False


@pytest.fixture
def debug(tmp_path: Path) -> Iterator[Debug]:
    """A demo checkout (dev ports moved to a free range); the worker listens on base+10 (PORT)."""
    base = free_base()
    root = make_demo_repo(tmp_path, base)
    # the machine's Go caches: delve builds the worker (and, with -N -l, the standard library) in them once
    session = Debug(root=root, base=base, env={"PORT": str(base + 10), **_GO_ENV})
    yield session
    doc = session.session()
    if doc is not None:
        session.run("stop", timeout=60)
    token = doc.get("token") if doc else None
    leftovers = [p for p in marked_pids(token)] if token else []
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not leftovers, f"debug session left processes behind: {leftovers}"


def wait_state(debug: Debug, state: str, timeout: float = 30) -> dict:
    return until(lambda: (lambda d: d if d.get("state") == state else None)(debug.ok("status")),
                timeout=timeout, what=f"session state {state}")  # type: ignore[return-value]


def stopped_line(doc: dict) -> tuple[str, int, str]:
    s = doc["stopped"]
    return os.path.basename(s["file"]), s["line"], s["function"]


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
