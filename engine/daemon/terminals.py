"""Interactive terminals (PTY) on the daemon: a real pseudo-terminal (os.openpty) with the command
as session leader and the terminal as its controlling tty; open with a size, resize
(TIOCSWINSZ), input, output, close.

Output goes into a scrollback (last 1 MiB, with absolute offsets) and from there to whoever is
attached. A terminal outlives its stream: when the stream drops it is kept, with its scrollback,
for PLATFORM_DAEMON_PTY_KEEP_MS (default 30 s); the next Hello lists it and the server's
PtyAttach(offset) re-attaches it, replaying the scrollback from that offset. Not re-attached in
time, or closed, or its command exits: the process group gets SIGHUP, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import termios
import uuid
from typing import Any

from engine.daemon import proto
from engine.daemon.requests import Active, Context

SCROLLBACK = 1 << 20


def keep_s() -> float:
    return int(os.environ.get("PLATFORM_DAEMON_PTY_KEEP_MS", "30000")) / 1000


def _set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows or 24, cols or 80, 0, 0))


# The child opens the terminal itself: a session leader (start_new_session) that opens a tty
# acquires it as its controlling terminal. No preexec_fn: forking into Python code next to gRPC's
# threads can deadlock; this way the fork is the plain fork+exec of _posixsubprocess.
_ATTACH = 'exec 0<>"$1" 1>&0 2>&0; shift; exec "$@"'


class Terminal:
    def __init__(self, pty_id: str, proc: subprocess.Popen[bytes], master: int, slave: int) -> None:
        # The parent keeps the slave open (the child opens the tty by path, maybe after we return):
        # so the master never reads EOF, and the command's exit is seen by `watch`.
        self.id, self.proc, self.master, self.slave = pty_id, proc, master, slave
        self.scrollback = bytearray()
        self.end = 0
        self.changed = asyncio.Event()
        self.exit_code: int | None = None
        self.attached: Active | None = None
        self.expiry: asyncio.TimerHandle | None = None
        self.watcher: asyncio.Future[None] | None = None

    def on_output(self) -> bool:
        try:
            data = os.read(self.master, 65536)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            with contextlib.suppress(OSError, ValueError):
                asyncio.get_running_loop().remove_reader(self.master)
            return False
        self.scrollback += data
        self.end += len(data)
        if len(self.scrollback) > SCROLLBACK:
            del self.scrollback[: len(self.scrollback) - SCROLLBACK]
        self.changed.set()
        return True

    async def watch(self) -> None:
        """The command exited: take what it wrote last, then publish the exit code."""
        code = await asyncio.to_thread(self.proc.wait)
        while self.on_output():
            pass
        self.exit_code = code
        self.changed.set()

    def since(self, offset: int) -> tuple[bytes, int]:
        start = self.end - len(self.scrollback)
        offset = min(max(offset, start), self.end)
        return bytes(self.scrollback[offset - start:]), self.end

    def close(self) -> None:
        with contextlib.suppress(OSError):
            asyncio.get_running_loop().remove_reader(self.master)
        for sig in (signal.SIGHUP, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.exit_code = self.proc.wait(2) if self.exit_code is None else self.exit_code
        self.changed.set()


class Terminals:
    """The terminals this daemon keeps, across streams."""

    def __init__(self) -> None:
        self.open: dict[str, Terminal] = {}

    def kept(self) -> list[str]:
        return list(self.open)

    def spawn(self, ask: Any, ctx: Context) -> Terminal:
        cwd = ctx.roots.resolve(ask.cwd)
        master, slave = os.openpty()
        _set_size(slave, ask.rows, ask.cols)
        argv = ["/bin/sh", "-c", ask.command] if ask.command else [os.environ.get("SHELL") or "/bin/sh"]
        env = {**os.environ, "TERM": os.environ.get("TERM", "xterm-256color"), **dict(ask.env)}
        try:
            proc = subprocess.Popen(["/bin/sh", "-c", _ATTACH, "pty", os.ttyname(slave), *argv],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    cwd=cwd, env=env, start_new_session=True, close_fds=True)
        except OSError:
            os.close(master)
            os.close(slave)
            raise
        os.set_blocking(master, False)
        term = Terminal(uuid.uuid4().hex[:16], proc, master, slave)
        asyncio.get_running_loop().add_reader(master, term.on_output)
        term.watcher = asyncio.ensure_future(term.watch())
        self.open[term.id] = term
        return term

    def detach_all(self) -> None:
        """The stream dropped: keep every terminal for keep_s(), then close it unless re-attached."""
        loop = asyncio.get_running_loop()
        for term in self.open.values():
            term.attached = None
            if term.expiry is None:
                term.expiry = loop.call_later(keep_s(), self._expire, term.id)

    def _expire(self, pty_id: str) -> None:
        term = self.open.pop(pty_id, None)
        if term is not None:
            term.close()

    def close_all(self) -> None:
        for pty_id in list(self.open):
            self._expire(pty_id)


async def serve(active: Active, term: Terminal, offset: int, terminals: Terminals) -> None:
    """Attached: stream output from `offset`, apply input/resize, until close or exit."""
    if term.expiry is not None:
        term.expiry.cancel()
        term.expiry = None
    term.attached = active
    inbox = asyncio.ensure_future(_inbox(active, term))
    try:
        while True:
            data, end = term.since(offset)
            if data:
                await active.send(output=proto.pb().Output(stream="pty", data=data, offset=end - len(data)))
                offset = end
            if term.exit_code is not None or inbox.done():
                break
            term.changed.clear()
            if term.since(offset)[0]:
                continue
            await asyncio.wait([asyncio.ensure_future(term.changed.wait()), inbox],
                               return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not inbox.done():
            inbox.cancel()
    if inbox.done() or term.exit_code is not None:
        terminals.open.pop(term.id, None)
        term.close()
        await active.send(exit=proto.pb().Exit(code=term.exit_code or 0, killed=inbox.done()))


async def _inbox(active: Active, term: Terminal) -> None:
    """Keystrokes and resizes until a Cancel (close)."""
    while True:
        frame = await active.inbox.get()
        body = frame.WhichOneof("body")
        if body == "cancel":
            return
        if body == "input" and frame.input.data:
            with contextlib.suppress(OSError):
                os.write(term.master, frame.input.data)
        elif body == "pty_resize":
            with contextlib.suppress(OSError):
                _set_size(term.master, frame.pty_resize.rows, frame.pty_resize.cols)


async def open_terminal(active: Active, ask: Any, ctx: Context) -> None:
    term = ctx.terminals.spawn(ask, ctx)
    await active.send(pty_opened=proto.pb().PtyOpened(pty_id=term.id, pid=term.proc.pid))
    await serve(active, term, 0, ctx.terminals)


async def attach(active: Active, ask: Any, ctx: Context) -> None:
    term = ctx.terminals.open.get(ask.pty_id)
    if term is None:
        await active.fail("not_found", f"terminal {ask.pty_id} is gone (not re-attached within {keep_s():.0f} s)")
        return
    await serve(active, term, ask.offset, ctx.terminals)
