"""`run`: subprocess.run for the tests' `framework` / `platform` calls, forked from a per-worker server.

A CLI call spends ~0.3 CPU-s importing Typer, pydantic, rich and the command modules and building its
parser before the command runs; the suite makes thousands. The server (tests/cli_fork_server.py) does
the imports once per pytest worker and forks a child per call, which then runs the console script's
entry point with the call's argv, working directory, environment, umask and stdio: a real child process
(its own pid, exit code, signals, files and children), minus the import time.

What the fork server cannot give, a plain exec does: `run` falls back to subprocess.run for any other
argv, a stdin other than nothing or `input=`, a PYTHON* variable differing from the server's, or
FRAMEWORK_TESTS_EXEC=1 (the whole suite through exec, to compare). Tests about how a process starts
(imports, fast paths, the console scripts) start their children with subprocess themselves.
"""

from __future__ import annotations

import atexit
import json
import locale
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
_SERVER_SCRIPT = Path(__file__).with_name("cli_fork_server.py")
_PROGRAMS = ("framework", "platform")
_lock = threading.Lock()
_server: dict[str, Any] = {}
CPU = [0.0]  # CPU seconds of the forked children so far (tests/conftest.py's SUITE_CPU_OUT adds them)
CALLS: dict[str, list[float]] = {}  # per command (program and its first two words): [calls, CPU seconds]


def _command(argv: list[str]) -> tuple[str, list[str]] | None:
    """(program, its arguments) when argv runs one of the two programs, else None."""
    if argv and Path(argv[0]).parent == BIN and Path(argv[0]).name in _PROGRAMS:
        return Path(argv[0]).name, argv[1:]
    if argv[:3] == [sys.executable, "-m", "app.main"] and len(argv) > 3 and argv[3] in _PROGRAMS:
        return argv[3], argv[4:]
    return None


