"""The session broker: one background process per debug session that owns the adapter connection.

`debug start` runs `python -m engine.debug.broker` detached (new session), hands it the resolved
target on stdin and reads one ready line from its stdout. The broker starts the adapter, launches
or attaches, writes `.framework/debug-session.json` atomically (0600: it holds the session token)
and then serves one JSON request per line on 127.0.0.1. Every `debug` command and the Debug
screen are clients of it; `stop` ends it.
"""

from __future__ import annotations

import ast
import hmac
import json
import os
import signal
import socketserver
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from engine.debug.adapters import AdapterProcess, start_adapter, start_request
from engine.debug.dap import DapClient, DapError
from engine.debug.target import Target
from engine.errors import EngineError

OUTPUT_LINES = 200
RESUME = {"continue": "continue", "step": "next", "step-in": "stepIn", "step-out": "stepOut"}
GROUPS = {"special variables", "function variables", "class variables", "protected variables"}


class Refused(EngineError):
    code = "debug_refused"


def _params_of(file: str, function: str, line: int) -> list[str] | None:
    """Parameter names of the Python function `function` enclosing `line` (None when not found)."""
    try:
        tree = ast.parse(Path(file).read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function:
            if node.lineno <= line <= (node.end_lineno or line):
                a = node.args
                names = [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
                names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
                return names
    return None


def _go_params(file: str, function: str, line: int) -> list[str] | None:
    """Parameter (and receiver) names of the Go function `pkg.[(*T).]name` declared at or before `line`."""
    import re

    name = function.rsplit(".", 1)[-1]
    try:
        lines = Path(file).read_text(errors="replace").splitlines()[:line]
    except OSError:
        return None
    pattern = re.compile(r"^func\s*(\(([^)]*)\))?\s*" + re.escape(name) + r"\s*\(([^)]*)\)")
    for text in reversed(lines):
        found = pattern.match(text)
        if found:
            names = []
            for part in [*(found.group(2) or "").split(","), *found.group(3).split(",")]:
                tokens = part.split()
                if tokens:
                    names.append(tokens[0])
            return names
    return None


class Broker:
    def __init__(self, target: Target, token: str, workdir: Path) -> None:
        self.target = target
        self.token = token
        self.workdir = workdir
        self.cond = threading.Condition()
        self.state = "starting"  # starting | running | stopped | exited
        self.stop_seq = 0
        self.stopped: dict[str, Any] | None = None
        self.exit_code: int | None = None
        self.target_pid: int | None = target.pid
        self.output: deque[str] = deque(maxlen=OUTPUT_LINES)
        self.partial = ""
        self.breakpoints: list[dict[str, Any]] = []
        self.next_bp = 1
        self.events: deque[dict[str, Any]] = deque()
        self.event_ready = threading.Event()
        self.initialized = threading.Event()
        self.adapter: AdapterProcess | None = None
        self.dap: DapClient | None = None
        self.capabilities: dict[str, Any] = {}
        self.started_at = time.time()

    # -- adapter side ----------------------------------------------------------------------------

    def start(self, port: int) -> None:
        self.adapter = start_adapter(self.target, port, self.token, self.workdir, self._output)
        self.dap = DapClient.connect(self.adapter.host, self.adapter.port, self._on_event, self._on_close)
        threading.Thread(target=self._event_loop, name="dap-events", daemon=True).start()
        self.capabilities = self.dap.request("initialize", {
            "clientID": "framework", "clientName": "framework debug", "adapterID": self.target.adapter,
            "pathFormat": "path", "linesStartAt1": True, "columnsStartAt1": True,
            "supportsVariableType": True, "supportsRunInTerminalRequest": False})
        command, arguments = start_request(self.target, self.workdir)
        pending = self.dap.send_request(command, arguments)
        deadline = time.monotonic() + 60  # delve compiles the program first
        while not self.initialized.wait(0.05):
            if pending.done.is_set():
                self.dap.wait(pending, command, 0)  # raises the adapter's message when it failed
            if self.dap.closed.is_set() or time.monotonic() > deadline:
                raise EngineError(f"the {self.target.adapter} adapter did not get ready to {command}",
                                  code="adapter_failed")
        self.dap.request("configurationDone", {})
        self.dap.wait(pending, command, 60)
        with self.cond:
            if self.state == "starting":
                self.state = "running"

    def _output(self, text: str) -> None:
        """The target's output, by whole lines (an adapter may send a line in pieces)."""
        with self.cond:
            lines = (self.partial + text).split("\n")
            self.partial = lines.pop()
            self.output.extend(line.rstrip("\r") for line in lines)

    def _on_event(self, message: dict[str, Any]) -> None:
        if message.get("event") == "initialized":
            self.initialized.set()
            return
        self.events.append(message)
        self.event_ready.set()

    def _on_close(self) -> None:
        with self.cond:
            if self.state != "exited":
                self.state = "exited"
                self.output.append("(the debug adapter closed the connection)")  # never a partial line
                self.stop_seq += 1
            self.cond.notify_all()

    def _event_loop(self) -> None:
        """Events are handled off the reader thread: a `stopped` needs a stackTrace request."""
        while True:
            self.event_ready.wait()
            self.event_ready.clear()
            while self.events:
                message = self.events.popleft()
                try:
                    self._handle(message.get("event", ""), message.get("body") or {})
                except (DapError, KeyError, ValueError, TypeError) as exc:
                    self._output(f"(event {message.get('event')}: {exc})")

    def _handle(self, event: str, body: dict[str, Any]) -> None:
        if event == "output" and body.get("category") in ("stdout", "stderr", "console", None):
            if body.get("category") != "console":
                self._output(str(body.get("output", "")))
        elif event == "process":
            with self.cond:
                self.target_pid = body.get("systemProcessId") or self.target_pid
        elif event == "stopped":
            where = self._where(int(body.get("threadId") or 0))
            with self.cond:
                self.stopped = {"reason": body.get("reason", ""), "description": body.get("description") or "",
                                "thread_id": body.get("threadId"), **where}
                self.state = "stopped"
                self.stop_seq += 1
                self.cond.notify_all()
        elif event == "continued":
            with self.cond:
                if self.state == "stopped":
                    self.state = "running"
                    self.stopped = None
        elif event == "exited":
            with self.cond:
                self.exit_code = body.get("exitCode")
        elif event == "terminated":
            with self.cond:
                self.state = "exited"
                self.stopped = None
                self.stop_seq += 1
                self.cond.notify_all()
        elif event == "breakpoint":
            bp = body.get("breakpoint") or {}
            with self.cond:
                for ours in self.breakpoints:
                    if bp.get("id") is not None and ours.get("adapter_id") == bp.get("id"):
                        ours["verified"] = bool(bp.get("verified"))
                        ours["message"] = bp.get("message") or ""
                        ours["line"] = bp.get("line") or ours.get("line")

    def _where(self, thread_id: int) -> dict[str, Any]:
        assert self.dap is not None
        frames = self.dap.request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": 1}
                                  ).get("stackFrames") or []
        if not frames:
            return {"file": None, "line": None, "function": None}
        top = frames[0]
        return {"file": (top.get("source") or {}).get("path"), "line": top.get("line"), "function": top.get("name")}

    # -- requests ---------------------------------------------------------------------------------

    def snapshot(self, tail: int = 20) -> dict[str, Any]:
        with self.cond:
            return {"target": self.target.describe(), "name": self.target.name, "adapter": self.target.adapter,
                    "mode": "attached" if self.target.mode == "attach" else "launched",
                    "state": self.state, "stopped": self.stopped, "target_exit_code": self.exit_code,
                    "target_pid": self.target_pid, "ports": self.target.ports, "source": self._source(),
                    "breakpoints": [self._bp_view(b) for b in self.breakpoints],
                    "output": ([*self.output, self.partial] if self.partial else list(self.output))[-tail:]
                    if tail else []}

    def _source(self) -> str | None:
        """The file a front-end shows before the first stop: the program, or a Go package's main.go."""
        program = self.target.program
        if program and Path(program).is_dir():
            main = Path(program) / "main.go"
            return str(main) if main.is_file() else None
        return program or None

    @staticmethod
    def _bp_view(bp: dict[str, Any]) -> dict[str, Any]:
        return {k: bp.get(k) for k in ("id", "file", "line", "function", "condition", "verified", "message")}

    def _client(self) -> DapClient:
        if self.dap is None or self.dap.closed.is_set():
            raise self._gone()
        return self.dap

    def _gone(self) -> Refused:
        tail = " | ".join(line for line in list(self.output)[-3:] if line.strip())
        code = "" if self.exit_code is None else f" (exit {self.exit_code})"
        return Refused(f"the target {self.target.name} has exited{code}", code="target_exited",
                       hint=(f"last output: {tail}; " if tail else "") + "end the session with `framework debug stop`")

    def _need_stopped(self) -> dict[str, Any]:
        with self.cond:
            if self.state == "exited":
                raise self._gone()
            if self.state != "stopped" or self.stopped is None:
                raise Refused("the target is running: it is not stopped at a breakpoint",
                              hint="wait for a stop with `framework debug continue`")
            return dict(self.stopped)

    def set_breakpoint(self, file: str | None, line: int | None, function: str | None,
                       condition: str | None) -> dict[str, Any]:
        self._client()
        with self.cond:
            bp = {"id": self.next_bp, "file": file, "line": line, "function": function, "condition": condition,
                  "verified": False, "message": ""}
            self.next_bp += 1
            self.breakpoints.append(bp)
        try:
            self._sync(file)
        except DapError:
            with self.cond:
                self.breakpoints.remove(bp)
            raise
        return self._bp_view(bp)

    def clear(self, bp_id: int) -> dict[str, Any]:
        with self.cond:
            bp = next((b for b in self.breakpoints if b["id"] == bp_id), None)
            if bp is None:
                known = ", ".join(str(b["id"]) for b in self.breakpoints) or "none"
                raise Refused(f"no breakpoint {bp_id} (breakpoints: {known})", code="unknown_breakpoint")
            self.breakpoints.remove(bp)
        self._sync(bp["file"])
        return self._bp_view(bp)

    def _sync(self, file: str | None) -> None:
        """DAP sets breakpoints per source file (and all function breakpoints at once)."""
        dap = self._client()
        with self.cond:
            mine = [b for b in self.breakpoints if b["file"] == file]
        if file is None:
            answer = dap.request("setFunctionBreakpoints", {"breakpoints": [
                {"name": b["function"], **({"condition": b["condition"]} if b["condition"] else {})} for b in mine]})
        else:
            answer = dap.request("setBreakpoints", {"source": {"path": file}, "breakpoints": [
                {"line": b["line"], **({"condition": b["condition"]} if b["condition"] else {})} for b in mine]})
        with self.cond:
            for ours, theirs in zip(mine, answer.get("breakpoints") or [], strict=False):
                ours["adapter_id"] = theirs.get("id")
                ours["verified"] = bool(theirs.get("verified"))
                ours["message"] = theirs.get("message") or ""
                if file is not None and theirs.get("line"):
                    ours["line"] = theirs["line"]
                elif file is None and (theirs.get("source") or {}).get("path"):
                    ours["file_resolved"] = theirs["source"]["path"]

    def resume(self, how: str, timeout: float) -> dict[str, Any]:
        dap = self._client()
        with self.cond:
            if self.state == "exited":
                raise self._gone()
            seq = self.stop_seq
            stopped = self.stopped
        if stopped is None and how != "continue":
            raise Refused(f"the target is running: nothing to {how}",
                          hint="wait for a stop with `framework debug continue`")
        if stopped is not None:
            with self.cond:
                self.state = "running"
                self.stopped = None
            dap.request(RESUME[how], {"threadId": stopped["thread_id"]})
        with self.cond:
            arrived = self.cond.wait_for(lambda: self.stop_seq != seq, timeout)
        result = self.snapshot(tail=5)
        result["timed_out"] = not arrived
        return result

    def _frame(self, index: int) -> dict[str, Any]:
        stopped = self._need_stopped()
        frames = self.stack(levels=index + 1)["frames"]
        if index >= len(frames):
            raise Refused(f"--frame {index}: the stack has {len(frames)} frames", code="usage", exit_code=2)
        return {**frames[index], "thread_id": stopped["thread_id"]}

    def stack(self, levels: int = 50) -> dict[str, Any]:
        stopped = self._need_stopped()
        frames = self._client().request("stackTrace", {"threadId": stopped["thread_id"], "startFrame": 0,
                                                       "levels": levels}).get("stackFrames") or []
        return {"thread_id": stopped["thread_id"], "frames": [
            {"index": i, "id": f["id"], "function": f.get("name"), "file": (f.get("source") or {}).get("path"),
             "line": f.get("line")} for i, f in enumerate(frames)]}

    def variables(self, ref: int) -> list[dict[str, Any]]:
        found = self._client().request("variables", {"variablesReference": ref}).get("variables") or []
        return [{"name": v.get("name"), "value": v.get("value"), "type": v.get("type") or "",
                 "ref": v.get("variablesReference") or 0} for v in found if v.get("name") not in GROUPS]

    def scope_vars(self, which: str, index: int) -> dict[str, Any]:
        frame = self._frame(index)
        scopes = self._client().request("scopes", {"frameId": frame["id"]}).get("scopes") or []
        by_name = {s.get("name", "").lower(): s for s in scopes}
        local = by_name.get("locals") or by_name.get("local") or (scopes[0] if scopes else None)
        if which == "args" and "arguments" in by_name:  # delve
            values = self.variables(by_name["arguments"]["variablesReference"])
        else:
            values = self.variables(local["variablesReference"]) if local else []
            if which == "args":
                find = _go_params if self.target.adapter == "delve" else _params_of
                params = find(frame["file"] or "", frame["function"] or "", frame["line"] or 0)
                values = [v for v in values if params is not None and v["name"] in params]
                if params is not None:
                    values.sort(key=lambda v: params.index(v["name"]))
        return {"frame": {k: frame[k] for k in ("index", "function", "file", "line")}, which: values}

    def evaluate(self, expression: str, index: int) -> dict[str, Any]:
        frame = self._frame(index)
        try:
            answer = self._client().request("evaluate", {"expression": expression, "frameId": frame["id"],
                                                         "context": "repl"})
        except DapError as exc:  # a Python traceback: its last line is the message
            lines = [line for line in exc.message.strip().splitlines() if line.strip()]
            raise Refused(f"{expression}: {lines[-1] if lines else exc.message}", code="eval_failed") from None
        result = answer.get("result", "")
        return {"expression": expression, "result": result, "type": answer.get("type") or "",
                "ref": answer.get("variablesReference") or 0,
                "frame": {k: frame[k] for k in ("index", "function", "file", "line")}}

    def threads(self) -> dict[str, Any]:
        found = self._client().request("threads", {}).get("threads") or []
        with self.cond:
            current = self.stopped["thread_id"] if self.stopped else None
        kind = "goroutines" if self.target.adapter == "delve" else "threads"
        return {"kind": kind, "current": current,
                "threads": [{"id": t.get("id"), "name": t.get("name"), "current": t.get("id") == current}
                            for t in found]}

    def stop(self) -> dict[str, Any]:
        from engine.debug.procs import kill_marked
        from engine.processes import pid_alive

        launched = self.target.mode == "launch"
        if self.dap is not None and not self.dap.closed.is_set():
            try:
                self.dap.request("disconnect", {"terminateDebuggee": launched, "restart": False}, timeout=5)
            except DapError:
                pass
        if self.adapter is not None:
            try:
                self.adapter.proc.wait(timeout=5)
            except Exception:  # noqa: BLE001 - still running: killed with the marked processes below
                pass
        killed = kill_marked(self.token)
        if self.adapter is not None:
            try:
                self.adapter.proc.wait(timeout=2)
            except Exception:  # noqa: BLE001
                pass
        result: dict[str, Any] = {"target": self.target.describe(),
                                  "mode": "launched" if launched else "attached", "killed": killed,
                                  "target_exit_code": self.exit_code}
        if not launched and self.target.pid is not None:
            result["detached"] = self.target.pid
            result["left_running"] = pid_alive(self.target.pid)
        return result


class _Handler(socketserver.StreamRequestHandler):
    broker: Broker
    on_stop: Any

    def handle(self) -> None:
        line = self.rfile.readline()
        try:
            request = json.loads(line)
            if not hmac.compare_digest(str(request.get("token", "")), self.broker.token):
                raise Refused("bad session token", code="unauthorized")
            reply = {"ok": True, "result": dispatch(self.broker, request.get("op", ""), request.get("args") or {})}
        except EngineError as exc:
            reply = {"ok": False, "error": exc.to_dict(), "exit_code": exc.exit_code}
        except (ValueError, TypeError, KeyError) as exc:
            reply = {"ok": False, "error": {"code": "bad_request", "message": str(exc)}, "exit_code": 1}
        self.wfile.write(json.dumps(reply).encode() + b"\n")
        self.wfile.flush()
        if reply.get("ok") and request.get("op") == "stop":
            self.on_stop()


def dispatch(broker: Broker, op: str, args: dict[str, Any]) -> Any:
    if op == "status":
        return broker.snapshot(tail=int(args.get("tail", 20)))
    if op == "break":
        return broker.set_breakpoint(args.get("file"), args.get("line"), args.get("function"), args.get("condition"))
    if op == "breakpoints":
        return {"breakpoints": broker.snapshot(tail=0)["breakpoints"]}
    if op == "clear":
        return broker.clear(int(args["id"]))
    if op in RESUME:
        return broker.resume(op, float(args.get("timeout", 30)))
    if op == "stack":
        return broker.stack()
    if op in ("locals", "args"):
        return broker.scope_vars(op, int(args.get("frame", 0)))
    if op == "eval":
        return broker.evaluate(str(args["expression"]), int(args.get("frame", 0)))
    if op == "variables":
        return {"variables": broker.variables(int(args["ref"]))}
    if op == "goroutines":
        return broker.threads()
    if op == "stop":
        return broker.stop()
    raise Refused(f"unknown request {op!r}", code="bad_request")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main() -> int:
    """Read {target, token, port, session_file, workdir} on stdin, answer one ready line, then serve."""
    from engine.paths import atomic_write_bytes

    spec = json.loads(sys.stdin.readline())
    target = Target.model_validate(spec["target"])
    workdir = Path(spec["workdir"])
    session_file = Path(spec["session_file"])
    broker = Broker(target, spec["token"], workdir)
    server = _Server(("127.0.0.1", 0), _Handler)
    done = threading.Event()

    def finish() -> None:
        session_file.unlink(missing_ok=True)
        done.set()

    def on_stop() -> None:
        finish()

    def on_signal(signum: int, frame: Any) -> None:
        broker.stop()
        finish()

    _Handler.broker = broker
    _Handler.on_stop = staticmethod(on_stop)
    try:
        broker.start(int(spec.get("port") or 0))
    except Exception as exc:  # noqa: BLE001 - reported to `debug start`, then everything launched is stopped
        error = exc.to_dict() if isinstance(exc, EngineError) else {"code": "adapter_failed", "message": str(exc)}
        broker.stop()
        sys.stdout.write(json.dumps({"ok": False, "error": error}) + "\n")
        sys.stdout.flush()
        return 1
    host, port = str(server.server_address[0]), int(server.server_address[1])
    assert broker.adapter is not None
    doc = {"version": 1, "address": f"{host}:{port}", "pid": os.getpid(), "token": broker.token,
           "mode": "attached" if target.mode == "attach" else "launched", "adapter": target.adapter,
           "adapter_pid": broker.adapter.pid, "adapter_port": broker.adapter.port, "target": target.describe(),
           "name": target.name, "kind": target.kind, "target_pid": broker.target_pid,
           "started_at": broker.started_at, "workdir": str(workdir)}
    atomic_write_bytes(session_file, json.dumps(doc, indent=2).encode(), mode=0o600)
    signal.signal(signal.SIGTERM, on_signal)
    threading.Thread(target=server.serve_forever, name="broker", daemon=True).start()
    sys.stdout.write(json.dumps({"ok": True, "session": {k: v for k, v in doc.items() if k != "token"}}) + "\n")
    sys.stdout.flush()
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the caller has its answer: nothing more on its pipe
    done.wait()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
