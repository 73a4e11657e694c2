"""Several server processes on one PostgreSQL database (docs/reference-daemon.md#process-model): a request for a daemon
reaches the process holding its stream, whichever process it was sent to."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gateway_fixtures import FAST, Stack, make_stack, registered
from tests.pg_fixtures import module_pg_url, pg_server  # noqa: F401
from tests.waiting import until
from tests.webhooks_fixtures import Server, isolated_env, start_server


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, module_pg_url: str) -> Iterator[tuple[Server, Server, Stack]]:  # noqa: F811
    """Servers a and b on one PostgreSQL database, and a login on a with the daemon `dev` registered (not
    started): one set for the module, each test starts its own daemon and stops it."""
    tmp = tmp_path_factory.mktemp("routing")
    env = isolated_env(tmp, **FAST, DATABASE_URL=module_pg_url)
    a = start_server(tmp / "a", env, None, "--gateway-port", "0")
    b = start_server(tmp / "b", env, a.token, "--gateway-port", "0")
    try:
        stack = make_stack(tmp, a)
        registered(stack)
        yield a, b, stack
        stack.stop_all()
    finally:
        b.stop()
        a.stop()


@pytest.fixture
def routed(servers: tuple[Server, Server, Stack]) -> tuple[Server, Server, Stack]:
    """The module's servers, once no daemon of a test before is listed on either any more."""
    a, b, stack = servers
    until(lambda: stack.listed(a.url) == [] and stack.listed(b.url) == [], what="no daemon left from a test before")
    return servers


def test_requests_are_routed_to_the_process_holding_the_stream(routed: tuple[Server, Server, Stack]) -> None:
    """Daemon connected to server a; shell, a streamed file read and write (over a's bulk side
    channel) and a terminal sent to server b are answered through a (the daemon_streams row names
    a); b lists the daemon as held by a."""
    a, b, stack = routed
    try:
        before = stack.record().get("instance_id")
        stack.start()
        stack.connected(before)
        held = until(lambda: stack.listed(b.url), what="b to see the daemon")
        assert held[0]["server"].endswith("@" + a.url) and held[0]["active"] is None  # not held by b
        r = stack.api("POST", "/dev/shell", b.url, json={"command": "echo via-b"})
        assert r.status_code == 200 and r.json()["stdout"] == "via-b\n"
        (stack.work / "f.bin").write_bytes(b"x" * 3_000_000)
        r = stack.api("POST", "/dev/files/read", b.url, json={"path": "f.bin"})
        assert r.status_code == 200 and r.content == b"x" * 3_000_000
        assert "3000000 bytes on the bulk side channel" in (stack.instance / "daemon.log").read_text()  # a's port
        r = stack.api("POST", "/dev/files/write", b.url, params={"path": "g.bin"}, content=b"y" * 3_000_000)
        assert r.status_code == 200 and (stack.work / "g.bin").read_bytes() == b"y" * 3_000_000
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
        stack.stop_all()


class Proxy:
    """A TCP forwarder standing in for a load balancer in front of the gateways: `switch` points it
    at another gateway and drops the connections it carries."""

    def __init__(self, target: str) -> None:
        import socket
        import threading

        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            host, port = self.target.rsplit(":", 1)
            try:
                upstream = socket.create_connection((host, int(port)))
            except OSError:
                client.close()
                continue
            self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: object, dst: object) -> None:
        try:
            while data := src.recv(65536):  # type: ignore[attr-defined]
                dst.sendall(data)  # type: ignore[attr-defined]
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.close()  # type: ignore[attr-defined]
                except OSError:
                    pass

    def switch(self, target: str) -> None:
        import socket

        self.target = target
        for s in self.open:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.open = []

    def close(self) -> None:
        self.switch(self.target)
        self.listener.close()


def test_a_terminal_survives_its_daemon_moving_to_another_server_process(
        routed: tuple[Server, Server, Stack]) -> None:
    """A PTY opened through server a keeps working when the daemon's stream comes back through
    server b (a load balancer moved it): b adopts the terminal from the daemon's scrollback, and a
    relays the terminal's requests to b."""
    from tests.gateway_fixtures import gateway_of

    a, b, stack = routed
    proxy = Proxy(gateway_of(a))
    try:
        before = stack.record().get("instance_id")
        stack.start("--gateway", proxy.address)
        stack.connected(before)
        pty = stack.api("POST", "/dev/pty", json={"command": "/bin/sh"}).json()["pty_id"]

        def text() -> str:
            return str(stack.api("GET", f"/dev/pty/{pty}/output", params={"offset": 0}).json()["text"])

        stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "echo one-$((0+1))\n"})
        until(lambda: "one-1" in text(), what="output through a")
        proxy.switch(gateway_of(b))
        until(lambda: [d for d in stack.listed() if d["server"].endswith("@" + b.url)], what="the daemon on b")

        def typed() -> bool:
            # keystrokes sent while a still believes it holds the stream (it notices the move within a
            # heartbeat) are lost with that stream, as on any dropped connection: a client types again
            if stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "echo two-$((1+1))\n"}).status_code != 200:
                return False
            try:
                return bool(until(lambda: "two-2" in text(), 1, what="the echo"))
            except AssertionError:
                return False  # lost with the old stream: type again

        until(typed, what="output after the move")
        assert "one-1" in text()  # the scrollback came along
    finally:
        stack.stop_all()
        proxy.close()
