"""The client side of the authorization-code flow with PKCE (RFC 7636 S256) over a loopback
redirect (RFC 8252): used by `platform auth login`, `framework login` and `auth serve`.

The listener binds 127.0.0.1 on a port the OS chooses and answers only GET /callback. A callback
whose `state` differs is refused (400) and ignored: the flow goes on waiting for the real one. The
listener is closed on every way out: success, the server's error, timeout, interrupt.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pydantic import BaseModel

from engine.auth import credentials
from engine.auth.pages import done_page
from engine.errors import EngineError

DEFAULT_TIMEOUT_S = 300.0


class LoginFailed(EngineError):
    code = "login_failed"


class LoginTimedOut(EngineError):
    code = "login_timed_out"


class Endpoints(BaseModel):
    issuer: str
    authorization_endpoint: str
    token_endpoint: str


class LoginResult(BaseModel):
    """What was stored (never the token itself)."""

    server: str
    server_source: str
    user: str | None
    organization: str | None
    scope: str
    expires_at: str
    credentials_file: str
    warnings: list[str] = []


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)  # 86 characters of [A-Za-z0-9_-]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def _http() -> Any:
    import httpx

    return httpx


PLATFORM_ELSEWHERE = "name another with --server URL or PLATFORM_SERVER_URL"


def metadata(server: str, *, elsewhere: str = PLATFORM_ELSEWHERE) -> Endpoints:
    """RFC 8414 metadata of `server`, read before any browser opens: a server that is not there is
    exit 2 at once, naming its URL, how to start one and how to name another (`elsewhere`)."""
    httpx = _http()
    url = f"{server}/.well-known/oauth-authorization-server"
    try:
        response = httpx.get(url, timeout=15)
    except httpx.HTTPError as exc:
        raise EngineError(f"cannot reach {server}: {exc}", code="server_unreachable", exit_code=2,
                          hint=credentials.start_or_point_hint(elsewhere)) from None
    try:
        doc = response.json() if response.status_code == 200 else None
        return Endpoints.model_validate(doc)
    except ValueError:
        raise LoginFailed(f"{server} has no OAuth authorization server metadata (HTTP {response.status_code})",
                          hint=f"is this a platform server? {elsewhere}") from None


def discover(server: str) -> Endpoints:
    """RFC 8414 metadata of `server`; its issuer must be that server (mix-up defence)."""
    endpoints = metadata(server)
    if credentials.normalize(endpoints.issuer) != server:
        raise LoginFailed(f"the authorization server metadata names another issuer ({endpoints.issuer})")
    return endpoints


def _has_terminal() -> bool:
    for stream in (sys.stdin, sys.stderr):
        try:
            if stream is not None and stream.isatty():
                return True
        except (AttributeError, ValueError):
            continue
    return False


def _has_browser() -> bool:
    """A browser that can open without a terminal: $BROWSER, or a desktop session (console browsers
    need the terminal this process does not have)."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def require_someone_to_sign_in(headless: str) -> None:
    """No terminal to show the sign-in URL and no browser to open it (CI, scripts, agents): nobody can
    answer the sign-in, so refuse at once and say how to sign in headless, as gh does, never wait."""
    if _has_terminal() or _has_browser():
        return
    raise EngineError("cannot sign in through a browser here: no terminal to show the sign-in page and no "
                      "browser to open it", code="login_needs_browser", exit_code=2, hint=headless)


def fixed_endpoints(endpoint: str) -> Endpoints:
    """`framework login`: `<endpoint>/oauth/authorize` and `<endpoint>/oauth/token`."""
    return Endpoints(issuer=endpoint, authorization_endpoint=f"{endpoint}/oauth/authorize",
                     token_endpoint=f"{endpoint}/oauth/token")


class _Callback:
    def __init__(self, state: str) -> None:
        self.state = state
        self.done = threading.Event()
        self.code: str | None = None
        self.error: str | None = None


