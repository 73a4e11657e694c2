"""Read-only engine calls on a daemon thread, awaited from an async Textual worker.

A `@work(thread=True)` worker runs on asyncio's default executor, whose threads are joined when the
loop and the interpreter shut down: quitting while a load is in flight (engine imports, KCL
evaluation) waits for it to finish. A read has nothing to finish, so `in_daemon_thread` runs it on
a daemon thread instead; the awaiting async worker keeps Textual's groups, `exclusive` and
`workers.wait_for_complete()`, and a quit abandons the read at once.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from textual import work
from textual.message import Message

T = TypeVar("T")


async def in_daemon_thread(fn: Callable[[], T], name: str = "dashboard-read") -> T:
    """Run `fn()` (read-only: it may be abandoned at quit) on a daemon thread and return its result."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)  # type: ignore[arg-type]

    def body() -> None:
        value: T | None = None
        error: BaseException | None = None
        try:
            value = fn()
        except BaseException as exc:  # handed to the awaiting worker, which re-raises it
            error = exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:
            pass  # the loop closed while we were reading: the dashboard has quit

    threading.Thread(target=body, name=name, daemon=True).start()
    return await done


def read_worker(group: str) -> Callable[[Callable[..., Message | None]], Any]:
    """`@work(exclusive=True, group=...)` for a screen's read: the decorated method is synchronous
    and returns the message to post (or None); it runs on a daemon thread, so a quit never waits
    for it, and a newer load supersedes an older one as with `exclusive`. Only for reads: an
    action that must finish (deploy, supersede, replay, stack up/down) stays a thread worker."""

    def decorate(read: Callable[..., Message | None]) -> Any:
        @work(exclusive=True, group=group)
        @functools.wraps(read)
        async def load(self: Any, *args: Any, **kwargs: Any) -> None:
            message = await in_daemon_thread(functools.partial(read, self, *args, **kwargs), f"{group}-read")
            if message is not None:
                self.post_message(message)

        return load

    return decorate
