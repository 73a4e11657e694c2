"""External tool servers (MCP, official SDK): their tools as `mcp_<server>_<tool>`, tagged `mcp`.

Servers are configured in the application settings (engine.tools.settings): a command speaking
MCP on stdio, or a streamable HTTP URL. Each server is asked for its tools once per process (a
five-minute cache); one that fails to start or answer within its timeout is reported by
`server_status` and its tools are absent, while the other servers and the built-in tools keep
working (docs/reference-tools.md#external-tool-servers-mcp). Connections stay open for the process's lifetime
(one stdio server process per configured server, not one per call) and close at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from engine.tools.base import Tool, ToolContext, ToolError, ToolResult
from engine.tools.settings import McpServer, load_settings

CACHE_SECONDS = 300.0
CALL_TIMEOUT = 120.0
_cache: dict[str, tuple[float, dict[str, Tool], list[dict[str, Any]]]] = {}
_lock = threading.Lock()


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if type(exc).__name__ in ("TimeoutError", "TooSlowError"):
        return "did not answer in time"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def _transport(server: McpServer, name: str) -> Any:
    """The SDK transport for one server (stdio subprocess or streamable HTTP)."""
    if server.command:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from engine.paths import cache_dir

        log = cache_dir() / "mcp" / f"{name}.stderr.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        params = StdioServerParameters(
            command=server.command, args=server.args, env=server.env or None, cwd=server.cwd
        )
        return stdio_client(params, errlog=log.open("a"))
    if server.headers:
        import httpx2  # the HTTP client the mcp SDK is built on
        from mcp.client.streamable_http import streamable_http_client

        return streamable_http_client(str(server.url), http_client=httpx2.AsyncClient(headers=server.headers))
    return str(server.url)


class _Connection:
    """One open client session to one server, owned by a single task on the hub's loop.

    The SDK's client must be entered and exited in the same task, so that task holds it open and
    serves calls from a queue; a connection that died is reopened on the next use.
    """

    def __init__(self, name: str, server: McpServer) -> None:
        self.name, self.server = name, server
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.ready: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self.task = asyncio.get_running_loop().create_task(self._hold())

    async def _hold(self) -> None:
        from mcp import Client

        try:
            async with Client(
                _transport(self.server, self.name), read_timeout_seconds=CALL_TIMEOUT
            ) as client:
                tools: list[Any] = []
                cursor = None
                while True:
                    page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
                    tools += page.tools
                    cursor = getattr(page, "next_cursor", None)
                    if not cursor:
                        break
                self.ready.set_result(tools)
                while (item := await self.queue.get()) is not None:
                    tool, arguments, future = item
                    try:
                        future.set_result(await client.call_tool(tool, arguments))
                    except Exception as exc:  # noqa: BLE001 - handed to the caller
                        future.set_exception(exc)
        except BaseException as exc:  # noqa: BLE001 - reported as the server's status
            if not self.ready.done():
                self.ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            while not self.queue.empty():
                item = self.queue.get_nowait()
                if item is not None and not item[2].done():
                    item[2].set_exception(RuntimeError(f"connection closed: {_describe(exc)}"))

    def alive(self) -> bool:
        return not self.task.done()


class _Hub:
    """A background event loop holding the open connections of this process."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mcp-hub", daemon=True)
        self.thread.start()
        self.connections: dict[str, _Connection] = {}

    def run(self, coro: Any, timeout: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _connection(self, key: str, name: str, server: McpServer) -> _Connection:
        conn = self.connections.get(key)
        if conn is None or not conn.alive() and conn.ready.done():
            conn = self.connections[key] = _Connection(name, server)
        return conn

    def list(self, name: str, server: McpServer) -> list[Any]:
        async def go() -> list[Any]:
            conn = await self._connection(_key(name, server), name, server)
            return await asyncio.wait_for(asyncio.shield(conn.ready), server.timeout)

        return list(self.run(go(), server.timeout + 5))

    def call(self, name: str, server: McpServer, tool: str, arguments: dict[str, Any]) -> Any:
        async def go() -> Any:
            conn = await self._connection(_key(name, server), name, server)
            await asyncio.wait_for(asyncio.shield(conn.ready), server.timeout)
            future = self.loop.create_future()
            await conn.queue.put((tool, arguments, future))
            return await asyncio.wait_for(future, CALL_TIMEOUT)

        return self.run(go(), server.timeout + CALL_TIMEOUT + 5)

    def close(self) -> None:
        async def go() -> None:
            for conn in self.connections.values():
                await conn.queue.put(None)
            tasks = [c.task for c in self.connections.values()]
            if tasks:
                await asyncio.wait(tasks, timeout=10)
            self.connections.clear()

        try:
            self.run(go(), 15)
        except Exception:  # noqa: BLE001, S110 - best effort at exit
            pass


_hub: _Hub | None = None


def _get_hub() -> _Hub:
    global _hub
    with _lock:
        if _hub is None:
            _hub = _Hub()
            atexit.register(_hub.close)
        return _hub


def _key(name: str, server: McpServer) -> str:
    return name + ":" + server.model_dump_json()


def _list(name: str, server: McpServer) -> list[Any]:
    return _get_hub().list(name, server)


def _result(result: Any) -> ToolResult:
    parts = []
    for block in result.content:
        if getattr(block, "type", None) == "text":
            parts.append(block.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'unknown')} content]")
    text = "\n".join(parts)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, indent=1)
    data = {"structured_content": result.structured_content} if result.structured_content is not None else {}
    return ToolResult(
        output=text if text.endswith("\n") or not text else text + "\n", is_error=result.is_error, data=data
    )


