"""Child processes of `platform server`: the delivery recorder and the run workers.

The HTTP process keeps its event loop to itself (no GIL shared with recording or with runs);
each child gets the store's URL through its environment (never argv: it may carry a password),
exits when its stdin closes, and ignores Ctrl-C (the server stops it in order).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

_URL_ENV = "PLATFORM_CHILD_DATABASE_URL"
RESPAWN_PAUSE = 1.0  # seconds between starts of a child that keeps dying


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


def child_setup() -> str:
    """In the child: ignore Ctrl-C (it reaches the whole process group; the server closes our
    stdin when it stops), log to stderr, and return the store's URL."""
    import logging

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format=f"platform {sys.argv[0].rsplit('/', 1)[-1]}: %(message)s")
    return os.environ.pop(_URL_ENV)
