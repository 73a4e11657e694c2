"""Start the debug adapters (debugpy, delve) as servers and build their launch/attach requests.

Each adapter runs in its own process group (new session) with the session's ownership marker in
its environment; everything it starts (debugpy's launcher and the debuggee, delve's compiled
binary) inherits the marker, which is how `stop` finds every process the session launched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.debug.attach import AdapterMissing
from engine.debug.procs import MARKER
from engine.debug.target import Target
from engine.errors import EngineError
from engine.paths import pinned_tool


def dlv_path() -> str:
    """delve: $FRAMEWORK_DLV, the pinned tools dirs (`make go-tools`), or PATH."""
    found = pinned_tool("dlv", "FRAMEWORK_DLV")
    if found:
        return found
    raise AdapterMissing("delve (dlv) is not installed: Go targets need it",
                         hint="make go-tools   (installs the pinned delve into .tools/bin)")


class AdapterProcess:
    """A running adapter server: its process and the address it listens on."""

    def __init__(self, proc: subprocess.Popen[bytes], host: str, port: int) -> None:
        self.proc = proc
        self.host = host
        self.port = port

    @property
    def pid(self) -> int:
        return self.proc.pid


def _wait_for(check: Callable[[], Any], proc: subprocess.Popen[bytes], what: str, log: Path,
              timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
            raise EngineError(f"the {what} adapter exited at start (exit {proc.returncode})",
                              hint=" | ".join(tail) or None, code="adapter_failed")
        time.sleep(0.01)
    raise EngineError(f"the {what} adapter did not listen within {timeout:g}s", code="adapter_failed")


def start_adapter(target: Target, port: int, token: str, workdir: Path, on_output: Callable[[str], None],
                  timeout: float = 20.0) -> AdapterProcess:
    env = {**os.environ, MARKER: token}
    log = workdir / f"{target.adapter}.log"
    if target.adapter == "debugpy":
        endpoints = workdir / "debugpy-endpoints.json"
        endpoints.unlink(missing_ok=True)
        env["DEBUGPY_ADAPTER_ENDPOINTS"] = str(endpoints)
        with open(log, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "engine.debug.debugpy_adapter", "--host", "127.0.0.1",
                                     "--port", str(port)], stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                    env=env, start_new_session=True)

        def listening() -> int | None:
            try:
                doc = json.loads(endpoints.read_text())
            except (OSError, ValueError):
                return None
            return int(doc["client"]["port"])

        return AdapterProcess(proc, "127.0.0.1", _wait_for(listening, proc, "debugpy", log, timeout))
    dlv = dlv_path()
    log.unlink(missing_ok=True)
    proc = subprocess.Popen([dlv, "dap", "--listen", f"127.0.0.1:{port}", "--log-dest", str(log)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            cwd=target.cwd or None, start_new_session=True)

    def pump() -> None:  # in attach mode delve prints the target's output
        assert proc.stdout is not None
        for raw in proc.stdout:
            on_output(raw.decode(errors="replace"))

    def delve_port() -> int | None:  # delve writes its address to --log-dest (no newline after it)
        try:
            found = re.search(rb"DAP server listening at: [^\s]+:(\d+)", log.read_bytes())
        except OSError:
            return None
        return int(found.group(1)) if found else None

    threading.Thread(target=pump, name="dlv-stdout", daemon=True).start()
    return AdapterProcess(proc, "127.0.0.1", _wait_for(delve_port, proc, "delve", log, timeout))


def start_request(target: Target, workdir: Path) -> tuple[str, dict[str, Any]]:
    """The DAP `launch` or `attach` request (command, arguments) for `target`."""
    if target.adapter == "debugpy":
        if target.mode == "attach":
            return "attach", {"processId": target.pid, "justMyCode": True}
        args: dict[str, Any] = {"args": target.args, "cwd": target.cwd, "env": target.env,
                                "console": "internalConsole", "justMyCode": True, "redirectOutput": True,
                                "stopOnEntry": False}
        if target.module:
            args["module"] = target.module
        else:
            args["program"] = target.program
        if target.python:
            args["python"] = [shutil.which(target.python) or target.python]
        return "launch", args
    if target.mode == "attach":
        return "attach", {"mode": "local", "processId": target.pid}
    return "launch", {"mode": "debug", "program": target.program, "args": target.args, "cwd": target.cwd,
                      "env": target.env, "output": str(workdir / "debug-bin"), "stopOnEntry": False}