def _handler(
    server_name: str, server: McpServer, tool_name: str
) -> Callable[[dict[str, Any], ToolContext], ToolResult]:
    def call(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return _result(_get_hub().call(server_name, server, tool_name, params))
        except Exception as exc:  # noqa: BLE001 - the server's failure becomes the agent's error result
            raise ToolError(f"tool server {server_name!r} failed on {tool_name}: {_describe(exc)}") from None

    return call


def tool_name(server: str, tool: str) -> str:
    return "mcp_" + re.sub(r"[^A-Za-z0-9_.\-]", "_", f"{server}_{tool}")


def discover(settings: dict[str, Any] | None = None) -> tuple[dict[str, Tool], list[dict[str, Any]]]:
    """Tools of every configured server (concurrently) and each server's status."""
    config = load_settings(settings)
    servers = {name: s for name, s in config.mcp_servers.items() if s.enabled}
    if not servers:
        return {}, []
    key = json.dumps({n: s.model_dump() for n, s in servers.items()}, sort_keys=True)
    with _lock:
        hit = _cache.get(key)
        if hit and time.monotonic() - hit[0] < CACHE_SECONDS:
            return hit[1], hit[2]
    tools: dict[str, Tool] = {}
    status: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=min(8, len(servers))) as pool:
        futures = {name: pool.submit(_list, name, server) for name, server in servers.items()}
        for name, future in futures.items():
            server = servers[name]
            transport = "stdio" if server.command else "http"
            try:
                listed = future.result()
            except Exception as exc:  # noqa: BLE001 - one failing server must not take the others down
                status.append(
                    {
                        "name": name,
                        "transport": transport,
                        "ok": False,
                        "tools": 0,
                        "error": f"failed to start or answer: {_describe(exc)}",
                    }
                )
                continue
            for t in listed:
                full = tool_name(name, t.name)
                schema = dict(t.input_schema or {"type": "object"})
                tools[full] = Tool(
                    full,
                    ("mcp",),
                    t.description or f"{t.name} from tool server {name}",
                    schema,
                    _handler(name, server, t.name),
                    source=f"mcp:{name}",
                )
            status.append(
                {"name": name, "transport": transport, "ok": True, "tools": len(listed), "error": None}
            )
    with _lock:
        _cache[key] = (time.monotonic(), tools, status)
    return tools, status


def mcp_tools(settings: dict[str, Any] | None = None) -> dict[str, Tool]:
    return discover(settings)[0]


def server_status(settings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return discover(settings)[1]


def clear_cache() -> None:
    """Forget listed tools and close open connections (their stdio servers exit)."""
    global _hub
    with _lock:
        _cache.clear()
        hub, _hub = _hub, None
    if hub is not None:
        hub.close()
        atexit.unregister(hub.close)
        hub.loop.call_soon_threadsafe(hub.loop.stop)
