"""What every request handler on the daemon gets: its request id, a way to answer, and the inbox of
the frames the server sends for it later (stdin, keystrokes, resize, credit, write chunks,
cancel). Handlers end by sending their terminal frame; `Failure`s become an Error frame."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from engine.daemon import proto
from engine.daemon.roots import Roots


class Transfers:
    """File bytes moved since the last sample (engine/daemon/stats.py); the file handlers add to it as the
    bytes move, the sampler takes them on the same event loop."""

    def __init__(self) -> None:
        self.read_bytes = 0
        self.written_bytes = 0

    def take(self) -> tuple[int, int]:
        taken = (self.read_bytes, self.written_bytes)
        self.read_bytes = self.written_bytes = 0
        return taken


@dataclass
class Context:
    """The daemon's side of every request: the allowed roots and the kept terminals."""

    roots: Roots
    terminals: Any  # engine.daemon.terminals.Terminals
    gateway: str = ""  # the gateway address the session dialed (the bulk side channel's default host)
    transfers: Transfers = field(default_factory=Transfers)  # file bytes moved, sampled by engine.daemon.stats
    shell_timeout_s: float = float(os.environ.get("PLATFORM_DAEMON_SHELL_TIMEOUT_S", "600"))


@dataclass
class Active:
    request: int
    kind: str
    outbox: asyncio.Queue[Any]
    inbox: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[Any] | None = None

    async def send(self, **body: Any) -> None:
        await self.outbox.put(proto.Frame(request=self.request, **body))

    async def fail(self, code: str, message: str) -> None:
        await self.send(error=proto.pb().Error(code=code, message=message))
