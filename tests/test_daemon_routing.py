"""Several server processes on one PostgreSQL database (issue 16 Deliver 1): a request for a daemon
reaches the process holding its stream, whichever process it was sent to."""

from __future__ import annotations

from pathlib import Path

from tests.gateway_fixtures import FAST, Stack, make_stack, registered, until
from tests.pg_fixtures import pg_server, pg_url  # noqa: F401
from tests.webhooks_fixtures import isolated_env, start_server


def test_requests_are_routed_to_the_process_holding_the_stream(tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    """Daemon connected to server a; shell, a streamed file read and a terminal sent to server b
    are answered through a (the daemon_streams row names a); b lists the daemon as held by a."""
    env = isolated_env(tmp_path, **FAST, DATABASE_URL=pg_url)
    a = start_server(tmp_path / "a", env, None, "--gateway-port", "0")
    b = start_server(tmp_path / "b", env, a.token, "--gateway-port", "0")
    stack: Stack | None = None
    try:
        stack = make_stack(tmp_path, a)
        registered(stack)
        stack.start()
        stack.connected()
        held = until(lambda: stack.listed(b.url), what="b to see the daemon")
        assert held[0]["server"].endswith("@" + a.url) and held[0]["active"] is None  # not held by b
        r = stack.api("POST", "/dev/shell", b.url, json={"command": "echo via-b"})
        assert r.status_code == 200 and r.json()["stdout"] == "via-b\n"
        (stack.work / "f.bin").write_bytes(b"x" * 3_000_000)
        r = stack.api("POST", "/dev/files/read", b.url, json={"path": "f.bin"})
        assert r.status_code == 200 and r.content == b"x" * 3_000_000
        pty = stack.api("POST", "/dev/pty", b.url, json={"command": "/bin/sh"}).json()["pty_id"]
        stack.api("POST", f"/dev/pty/{pty}/input", b.url, json={"data": "echo routed-$((6*7))\n"})
        until(lambda: "routed-42" in stack.api("GET", f"/dev/pty/{pty}/output", b.url,
                                               params={"offset": 0, "wait_ms": 300}).json()["text"],
              what="the terminal's output through b")
        stack.stop_all()
        until(lambda: stack.listed(b.url) == [], what="the row to go with the stream")
        r = stack.api("POST", "/dev/shell", b.url, json={"command": "true"})
        assert r.status_code == 503 and r.json()["error"]["code"] == "daemon_not_connected"
    finally:
        if stack is not None:
            stack.stop_all()
        b.stop()
        a.stop()
