"""The bulk side channel of large file reads
(docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes; throughput and bad input): a
one-time ticket given over the authenticated stream, a plain TCP connection the daemon dials, the bytes
spliced to the HTTP caller; the in-stream fallback; refused tickets and garbage."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import struct
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from engine.daemon import proto
from engine.daemon.bulk import ACCEPTED, MAGIC, preamble
from engine.processes import free_port
from tests.gateway_fixtures import HEARTBEAT_MS, Stack, make_stack, platform, registered, stack  # noqa: F401
from tests.waiting import until


def daemon_log(stack: Stack) -> str:
    return (stack.instance / "daemon.log").read_text()


def bulk_port(stack: Stack) -> int:
    line = next(x for x in stack.srv.lines if x.startswith("daemon bulk channel listening on "))
    return int(line.rsplit(":", 1)[1])


def present(port: int, data: bytes) -> bytes:
    """What the bulk port answers to `data` (b"" when it closes the connection without a word)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        try:
            return sock.recv(1)
        except ConnectionResetError:
            return b""


def accepted(port: int) -> int:
    """Connections to `port` some process has accepted: established sockets bound to that local port
    that carry an inode (the kernel gives one only on accept(2); one still queued has 0)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for row in fh.read().splitlines()[1:]:
                fields = row.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01" and fields[9] != "0":
                    count += 1
    return count


class FakeDaemon:
    """A fake daemon (a test stand-in speaking the stream protocol with a real daemon token): it
    sends Hello and heartbeats, and hands the test every frame the server sends."""

    def __init__(self, gateway: str, token: str, name: str) -> None:
        self.out: queue.Queue[Any] = queue.Queue()
        self.frames: queue.Queue[Any] = queue.Queue()
        self.channel = grpc.insecure_channel(gateway)
        method = self.channel.stream_stream(proto.METHOD, request_serializer=proto.serialize,
                                            response_deserializer=proto.deserialize)
        self.out.put(proto.Frame(hello=proto.pb().Hello(name=name, instance_id=uuid.uuid4().hex, version="fake",
                                                        hostname="fake", roots=["/nonexistent"], pid=os.getpid())))
        self.call = method(iter(self.out.get, None), metadata=(("authorization", f"Bearer {token}"),))
        self.alive = True
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._beat, daemon=True).start()

    def _read(self) -> None:
        try:
            for frame in self.call:
                self.frames.put(frame)
        except grpc.RpcError:
            pass

    def _beat(self) -> None:
        while self.alive:
            self.out.put(proto.Frame(heartbeat=proto.pb().Heartbeat()))
            time.sleep(int(HEARTBEAT_MS) / 3000)

    def next(self, body: str) -> Any:
        while True:
            frame = self.frames.get(timeout=20)
            if frame.WhichOneof("body") == body:
                return frame

    def send(self, request: int, **body: Any) -> None:
        self.out.put(proto.Frame(request=request, **body))

    def close(self) -> None:
        self.alive = False
        self.call.cancel()
        self.channel.close()


def in_thread(fn: Any, *args: Any, **kw: Any) -> dict[str, Any]:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn(*args, **kw)
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            box["error"] = exc

    box["thread"] = threading.Thread(target=run, daemon=True)
    box["thread"].start()
    return box


def streamed(stack: Stack, path: str, **kw: Any) -> dict[str, Any]:
    """A read in a thread whose response headers are seen before its body (box["status"] once they
    came: the server had the daemon's FileInfo), then box["body"] or box["error"]."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            with httpx.stream("POST", stack.srv.url + "/api/daemons" + path, timeout=60,
                              headers={"Authorization": f"Bearer {stack.token}"}, **kw) as r:
                box["status"] = r.status_code
                box["body"] = r.read()
        except httpx.HTTPError as exc:
            box["error"] = exc

    box["thread"] = threading.Thread(target=run, daemon=True)
    box["thread"].start()
    return box


