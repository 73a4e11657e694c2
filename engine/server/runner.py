"""The run workers of `platform server`, in a child process (engine/server/worker.py's pool).

Runs are CPU work (the run engine, filters, writing run records); in the HTTP process they would
take the GIL from the event loop and stretch ingestion latency. The server wakes the pool by
writing a byte to the child's stdin whenever a delivery was queued; the pool also polls. When
stdin closes (the server stopped or was killed) the pool stops: a run under way keeps its lease
until it finishes or the lease lapses, and another process takes it up (worker.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine.server.children import RESPAWN_PAUSE, Forked, child_setup, fork, spawn

log = logging.getLogger("platform.server")


class RunnerClient:
    """The server's handle on the runner child: start, wake, stop; restarted if it died."""

    def __init__(self, database_url: str, data_dir: Path, size: int) -> None:
        self.database_url = database_url
        self.data_dir = data_dir
        self.size = size
        self._proc: subprocess.Popen[bytes] | Forked | None = None
        self._forked: Forked | None = None  # forked at the server's start (prefork), taken by the first start()
        self._started_at = 0.0
        self._lock = threading.Lock()  # woken from the event loop and from API handler threads

    def prefork(self) -> None:
        """Fork the run workers now (the server has no thread and no store connection yet); start() takes them."""
        if self.size > 0:
            data_dir, size = self.data_dir, self.size
            self._forked = fork("engine.server.runner", lambda: run(data_dir, size), self.database_url,
                                str(data_dir), str(size))

    def start(self) -> None:
        if self.size <= 0:
            return
        self._started_at = time.monotonic()
        proc, self._forked = self._forked, None
        self._proc = proc or spawn("engine.server.runner", self.database_url, str(self.data_dir), str(self.size))
        assert self._proc.stdin is not None
        os.set_blocking(self._proc.stdin.fileno(), False)

    def wake(self) -> None:
        with self._lock:
            self._wake()

    async def supervise(self, every: float = 1.0) -> None:
        """Start the workers again if they died, also when no delivery arrives to wake them:
        runs queued meanwhile wait in the durable queue, and a new pool claims them."""
        while True:
            await asyncio.sleep(every)
            if self._proc is not None and self._proc.poll() is not None:
                self.wake()

    def _wake(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is not None:
            if time.monotonic() - self._started_at < RESPAWN_PAUSE:
                return  # queued runs wait in the durable queue; the next wake restarts it
            log.warning("run workers exited with %s; starting them again", proc.returncode)
            self.start()
            return
        assert proc.stdin is not None
        # Full pipe: wake-ups are already pending. Closed pipe: the next wake restarts it.
        with contextlib.suppress(BlockingIOError, BrokenPipeError):
            os.write(proc.stdin.fileno(), b"w")

    def stop(self, timeout: float = 15.0) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(data_dir: Path, size: int) -> int:
    from engine.server.worker import WorkerPool
    from engine.serverstore import store

    # Run bookkeeping (claim, start, finish) commits without waiting for the disk: a power loss can
    # only undo the last of these, which makes a run execute again, exactly as after a crash
    # (runs are at-least-once through leases). Deliveries are the recorder's, always FULL: its
    # fsync of the shared WAL also covers every earlier run commit.
    engine = store.open_engine(child_setup(), synchronous="NORMAL")
    pool = WorkerPool(engine, data_dir, size=size)
    pool.start()
    try:
        while os.read(sys.stdin.fileno(), 4096):
            pool.wake()
    finally:
        pool.stop()
        engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), int(sys.argv[2])))
