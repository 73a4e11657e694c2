"""External tool servers (docs/reference-tools.md#external-tool-servers-mcp): tools named mcp_<server>_<tool>,
tagged mcp, from real MCP servers started by the test (stdio subprocess and streamable HTTP), and `platform
tools serve`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest

from engine.tools.filter import apply_filter
from engine.tools.mcp import clear_cache
from engine.tools.registry import available_tools, call_tool
from tests.tools_fixtures import ROOT, LocalServer, ctx, isolated_home, subprocess_env  # noqa: F401 - fixtures

FIXTURE = str(Path(__file__).with_name("mcp_fixture_server.py"))


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_cache()
    yield
    clear_cache()


@pytest.fixture(scope="module")
def http_server():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mcp_fixture_server", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with LocalServer(module.app()) as url:
        yield f"{url}/mcp"


def test_stdio_and_http_servers_contribute_mcp_tools(ctx, http_server):
    """Tools of configured servers are named mcp_<server>_<tool>, tagged mcp, and callable."""
    ctx.settings = {
        "mcp_servers": {
            "local": {"command": sys.executable, "args": [FIXTURE], "cwd": str(ROOT), "timeout": 60},
            "remote": {"url": http_server, "headers": {"X-Team": "core"}},
        }
    }
    tools = available_tools(ctx.settings)
    mcp = sorted(n for n, t in tools.items() if "mcp" in t.tags)
    assert mcp == [
        "mcp_local_add",
        "mcp_local_boom",
        "mcp_local_echo",
        "mcp_remote_add",
        "mcp_remote_boom",
        "mcp_remote_echo",
    ]
    assert tools["mcp_local_add"].tags == ("mcp",) and "a" in tools["mcp_local_add"].schema["properties"]
    assert call_tool("mcp_local_echo", {"text": "hi"}, ctx).output == "echo: hi\n"
    assert call_tool("mcp_remote_add", {"a": 2, "b": 40}, ctx).output == "42\n"
    failed = call_tool("mcp_remote_boom", {}, ctx)
    assert failed.is_error and "boom failed on purpose" in failed.output
    assert apply_filter(["mcp_local_*"], tools).tools == ["mcp_local_echo", "mcp_local_add", "mcp_local_boom"]
    assert len(apply_filter(["tag:mcp"], tools).tools) == 6


def test_a_failing_server_is_reported_and_the_rest_keep_working(ctx, http_server):
    """A server that fails to start or answer is reported and its tools are absent; the rest keep working."""
    from engine.tools.mcp import server_status

    ctx.settings = {
        "mcp_servers": {
            "dead": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"], "timeout": 10},
            "gone": {"url": "http://127.0.0.1:9/mcp", "timeout": 5},
            "remote": {"url": http_server},
        }
    }
    tools = available_tools(ctx.settings)
    assert sorted(n for n in tools if n.startswith("mcp_")) == [
        "mcp_remote_add",
        "mcp_remote_boom",
        "mcp_remote_echo",
    ]
    status = {s["name"]: s for s in server_status(ctx.settings)}
    assert status["dead"]["ok"] is False and "failed to start or answer" in status["dead"]["error"]
    assert status["gone"]["ok"] is False and status["remote"]["ok"] is True
    assert "view" in tools


def test_platform_tools_serve_is_an_mcp_server_over_stdio(ctx, isolated_home, monkeypatch):
    """`platform tools serve`: our built-in tools as an MCP server over stdio, usable by an MCP client."""
    (ctx.root / "hello.txt").write_text("hello from the served tools\n")
    for key, value in subprocess_env(isolated_home).items():
        monkeypatch.setenv(key, value)
    ctx.settings = {
        "mcp_servers": {
            "self": {
                "command": sys.executable,
                "cwd": str(ROOT),
                "timeout": 60,  # a loaded 2-core machine: the server imports the mcp SDK first
                "args": [
                    "-m",
                    "app.main",
                    "platform",
                    "tools",
                    "serve",
                    "--root",
                    str(ctx.root),
                    "--filter",
                    "tag:file",
                ],
            }
        }
    }
    tools = available_tools(ctx.settings)
    served = sorted(n for n in tools if n.startswith("mcp_self_"))
    assert served == sorted(
        f"mcp_self_{n}" for n in ("view", "write", "edit", "patch", "find_replace", "move_code")
    )
    assert (
        call_tool("mcp_self_view", {"file_path": "hello.txt"}, ctx).output
        == "     1\thello from the served tools\n"
    )
    missing = call_tool("mcp_self_view", {"file_path": "nope.txt"}, ctx)
    assert missing.is_error and "file not found" in missing.output


def test_tools_list_cli_reports_servers(tmp_path, isolated_home, http_server):
    """`platform tools list --filter 'mcp_<server>_*' --json` lists the server's tools."""
    (isolated_home / "settings.yaml").write_text(
        json.dumps({"mcp_servers": {"remote": {"url": http_server}}})
    )
    out = cli_fork.run(
        [sys.executable, "-m", "app.main", "platform", "tools", "list", "--filter", "mcp_remote_*", "--json"],
        capture_output=True,
        text=True,
        env=subprocess_env(isolated_home),
        cwd=ROOT,
    )
    doc = json.loads(out.stdout)
    assert out.returncode == 0 and doc["ok"] is True
    assert [t["name"] for t in doc["tools"]] == ["mcp_remote_echo", "mcp_remote_add", "mcp_remote_boom"]
    assert doc["servers"] == [{"name": "remote", "transport": "http", "ok": True, "tools": 3, "error": None}]
