"""Shared fixtures for the tools and runs tests: an isolated home and a tool context in a tmp root."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine.tools.base import ToolContext, ToolResult

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for key, value in {
        "HOME": home,
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_CONFIG_HOME": home / ".config",
        "FRAMEWORK_LEDGER_HOME": home / "ledger",
        "PLATFORM_RUNS_HOME": home / "runs",
        "PLATFORM_SETTINGS": home / "settings.yaml",
    }.items():
        monkeypatch.setenv(key, str(value))
    monkeypatch.delenv("PLATFORM_WEBSEARCH_URL", raising=False)
    return home


@pytest.fixture
def ctx(tmp_path: Path, isolated_home: Path) -> Any:
    from engine.tools.execution import close_session

    root = tmp_path / "project"
    root.mkdir()
    context = ToolContext(root=root, session_id="test", data_dir=tmp_path / "session", settings={})
    yield context
    close_session(context)


def call(ctx: ToolContext, tool: str, /, **params: Any) -> ToolResult:
    from engine.tools.registry import call_tool

    return call_tool(tool, params, ctx)


def subprocess_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        FRAMEWORK_LEDGER_HOME=str(home / "ledger"),
        PLATFORM_RUNS_HOME=str(home / "runs"),
        PLATFORM_SETTINGS=str(home / "settings.yaml"),
        NO_COLOR="1",
    )
    return env


class LocalServer:
    """A real uvicorn server on 127.0.0.1, port 0, in a thread (stopped by the context manager)."""

    def __init__(self, app: Any) -> None:
        import threading

        import uvicorn

        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="on")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        from tests.waiting import until

        self.thread.start()

        def started() -> bool:
            if not self.thread.is_alive():
                raise RuntimeError("local test server did not start")
            return bool(self.server.started)

        until(started, 15, what="the local test server to start", interval=0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
