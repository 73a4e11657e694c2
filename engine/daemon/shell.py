"""Shell commands on the daemon: `/bin/sh -c` in a new process group, cwd inside the allowed roots,
the server's env added to the daemon's, stdin given at once and/or streamed, stdout and stderr
streamed as they come (64 KiB frames, at most 64 unconsumed: the server's Credit frames release
them, so a slow reader slows the command instead of filling memory), a timeout (the request's,
else 10 minutes), and kill on Cancel or when the stream is lost (the whole process group). Ends
with Exit(code, timed_out, killed, signal)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from engine.daemon import proto
from engine.daemon.requests import Active, Context
from engine.errors import EngineError

MAX_TIMEOUT_S = 24 * 3600
WINDOW = 64  # output frames (64 KiB each) in flight before the server's Credit frames: 4 MiB at most


def _killpg(proc: Any) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _pump(stream: Any, name: str, active: Active, window: asyncio.Semaphore) -> None:
    while True:
        data = await stream.read(65536)
        if not data:
            return
        await window.acquire()  # at most WINDOW frames the server has not consumed yet (Credit frames)
        await active.send(output=proto.pb().Output(stream=name, data=data))


async def _inputs(proc: Any, active: Active, keep_open: bool, cancelled: asyncio.Event,
                  window: asyncio.Semaphore) -> None:
    while True:
        frame = await active.inbox.get()
        body = frame.WhichOneof("body")
        if body == "credit":
            for _ in range(frame.credit.chunks):
                window.release()
            continue
        if body == "cancel":
            cancelled.set()
            _killpg(proc)
            return
        if body == "input" and keep_open and proc.stdin is not None and not proc.stdin.is_closing():
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                if frame.input.data:
                    proc.stdin.write(frame.input.data)
                    await proc.stdin.drain()
                if frame.input.eof:
                    proc.stdin.close()


async def run(active: Active, start: Any, ctx: Context) -> None:
    cwd = ctx.roots.resolve(start.cwd)
    if not cwd.is_dir():
        raise EngineError(f"{start.cwd or cwd} is not a directory", code="not_found")
    timeout = min(start.timeout_ms / 1000 if start.timeout_ms else ctx.shell_timeout_s, MAX_TIMEOUT_S)
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", start.command, cwd=cwd, env={**os.environ, **dict(start.env)},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    cancelled = asyncio.Event()
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if start.stdin:
            proc.stdin.write(start.stdin)
            await proc.stdin.drain()
        if not start.stdin_open:
            proc.stdin.close()
    window = asyncio.Semaphore(WINDOW)
    inputs = asyncio.ensure_future(_inputs(proc, active, start.stdin_open, cancelled, window))
    pumps = asyncio.gather(_pump(proc.stdout, "stdout", active, window), _pump(proc.stderr, "stderr", active, window))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(pumps), timeout)
        except TimeoutError:
            timed_out = True
            _killpg(proc)
            await pumps
        code = await proc.wait()
    except BaseException:
        _killpg(proc)  # cancelled (stream lost, daemon stopping): never leave the command running
        pumps.cancel()
        raise
    finally:
        inputs.cancel()
    sig = -code if code < 0 else 0
    await active.send(exit=proto.pb().Exit(code=code if code >= 0 else 128 + sig, timed_out=timed_out,
                                           killed=cancelled.is_set(), signal=sig))
