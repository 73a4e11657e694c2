"""Agent tools on the daemon's machine: the same code as `platform tools call` (engine.tools.registry
.invoke: the same parameter check, the same result, the session's read stamps kept between
calls), so every built-in tool and every MCP tool server configured on this machine
(PLATFORM_SETTINGS) works by name. The root is inside the allowed roots (default: the first)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engine.daemon import proto
from engine.daemon.requests import Active, Context


async def call(active: Active, ask: Any, ctx: Context) -> None:
    from engine.tools.registry import invoke

    root = ctx.roots.resolve(ask.root)
    work = asyncio.ensure_future(asyncio.to_thread(invoke, ask.name, ask.params_json or "{}", root,
                                                   ask.session or "daemon"))
    outcome = await work
    await active.send(tool_result=proto.pb().ToolResult(output=outcome.output, is_error=outcome.is_error,
                                                        data_json=json.dumps(outcome.data)))