def _python_vars(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


def _target(argv: list[str], env: dict[str, str], forkable: bool) -> tuple[str, str, list[str]] | None:
    """(the server's socket, program, its arguments) when this call can be forked, else None (exec it)."""
    command = _command(argv)
    if command is None or not forkable or os.environ.get("FRAMEWORK_TESTS_EXEC"):
        return None
    path = _socket_path()
    return (path, *command) if _python_vars(env) == _server["python"] else None


def _socket_path() -> str:
    with _lock:
        if _server.get("pid") != os.getpid():  # none yet, or one inherited across a fork of this process
            directory = tempfile.mkdtemp(prefix="clifork-")
            path = os.path.join(directory, "s")
            proc = subprocess.Popen([sys.executable, str(_SERVER_SCRIPT), path], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, cwd=_SERVER_SCRIPT.parent.parent,
                                    env={**os.environ, "PYTHONPATH": str(_SERVER_SCRIPT.parent.parent)})
            assert proc.stdout is not None
            if proc.stdout.readline() != b"ready\n":
                raise RuntimeError("the CLI fork server did not start (tests/cli_fork_server.py)")
            _server.update(pid=os.getpid(), proc=proc, path=path, directory=directory,
                           python=_python_vars(dict(os.environ)))
            atexit.register(_stop, proc, directory)
        return str(_server["path"])


def _stop(proc: subprocess.Popen[bytes], directory: str) -> None:
    if proc.stdin is not None:
        proc.stdin.close()  # the server exits at EOF
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(directory, ignore_errors=True)


def run(argv: list[str], *, cwd: Path | str | None = None, env: dict[str, str] | None = None,
        input: str | bytes | None = None, timeout: float | None = None, text: bool = False,
        capture_output: bool = True, stdin: int | None = None, check: bool = False) -> subprocess.CompletedProcess[Any]:
    """As subprocess.run(argv, capture_output=True, ...) with the same result, forked when it can be."""
    argv = [str(a) for a in argv]
    full = dict(os.environ if env is None else env)
    target = _target(argv, full, capture_output and stdin in (None, subprocess.DEVNULL))
    if target is None:
        return subprocess.run(argv, cwd=cwd, env=full, input=input, timeout=timeout, text=text,
                              capture_output=capture_output, stdin=stdin if input is None else None, check=check)
    path, program, args = target
    data = input.encode() if isinstance(input, str) else input
    done = _forked(path, program, args, cwd=os.path.abspath(cwd or os.getcwd()), env=full, data=data, timeout=timeout,
                   argv=argv)
    out, err = done.stdout, done.stderr
    if text:
        encoding = locale.getpreferredencoding(False)
        out, err = (b.decode(encoding).replace("\r\n", "\n").replace("\r", "\n") for b in (out, err))
    result = subprocess.CompletedProcess(argv, done.returncode, out, err)
    if check:
        result.check_returncode()
    return result


def _request(path: str, program: str, args: list[str], cwd: Path | str | None, env: dict[str, str],
             fds: list[int], session: bool = False) -> tuple[socket.socket, int]:
    """Ask the server for a child with these descriptors as its stdin, stdout, stderr; (the connection its
    wait status will come on, its pid)."""
    umask = os.umask(0o022)
    os.umask(umask)
    header = json.dumps({"program": program, "argv": [str(BIN / program), *args], "env": env, "umask": umask,
                         "cwd": os.path.abspath(cwd or os.getcwd()), "session": session}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        conn.sendmsg([len(header).to_bytes(4, "big") + header],
                     [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(memoryview(_ints(fds))))])
        line = b""
        while not line.endswith(b"\n"):  # byte by byte: the wait status that follows stays unread
            block = conn.recv(1)
            if not block:
                raise RuntimeError(f"the CLI fork server refused {program} {args}")
            line += block
    except BaseException:
        conn.close()
        raise
    return conn, int(json.loads(line)["pid"])


def _forked(path: str, program: str, args: list[str], *, cwd: Path | str | None, env: dict[str, str],
            data: bytes | None, timeout: float | None, argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    deadline = None if timeout is None else time.monotonic() + timeout
    stdin_r, stdin_w = os.pipe() if data is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    fds = [stdin_r, out_w, err_w]
    try:
        conn, pid = _request(path, program, args, cwd, env, fds)
    except BaseException:
        for fd in (*fds, out_r, err_r, stdin_w):
            if fd >= 0:
                os.close(fd)
        raise
    for fd in fds:
        os.close(fd)
    child = Forked(argv, pid, conn, {"stdin": None, "stdout": None, "stderr": None})
    try:
        chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
        _pump(chunks, stdin_w, data, deadline, pid, argv, timeout)
        if not child._report(None if deadline is None else max(0.1, deadline - time.monotonic())):
            _expire(pid, argv, timeout, chunks)
        assert child.returncode is not None
        return subprocess.CompletedProcess(argv, child.returncode, b"".join(chunks[out_r]), b"".join(chunks[err_r]))
    finally:
        conn.close()
        os.close(out_r)
        os.close(err_r)


def _ints(fds: list[int]) -> Any:
    import array

    return array.array("i", fds)


def _pump(chunks: dict[int, list[bytes]], stdin_w: int, data: bytes | None, deadline: float | None, pid: int,
          argv: list[str], timeout: float | None) -> None:
    """Feed stdin and read stdout and stderr to their ends, as Popen.communicate does."""
    selector = selectors.DefaultSelector()
    for fd in chunks:
        selector.register(fd, selectors.EVENT_READ)
    view = memoryview(data or b"")
    if stdin_w >= 0 and view:
        os.set_blocking(stdin_w, False)
        selector.register(stdin_w, selectors.EVENT_WRITE)
    elif stdin_w >= 0:
        os.close(stdin_w)
        stdin_w = -1
    open_reads = len(chunks)
    try:
        while open_reads:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                _expire(pid, argv, timeout, chunks)
            for key, _ in selector.select(wait):
                if key.fd == stdin_w:
                    try:
                        sent = os.write(stdin_w, view[:65536])
                    except BrokenPipeError:
                        sent = len(view)
                    view = view[sent:]
                    if not view:
                        selector.unregister(stdin_w)
                        os.close(stdin_w)
                        stdin_w = -1
                    continue
                block = os.read(key.fd, 65536)
                if block:
                    chunks[key.fd].append(block)
                else:
                    selector.unregister(key.fd)
                    open_reads -= 1
    finally:
        selector.close()
        if stdin_w >= 0:
            os.close(stdin_w)


def _expire(pid: int, argv: list[str], timeout: float | None, chunks: dict[int, list[bytes]]) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    out, err = (b"".join(parts) for parts in chunks.values())
    raise subprocess.TimeoutExpired(argv, timeout or 0, out, err)


class Forked:
    """The part of subprocess.Popen the tests use, for a child of the fork server."""

    def __init__(self, args: list[str], pid: int, conn: socket.socket, streams: dict[str, Any]) -> None:
        self.args, self.pid, self._conn, self.returncode = args, pid, conn, None
        self._answer = b""
        self.stdin, self.stdout, self.stderr = streams["stdin"], streams["stdout"], streams["stderr"]

    def _report(self, timeout: float | None) -> bool:
        """Read the wait status if the server has sent it within `timeout` seconds (None: until it has)."""
        if self.returncode is not None:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._answer.endswith(b"\n"):
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._conn.settimeout(wait)
            try:
                block = self._conn.recv(4096)
            except (TimeoutError, BlockingIOError):
                return False
            if not block:
                raise RuntimeError(f"the CLI fork server went away while {self.args} ran")
            self._answer += block
        report = json.loads(self._answer)
        CPU[0] += report["cpu"]
        program, args = _command([str(a) for a in self.args]) or ("?", [])  # forked: always one of the two
        calls = CALLS.setdefault(" ".join([program, *(a for a in args[:2] if not a.startswith("-"))]), [0, 0.0])
        calls[0] += 1
        calls[1] += report["cpu"]
        self.returncode = os.waitstatus_to_exitcode(report["status"])
        self._conn.close()
        return True

    def poll(self) -> int | None:
        self._report(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._report(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # as Popen: never a signal to a pid that may be reused
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        if input is not None and self.stdin is not None:
            self.stdin.write(input)
        if self.stdin is not None:
            self.stdin.close()
        out = self.stdout.read() if self.stdout is not None else None
        err = self.stderr.read() if self.stderr is not None else None
        self.wait(timeout)
        return out, err

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdout, self.stderr, self.stdin):
            if stream is not None:
                stream.close()
        self.wait()


def _end(spec: Any, parent_end: str, default: int) -> tuple[int, int | None, bool]:
    """(the child's descriptor, the test's end of a pipe or None, whether the child's one is ours to close)."""
    if spec is None:
        return default, None, False
    if spec == subprocess.PIPE:
        r, w = os.pipe()
        return (r, w, True) if parent_end == "w" else (w, r, True)
    if spec == subprocess.DEVNULL:
        return os.open(os.devnull, os.O_RDWR), None, True
    return (spec if isinstance(spec, int) else spec.fileno()), None, False


def popen(argv: list[str], *, cwd: Path | str | None = None, env: dict[str, str] | None = None,
          stdin: Any = None, stdout: Any = None, stderr: Any = None, text: bool = False,
          start_new_session: bool = False) -> Any:
    """As subprocess.Popen(argv, ...) for a long-running CLI child (a server, a daemon, a watch)."""
    argv = [str(a) for a in argv]
    full = dict(os.environ if env is None else env)
    given = [s if isinstance(s, int) else s.fileno() for s in (stdin, stdout, stderr)
             if s is not None and s not in (subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT)]
    # a terminal on a standard stream: the interpreter sets up for it at start, so that one is exec'd
    target = _target(argv, full, not any(os.isatty(fd) for fd in given))
    if target is None:
        return subprocess.Popen(argv, cwd=cwd, env=full, stdin=stdin, stdout=stdout, stderr=stderr, text=text,
                                start_new_session=start_new_session)
    path, program, args = target
    ends = [_end(stdin, "w", 0), _end(stdout, "r", 1), None]
    ends[2] = (ends[1][0], None, False) if stderr == subprocess.STDOUT else _end(stderr, "r", 2)
    try:
        conn, pid = _request(path, program, args, cwd, full, [e[0] for e in ends], start_new_session)
    finally:
        for child_fd, _, ours in ends:
            if ours:
                os.close(child_fd)
    streams = {}
    for name, (_, mine, _) in zip(("stdin", "stdout", "stderr"), ends, strict=True):
        mode = ("w" if name == "stdin" else "r") + ("" if text else "b")
        streams[name] = None if mine is None else open(mine, mode, buffering=1 if text and name == "stdin" else -1)  # noqa: SIM115
    return Forked(argv, pid, conn, streams)
