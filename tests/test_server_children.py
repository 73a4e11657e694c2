"""The child processes of `platform server`, the delivery recorder (engine/server/recorder.py) and
the run workers (engine/server/runner.py): docs/reference-webhooks.md#durability-and-processes (503 when a
delivery cannot be recorded, so the sender retries; no accepted delivery is lost, its run executes; a killed
server leaves nothing running)."""

from __future__ import annotations

import concurrent.futures
import os
import signal
from pathlib import Path

import httpx

from engine.server.children import NAMES
from tests.waiting import until
from tests.webhooks_fixtures import history, make_trigger, server_factory  # noqa: F401


def _children(server_pid: int, module: str) -> list[int]:
    """The server's children running `module`: forked at its start (named as engine/server/children.py's
    NAMES says) or started again later (`python -m module`)."""
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    return [int(pid) for pid in map(int, children)
            if module in _cmdline(pid) or _proc(pid, "comm").strip() == NAMES[module]]


def _recorder_pids(server_pid: int) -> list[int]:
    return _children(server_pid, "engine.server.recorder")


def _cmdline(pid: int) -> str:
    return _proc(pid, "cmdline").replace("\0", " ")


def _proc(pid: int, name: str) -> str:
    """/proc/<pid>/<name> as text ("" once the process is gone)."""
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes().decode()
    except FileNotFoundError:
        return ""


def _unread_input(pid: int) -> int:
    """Bytes written to `pid`'s stdin pipe and not yet read (FIONREAD on the pipe, opened through /proc)."""
    import fcntl
    import struct
    import termios

    fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    finally:
        os.close(fd)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_a_dead_recorder_means_503_then_a_new_recorder_accepts(server_factory, tmp_path: Path) -> None:
    """Errors: a delivery whose recording is lost with the recorder gets 503 (never a 202 that is
    not in history); a new recorder is started and the sender's retry is then accepted once."""
    srv = server_factory()
    act = make_trigger(srv, tmp_path)
    assert httpx.post(act["url_with_token"], json={"n": 1}).status_code == 202
    (first,) = until(lambda: _recorder_pids(srv.proc.pid), what="the recorder process")
    os.kill(first, signal.SIGSTOP)  # the next delivery reaches the recorder but is not recorded
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            httpx.post, act["url_with_token"], json={"n": 2}, headers={"X-Delivery-Id": "d2"}, timeout=30
        )
        # the event: the delivery's frame is waiting in the stopped recorder's input pipe
        until(lambda: _unread_input(first) > 0, what="the delivery to reach the stopped recorder")
        assert not pending.done()
        os.kill(first, signal.SIGKILL)
        lost = pending.result()
    assert lost.status_code == 503 and lost.headers["retry-after"], lost.text

    def retried() -> httpx.Response | None:  # as a sender does after a 503
        # The first retry waits for the new recorder's start: more than httpx's default 5 s on a
        # loaded machine (it timed out once under two test workers at load average ~17).
        r = httpx.post(act["url_with_token"], json={"n": 2}, headers={"X-Delivery-Id": "d2"}, timeout=30)
        assert r.status_code in (202, 503), r.text
        return r if r.status_code == 202 else None

    retry = until(retried, what="a new recorder to accept the retry")
    assert retry.json()["status"] == "accepted"
    assert [d["outcome"] for d in history(srv)].count("refused") == 0 and len(history(srv)) == 2
    assert _recorder_pids(srv.proc.pid) not in ([], [first])


def test_a_killed_server_leaves_no_child_behind(server_factory, tmp_path: Path) -> None:
    """No accepted delivery is lost: SIGKILL of the server: its recorder and run workers see their input close, finish
    what they had, and exit (no orphan holding the store)."""
    srv = server_factory()
    act = make_trigger(srv, tmp_path)
    assert httpx.post(act["url_with_token"], json={"n": 1}).status_code == 202
    (recorder,) = until(lambda: _recorder_pids(srv.proc.pid), what="the recorder process")
    (runner,) = _children(srv.proc.pid, "engine.server.runner")
    srv.kill()
    until(lambda: _gone(recorder) and _gone(runner), timeout=20, what="the children to exit")


def test_dead_run_workers_are_started_again_and_the_run_executes(server_factory, tmp_path: Path) -> None:
    """No accepted delivery is lost: an accepted delivery's run executes even if the run workers died: the queue is
    durable and the server starts the workers again by itself."""
    srv = server_factory()
    act = make_trigger(srv, tmp_path)
    (runner,) = until(lambda: _children(srv.proc.pid, "engine.server.runner"), what="the run workers")
    os.kill(runner, signal.SIGKILL)
    until(lambda: _gone(runner), what="the run workers to die")
    assert httpx.post(act["url_with_token"], json={"ref": "main"}).status_code == 202

    def ran() -> bool:
        return any(d["run"] and d["run"]["status"] == "succeeded" for d in history(srv))

    until(ran, what="the run to execute on the new workers")
    assert _children(srv.proc.pid, "engine.server.runner") not in ([], [runner])
