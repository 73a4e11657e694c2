"""The fork server behind tests/cli_fork.py: one per pytest worker, started on its first CLI call.

It imports what every `framework` / `platform` command imports (Typer, pydantic, rich, httpx and the
command modules), then waits on a Unix socket. Each request carries a program, argv, cwd, environment
and umask, with the child's stdin, stdout and stderr as file descriptors (SCM_RIGHTS); the server
forks, and the child runs the console script's own entry point (app.main) with those, exactly as the
installed script would after its imports: its exit code, signals, output and files are a real process's.
The server answers the child's pid at once and its wait status (with its CPU seconds) when it ends.

Nothing the imports compute may depend on the environment, the working directory or the terminal of
the process that imported them (tests/test_cli_fork.py checks the rule on the modules imported here);
the forked child sets all three from the request before the program starts.
"""

from __future__ import annotations

import array
import json
import os
import selectors
import socket
import sys

PRELOAD = (
    "typer", "typer.main", "typer.core", "typer._adapters", "typer._coercion",
    "pydantic", "pydantic.main", "pydantic.fields", "pydantic_core",
    "rich.console", "rich.table", "rich.text", "rich.markup",
    "httpx", "yaml", "json", "sqlite3", "subprocess", "tempfile", "shutil", "hashlib", "uuid", "datetime",
    "app.main", "app.cli", "app.output", "app.registry",
    # what most commands import when they run
    "engine.project", "engine.environments", "engine.releases", "engine.promotions", "engine.deploy",
    "engine.ledger", "engine.kcl", "engine.runtime", "engine.builds", "engine.git",
    # `platform server` (the tests start hundreds)
    "sqlalchemy", "uvicorn", "uvicorn.main", "cryptography.x509", "engine.server.app", "engine.server.main",
)


def _preload() -> None:
    import importlib

    from app.cli import FRAMEWORK_GROUP_MODULES, PLATFORM_GROUP_MODULES

    sys.modules.setdefault("httpx._main", None)  # type: ignore[assignment]  # as app.main.run does
    from engine.pydantic_plugins import skip_plugin_discovery

    skip_plugin_discovery()
    for name in PRELOAD:
        importlib.import_module(name)
    for target in (*FRAMEWORK_GROUP_MODULES.values(), *PLATFORM_GROUP_MODULES.values()):
        importlib.import_module(target.partition(":")[0])
    # Then every module of engine/ and app/cli/ (what commands import lazily when they run): ~0.5 CPU-s
    # once here against ~17 ms less in each forked call (measured over seven everyday commands).
    # Never textual: the dashboard's modules (app/ outside app/cli/, screens/) stay out.
    import pkgutil

    import app.cli
    import engine

    for package in (engine, app.cli):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(info.name)


def _receive(conn: socket.socket) -> tuple[dict, list[int]] | None:
    """One request: a length-prefixed JSON header and three descriptors."""
    fds = array.array("i")
    data, ancdata, _flags, _addr = conn.recvmsg(1 << 20, socket.CMSG_LEN(3 * fds.itemsize))
    if not data:
        return None
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    size = int.from_bytes(data[:4], "big")
    body = data[4:]
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            return None
        body += more
    return json.loads(body), list(fds)


def serve(path: str) -> tuple[dict, list[int]]:
    """Answer requests until the worker goes away (stdin at EOF); in a forked child, return its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the requester's connection)
    while True:
        for key, _ in selector.select():
            if key.data == "parent":
                if not os.read(sys.stdin.fileno(), 4096):
                    for pid, _conn in running.values():
                        _kill(pid)
                    os._exit(0)
            elif key.data == "accept":
                conn, _ = listener.accept()
                request = _receive(conn)
                if request is None:
                    conn.close()
                    continue
                header, fds = request
                pid = os.fork()
                if pid == 0:  # the child: nothing of the server's stays open in it
                    selector.close()
                    listener.close()
                    conn.close()
                    for other in running:
                        os.close(other)
                    for _pid, other_conn in running.values():
                        other_conn.close()
                    return header, fds
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                running[pidfd] = (pid, conn)
                selector.register(pidfd, selectors.EVENT_READ, "child")
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            else:
                pidfd = key.fd
                pid, conn = running.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status, usage = os.wait4(pid, 0)
                try:
                    conn.sendall(json.dumps({"status": status,
                                             "cpu": usage.ru_utime + usage.ru_stime}).encode() + b"\n")
                except OSError:
                    pass
                conn.close()


def _kill(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def child(header: dict, fds: list[int]) -> None:
    """Become the requested command: its stdio, directory, environment and umask, then its entry point."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    if header.get("session"):
        os.setsid()
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as the interpreter sets it at start
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    os.chdir(header["cwd"])
    os.umask(header["umask"])
    os.environ.clear()
    os.environ.update(header["env"])
    sys.argv = header["argv"]
    import app.main

    try:
        if header["program"] == "framework":
            app.main.framework_main()
        else:
            app.main.platform_main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    _exit(code)


def _exit(code: object) -> None:
    """The interpreter's exit as the script's process has it (threads joined, atexit handlers run, output
    flushed, the code or message of SystemExit), without tearing down the preloaded modules one by one."""
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]  # waits for non-daemon threads, as exit does
    atexit._run_exitfuncs()
    status = 0 if code is None else code if isinstance(code, int) else 1
    if not isinstance(code, int | None):
        sys.stderr.write(f"{code}\n")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120  # as Python does when flushing stdout fails at exit
    os._exit(status)


if __name__ == "__main__":
    _preload()
    import threading

    assert threading.active_count() == 1, "a preloaded module started a thread: fork would copy it half"
    import gc

    gc.freeze()  # the preloaded objects: never walked by a child's collections, their pages stay shared
    child(*serve(sys.argv[1]))