def test_a_large_read_goes_over_the_side_channel_small_ones_stay_on_the_stream(stack: Stack) -> None:
    """A read of at least PLATFORM_DAEMON_BULK_MIN_BYTES (1 MiB) is sent by the daemon on the bulk
    side channel (logged), whole and with offset/limit; a smaller one goes in Output frames."""
    data = os.urandom(5 << 20)
    (stack.work / "bulk.bin").write_bytes(data)
    before = daemon_log(stack).count("on the bulk side channel")
    r = stack.api("POST", "/dev/files/read", json={"path": "bulk.bin"})
    assert r.status_code == 200 and r.content == data and r.headers["content-length"] == str(len(data))
    r = stack.api("POST", "/dev/files/read", json={"path": "bulk.bin", "offset": 12_345, "limit": 3 << 20})
    assert r.content == data[12_345:12_345 + (3 << 20)]
    r = stack.api("POST", "/dev/files/read", json={"path": "bulk.bin", "offset": (5 << 20) - 100})
    assert r.content == data[-100:]  # 100 bytes left: on the stream
    r = stack.api("POST", "/dev/files/read", json={"path": "bulk.bin", "limit": 1000})
    assert r.content == data[:1000]  # no ticket offered for a small limit
    until(lambda: daemon_log(stack).count("on the bulk side channel") == before + 2, what="two bulk transfers logged")
    assert "not opened" not in daemon_log(stack)


def test_a_large_upload_goes_over_the_side_channel(stack: Stack, tmp_path: Path) -> None:
    """A write of at least 1 MiB (or of unknown length: chunked) goes over the bulk side channel:
    the file is whole, atomic (no temp file left) and has its mode; a write outside the roots is
    refused before any byte moves."""
    before = daemon_log(stack).count("received on the bulk side channel")
    data = os.urandom((6 << 20) + 123)
    r = stack.api("POST", "/dev/files/write", params={"path": "up.bin", "mode": "640"}, content=data)
    assert r.status_code == 200, r.text
    assert r.json()["size"] == len(data) and r.json()["mode"] == "0640"
    assert (stack.work / "up.bin").read_bytes() == data

    def pieces() -> Any:
        for i in range(0, len(data), 100_000):
            yield data[i:i + 100_000]

    r = stack.api("POST", "/dev/files/write", params={"path": "up2.bin"}, content=pieces())  # chunked
    assert r.status_code == 200 and (stack.work / "up2.bin").read_bytes() == data
    until(lambda: daemon_log(stack).count("received on the bulk side channel") == before + 2,
          what="two bulk uploads logged")
    assert not [p for p in stack.work.iterdir() if p.name.endswith(".tmp")]
    outside = tmp_path / "outside.bin"
    r = stack.api("POST", "/dev/files/write", params={"path": str(outside)}, content=data)
    assert r.status_code == 403 and r.json()["error"]["code"] == "outside_roots" and not outside.exists()
    for name in ("up.bin", "up2.bin"):
        (stack.work / name).unlink()


def test_bad_replayed_and_stale_tickets_and_garbage_are_refused(stack: Stack) -> None:
    """Garbage on the bulk port, a wrong ticket, a replayed ticket and a ticket whose stream is gone
    are each refused (closed without the acceptance byte); none of it disturbs the transfer the
    ticket belongs to, nor another daemon's transfer running meanwhile."""
    done = platform(stack.env, "daemon", "register", "--name", "fake", "--server", stack.srv.url, "--json")
    assert done.returncode == 0, done.stderr
    creds = json.loads((Path(stack.env["HOME"]) / ".platform" / "instances" / "fake" / "credentials.json")
                       .read_text())
    port = bulk_port(stack)
    fake = FakeDaemon(creds["gateway"], creds["token"], "fake")
    try:
        fake.next("welcome")
        reading = in_thread(stack.api, "POST", "/fake/files/read", json={"path": "x.bin"})
        ask = fake.next("file_read")
        request, offer = ask.request, ask.file_read.bulk
        assert len(offer.ticket) == 32 and offer.port == port and offer.min_bytes == 1 << 20
        body = os.urandom(2 << 20)
        fake.send(request, file_info=proto.pb().FileInfo(path="x.bin", kind="file", size=len(body)))

        assert present(port, os.urandom(200)) == b""  # garbage
        assert present(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"x" * 40) == b""
        assert present(port, preamble(request, os.urandom(32))) == b""  # the right request, a wrong ticket
        assert present(port, preamble(request + 1000, bytes(offer.ticket))) == b""  # another request id
        other = os.urandom(3 << 20)  # another daemon's transfer, meanwhile
        (stack.work / "other.bin").write_bytes(other)
        assert stack.api("POST", "/dev/files/read", json={"path": "other.bin"}).content == other

        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:  # the real ticket: accepted
            sock.sendall(preamble(request, bytes(offer.ticket)))
            assert sock.recv(1) == ACCEPTED
            assert present(port, preamble(request, bytes(offer.ticket))) == b""  # replayed while in use
            fake.send(request, bulk_opened=proto.pb().BulkOpened(bytes=len(body)))
            sock.sendall(body)
        fake.send(request, exit=proto.pb().Exit(code=0))
        reading["thread"].join(30)
        assert reading["result"].status_code == 200 and reading["result"].content == body
        assert present(port, preamble(request, bytes(offer.ticket))) == b""  # replayed after use

        stale = streamed(stack, "/fake/files/read", json={"path": "y.bin"})
        ask = fake.next("file_read")
        fake.send(ask.request, file_info=proto.pb().FileInfo(path="y.bin", kind="file", size=2 << 20))
        until(lambda: stale.get("status") or "error" in stale, what="the read's response to start (FileInfo in)")
        assert stale["status"] == 200  # the transfer is under way, its bytes owed on the bulk channel
        fake.close()  # the stream that carried the ticket is gone
        stale["thread"].join(30)
        assert not stale["thread"].is_alive() and "error" in stale  # cut short: the client sees it
        assert present(port, preamble(ask.request, bytes(ask.file_read.bulk.ticket))) == b""
    finally:
        fake.close()
    assert MAGIC in preamble(1, b"t" * 32) and struct.calcsize(">Q") == 8
    assert stack.api("POST", "/dev/files/read", json={"path": "other.bin"}).content == other


