"""uvicorn's httptools protocol, with each loop iteration's writes on a connection sent as one.

uvicorn writes a response's status line and headers, then its body, with two transport writes:
two send() calls and two TCP segments, and a client that reads the head and then the body may
wake up twice. Ingestion answers tens of thousands of small responses a second
(bench/webhooks.py), so the server gathers what a connection's writes produce within one event
loop iteration and sends it at the end of that iteration: one send() per response. Nothing is
held longer than the current iteration, and closing a connection sends what is gathered first.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _GatheringTransport:
    """A transport whose write() gathers until the end of the loop iteration; everything else
    goes to the real transport."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._gathered: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._gathered:
            self._loop.call_soon(self.flush)
        self._gathered.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        if self._gathered:
            data = b"".join(self._gathered) if len(self._gathered) > 1 else self._gathered[0]
            self._gathered = []
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._gathered = []
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(d) for d in self._gathered)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GatheringHttpProtocol(HttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_GatheringTransport(transport, self.loop))  # type: ignore[arg-type]
