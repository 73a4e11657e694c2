"""`framework env smoke` on a self-managed Process environment (`env smoke` and the
smoke route class: docs/reference-domains.md#framework-env-smoke-env): every route is probed on its
workload's port on this machine and classified by what a real service answers."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.deploy_fixtures import Demo, free_port
from tests.hosted_fixtures import demo, run_json  # noqa: F401
from tests.waiting import until

SERVICE = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    def do_GET(self):
        routes = {
            "/": (200, "text/html", b"<h1>edge</h1>", {}),
            "/api/ok": (200, "application/json", b"{}", {"Access-Control-Allow-Origin": "*"}),
            "/api/nocors": (200, "application/json", b"{}", {}),
        }
        status, ctype, body, extra = routes.get(self.path, (404, "text/plain", b"404 page not found", {}))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""

EDGE = """import framework

environment = framework.Environment {{
    name = "edge"
    kind = "self_managed"
    target = framework.Process {{}}
    workloads = [
        framework.Workload {{
            name = "svc"
            run = ["python3", "svc.py", "{port}"]
            ports = [framework.Port {{port = {port}}}]
            routes = [
                framework.Route {{host = "edge.test", path = "/"}}
                framework.Route {{host = "edge.test", path = "/api/ok"}}
                framework.Route {{host = "edge.test", path = "/api/nocors"}}
                framework.Route {{host = "edge.test", path = "/missing"}}
            ]
        }}
    ]
}}
"""


@pytest.fixture
def edge(demo: Demo) -> Iterator[tuple[Demo, int]]:  # noqa: F811
    port = free_port()
    (demo.root / "deploy" / "kcl" / "edge").mkdir(parents=True)
    (demo.root / "deploy" / "kcl" / "edge" / "main.k").write_text(EDGE.format(port=port))
    (demo.root / "svc.py").write_text(SERVICE)
    proc = subprocess.Popen([sys.executable, str(demo.root / "svc.py"), str(port)])
    def answers() -> bool:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return True  # any answer: it is serving
        except httpx.HTTPError:
            return False

    until(answers, 30, what="the edge service to answer")
    yield demo, port
    proc.terminate()
    proc.wait(timeout=10)


def test_smoke_classifies_each_route_of_a_process_environment(edge: tuple[Demo, int]) -> None:
    """Smoke route class (docs/reference-domains.md#framework-env-smoke-env): PASS for a served page and for
    an API route carrying Access-Control-Allow-Origin; FAIL for an API route without it; WARN for a plain 404 text page
    (likely misroute); the run exits non-zero because one route FAILs; `--tag` labels the run and the
    last run is recorded for the dashboard."""
    demo, port = edge  # noqa: F811
    code, doc = run_json(demo, demo.env, "env", "smoke", "edge", "--tag", "v1")
    assert code == 1, doc
    classes = {r["path"]: r["klass"] for r in doc["routes"]}
    assert classes == {"/": "PASS", "/api/ok": "PASS", "/api/nocors": "FAIL", "/missing": "WARN"}
    nocors = next(r for r in doc["routes"] if r["path"] == "/api/nocors")
    assert "Access-Control-Allow-Origin" in nocors["reason"] and nocors["url"] == f"http://127.0.0.1:{port}/api/nocors"
    assert doc["counts"] == {"PASS": 2, "WARN": 1, "FAIL": 1} and doc["tag"] == "v1"
    recorded = json.loads((demo.root / ".framework" / "smoke" / "edge.json").read_text())
    assert recorded["counts"] == doc["counts"]


def test_smoke_exits_zero_when_nothing_fails_and_fails_when_the_service_is_down(edge: tuple[Demo, int]) -> None:
    """`env smoke` (docs/reference-domains.md#framework-env-smoke-env): exit non-zero only if a route FAILs
    (WARN alone exits 0); a route whose port answers nothing is a transport FAIL."""
    demo, port = edge  # noqa: F811
    path = demo.root / "deploy" / "kcl" / "edge" / "main.k"
    text = path.read_text()
    path.write_text(text.replace('                framework.Route {host = "edge.test", path = "/api/nocors"}\n', ""))
    code, doc = run_json(demo, demo.env, "env", "smoke", "edge")
    assert code == 0 and doc["counts"] == {"PASS": 2, "WARN": 1, "FAIL": 0}, doc
    path.write_text(text.replace(f"port = {port}", f"port = {free_port()}"))
    code, doc = run_json(demo, demo.env, "env", "smoke", "edge")
    assert code == 1 and all(r["klass"] == "FAIL" and "transport" in r["reason"] for r in doc["routes"])


def _detail_smoke(demo: Demo, press_s: bool = False) -> tuple[str, str]:  # noqa: F811
    """The environment detail's smoke panel as it opens, and after `s` when asked (else the same)."""
    import asyncio

    from app.dashboard import Dashboard
    from app.settings import deterministic_settings
    from screens.environments.detail import EnvironmentDetailScreen
    from tests.screen_fixtures import SIZE, environ
    from tests.waiting import until_app

    async def scenario() -> tuple[str, str]:
        with environ(demo.env):
            app = Dashboard(project_dir=demo.root, settings=deterministic_settings())
            async with app.run_test(size=SIZE) as pilot:
                screen = EnvironmentDetailScreen("edge")
                await app.push_screen(screen)
                await until_app(pilot, lambda: screen.loads >= 1)
                smoke = screen.query_one("#smoke")
                assert smoke.display
                before = str(smoke.render())
                if press_s:
                    await pilot.press("s")
                    await until_app(pilot, lambda: "FAIL edge.test/api/nocors" in str(smoke.render()))
                return before, str(smoke.render())

    return asyncio.run(scenario())


def test_environment_detail_shows_the_last_smoke_per_route(edge: tuple[Demo, int]) -> None:
    """The smoke route class in the dashboard (docs/reference-domains.md#dashboard): the environment detail shows the
    last `env smoke` run, one line per route with its class, and the command that runs it again."""
    demo, _ = edge  # noqa: F811
    run_json(demo, demo.env, "env", "smoke", "edge", "--tag", "v1")
    text, _ = _detail_smoke(demo)
    assert "Smoke [v1]: PASS 2  WARN 1  FAIL 1" in text and "framework env smoke edge" in text
    assert "FAIL edge.test/api/nocors" in text and "WARN edge.test/missing" in text


def test_environment_detail_runs_smoke_and_shows_each_route(edge: tuple[Demo, int]) -> None:
    """Smoke results per route on the environment detail (docs/reference-domains.md#dashboard): before
    any run the detail says none is recorded and how to run one; `s` probes every route (the same
    engine call as `framework env smoke <env>`, recorded for the command line too) and the detail then
    shows each route's class, status and reason."""
    demo, _ = edge  # noqa: F811
    before, after = _detail_smoke(demo, press_s=True)
    assert "no run recorded yet; s probes every route now (framework env smoke edge)" in before
    assert "Smoke: PASS 2  WARN 1  FAIL 1" in after and "PASS edge.test/api/ok  200" in after
    assert "WARN edge.test/missing  404" in after
    recorded = json.loads((demo.root / ".framework" / "smoke" / "edge.json").read_text())
    assert recorded["counts"] == {"PASS": 2, "WARN": 1, "FAIL": 1}
