"""`env up` frontend phase: dev servers on the block's ports, tokens after `--` (docs/reference-devstack.md#commands,
docs/reference-devstack.md#env-up-flags)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import devstack_fixtures as fx  # noqa: E402
from devstack_fixtures import add_worktree, framework, framework_json, get, git  # noqa: E402

demo_repo, stacks_cleanup = fx.demo_repo, fx.stacks_cleanup  # fixtures

DEV_SERVER = '''import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd()}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
'''


def _add_frontend_env(repo: Path, base: int) -> None:
    (repo / "web-ui").mkdir()
    (repo / "web-ui" / "dev.py").write_text(DEV_SERVER)
    (repo / "deploy" / "kcl" / "ui").mkdir()
    (repo / "deploy" / "kcl" / "ui" / "main.k").write_text(f'''import framework

environment = framework.Environment {{
    name = "ui"
    kind = "local"
    target = framework.Process {{}}
    workloads = [framework.Workload {{
        name = "api"
        run = ["python3", "services/api/main.py"]
        ports = [framework.Port {{port = {base + 10}}}]
        health = framework.HealthCheck {{path = "/healthz"}}
    }}]
    frontends = [framework.Frontend {{
        name = "console", dir = "web-ui", dev = ["python3", "dev.py"], port = {base + 11}
    }}]
}}
''')
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "ui env")


def test_frontend_phase_runs_dev_servers_with_tokens_after_double_dash(demo_repo, stacks_cleanup):
    """`env up` (docs/reference-devstack.md#commands): phases build, deploy, host, frontend; tokens after
    `--` go to each frontend's dev server; frontends get the worktree's block ports too."""
    repo, base = demo_repo
    _add_frontend_env(repo, base)
    wt = add_worktree(repo, "ui-work")
    out = framework("env", "up", "ui", "--no-build", "--json", "--", "--open", "--mode", "dev", cwd=wt)
    doc = json.loads(out.stdout)
    assert doc["ok"], out.stderr + out.stdout
    assert [(p["name"], p["status"]) for p in doc["phases"]] == [
        ("build", "skipped"), ("deploy", "skipped"), ("host", "done"), ("frontend", "done")]
    ports = {p["name"]: p["ports"] for p in doc["processes"]}
    assert ports == {"api": [base + 110], "console": [base + 111]}
    answer = json.loads(get(base + 111))
    assert answer["argv"] == ["--open", "--mode", "dev"]
    assert answer["cwd"] == str(wt / "web-ui")
    lines = [line.strip() for line in out.stderr.splitlines()]
    assert lines.index("host") < lines.index("frontend")  # reported as they run
    assert framework_json("env", "down", "ui", cwd=wt)["ok"]
