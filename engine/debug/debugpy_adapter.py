"""Run debugpy's adapter with prompt ACKs on its sockets (`python -m engine.debug.debugpy_adapter ARGS`).

The debuggee's side of debugpy (pydevd) writes each message as two segments (header, then
body). With Nagle on its socket, the body waits for the ACK of the header, which the adapter's
kernel delays by ~40 ms: every response and event paid it (a step cost ~90 ms, reading locals
~130 ms). Here the adapter's sockets ACK at once (TCP_QUICKACK before each read) and send without
Nagle (TCP_NODELAY); nothing else about debugpy changes.
"""

from __future__ import annotations

import socket
import sys
from typing import Any


class _QuickAckIO(socket.SocketIO):
    def readinto(self, b: Any) -> int | None:
        try:
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)  # type: ignore[attr-defined]
        except OSError:
            pass
        return super().readinto(b)


def _patch() -> None:
    from debugpy.common import messaging

    def from_socket(cls: Any, sock: socket.socket, name: str | None = None) -> Any:
        sock.settimeout(None)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        io = _QuickAckIO(sock, "rwb")

        def cleanup() -> None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

        return cls(io, io, name if name is not None else repr(sock), cleanup)

    messaging.JsonIOStream.from_socket = classmethod(from_socket)  # type: ignore[method-assign,assignment]


def main() -> None:
    _patch()
    from debugpy.adapter import __main__ as adapter

    sys.argv = ["debugpy.adapter", *sys.argv[1:]]
    adapter.main()


if __name__ == "__main__":
    main()
