"""One project with a Go service and two frontends (web: Next.js, vite-spa), made, installed, generated
and built once per worker, then run as `env up dev` (docs/reference-frontends.md). The heaviest fixture
of the suite: every frontend test reads this one artefact.

The npm cache stays the machine's (the suite gives each test its own HOME), so `npm ci` installs from
it; everything else (ledger, config, dev stack records) lives under the fixture's own HOME.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.authoring_fixtures import _GO_ENV
from tests.conftest import run_cli
from tests.deploy_fixtures import free_port  # below the ephemeral range: no client socket takes it

NPM_CACHE = os.environ.get("npm_config_cache") or str(Path.home() / ".npm")
PING_ANSWER = '''package shop

import (
	"context"

	"connectrpc.com/connect"

	shopv1 "example.com/shop/gen/shop/v1"
)

// Ping answers with the message it was sent, prefixed (the frontends' pages show it).
func (h *Handler) Ping(ctx context.Context,
	req *connect.Request[shopv1.PingRequest]) (*connect.Response[shopv1.PingResponse], error) {
	_ = ctx
	return connect.NewResponse(&shopv1.PingResponse{Message: "pong: " + req.Msg.GetMessage()}), nil
}
'''


def fixture_env(parent: Path) -> dict[str, str]:
    """The fixture's own HOME, config and ledger; the machine's Go and npm caches (Go's builds with -trimpath: the
    generated service's packages come from the machine's build cache whatever the fixture's directory)."""
    home = parent / "home"
    home.mkdir()
    return {**_GO_ENV, "GOFLAGS": "-buildvcs=false -trimpath", "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
            "FRAMEWORK_LEDGER_HOME": str(home / ".framework" / "ledger"), "npm_config_cache": NPM_CACHE,
            "NEXT_TELEMETRY_DISABLED": "1"}


@dataclass
class FrontendProject:
    root: Path
    env: dict[str, str]
    api_port: int
    site_port: int
    spa_port: int
    timings: dict[str, float] = field(default_factory=dict)
    docs: dict[str, dict] = field(default_factory=dict)  # --json documents of the set-up commands, by command
    generated: dict[str, dict[str, bytes]] = field(default_factory=dict)  # the clients' bytes around `generate --full`

    def fw(self, *args: str, timeout: float = 600) -> tuple[int, dict, str]:
        result = run_cli("framework", *args, "--json", cwd=self.root, env=self.env, timeout=timeout)
        doc = json.loads(result.stdout) if result.stdout.strip() else {}
        return result.exit_code, doc, result.stderr

    def bin(self, frontend: str, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        """A tool of the frontend's node_modules/.bin, in its directory."""
        where = self.root / "frontends" / frontend
        return subprocess.run([str(where / "node_modules" / ".bin" / tool), *args], cwd=where, capture_output=True,
                              text=True, env={**os.environ, **self.env}, timeout=300)


@pytest.fixture(scope="module")
def frontend_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontendProject]:
    """`project new shop --service shop --frontend site`, `scaffold frontend spa --kind vite-spa --base-path /spa`,
    `build`, `env up dev` (the API on a free port, the dev servers on free ports)."""
    import time

    parent = tmp_path_factory.mktemp("frontends")
    env = fixture_env(parent)
    root = parent / "shop"
    fp = FrontendProject(root=parent, env=env, api_port=free_port(), site_port=free_port(), spa_port=free_port())
    began = time.monotonic()
    code, doc, err = fp.fw("project", "new", "shop", "--mod", "example.com/shop", "--frontend", "site")
    assert code == 0, err or doc
    fp.root = root
    fp.timings["project new --frontend"] = round(time.monotonic() - began, 1)
    fp.docs["project new --frontend"] = doc
    began = time.monotonic()
    code, doc, err = fp.fw("scaffold", "frontend", "spa", "--kind", "vite-spa", "--base-path", "/spa",
                           "--port", str(fp.spa_port))
    assert code == 0, err or doc
    fp.timings["scaffold frontend"] = round(time.monotonic() - began, 1)
    fp.docs["scaffold frontend"] = doc
    clients = [f"frontends/{f}/src/gen/{rel}" for f in ("site", "spa")
               for rel in ("shop/v1/shop_pb.ts", "framework/clients.ts")]
    for args in (("generate",), ("generate", "--full")):  # right after the scaffolds: both change nothing
        if args == ("generate", "--full"):
            fp.generated["before generate --full"] = {rel: (root / rel).read_bytes() for rel in clients}
        code, doc, err = fp.fw(*args)
        assert code == 0, err or doc
        fp.docs[" ".join(args)] = doc
    fp.generated["after generate --full"] = {rel: (root / rel).read_bytes() for rel in clients}
    (root / "internal" / "handlers" / "shop" / "rpc_ping.go").write_text(PING_ANSWER)
    dev = root / "deploy" / "kcl" / "dev" / "main.k"
    text = dev.read_text()
    text = text.replace("framework.Port {port = 8080}", f"framework.Port {{port = {fp.api_port}}}")
    text = re.sub(r"port = 3000\b", f"port = {fp.site_port}", text)
    dev.write_text(text)
    began = time.monotonic()
    code, doc, err = fp.fw("build")
    assert code == 0, err or doc
    fp.timings["build"] = round(time.monotonic() - began, 1)
    code, doc, err = fp.fw("env", "up", "dev", "--no-build", "--timeout", "240", timeout=300)
    assert code == 0, err or doc
    try:
        yield fp
    finally:
        fp.fw("env", "down", "dev")
