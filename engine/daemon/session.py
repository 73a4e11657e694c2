"""One connection of the daemon to the gateway: dial, Hello, Welcome, then frames both ways until
the stream ends.

Requests run as tasks (one per request id); later frames for a request go to its inbox. A single
writer task sends everything (grpc allows one write at a time), from a bounded outbox, so a fast
producer waits instead of piling up memory. Heartbeats are sent every interval the server gave;
nothing received for three intervals ends the session. When the session ends for any reason,
every request still running is cancelled (shells killed, writes discarded) and logged as
interrupted; terminals are kept (engine.daemon.terminals).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from engine.daemon import files, proto, shell, terminals, toolcalls
from engine.daemon.requests import Active, Context
from engine.errors import EngineError

log = logging.getLogger("platform.daemon")
HANDLERS: dict[str, tuple[str, Callable[..., Any]]] = {
    "shell": ("shell", shell.run),
    "file_read": ("file", files.read),
    "file_write": ("file", files.write),
    "file_list": ("file", files.listing),
    "file_stat": ("file", files.stat),
    "tool_call": ("tool", toolcalls.call),
    "pty_open": ("pty", terminals.open_terminal),
    "pty_attach": ("pty", terminals.attach),
}


class Ended(Exception):
    """Why a session ended: `code` is unauthorized (the token was refused), or stream_lost."""

    def __init__(self, code: str, message: str, welcomed: bool) -> None:
        super().__init__(message)
        self.code, self.message, self.welcomed = code, message, welcomed


class Session:
    def __init__(self, *, gateway: str, token: str, name: str, instance_id: str, version: str, ctx: Context,
                 on_change: Callable[[dict[str, Any]], None]) -> None:
        self.gateway, self.token, self.name = gateway, token, name
        self.instance_id, self.version, self.ctx = instance_id, version, ctx
        self.on_change = on_change
        self.outbox: asyncio.Queue[Any] = asyncio.Queue(maxsize=256)
        self.active: dict[int, Active] = {}
        self.last_rx = time.monotonic()
        self.welcomed = False

    def sessions(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for a in self.active.values():
            counts[a.kind] = counts.get(a.kind, 0) + 1
        return counts

    async def run(self) -> None:
        import grpc

        self.ctx.gateway = self.gateway
        channel = grpc.aio.insecure_channel(self.gateway, options=[("grpc.max_receive_message_length", 8 << 20)])
        method = channel.stream_stream(proto.METHOD, request_serializer=proto.serialize,
                                       response_deserializer=proto.deserialize)
        call = method(metadata=(("authorization", f"Bearer {self.token}"),))
        writer = beats = None
        try:
            await call.write(proto.Frame(hello=proto.pb().Hello(
                name=self.name, instance_id=self.instance_id, version=self.version, hostname=socket.gethostname(),
                roots=self.ctx.roots.strings(), pid=os.getpid(), ptys=self.ctx.terminals.kept())))
            first = await call.read()
            if first is grpc.aio.EOF or first.WhichOneof("body") != "welcome":
                raise await self._refused(call, first)
            self.welcomed = True
            interval = max(first.welcome.heartbeat_ms, 50) / 1000
            self.on_change({"state": "connected", "stream": {"connected": True, "since": time.time(),
                                                             "last_heartbeat": time.time(),
                                                             "server": first.welcome.server}})
            log.info("connected to %s (server %s)", self.gateway, first.welcome.server)
            writer = asyncio.ensure_future(self._write(call))
            beats = asyncio.ensure_future(self._beat(interval))
            await self._read(call, writer, beats)
        except grpc.aio.AioRpcError as exc:
            code = "unauthorized" if exc.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                                    grpc.StatusCode.PERMISSION_DENIED) else "stream_lost"
            raise Ended(code, f"{exc.code().name}: {exc.details()}", self.welcomed) from None
        finally:
            for task in (writer, beats):
                if task is not None:
                    task.cancel()
            self._interrupt()
            with contextlib.suppress(Exception):
                call.cancel()
            await channel.close(grace=None)

    async def _refused(self, call: Any, first: Any) -> Ended:
        import grpc

        if first is not grpc.aio.EOF and first.WhichOneof("body") == "error":
            return Ended(first.error.code, first.error.message, False)
        with contextlib.suppress(grpc.aio.AioRpcError):
            await call.wait_for_connection()
        return Ended("stream_lost", "the gateway closed the stream before Welcome", False)

    async def _write(self, call: Any) -> None:
        while True:
            frame = await self.outbox.get()
            await call.write(frame)

    async def _beat(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.outbox.put(proto.Frame(heartbeat=proto.pb().Heartbeat(sent_us=time.time_ns() // 1000)))
            if time.monotonic() - self.last_rx > interval * 3:
                raise Ended("stream_lost", "the server missed its heartbeats", True)

    async def _read(self, call: Any, writer: asyncio.Future[Any], beats: asyncio.Future[Any]) -> None:
        import grpc

        reading = asyncio.ensure_future(call.read())
        while True:
            done, _ = await asyncio.wait([reading, writer, beats], return_when=asyncio.FIRST_COMPLETED)
            for task in (writer, beats):
                if task in done:
                    reading.cancel()
                    exc = task.exception()
                    raise exc if isinstance(exc, Ended | grpc.aio.AioRpcError) else Ended(
                        "stream_lost", f"the stream failed: {exc!r}", True)
            frame = reading.result()
            if frame is grpc.aio.EOF:
                raise Ended("stream_lost", "the server closed the stream", True)
            reading = asyncio.ensure_future(call.read())
            self.last_rx = time.monotonic()
            self._dispatch(frame)

    def _dispatch(self, frame: Any) -> None:
        body = frame.WhichOneof("body")
        if frame.request == 0:
            if body == "heartbeat":
                self.on_change({"stream": {"last_heartbeat": time.time()}})
            elif body == "error":
                log.warning("server: %s: %s", frame.error.code, frame.error.message)
                if frame.error.code == "unauthorized":
                    raise Ended("unauthorized", frame.error.message, True)
            return
        active = self.active.get(frame.request)
        if active is not None:
            active.inbox.put_nowait(frame)
            return
        if body not in HANDLERS:
            return  # a late frame (credit, cancel) for a request that already ended
        kind, handler = HANDLERS[body]
        active = Active(request=frame.request, kind=kind, outbox=self.outbox)
        self.active[frame.request] = active
        active.task = asyncio.ensure_future(self._handle(active, handler, getattr(frame, body)))
        self.on_change({"sessions": self.sessions()})

    async def _handle(self, active: Active, handler: Callable[..., Any], ask: Any) -> None:
        started = time.monotonic()
        log.info("request %s %s started", active.request, active.kind)
        try:
            await handler(active, ask, self.ctx)
            log.info("request %s %s done in %.3f s", active.request, active.kind, time.monotonic() - started)
        except EngineError as exc:
            log.info("request %s %s refused: %s: %s", active.request, active.kind, exc.code, exc.message)
            await active.fail(exc.code, exc.message + (f" ({exc.hint})" if exc.hint else ""))
        except OSError as exc:
            await active.fail("os_error", f"{exc.strerror or exc}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a handler bug must answer the request, not kill the daemon
            log.exception("request %s failed", active.request)
            await active.fail("internal", f"{exc.__class__.__name__}: {exc}")
        finally:
            self.active.pop(active.request, None)
            self.on_change({"sessions": self.sessions()})

    def _interrupt(self) -> None:
        for active in list(self.active.values()):
            if active.task is not None and not active.task.done():
                active.task.cancel()
                if active.kind != "pty":
                    log.warning("request %s (%s) interrupted: the stream was lost; stopped", active.request,
                                active.kind)
        self.active.clear()
        self.ctx.terminals.detach_all()
