"""The delivery recorder process of `platform server` (engine/server/recorder.py): spec 1 Errors
(503 when a delivery cannot be recorded, so the sender retries) and issue 7 item 8 (no accepted
delivery is lost; a killed server leaves nothing running)."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import time
from pathlib import Path

import httpx

from tests.webhooks_fixtures import history, make_trigger, server_factory, wait_for  # noqa: F401


def _recorder_pids(server_pid: int) -> list[int]:
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    return [int(pid) for pid in children if "engine.server.recorder" in _cmdline(int(pid))]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except FileNotFoundError:
        return ""


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
    (first,) = wait_for(lambda: _recorder_pids(srv.proc.pid), what="the recorder process")
    os.kill(first, signal.SIGSTOP)  # the next delivery reaches the recorder but is not recorded
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            httpx.post, act["url_with_token"], json={"n": 2}, headers={"X-Delivery-Id": "d2"}, timeout=30
        )
        time.sleep(0.5)
        assert not pending.done()
        os.kill(first, signal.SIGKILL)
        lost = pending.result()
    assert lost.status_code == 503 and lost.headers["retry-after"], lost.text

    def retried() -> httpx.Response | None:  # as a sender does after a 503
        r = httpx.post(act["url_with_token"], json={"n": 2}, headers={"X-Delivery-Id": "d2"})
        assert r.status_code in (202, 503), r.text
        return r if r.status_code == 202 else None

    retry = wait_for(retried, what="a new recorder to accept the retry")
    assert retry.json()["status"] == "accepted"
    assert [d["outcome"] for d in history(srv)].count("refused") == 0 and len(history(srv)) == 2
    assert _recorder_pids(srv.proc.pid) not in ([], [first])


def test_a_killed_server_leaves_no_recorder_behind(server_factory, tmp_path: Path) -> None:
    """Item 8: SIGKILL of the server under way: its recorder sees its input close, commits what it
    had read and exits (no orphan holding the store)."""
    srv = server_factory()
    act = make_trigger(srv, tmp_path)
    assert httpx.post(act["url_with_token"], json={"n": 1}).status_code == 202
    (recorder,) = wait_for(lambda: _recorder_pids(srv.proc.pid), what="the recorder process")
    srv.kill()
    wait_for(lambda: _gone(recorder), timeout=15, what="the recorder to exit")
