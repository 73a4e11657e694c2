"""The gRPC side of the gateway: one `Connect` stream per daemon connection (grpc.aio, in the
server's event loop).

- Authentication: `authorization: Bearer <daemon token>` metadata, checked by the one verifier
  (engine.auth.tokens: sha256 lookup, constant-time compare). Only kind `daemon` is accepted,
  and the Hello's name must be the token's daemon name. Anything else: UNAUTHENTICATED, closed.
- The first frame must be a Hello within the hello timeout; a stream that sends anything else,
  or bytes that are no Frame, is closed with an Error (INVALID_ARGUMENT / INTERNAL from grpc).
- Heartbeats both ways every `heartbeat_ms`; nothing received for three intervals closes the
  stream. Every heartbeat the token is verified again (a revoked token closes the stream with
  Error(unauthorized)) and the daemon_streams row refreshed (a row taken by a newer daemon start
  in another server process closes this one).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from typing import Any

import grpc
from sqlalchemy.engine import Engine

from engine.auth.bearer import token_hash
from engine.auth.tokens import Verifier
from engine.daemon import proto
from engine.server.gateway import streams
from engine.server.gateway.bulk import Listener
from engine.server.gateway.hub import Hub, Link

DAEMON_PREFIX = "daemon@"


def heartbeat_s() -> float:
    return int(os.environ.get("PLATFORM_DAEMON_HEARTBEAT_MS", "5000")) / 1000


class Gateway:
    """The grpc.aio server and the hub, owned by one `platform server` process."""

    def __init__(self, engine: Engine, host: str, port: int, announce: bool = False) -> None:
        self.engine = engine
        self.announce = announce
        self.host, self.port = host, port
        self.node = uuid.uuid4().hex[:12]
        self.node_url = ""
        self.hub = Hub()
        self.verifier = Verifier(engine)
        self.server: Any = None
        self.pumps: set[asyncio.Task[Any]] = set()
        self.bulk = Listener(host)

    async def start(self) -> int:
        self.server = grpc.aio.server(options=[("grpc.max_receive_message_length", 8 << 20)])
        handler = grpc.stream_stream_rpc_method_handler(
            self.connect, request_deserializer=proto.deserialize, response_serializer=proto.serialize)
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("platform.daemon.v1.Gateway", {"Connect": handler}),))
        bound = self.server.add_insecure_port(f"{self.host}:{self.port}")
        if bound == 0:
            raise OSError(f"cannot listen on {self.host}:{self.port} for the daemon gateway")
        self.port = bound
        await self.server.start()
        bulk_port = await self.bulk.start()
        if self.announce:
            import sys

            sys.stdout.write(f"daemon gateway listening on {self.host}:{bound}\n")
            sys.stdout.write(f"daemon bulk channel listening on {self.host}:{bulk_port}\n")
            sys.stdout.flush()
        return bound

    async def stop(self) -> None:
        for link in list(self.hub.links.values()):
            self.hub.detach(link, "stream_lost", "the server is shutting down")
        await self.bulk.stop()
        if self.server is not None:
            await self.server.stop(1)

    def stale_us(self) -> int:
        return int(heartbeat_s() * 3 * 1_000_000)

    async def _refuse(self, context: Any, code: Any, error: str, message: str) -> None:
        with contextlib.suppress(Exception):
            await context.write(proto.Frame(error=proto.pb().Error(code=error, message=message)))
        await context.abort(code, message)

    async def connect(self, requests: Any, context: Any) -> None:
        metadata = dict(context.invocation_metadata() or ())
        auth = str(metadata.get("authorization", ""))
        presented = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        principal = await asyncio.to_thread(self.verifier.verify, presented or None)
        if principal is None or principal.kind != "daemon" or not principal.org_id:
            await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, "unauthorized",
                               "missing, invalid, expired or revoked daemon token")
            return
        try:
            first = await asyncio.wait_for(context.read(), heartbeat_s() * 3)
        except TimeoutError:
            await self._refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, "protocol", "no Hello frame")
            return
        if first is grpc.aio.EOF or first.WhichOneof("body") != "hello":
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "protocol",
                               "the first frame of a daemon stream must be a Hello")
            return
        hello = first.hello
        name = (principal.name or "").removeprefix(DAEMON_PREFIX)
        if hello.name != name or not hello.instance_id:
            await self._refuse(context, grpc.StatusCode.PERMISSION_DENIED, "unauthorized",
                               f"this token belongs to daemon {name!r}, not {hello.name!r}")
            return
        link = Link(principal.org_id, name, hello, token_hash(presented))
        self.hub.attach(link)
        await asyncio.to_thread(streams.claim, self.engine, org_id=link.org_id, name=name,
                                instance_id=hello.instance_id, node=self.node, node_url=self.node_url,
                                hostname=hello.hostname, roots=list(hello.roots), version=hello.version)
        self._reattach(link)
        await context.write(proto.Frame(welcome=proto.pb().Welcome(
            server=f"{self.node}@{self.node_url}", heartbeat_ms=int(heartbeat_s() * 1000))))
        reader = asyncio.ensure_future(self._read(link, context))
        beats = asyncio.ensure_future(self._beat(link, presented))
        try:
            while True:
                frame = await link.outbox.get()
                if frame is None:
                    break
                await context.write(frame)
        finally:
            reader.cancel()
            beats.cancel()
            self.hub.detach(link, "stream_lost", link.reason or f"the stream of daemon {name!r} was lost")
            await asyncio.to_thread(streams.release, self.engine, org_id=link.org_id, name=name,
                                    instance_id=link.instance_id, node=self.node)

    async def _read(self, link: Link, context: Any) -> None:
        try:
            while True:
                frame = await context.read()
                if frame is grpc.aio.EOF:
                    link.close("stream_lost", f"daemon {link.name!r} closed its stream")
                    return
                link.last_heartbeat = time.time()
                body = frame.WhichOneof("body")
                if body == "heartbeat" or frame.request == 0 and body is None:
                    continue
                if frame.request == 0:
                    link.send(proto.Frame(error=proto.pb().Error(
                        code="protocol", message=f"unexpected stream-level frame {body!r}")))
                    continue
                self.hub.dispatch(link, frame)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the transport failed or the peer sent bytes that are no Frame
            link.close("stream_lost", f"the stream of daemon {link.name!r} failed: {exc.__class__.__name__}")

    async def _beat(self, link: Link, presented: str) -> None:
        interval = heartbeat_s()
        while not link.closed.is_set():
            await asyncio.sleep(interval)
            link.send(proto.Frame(heartbeat=proto.pb().Heartbeat(sent_us=time.time_ns() // 1000)))
            if time.time() - link.last_heartbeat > interval * 3:
                link.close("stream_lost", f"daemon {link.name!r} missed its heartbeats")
                return
            principal = await asyncio.to_thread(self.verifier.verify, presented)
            if principal is None:
                link.send(proto.Frame(error=proto.pb().Error(code="unauthorized",
                                                             message="the daemon token was revoked or expired")))
                link.close("unauthorized", f"the token of daemon {link.name!r} was revoked or expired")
                return
            ours = await asyncio.to_thread(streams.beat, self.engine, org_id=link.org_id, name=link.name,
                                           instance_id=link.instance_id, node=self.node)
            if not ours:
                link.close("replaced", f"daemon {link.name!r} connected again elsewhere (a newer start)")
                return

    def _reattach(self, link: Link) -> None:
        """PTYs the daemon kept across a stream drop: attach them again from the mirror's end. A
        PTY this process has no mirror of (it was opened through another server process, and the
        daemon came back here) is adopted: its scrollback is replayed into a new mirror, and the
        other process relays requests for it here, where the stream now is."""
        from engine.server.gateway.hub import PtyMirror
        from engine.server.gateway.terminals import pump

        for pty_id in link.hello.ptys:
            mirror = self.hub.ptys.get(pty_id)
            if mirror is None:
                mirror = self.hub.ptys[pty_id] = PtyMirror(org_id=link.org_id, name=link.name, pty_id=pty_id)
            if (mirror.org_id, mirror.name) != (link.org_id, link.name):
                continue
            mirror.call = self.hub.open(link, "pty", pty_attach=proto.pb().PtyAttach(pty_id=pty_id, offset=mirror.end))
            self.track(pump(mirror, mirror.call))

    def track(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.pumps.add(task)
        task.add_done_callback(self.pumps.discard)
