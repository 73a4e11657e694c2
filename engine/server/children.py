"""Child processes of `platform server`: the delivery recorder and the run workers.

The HTTP process keeps its event loop to itself (no GIL shared with recording or with runs);
each child gets the store's URL through its environment (never argv: it may carry a password),
exits when its stdin closes, and ignores Ctrl-C (the server stops it in order).

At start the server forks both children from itself (`fork`), before it has a thread or an open
store connection: they begin with every module the server imported (no second interpreter start,
~0.4 CPU-seconds each) and are named `recorder` and `run-workers` (the process name `ps -o comm`
shows; their command line is the server's). A child started again later (it died) is a new
interpreter (`spawn`, `python -m engine.server.recorder`): the server has threads by then.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO

_URL_ENV = "PLATFORM_CHILD_DATABASE_URL"
RESPAWN_PAUSE = 1.0  # seconds between starts of a child that keeps dying
NAMES = {"engine.server.recorder": "recorder", "engine.server.runner": "run-workers"}


def spawn(module: str, database_url: str, *args: str, reply_pipe: bool = False) -> subprocess.Popen[bytes]:
    root = str(Path(__file__).resolve().parents[2])  # `engine` importable however the server started
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, _URL_ENV: database_url, "PYTHONPATH": f"{root}{os.pathsep}{path}" if path else root}
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE if reply_pipe else None,
        env=env,
    )


class Forked:
    """A forked child, handled as subprocess.Popen handles one (what the clients use of it)."""

    def __init__(self, name: str, pid: int, stdin: IO[bytes], stdout: IO[bytes] | None) -> None:
        self.name = name
        self.pid = pid
        self.stdin: IO[bytes] | None = stdin
        self.stdout = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.name, timeout or 0)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


def can_fork() -> bool:
    """Only a process with one thread (C threads included) forks safely."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def fork(module: str, run: Callable[[], int], database_url: str, *args: str, reply_pipe: bool = False) -> Forked | None:
    """The child `module` would be, forked from this process: `run()` in it with stdin (and stdout,
    with `reply_pipe`) on pipes to us, nothing else of ours open. None when this process may not fork."""
    if not can_fork():
        return None
    name = NAMES.get(module, module)
    child_in, to_child = os.pipe()
    from_child, child_out = os.pipe() if reply_pipe else (-1, -1)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # nothing buffered is written twice
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.dup2(child_in, 0)
            if reply_pipe:
                os.dup2(child_out, 1)
            os.closerange(3, _max_fd())  # as Popen's close_fds: the server's socket, the other child's pipes
            os.environ[_URL_ENV] = database_url
            sys.argv = [f"{module.rsplit('.', 1)[-1]}.py", *args]
            _set_name(name)
            code = run()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 - the child reports and exits; the server starts another
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(code)
    os.close(child_in)
    if reply_pipe:
        os.close(child_out)
    return Forked(name, pid, os.fdopen(to_child, "wb", buffering=0),
                  os.fdopen(from_child, "rb", buffering=0) if reply_pipe else None)


def _max_fd() -> int:
    try:
        return int(os.sysconf("SC_OPEN_MAX"))
    except (OSError, ValueError):
        return 65536


def _set_name(name: str) -> None:
    """The process name (Linux: /proc/PID/comm, 15 bytes), which `ps -o comm` and `top` show."""
    with contextlib.suppress(OSError):
        Path("/proc/self/comm").write_text(name[:15])


def child_setup() -> str:
    """In the child: ignore Ctrl-C (it reaches the whole process group; the server closes our
    stdin when it stops), log to stderr, and return the store's URL."""
    import logging

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format=f"platform {sys.argv[0].rsplit('/', 1)[-1]}: %(message)s",
                        force=True)  # a forked child's own, whatever the server had set
    return os.environ.pop(_URL_ENV)