def test_idle_connections_on_the_bulk_port_are_capped(stack: Stack) -> None:
    """Connections that send no preamble: at most MAX_UNPROVEN are held (each for 5 s at most); one
    more is closed at once; once they are gone a transfer uses the side channel again."""
    from engine.server.gateway.bulk import MAX_UNPROVEN

    port = bulk_port(stack)
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(MAX_UNPROVEN)]
    try:
        until(lambda: accepted(port) >= MAX_UNPROVEN, what=f"the server to hold {MAX_UNPROVEN} idle connections")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
            started = time.monotonic()
            try:
                assert extra.recv(1) == b""
            except ConnectionResetError:
                pass
            assert time.monotonic() - started < 2
    finally:
        for sock in idle:
            sock.close()
    before = daemon_log(stack).count("on the bulk side channel")
    data = os.urandom(2 << 20)
    (stack.work / "capped.bin").write_bytes(data)
    until(lambda: stack.api("POST", "/dev/files/read", json={"path": "capped.bin"}).content == data
          and daemon_log(stack).count("on the bulk side channel") > before, what="a read on the side channel")


def test_caller_going_away_cancels_the_bulk_transfer(stack: Stack) -> None:
    """A caller that stops reading and hangs up mid-transfer: the daemon's transfer ends (no file
    session left), and the next read works."""
    big = stack.work / "sparse.bin"
    with open(big, "wb") as fh:
        fh.truncate(512 << 20)
    with httpx.stream("POST", stack.srv.url + "/api/daemons/dev/files/read", timeout=30, json={"path": "sparse.bin"},
                      headers={"Authorization": f"Bearer {stack.token}"}) as r:
        chunks = r.iter_raw(1 << 20)  # kept: a dropped iterator closes the response
        assert next(chunks)
        until(lambda: (stack.record().get("sessions") or {}).get("file"), what="the transfer to be running")
        assert "bulk transfer cancelled" not in daemon_log(stack)
    until(lambda: not (stack.record().get("sessions") or {}).get("file"), what="the daemon to stop sending")
    assert "bulk transfer cancelled by the server" in daemon_log(stack) or "bulk transfer stopped" in daemon_log(stack)
    big.unlink()
    data = os.urandom(2 << 20)
    (stack.work / "after.bin").write_bytes(data)
    assert stack.api("POST", "/dev/files/read", json={"path": "after.bin"}).content == data


