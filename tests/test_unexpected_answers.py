"""Another service answering where a platform server or control plane should be: a clear error naming the
address (exit 2, code `unexpected_answer`), never a validation traceback or "internal error"
(README.md#output-and-exit-codes). Found by the hostile-input sweep when a developer's own service
listened on 127.0.0.1:8080, the default control plane address."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import run_cli


class _NotAPlatform(BaseHTTPRequestHandler):
    """Some other JSON service: 200 and a document of its own to every request."""

    def _answer(self) -> None:
        body = json.dumps({"hello": "world", "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotAPlatform)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _refused(done: object, url: str) -> dict:
    doc = json.loads(done.stdout)  # type: ignore[attr-defined]
    assert done.exit_code == 2 and doc["exit_code"] == 2, done.stderr  # type: ignore[attr-defined]
    assert doc["error"]["code"] == "unexpected_answer" and url in doc["error"]["message"], doc
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr  # type: ignore[attr-defined]
    return doc


def test_framework_login_with_a_token_against_another_service(other_service: str, tmp_path: Path) -> None:
    """README.md#output-and-exit-codes: `framework login --token` checks the token against the endpoint;
    an endpoint answering 200 with another document is exit 2 naming it, and nothing is stored."""
    done = run_cli("framework", "login", "--endpoint", other_service, "--token", "tok", "--json", cwd=tmp_path)
    _refused(done, other_service)
    assert not list(tmp_path.rglob("credentials.json"))


def test_platform_token_list_against_another_service(other_service: str, tmp_path: Path) -> None:
    """README.md#output-and-exit-codes: a platform command whose server answers another document:
    exit 2 naming the server, as an unreachable one is."""
    done = run_cli("platform", "auth", "token", "list", "--json", cwd=tmp_path,
                   env={"PLATFORM_SERVER_URL": other_service, "PLATFORM_TOKEN": "plt_x"})
    _refused(done, other_service)


def test_domain_commands_against_another_service(other_service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-domains.md#commands: `domain show|ls` print what a control plane answers; another
    service's document is refused (exit 2, the address named) before anything is printed from it."""
    from engine.auth import credentials
    from engine.cloud.domains import domain
    from engine.errors import EngineError

    monkeypatch.setattr(credentials, "DEFAULT_CONTROL_PLANE", other_service)
    for verb, name in (("show", "example.com"), ("ls", None), ("rm", "example.com")):
        with pytest.raises(EngineError) as refused:
            domain(verb, name, token="tok")  # type: ignore[arg-type]
        assert refused.value.exit_code == 2 and refused.value.code == "unexpected_answer"
        assert other_service in refused.value.message
