"""Shared helpers for tests that speak HTTP/1.1 on a raw socket (keep-alive, pipelining, bodies
spliced or cut short): whole responses read off one connection."""

from __future__ import annotations

import socket


def responses(sock: socket.socket, count: int) -> list[tuple[bytes, bytes]]:
    """Read `count` complete responses (head, body) from a keep-alive connection; the bytes of a
    response after the last asked for are an error (they would be lost)."""
    buf = b""
    out = []
    while len(out) < count:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            assert chunk, f"connection closed after {len(out)} responses: {buf!r}"
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        length = int(
            next(ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length:")).split(b":")[1]
        )
        while len(buf) < length:
            chunk = sock.recv(65536)
            assert chunk, "connection closed mid-response"
            buf += chunk
        out.append((head, buf[:length]))
        buf = buf[length:]
    assert not buf, "bytes past the last response asked for"
    return out
