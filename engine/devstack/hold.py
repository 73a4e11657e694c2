"""Holding a dev stack in the foreground: live status, session refresh and `--watch`.

`--watch` rebuilds and restarts what changed (watchdog): a change under a process's watch paths
(its build context, or the directories of the project files its command names) rebuilds that
workload when it declares a build and restarts it on the same ports; a failed rebuild keeps the
running version. Returns when the stack's record disappears (`env down` from elsewhere).
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.devstack import stacks as registry
from engine.devstack.checkout import Checkout, refresh_session
from engine.devstack.stacks import StackStatus
from engine.errors import EngineError

IGNORED_PARTS = {".git", ".framework", "__pycache__", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"}
POLL = 0.2
QUIET = 0.3  # debounce: act once the tree has been quiet this long
SESSION_REFRESH = 300.0


class Watcher:
    """Collects changed paths under the project (watchdog); started before the stack's processes
    so a change made while they start is not missed. Watches are in place when start() returns."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.changes: queue.Queue[str] = queue.Queue()
        self.observer: Any = None

    def start(self) -> Watcher:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        changes = self.changes

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                for raw in (event.src_path, getattr(event, "dest_path", "")):
                    path = str(raw or "")
                    if path and not IGNORED_PARTS.intersection(Path(path).parts):
                        changes.put(path)

        self.observer = Observer()
        self.observer.schedule(Handler(), str(self.root), recursive=True)
        self.observer.daemon = True
        self.observer.start()
        return self

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer.join(timeout=2)
            self.observer = None


def affected(processes: list[registry.StackProcess], paths: set[str]) -> list[registry.StackProcess]:
    hit = []
    for proc in processes:
        roots = [Path(w) for w in proc.watch]
        if any(Path(p) == r or r in Path(p).parents for p in paths for r in roots):
            hit.append(proc)
    return hit


def _wait_ports_released(ports: list[int], timeout: float) -> None:
    """The stopped leader can be gone while the rest of its process group still holds the port."""
    from engine.processes import port_free

    deadline = time.monotonic() + timeout
    while any(not port_free(p) for p in ports) and time.monotonic() < deadline:
        time.sleep(0.05)


def restart(launcher: Any, proc: registry.StackProcess, no_build: bool, say: Callable[[str], None]) -> None:
    """Rebuild (when declared) and restart one process on the same ports."""
    from engine.environments.evaluate import evaluate_environment

    if proc.kind == "workload" and not no_build:
        from engine.builds.dispatch import build_workload

        workload = evaluate_environment(launcher.project, launcher.env, launcher.defines).workload(proc.name)
        if workload is not None and workload.build is not None:
            build_workload(launcher.project, launcher.env, workload, None)
    registry.stop_process(launcher.stack, proc, grace=5.0)
    _wait_ports_released(proc.ports, timeout=10.0)
    spec = launcher.specs[proc.name]
    new = launcher.start(spec, proc.kind, proc.watch)
    new.restarts = proc.restarts + 1
    registry.save(launcher.stack)
    launcher.wait_healthy([proc.name], 60.0)
    say(f"restarted {proc.name} pid {new.pid}")


def hold(launcher: Any, opts: Any, checkout: Checkout, progress: Callable[[str], None] | None,
         on_status: Callable[[StackStatus], None] | None, events: list[str], watcher: Watcher | None) -> None:
    """Block until interrupted (KeyboardInterrupt) or until the stack is stopped from elsewhere."""

    def say(message: str) -> None:
        events.append(message)
        if progress:
            progress(message)

    if watcher is not None:
        say(f"watching {launcher.project.root} for changes")
    refreshed = time.monotonic()
    pending: set[str] = set()
    last_change = 0.0
    try:
        while True:
            stack = registry.load(launcher.stack.id)
            if stack is None or stack.token != launcher.stack.token:
                say("the stack was stopped from elsewhere")
                return
            if on_status:
                on_status(registry.status_of(launcher.stack))
            if time.monotonic() - refreshed > SESSION_REFRESH:  # a local session is refreshed while a stack runs
                refresh_session(launcher.project, checkout, launcher.env)
                refreshed = time.monotonic()
            while watcher is not None:
                try:
                    pending.add(watcher.changes.get_nowait())
                except queue.Empty:
                    break
                last_change = time.monotonic()
            if pending and time.monotonic() - last_change >= QUIET:
                hit = affected(launcher.stack.processes, pending)
                pending.clear()
                for proc in hit:
                    say(f"{proc.name}: change detected, restarting")
                    try:
                        restart(launcher, proc, opts.no_build, say)
                    except EngineError as exc:
                        say(f"{proc.name}: restart failed: {exc.message}")
            time.sleep(POLL)
    finally:
        if watcher is not None:
            watcher.stop()
