"""`platform daemon start`: the daemon's life (docs/reference-daemon.md#platform-daemon).

1. Take the instance directory's lock (a second start on it fails: never two daemons on one
   directory) and publish the runtime record (`starting`). Every start has a fresh instance id.
2. Credentials, in the spec's order: the daemon credentials file; else, logged in but not
   registered: register automatically; else, not logged in: sign in through the browser, then
   register -- unless non-interactive (`--non-interactive`, PLATFORM_DAEMON_NON_INTERACTIVE),
   which never opens a browser: the daemon publishes `awaiting_credentials` and polls for a
   credentials file (PLATFORM_DAEMON_POLL_MS, default 1000).
3. Connect and serve (engine.daemon.session). A lost stream is retried with capped exponential
   backoff and jitter: delay = min(cap, base * 2^n), then uniformly in [delay/2, delay]; base
   PLATFORM_DAEMON_BACKOFF_MS (500), cap PLATFORM_DAEMON_BACKOFF_CAP_MS (30000); n resets once a
   connection was welcomed. A refused token (revoked, expired) publishes `awaiting_credentials`
   and waits for a changed credentials file (a new `daemon register`).
4. SIGTERM/SIGINT: stop serving (running requests are stopped, terminals closed), remove the
   record, release the lock, exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.daemon import credentials as dcreds
from engine.daemon.requests import Context
from engine.daemon.roots import Roots
from engine.daemon.runtime import LOG_FILE, Runtime
from engine.daemon.session import Ended, Session
from engine.daemon.terminals import Terminals

log = logging.getLogger("platform.daemon")


@dataclass
class StartOptions:
    name: str
    server: str | None
    roots: list[Path]
    non_interactive: bool
    gateway: str | None = None
    log_to_stderr: bool = True
    auth_port: int | None = 0
    """`auth serve` inside the daemon (the daemon serves `platform auth serve`'s endpoints itself): 127.0.0.1,
    0 = a port the system picks (published in the record as `auth_serve`), None = off."""


def non_interactive_env() -> bool:
    return os.environ.get("PLATFORM_DAEMON_NON_INTERACTIVE", "").lower() in ("1", "true", "yes", "on")


def _ms(name: str, default: int) -> float:
    return int(os.environ.get(name, str(default))) / 1000


def backoff(attempt: int) -> float:
    delay = min(_ms("PLATFORM_DAEMON_BACKOFF_CAP_MS", 30_000), _ms("PLATFORM_DAEMON_BACKOFF_MS", 500) * 2 ** attempt)
    return random.uniform(delay / 2, delay)


def setup_logging(runtime: Runtime, to_stderr: bool) -> None:
    handlers: list[logging.Handler] = [logging.FileHandler(runtime.dir / LOG_FILE)]
    if to_stderr:
        handlers.append(logging.StreamHandler())
    for h in handlers:
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(h)
    log.setLevel(logging.INFO)
    log.propagate = False


def register_now(options: StartOptions, runtime: Runtime) -> dcreds.DaemonCredentials | None:
    """Steps 2 and 3 of the credential order (None: wait for a credentials file)."""
    from engine.auth import credentials
    from engine.daemon.register import register

    resolved = credentials.resolve_platform(options.server)
    if resolved.token is None and options.non_interactive:
        return None
    if resolved.token is None:
        log.info("not logged in to %s: signing in through the browser", resolved.server)
    return register(options.server, options.name, interactive=not options.non_interactive,
                    gateway=options.gateway)[0]


class Daemon:
    def __init__(self, options: StartOptions) -> None:
        from engine import __version__

        self.options = options
        self.runtime = Runtime(options.name)
        self.roots = Roots(options.roots)
        self.ctx = Context(roots=self.roots, terminals=Terminals())
        self.version = __version__
        self.session: Session | None = None
        self.stopping = asyncio.Event()
        self.flush: asyncio.TimerHandle | None = None

    def _flush(self) -> None:
        self.flush = None
        self.runtime.publish()

    def publish(self, change: dict[str, Any]) -> None:
        if set(change) == {"sessions"}:  # every request start and end: coalesced, at most 4 writes a second
            self.runtime.record["sessions"] = change["sessions"]
            if self.flush is None:
                self.flush = asyncio.get_running_loop().call_later(0.25, self._flush)
            return
        stream = change.pop("stream", None)
        if stream is not None:
            merged = {**(self.runtime.record.get("stream") or {}), **stream}
            change["stream"] = merged
        self.runtime.publish(**change)

    async def credentials(self) -> dcreds.DaemonCredentials | None:
        found = dcreds.load(self.runtime.dir)
        if found is not None:
            return found
        return await asyncio.to_thread(register_now, self.options, self.runtime)

    async def await_credentials(self, refused: tuple[int, int] | None) -> dcreds.DaemonCredentials:
        """Publish awaiting_credentials; poll until a (changed) credentials file appears."""
        self.publish({"state": "awaiting_credentials", "stream": {"connected": False}})
        log.info("awaiting credentials: write %s (platform daemon register --name %s)",
                 dcreds.path_in(self.runtime.dir), self.options.name)
        while True:
            seen = dcreds.fingerprint(self.runtime.dir)
            if seen is not None and seen != refused:
                found = dcreds.load(self.runtime.dir)
                if found is not None:
                    return found
            await self._sleep(_ms("PLATFORM_DAEMON_POLL_MS", 1000))

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), seconds)
        if self.stopping.is_set():
            raise asyncio.CancelledError

    async def serve(self) -> None:
        creds = await self.credentials()
        if creds is None:
            creds = await self.await_credentials(None)
        attempt = 0
        while not self.stopping.is_set():
            gateway = self.options.gateway or os.environ.get("PLATFORM_DAEMON_GATEWAY") or creds.gateway
            self.publish({"state": "connecting", "server": creds.server, "gateway": gateway,
                          "stream": {"connected": False}})
            self.session = Session(gateway=gateway, token=creds.token, name=creds.name,
                                   instance_id=self.runtime.instance_id, version=self.version, ctx=self.ctx,
                                   on_change=self.publish)
            try:
                await self.session.run()
                ended = Ended("stream_lost", "the stream ended", self.session.welcomed)
            except Ended as exc:
                ended = exc
            self.publish({"stream": {"connected": False, "lost_at": time.time(), "reason": ended.message},
                          "sessions": {}})
            if ended.code == "unauthorized":
                log.warning("the gateway refused the daemon token: %s", ended.message)
                creds = await self.await_credentials(dcreds.fingerprint(self.runtime.dir))
                attempt = 0
                continue
            attempt = 0 if ended.welcomed else attempt + 1
            delay = backoff(attempt)
            log.warning("stream lost (%s); reconnecting in %.2f s", ended.message, delay)
            self.publish({"state": "backoff", "retry_at": time.time() + delay})
            await self._sleep(delay)

    async def sample(self) -> None:
        """Every interval: the sessions and the file bytes moved since the last sample, appended to
        the instance's stats.jsonl (engine/daemon/stats.py)."""
        from engine.daemon.stats import append_sample, interval

        every = interval()
        while not self.stopping.is_set():
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), every)
            sessions = dict(self.runtime.record.get("sessions") or {})
            read, written = self.ctx.transfers.take()  # on the loop the handlers count on: nothing lost
            try:
                await asyncio.to_thread(append_sample, self.runtime.dir, sessions, read, written)
            except OSError as exc:  # a full disk: the daemon keeps serving, the samples have a gap
                log.warning("stats sample not written: %s", exc)

    async def main(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopping.set)
        sampler = asyncio.ensure_future(self.sample())
        task = asyncio.ensure_future(self.serve())
        stop = asyncio.ensure_future(self.stopping.wait())
        await asyncio.wait([task, stop], return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not task.done():
            self.publish({"state": "stopping"})
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task  # an error of the daemon itself (e.g. a refused registration) propagates
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        self.ctx.terminals.close_all()
        log.info("daemon %s stopped", self.options.name)
        return 0


def _auth_serve(port: int | None) -> Any:
    if port is None:
        return None
    import threading

    from engine.auth.serve import AuthServer

    try:
        server = AuthServer(port)
    except OSError as exc:
        log.warning("auth serve not started on 127.0.0.1:%s: %s", port, exc.strerror)
        return None
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True,
                     name="auth-serve").start()
    return server


def start(options: StartOptions) -> int:
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    daemon = Daemon(options)
    daemon.runtime.acquire()
    auth = None
    try:
        setup_logging(daemon.runtime, options.log_to_stderr)
        auth = _auth_serve(options.auth_port)
        daemon.publish({"state": "starting", "roots": daemon.roots.strings(), "sessions": {},
                        "stream": {"connected": False}, "log": str(daemon.runtime.dir / LOG_FILE),
                        "auth_serve": f"http://127.0.0.1:{auth.port}" if auth else None})
        log.info("daemon %s starting (instance %s, pid %s)", options.name, daemon.runtime.instance_id, os.getpid())
        return asyncio.run(daemon.main())
    finally:
        if auth is not None:
            auth.shutdown()
            auth.server_close()
        daemon.runtime.release()
