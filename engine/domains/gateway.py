"""The serving gateway of `platform server` (docs/reference-domains.md#the-serving-gateway): plain HTTP on
`--gateway-http-port`, TLS on `--gateway-https-port`, in the server's own process.

A request is routed by its Host header (and, over TLS, the SNI name picks the certificate): a live
domain bound to a workload is proxied to that workload of the bound hosted environment (its current
promotion's first declared port: on this single-host stand-in a declared port is a host port); a
live domain bound with `--redirect-to` answers 308 to the same path on that hostname; anything else
(unknown, not yet verified, unbound) gets a 404 page that says which hostname it did not find.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import sys
from html import escape
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from engine.domains import service, static
from engine.domains.certs import Issuer
from engine.serverstore import store

log = logging.getLogger(__name__)
HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
       "transfer-encoding", "upgrade", "host", "content-length", "content-encoding"}


def upstream(engine: Engine, org: str, env: str, target: str) -> tuple[dict[str, Any], str] | None:
    """The bundle entry of `target` (a workload or frontend) in the bound environment's current
    promotion, with that promotion's release version; None when it runs no such target."""
    from engine.controlplane import ledger

    with store.read(engine) as conn:
        found = ledger.find_env(conn, org, env)
        current = ledger.current_of(conn, found) if found else None
        bundle = ledger.bundle_of(conn, current.id) if current else []
    entry = next((w for w in bundle if w.get("name") == target), None)
    return (entry, current.release) if entry is not None and current is not None else None


def _page(status: int, title: str, text: str) -> HTMLResponse:
    return HTMLResponse(f"<!doctype html><html><head><title>{escape(title)}</title></head><body>"
                        f"<h1>{escape(title)}</h1><p>{escape(text)}</p>"
                        "<p>Served by the platform gateway.</p></body></html>", status_code=status,
                        headers={"Cache-Control": "no-store"})


class GatewayApp:
    """The ASGI application both listeners serve."""

    def __init__(self, engine: Engine, scheme: str, runtime_root: Path) -> None:
        import httpx

        self.engine = engine
        self.scheme = scheme
        self.root = runtime_root
        self.client = httpx.AsyncClient(timeout=30, follow_redirects=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        response = await self.handle(request)
        await response(scope, receive, send)

    async def handle(self, request: Request) -> Response:
        raw_host = (request.headers.get("host") or "").strip().lower()
        host, _, port = raw_host.rpartition(":") if raw_host.count(":") == 1 else (raw_host, "", "")
        host = host.rstrip(".")
        binding = await run_in_threadpool(service.live_binding, self.engine, host) if host else None
        if binding is None:
            return _page(404, "No site here", f"No live domain named {host or '(no Host header)'} is bound "
                         "on this gateway.")
        query = f"?{request.url.query}" if request.url.query else ""
        if binding.redirect_to:
            where = binding.redirect_to + (f":{port}" if port else "")
            return RedirectResponse(f"{self.scheme}://{where}{request.url.path}{query}", status_code=308)
        found = await run_in_threadpool(upstream, self.engine, binding.org_id, binding.env or "",
                                        binding.target or "")
        where = f"{binding.env}/{binding.target}"
        if found is None:
            return _page(502, "Not running", f"{host} is bound to {where}, which does not run a workload or "
                         "frontend of that name.")
        entry, version = found
        if entry.get("output") == "static":
            return await run_in_threadpool(self._static, binding.org_id, entry, version, request, host)
        ports = list(entry.get("ports") or [])
        if not ports:
            return _page(502, "Not running", f"{host} is bound to {where}, which declares no port.")
        return await self._proxy(request, int(ports[0]), raw_host)

    def _static(self, org: str, entry: dict[str, Any], version: str, request: Request, host: str) -> Response:
        """A static frontend: its release's built output, laid out on this host on first use (the
        converger of this server has done so already; another server's gateway does it here)."""
        from engine.controlplane import releases
        from engine.errors import EngineError

        files = releases.release_files(self.root, org, version, entry["name"])
        if not (files / ".complete").exists():
            release = releases.get_release(self.engine, org, version)
            try:
                if release is None:
                    raise EngineError(f"release {version} is not on this control plane")
                files = releases.materialize(self.engine, self.root, org, release, entry["name"])
            except EngineError as exc:
                return _page(502, "Not available", f"{host}: the files of release {version} cannot be laid "
                             f"out ({exc.message}).")
        answer = static.serve(files / str(entry.get("root") or ""), request.method, request.url.path,
                              str(entry.get("base_path") or ""))
        if answer is None:
            return _page(404, "Not found", f"{host} has no page at {request.url.path} (release {version}).")
        return answer

    async def _proxy(self, request: Request, port: int, raw_host: str) -> Response:
        import httpx

        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        headers.update({"X-Forwarded-Host": raw_host, "X-Forwarded-Proto": self.scheme})
        try:
            upstream = await self.client.request(request.method, f"http://127.0.0.1:{port}{request.url.path}",
                                                 params=request.query_params, headers=headers,
                                                 content=await request.body())
        except httpx.HTTPError as exc:
            return _page(502, "Bad gateway", f"the bound workload did not answer: {type(exc).__name__}")
        out = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP}
        return Response(upstream.content, status_code=upstream.status_code, headers=out)


