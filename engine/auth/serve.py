"""`platform auth serve --port`: a local HTTP server for third-party account OAuth callbacks.

- GET  /health        identity and readiness: service, version, ready, pid, the server and login
- POST /oauth/start   {"provider": "<url>", "client_id"?, "timeout"?}: discovers the provider's
                      authorization server (RFC 8414), opens the browser on its sign-in page
                      (PKCE S256, state), waits for GET /oauth/callback on this server, exchanges
                      the code and stores the account's token under the provider URL in the
                      credentials file; answers when the flow ends (200, 400 refused, 504 timed out)
- GET  /oauth/callback the provider's redirect

It listens on 127.0.0.1 only. Requests whose Host is not this loopback address are refused (DNS
rebinding), and /oauth/start takes only application/json (a web page cannot post it across
origins without a CORS preflight, which this server never grants). Nothing is logged.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from engine.auth import credentials
from engine.auth.login import _Callback, discover, exchange, open_browser, pkce_pair, store_token
from engine.auth.pages import done_page
from engine.errors import EngineError

SERVICE = "platform-auth-serve"


class AuthServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.flows: dict[str, _Callback] = {}
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _Handler(BaseHTTPRequestHandler):
    server: AuthServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, doc: dict[str, Any]) -> None:
        self._send(status, json.dumps(doc).encode(), "application/json")

    def _host_ok(self) -> bool:
        return self.headers.get("Host", "") in (f"127.0.0.1:{self.server.port}", f"localhost:{self.server.port}")

    def do_GET(self) -> None:  # noqa: N802
        if not self._host_ok():
            self._json(403, {"error": {"code": "forbidden", "message": "unexpected Host"}})
            return
        parts = urlsplit(self.path)
        if parts.path == "/health":
            self._json(200, health())
        elif parts.path == "/oauth/callback":
            self._callback({k: v[0] for k, v in parse_qs(parts.query).items()})
        else:
            self._json(404, {"error": {"code": "not_found", "message": "not found"}})

    def _callback(self, query: dict[str, str]) -> None:
        with self.server.lock:
            box = self.server.flows.get(query.get("state", ""))
        if box is None or box.done.is_set():
            self._send(400, done_page(False, "no sign-in is waiting for this answer").encode(), "text/html")
            return
        if query.get("error"):
            box.error = query.get("error_description") or query["error"]
        elif query.get("code"):
            box.code = query["code"]
        else:
            box.error = "the answer carried no code"
        ok = box.code is not None
        self._send(200 if ok else 400, done_page(ok, "account connected: you can close this tab" if ok
                                                 else f"sign-in refused: {box.error}").encode(), "text/html")
        box.done.set()

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok():
            self._json(403, {"error": {"code": "forbidden", "message": "unexpected Host"}})
            return
        if urlsplit(self.path).path != "/oauth/start":
            self._json(404, {"error": {"code": "not_found", "message": "not found"}})
            return
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            self._json(415, {"error": {"code": "usage", "message": "send application/json"}})
            return
        try:
            length = min(int(self.headers.get("Content-Length", "0")), 65536)
            doc = json.loads(self.rfile.read(length) or b"{}")
            provider = credentials.normalize(str(doc.get("provider") or ""))
            timeout = min(float(doc.get("timeout") or 300), 900)
            client_id = str(doc.get("client_id") or "platform-cli")
        except (ValueError, TypeError, AttributeError, EngineError) as exc:
            self._json(400, {"error": {"code": "usage", "message": f"bad request: {exc}"}})
            return
        try:
            result = self._flow(provider, client_id, timeout)
        except EngineError as exc:
            status = 504 if exc.code == "login_timed_out" else 400 if exc.code == "login_failed" else 502
            self._json(status, {"error": exc.to_dict()})
            return
        self._json(200, result)

    def _flow(self, provider: str, client_id: str, timeout: float) -> dict[str, Any]:
        from engine.auth.login import LoginFailed, LoginTimedOut

        endpoints = discover(provider)
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        box = _Callback(state)
        redirect_uri = f"http://127.0.0.1:{self.server.port}/oauth/callback"
        with self.server.lock:
            self.server.flows[state] = box
        try:
            open_browser(endpoints.authorization_endpoint + "?" + urlencode({
                "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
                "scope": "platform:api", "state": state, "code_challenge": challenge,
                "code_challenge_method": "S256"}))
            if not box.done.wait(timeout):
                raise LoginTimedOut(f"no answer from the browser within {timeout:g} s")
        finally:
            with self.server.lock:
                self.server.flows.pop(state, None)
        if not box.code:
            raise LoginFailed(f"sign-in refused: {box.error}")
        doc = exchange(endpoints, client_id, box.code, redirect_uri, verifier)
        stored = store_token(provider, "flag", doc, "account")
        return {"provider": provider, "user": stored.user, "organization": stored.organization,
                "scope": stored.scope, "expires_at": stored.expires_at, "stored": True}


def health() -> dict[str, Any]:
    import os

    from engine import __version__

    resolved = credentials.resolve_platform(None, read_file=False)
    return {"service": SERVICE, "version": __version__, "ready": True, "pid": os.getpid(),
            "server": resolved.server}


def serve(port: int) -> int:
    """Serve until interrupted; prints the address it listens on."""
    try:
        server = AuthServer(port)
    except OSError as exc:
        raise EngineError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}",
                          hint="choose another --port (0 lets the system pick one)") from None
    sys.stdout.write(f"platform auth serve listening on http://127.0.0.1:{server.port}\n")
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
