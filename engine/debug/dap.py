"""A small Debug Adapter Protocol client: Content-Length framed JSON over a socket.

Requests carry a `seq`; the adapter answers each with a response whose `request_seq` names it.
Events arrive at any time and go to the `on_event` callback (on the reader thread). Adapters
may also send reverse requests (delve's `runInTerminal` is never asked for: we do not claim the
capability); any that come are answered with success=false so the adapter does not wait.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any

from engine.errors import EngineError


class DapError(EngineError):
    """The adapter refused a request or the connection broke: its message, exit 1."""

    code = "debug_adapter"


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class FrameReader:
    """Splits a byte stream into DAP messages."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self.buffer += data
        out: list[dict[str, Any]] = []
        while True:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if not sep:
                return out
            length = None
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length is None:
                raise DapError(f"malformed DAP header: {head[:80]!r}")
            if len(rest) < length:
                return out
            out.append(json.loads(rest[:length]))
            self.buffer = rest[length:]


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] | None = None


class DapClient:
    def __init__(self, sock: socket.socket, on_event: Callable[[dict[str, Any]], None],
                 on_close: Callable[[], None] | None = None) -> None:
        self.sock = sock
        self.on_event = on_event
        self.on_close = on_close
        self.seq = 0
        self.lock = threading.Lock()
        self.pending: dict[int, _Pending] = {}
        self.closed = threading.Event()
        self.reader = threading.Thread(target=self._read, name="dap-reader", daemon=True)
        self.reader.start()

    @classmethod
    def connect(cls, host: str, port: int, on_event: Callable[[dict[str, Any]], None],
                on_close: Callable[[], None] | None = None, timeout: float = 10.0) -> DapClient:
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock, on_event, on_close)

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self.sock.sendall(encode(message))
        except OSError as exc:
            raise DapError(f"the debug adapter connection is closed ({exc})") from exc

    def send_request(self, command: str, arguments: dict[str, Any] | None = None) -> _Pending:
        with self.lock:
            self.seq += 1
            seq = self.seq
            pending = self.pending[seq] = _Pending()
            message: dict[str, Any] = {"seq": seq, "type": "request", "command": command}
            if arguments is not None:
                message["arguments"] = arguments
            self._send(message)
        return pending

    def wait(self, pending: _Pending, command: str, timeout: float) -> dict[str, Any]:
        if not pending.done.wait(timeout):
            raise DapError(f"the debug adapter did not answer {command!r} within {timeout:g}s")
        response = pending.message
        if response is None:
            raise DapError(f"the debug adapter closed the connection before answering {command!r}")
        if not response.get("success", False):
            text = (response.get("body") or {}).get("error", {}).get("format") or response.get("message")
            raise DapError(text or f"{command} failed")
        return dict(response.get("body") or {})

    def request(self, command: str, arguments: dict[str, Any] | None = None, timeout: float = 10.0
                ) -> dict[str, Any]:
        """Send one request and wait for its response body; DapError carries the adapter's message."""
        return self.wait(self.send_request(command, arguments), command, timeout)

    def _read(self) -> None:
        reader = FrameReader()
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                # ACK at once: an adapter that writes a message in two segments (Nagle) would
                # otherwise wait out our delayed ACK (~40 ms) on every response.
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
                for message in reader.feed(data):
                    self._dispatch(message)
        except (OSError, ValueError, DapError):
            pass
        finally:
            self.closed.set()
            with self.lock:
                waiting = list(self.pending.values())
                self.pending.clear()
            for pending in waiting:
                pending.done.set()
            if self.on_close is not None:
                self.on_close()

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "response":
            with self.lock:
                pending = self.pending.pop(int(message.get("request_seq", -1)), None)
            if pending is not None:
                pending.message = message
                pending.done.set()
        elif kind == "event":
            self.on_event(message)
        elif kind == "request":  # a reverse request we did not ask for
            with self.lock:
                self.seq += 1
                try:
                    self._send({"seq": self.seq, "type": "response", "request_seq": message.get("seq"),
                                "command": message.get("command"), "success": False,
                                "message": "not supported by this client"})
                except DapError:
                    pass

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