class Gateway:
    """The two listeners, started and stopped with the server's lifespan."""

    def __init__(self, engine: Engine, issuer: Issuer, host: str, http_port: int | None,
                 https_port: int | None, runtime_root: Path) -> None:
        self.engine, self.issuer, self.host, self.runtime_root = engine, issuer, host, runtime_root
        self.ports = {"http": http_port, "https": https_port}
        self.servers: list[Any] = []
        self.tasks: list[asyncio.Task[Any]] = []
        self.contexts: dict[str, tuple[int, ssl.SSLContext]] = {}  # hostname -> (leaf file mtime, context)
        self.bound: dict[str, int] = {}

    def _listen(self, port: int) -> socket.socket:
        from engine.errors import EngineError

        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, port))
        except OSError as exc:
            sock.close()
            raise EngineError(f"gateway cannot listen on {self.host}:{port}: {exc.strerror}") from None
        sock.listen(1024)
        return sock

    def _context_for(self, hostname: str) -> ssl.SSLContext | None:
        """The name's certificate while it is live (asked at every handshake: `rm` stops it at once); a
        renewed leaf (the issuer renews when due) is loaded at the next handshake."""
        if not service.is_live(self.engine, hostname):
            return None
        cert, key = self.issuer.issue(hostname)
        stamp = cert.stat().st_mtime_ns
        found = self.contexts.get(hostname)
        if found is None or found[0] != stamp:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(cert, key)
            found = self.contexts[hostname] = (stamp, context)
        return found[1]

    def _sni(self, sslobj: ssl.SSLObject, server_name: str | None, _ctx: ssl.SSLContext) -> None:
        try:
            chosen = self._context_for(server_name.lower().rstrip(".")) if server_name else None
        except Exception:  # noqa: BLE001 - a handshake never takes the listener down
            log.exception("gateway: no certificate for %s", server_name)
            chosen = None
        if chosen is not None:
            sslobj.context = chosen

    async def start(self) -> None:
        import uvicorn

        for scheme, port in self.ports.items():
            if port is None:
                continue
            sock = self._listen(port)
            self.bound[scheme] = sock.getsockname()[1]
            extra: dict[str, Any] = {}
            if scheme == "https":
                cert, key = self.issuer.issue("localhost")  # the default certificate: no SNI match
                extra = {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}
            config = uvicorn.Config(GatewayApp(self.engine, scheme, self.runtime_root), lifespan="off",
                                    access_log=False, log_level="warning", proxy_headers=False, **extra)
            config.load()
            if config.ssl is not None:
                config.ssl.sni_callback = self._sni  # type: ignore[assignment]
            server = uvicorn.Server(config)
            self.servers.append(server)
            # _serve, not serve: the main server owns SIGINT/SIGTERM and stops these from its lifespan.
            self.tasks.append(asyncio.ensure_future(server._serve(sockets=[sock])))
            sys.stdout.write(f"serving gateway listening on {scheme}://{self.host}:{self.bound[scheme]}\n")
        sys.stdout.flush()

    async def stop(self) -> None:
        for server in self.servers:
            server.should_exit = True
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=5)
