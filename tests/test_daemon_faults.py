"""Faults and bad input on the daemon's stream (`daemon start`, state
`awaiting_credentials`, `daemon ls`: docs/reference-daemon.md#platform-daemon,
docs/reference-daemon.md#authentication-and-limits-at-the-gateway). Real processes killed for real: the
server, the daemon."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest

from engine.processes import free_port
from tests.gateway_fixtures import (
    FAST,
    Stack,
    gateway_of,
    make_stack,
    platform,
    registered,
    sigkill,
    stack,  # noqa: F401
)
from tests.waiting import until
from tests.webhooks_fixtures import isolated_env, start_server


def shell_in_thread(stack: Stack, command: str) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            r = stack.api("POST", "/dev/shell", json={"command": command})
            out["status"], out["body"] = r.status_code, r.json()
        except Exception as exc:  # the server died under the request
            out["exception"] = exc

    t = threading.Thread(target=run)
    t.start()
    return t, out


def log_text(stack: Stack) -> str:
    return (stack.instance / "daemon.log").read_text()


@pytest.fixture
def dev(stack: Stack) -> Stack:  # noqa: F811
    """The module's one server, login and daemon `dev`, connected: started again when a test before
    killed it, registered again when one revoked its token (the tests below that do not restart the
    server share it)."""
    if stack.record().get("state") == "awaiting_credentials":
        registered(stack)
    if not stack.daemons or stack.daemons[-1].poll() is not None:
        stack.start()
    stack.connected()
    return stack


@pytest.fixture
def ported(tmp_path: Path) -> Any:
    """A stack whose server has fixed ports, so it can be killed and started again on them."""
    port, gport = free_port(), free_port()
    env = isolated_env(tmp_path, **FAST)
    args = ("--port", str(port), "--gateway-port", str(gport))
    srv = start_server(tmp_path / "data", env, None, *args)
    stack = make_stack(tmp_path, srv)
    registered(stack)
    stack.start()
    stack.connected()
    yield stack, env, args
    stack.stop_all()
    stack.srv.stop()


def test_server_killed_and_restarted(ported: Any, tmp_path: Path) -> None:
    """Server SIGKILLed under a running shell: the caller's request fails (connection lost), the
    daemon logs the request as interrupted and stops the command; the restarted server gets the
    daemon back (reconnect with backoff) and new requests work."""
    stack, env, args = ported
    first = stack.record()
    pidfile = stack.work / "sleep.pid"
    thread, out = shell_in_thread(stack, f"echo $$ > {pidfile}; exec sleep 60")
    until(pidfile.exists, what="the shell to start")
    sleeper = int(until(lambda: pidfile.read_text().strip(), what="its pid"))
    stack.srv.kill()
    thread.join(30)
    assert "exception" in out  # the caller sees its request fail, not hang
    until(lambda: "interrupted: the stream was lost" in log_text(stack), what="the daemon to log the interruption")
    until(lambda: not Path(f"/proc/{sleeper}").exists() or
          Path(f"/proc/{sleeper}/stat").read_text().split()[2] == "Z", what="the interrupted command to be stopped")
    assert stack.record()["state"] in ("backoff", "connecting")
    until(lambda: log_text(stack).count("reconnecting in") >= 4, what="several reconnect attempts")
    stack.srv = start_server(stack.srv.data_dir, env, stack.srv.token, *args)
    gateway_of(stack.srv)
    again = stack.connected()
    import re

    delays = [float(d) for d in re.findall(r"reconnecting in ([0-9.]+) s", log_text(stack))]
    # capped exponential backoff with jitter (base 100 ms, cap 800 ms in these tests): the first
    # waits in [50, 100] ms, none above the cap, and they grow towards it
    assert 0.05 <= delays[0] <= 0.1 and max(delays) <= 0.8 and max(delays) >= 0.2, delays
    assert again["instance_id"] == first["instance_id"] and again["stream"]["server"] != first["stream"]["server"]
    r = stack.api("POST", "/dev/shell", json={"command": "echo back"})
    assert r.status_code == 200 and r.json()["stdout"] == "back\n"


def test_daemon_sigkilled(dev: Stack) -> None:
    """Daemon SIGKILLed: the in-flight request fails with stream_lost (502), the server no longer
    lists the daemon within the heartbeat window, `daemon status` exits 1 and `daemon ls` shows
    the record without RUNNING: leftover."""
    stack, proc = dev, dev.daemons[-1]
    assert [d["name"] for d in stack.listed()] == ["dev"]
    thread, out = shell_in_thread(stack, "sleep 60")
    until(lambda: (stack.record().get("sessions") or {}).get("shell"), what="the shell to run")
    sigkill(proc)
    thread.join(10)
    assert out["status"] == 502 and out["body"]["error"]["code"] == "stream_lost", out
    # within the heartbeat window (3 x 300 ms; the kernel's reset usually tells it at once), plus
    # scheduling slack on a loaded shared machine
    until(lambda: stack.listed() == [], timeout=3 * 0.3 + 5, what="the server to drop the daemon")
    status = platform(stack.env, "daemon", "status", "--name", "dev", "--json")
    assert status.returncode == 1 and json.loads(status.stdout)["running"] is False
    listed = json.loads(platform(stack.env, "daemon", "ls", "--json").stdout)["instances"]
    assert [(i["name"], i["running"], i["note"]) for i in listed] == [
        ("dev", False, "record without running: leftover")]
    r = stack.api("POST", "/dev/shell", json={"command": "true"})
    assert r.status_code == 503 and r.json()["error"]["code"] == "daemon_not_connected"


def test_revoked_token_closes_the_stream_and_awaits_credentials(dev: Stack) -> None:
    """Revoked daemon token: the server closes the stream, the daemon publishes
    awaiting_credentials and polls; a new registration (new credentials file) brings it back."""
    stack = dev
    log_before = len(log_text(stack))
    r = stack.api("POST", "/dev/revoke")
    assert r.status_code == 200 and r.json()["revoked"]
    until(lambda: stack.record().get("state") == "awaiting_credentials", what="awaiting_credentials")
    assert stack.record()["stream"]["connected"] is False and stack.listed() == []
    assert "refused the daemon token" in log_text(stack)[log_before:]
    registered(stack)
    stack.connected()
    assert stack.api("POST", "/dev/shell", json={"command": "echo ok"}).json()["stdout"] == "ok\n"


def _raw_call(target: str, metadata: tuple[tuple[str, str], ...], frames: list[bytes]) -> grpc.RpcError | None:
    with grpc.insecure_channel(target) as channel:
        method = channel.stream_stream("/platform.daemon.v1.Gateway/Connect", request_serializer=lambda b: b,
                                       response_deserializer=lambda b: b)
        try:
            for _ in method(iter(frames), metadata=metadata, timeout=10):
                pass
        except grpc.RpcError as exc:
            return exc
    return None


def test_malformed_frames_from_a_client_that_is_not_a_daemon(dev: Stack) -> None:
    """Bad input on the gateway: no token, a login token instead of a daemon token, a daemon token
    whose first frame is no Hello, bytes that are no Frame, a Hello with another daemon's name,
    and raw garbage on the port: each is refused and closed; the gateway and the real daemon go on."""
    from engine.daemon import proto

    stack = dev
    lines_before = len(stack.srv.lines)
    target = gateway_of(stack.srv)
    token = json.loads((stack.instance / "credentials.json").read_text())["token"]
    daemon = (("authorization", f"Bearer {token}"),)
    hello = proto.serialize(proto.Frame(hello=proto.pb().Hello(name="dev", instance_id="x")))
    other = proto.serialize(proto.Frame(hello=proto.pb().Hello(name="someone-else", instance_id="y")))
    heartbeat = proto.serialize(proto.Frame(heartbeat=proto.pb().Heartbeat(sent_us=1)))
    assert _raw_call(target, (), [hello]).code() == grpc.StatusCode.UNAUTHENTICATED
    login = (("authorization", f"Bearer {stack.token}"),)
    assert _raw_call(target, login, [hello]).code() == grpc.StatusCode.UNAUTHENTICATED
    assert _raw_call(target, daemon, [heartbeat]).code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _raw_call(target, daemon, [other]).code() == grpc.StatusCode.PERMISSION_DENIED
    garbage = _raw_call(target, daemon, [b"\xff\xff\xff\xff not a frame"])
    assert garbage is not None and garbage.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN,
                                                      grpc.StatusCode.INVALID_ARGUMENT)
    host, port = target.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + os.urandom(512))
        sock.settimeout(5)
        try:
            sock.recv(1024)
        except OSError:
            pass
    # the real daemon was never disturbed: same stream, requests work
    assert stack.api("POST", "/dev/shell", json={"command": "echo still"}).json()["stdout"] == "still\n"
    assert [d["name"] for d in stack.listed()] == ["dev"]
    since = stack.srv.lines[lines_before:]
    assert not [line for line in since if "Traceback" in line], "".join(since)


def test_restarted_daemon_closes_the_old_instance_at_once(tmp_path: Path) -> None:
    """Fresh instance id per start: a hung daemon (SIGSTOP: its stream stays open) is replaced by a
    new start with the same credentials; the server closes the old one's requests at once
    (`replaced`), long before its heartbeats would run out, and the new one serves."""
    stack = make_stack(tmp_path, extra_env={"PLATFORM_DAEMON_HEARTBEAT_MS": "20000"})
    try:
        registered(stack)
        old = stack.start(env={"PLATFORM_DAEMON_HEARTBEAT_MS": "20000"})
        first = stack.connected()
        thread, out = shell_in_thread(stack, "sleep 60")
        until(lambda: (stack.record().get("sessions") or {}).get("shell"), what="the shell to run")
        os.kill(old.pid, signal.SIGSTOP)
        copy = stack.instance.with_name("dev-copy")
        copy.mkdir(mode=0o700)
        shutil.copy2(stack.instance / "credentials.json", copy / "credentials.json")
        stack.name = "dev-copy"
        stack.start(env={"PLATFORM_DAEMON_HEARTBEAT_MS": "20000"})
        second = stack.connected()
        assert second["instance_id"] != first["instance_id"]
        thread.join(5)
        assert out["status"] == 502 and out["body"]["error"]["code"] == "replaced", out
        assert first["instance_id"] in out["body"]["error"]["message"]
        assert stack.api("POST", "/dev/shell", json={"command": "echo new"}).json()["stdout"] == "new\n"
        os.kill(old.pid, signal.SIGCONT)
    finally:
        stack.stop_all()
        stack.srv.stop()


def test_pty_survives_a_stream_drop_and_is_reattached(dev: Stack) -> None:
    """A PTY survives a stream drop (< 30 s): the daemon keeps the terminal and its scrollback;
    when the stream is back the server re-attaches it, and what the terminal wrote meanwhile
    arrives; keystrokes work again."""
    stack, proc = dev, dev.daemons[-1]
    try:
        pty = stack.api("POST", "/dev/pty", json={"command": "/bin/sh"}).json()["pty_id"]

        def text() -> str:
            return str(stack.api("GET", f"/dev/pty/{pty}/output", params={"offset": 0}).json()["text"])

        stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "sleep 2; echo during-the-$((2*2))-drop\n"})
        # the terminal has echoed the command line: the shell has it before the daemon hangs (keystrokes
        # still in flight when a stream drops are lost, as on any dropped connection)
        until(lambda: "during-the-$((2*2))-drop" in text(), what="the shell to receive the command")
        os.kill(proc.pid, signal.SIGSTOP)  # the daemon hangs: the server drops the stream (heartbeats)
        until(lambda: stack.listed() == [], what="the server to drop the stream")
        detached = stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "x"})
        assert detached.status_code == 409 and detached.json()["error"]["code"] == "detached"

        assert "during-the-4-drop" not in text()  # it is written while the stream is down
        os.kill(proc.pid, signal.SIGCONT)
        until(lambda: stack.listed(), what="the daemon to reconnect")

        until(lambda: "during-the-4-drop" in text(), what="the scrollback written during the drop")
        until(lambda: stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "echo after-$((40+2))\n"}
                                ).status_code == 200, what="the terminal to be attached again")
        until(lambda: "after-42" in text(), what="output after the re-attach")
        stack.api("POST", f"/dev/pty/{pty}/close")
    finally:
        os.kill(proc.pid, signal.SIGCONT)  # never leave the shared daemon stopped