def _handler(box: _Callback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # never log (the query holds the code)
            pass

        def _answer(self, status: int, ok: bool, message: str) -> None:
            body = done_page(ok, message).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            parts = urlsplit(self.path)
            if parts.path != "/callback":
                self._answer(404, False, "not found")
                return
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if box.done.is_set():
                self._answer(409, False, "this sign-in has already finished")
                return
            if not hmac.compare_digest(query.get("state", "").encode(), box.state.encode()):
                self._answer(400, False, "state mismatch: this answer was not for this sign-in; ignored")
                return
            if query.get("error"):
                box.error = query.get("error_description") or query["error"]
                self._answer(400, False, f"sign-in refused: {box.error}")
            elif query.get("code"):
                box.code = query["code"]
                self._answer(200, True, "signed in: you can return to the terminal")
            else:
                self._answer(400, False, "the answer carried no code")
                return
            box.done.set()

    return Handler


def authorize(
    endpoints: Endpoints,
    client_id: str,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    open_url: Callable[[str], None] | None = None,
    headless: str = "",
) -> dict[str, Any]:
    """Run the flow; the token endpoint's answer (holds the access token). `headless`: how to sign in
    without a browser, said instead of waiting when nobody can answer."""
    if open_url is None:
        require_someone_to_sign_in(headless)
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(32)
    box = _Callback(state)
    listener = HTTPServer(("127.0.0.1", 0), _handler(box))
    redirect_uri = f"http://127.0.0.1:{listener.server_address[1]}/callback"
    thread = threading.Thread(target=listener.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        url = endpoints.authorization_endpoint + "?" + urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "scope": "platform:api",
            "state": state, "code_challenge": challenge, "code_challenge_method": "S256",
        })
        (open_url or open_browser)(url)
        if not box.done.wait(timeout):
            raise LoginTimedOut(f"no answer from the browser within {timeout:g} s; sign-in abandoned",
                                hint="run the command again (--timeout sets the wait)")
    finally:
        listener.shutdown()
        listener.server_close()
        thread.join(timeout=5)
    if box.error or not box.code:
        raise LoginFailed(f"sign-in refused: {box.error}")
    return exchange(endpoints, client_id, box.code, redirect_uri, verifier)


def open_browser(url: str) -> None:
    """Open the page (the BROWSER variable is honoured), and print it for a browser elsewhere."""
    import webbrowser

    sys.stderr.write(f"Opening the sign-in page in your browser. If it does not open, visit:\n  {url}\n")
    sys.stderr.flush()
    threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()


def exchange(endpoints: Endpoints, client_id: str, code: str, redirect_uri: str, verifier: str) -> dict[str, Any]:
    httpx = _http()
    try:
        response = httpx.post(endpoints.token_endpoint, timeout=30, data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
            "client_id": client_id, "code_verifier": verifier,
        })
    except httpx.HTTPError as exc:
        raise EngineError(f"cannot reach {endpoints.token_endpoint}: {exc}", code="server_unreachable",
                          exit_code=2) from None
    try:
        doc = response.json()
    except ValueError:
        doc = {}
    if response.status_code != 200 or not isinstance(doc, dict) or not doc.get("access_token"):
        reason = doc.get("error_description") or doc.get("error") if isinstance(doc, dict) else None
        raise LoginFailed(f"the token exchange was refused: {reason or f'HTTP {response.status_code}'}")
    return doc


def store_token(server: str, server_source: str, doc: dict[str, Any], program: str) -> LoginResult:
    from engine.auth.models import iso

    now = time.time()
    entry = credentials.Entry(
        access_token=str(doc["access_token"]), token_type=str(doc.get("token_type") or "Bearer"),
        scope=str(doc.get("scope") or ""), expires_at=now + float(doc.get("expires_in") or 0),
        user=doc.get("user"), organization=doc.get("organization"), program=program, created_at=now,
    )
    saved = credentials.save(server, entry)
    return LoginResult(server=server, server_source=server_source, user=entry.user, organization=entry.organization,
                       scope=entry.scope, expires_at=iso(int(entry.expires_at * 1e6)), credentials_file=str(saved.path),
                       warnings=saved.warnings)


def platform_login(server_flag: str | None, *, timeout: float = DEFAULT_TIMEOUT_S,
                   open_url: Callable[[str], None] | None = None) -> LoginResult:
    """`platform auth login`: discover the authorization server, run the flow, store the token."""
    resolved = credentials.resolve_platform(server_flag, read_file=False)
    credentials.load()  # a corrupt file is refused before the browser opens, not after
    endpoints = discover(resolved.server)
    doc = authorize(endpoints, "platform-cli", timeout=timeout, open_url=open_url,
                    headless="set PLATFORM_TOKEN to an API token (`platform auth token create --name ci` where "
                             "you are signed in), or run this on a terminal")
    return store_token(resolved.server, resolved.server_source, doc, "platform")