def test_a_stream_drop_fails_a_bulk_transfer_clearly(stack: Stack) -> None:
    """The daemon stops answering (SIGSTOP) mid-transfer: after the heartbeat window the server
    fails the read -- the caller gets a body cut short, never a silently complete one -- and, the
    daemon resumed, it reconnects and reads work again."""
    big = stack.work / "sparse2.bin"
    with open(big, "wb") as fh:
        fh.truncate(256 << 20)
    pid = stack.record()["pid"]
    instance = stack.record()["instance_id"]
    got = 0
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)), httpx.stream(  # noqa: PT012
            "POST", stack.srv.url + "/api/daemons/dev/files/read", timeout=30, json={"path": "sparse2.bin"},
            headers={"Authorization": f"Bearer {stack.token}"}) as r:
        for chunk in r.iter_raw(1 << 20):
            if not got:
                os.kill(pid, signal.SIGSTOP)
            got += len(chunk)
    os.kill(pid, signal.SIGCONT)
    assert got < 256 << 20
    big.unlink()
    until(lambda: stack.record().get("state") == "connected"
          and [d["instance_id"] for d in stack.listed() if d["name"] == "dev"] == [instance],
          what="the daemon to reconnect")
    data = os.urandom(2 << 20)
    (stack.work / "again.bin").write_bytes(data)
    assert stack.api("POST", "/dev/files/read", json={"path": "again.bin"}).content == data


def test_fallback_to_the_stream_and_expired_tickets(tmp_path: Path) -> None:
    """The bulk address the server gives cannot be reached (PLATFORM_DAEMON_BULK_ADDRESS names a
    closed port): the daemon logs it and the bytes go in frames on the stream; a read and a write
    are whole. A ticket presented after PLATFORM_DAEMON_BULK_TICKET_MS is refused (here 0 ms: every
    ticket has expired when it arrives), and that read still completes on the stream."""
    s = make_stack(tmp_path, extra_env={"PLATFORM_DAEMON_BULK_ADDRESS": f"127.0.0.1:{free_port()}",
                                        "PLATFORM_DAEMON_BULK_TICKET_MS": "0"})
    try:
        registered(s)
        s.start()
        s.connected()
        data = os.urandom(3 << 20)
        (s.work / "f.bin").write_bytes(data)
        r = s.api("POST", "/dev/files/read", json={"path": "f.bin", "offset": 7})
        assert r.status_code == 200 and r.content == data[7:]
        r = s.api("POST", "/dev/files/write", params={"path": "g.bin"}, content=data)
        assert r.status_code == 200 and (s.work / "g.bin").read_bytes() == data
        until(lambda: daemon_log(s).count("sending the bytes on the stream") == 2, what="both fallbacks to be logged")
        assert "on the bulk side channel" not in daemon_log(s)

        done = platform(s.env, "daemon", "register", "--name", "late", "--server", s.srv.url, "--json")
        creds = json.loads((Path(s.env["HOME"]) / ".platform" / "instances" / "late" / "credentials.json")
                           .read_text())
        assert done.returncode == 0
        fake = FakeDaemon(creds["gateway"], creds["token"], "late")
        try:
            fake.next("welcome")
            reading = in_thread(s.api, "POST", "/late/files/read", json={"path": "z.bin"})
            ask = fake.next("file_read")
            fake.send(ask.request, file_info=proto.pb().FileInfo(path="z.bin", kind="file", size=3))
            assert present(bulk_port(s), preamble(ask.request, bytes(ask.file_read.bulk.ticket))) == b""
            fake.send(ask.request, output=proto.pb().Output(stream="file", data=b"abc"))
            fake.send(ask.request, exit=proto.pb().Exit(code=0))
            reading["thread"].join(30)
            assert reading["result"].content == b"abc"
        finally:
            fake.close()
    finally:
        s.stop_all()
        s.srv.stop()


def test_a_ticket_expires_after_its_ttl_on_the_tickets_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-daemon.md#the-bulk-side-channel-large-file-reads-and-writes: a ticket is good until
    PLATFORM_DAEMON_BULK_TICKET_MS have passed since it was issued, on the clock the tickets read (here
    one the test moves), and single use: taken at the last good instant it is accepted; one more
    instant and it is refused."""
    import asyncio

    from engine.server.gateway.bulk import Tickets

    monkeypatch.setenv("PLATFORM_DAEMON_BULK_TICKET_MS", "2000")
    now = [100.0]

    class Link:
        closed = threading.Event()

    async def scenario() -> None:
        tickets = Tickets(clock=lambda: now[0])
        good, late = tickets.issue(Link(), 1), tickets.issue(Link(), 2)
        now[0] = 102.0  # exactly the TTL later: still good
        assert tickets.take(1, good.secret) is good
        assert tickets.take(1, good.secret) is None  # used up
        now[0] = 102.001
        assert tickets.take(2, late.secret) is None
        assert 2 not in tickets.pending  # an expired ticket is gone, not retried

    asyncio.run(scenario())
