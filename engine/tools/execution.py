"""Execution tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): bash, bash_list, bash_output,
bash_kill.

Every command runs in a fresh POSIX shell (`/bin/sh -c`) in the project or worktree root, in its
own process group. Output goes to a file, not a pipe, so a command that leaves children behind
cannot hang the call. Background processes are kept in a per-session process table (a JSON file
in the session's data dir) and live until bash_kill or the end of the run (`close_session`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from engine.paths import atomic_write_bytes
from engine.processes import pid_alive
from engine.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    boolean,
    clamp,
    integer,
    schema,
    string,
)

TIMEOUT_DEFAULT_MS = 60000
TIMEOUT_MAX_MS = 600000
MAX_OUTPUT_DEFAULT = 16000
OUTPUT_LIMIT_DEFAULT = 16000
SHELL = "/bin/sh"

_tables: dict[str, ProcessTable] = {}
_tables_lock = threading.Lock()


class ProcessTable:
    """Background processes of one session, persisted so that later calls (and programs) see them."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.file = directory / "processes.json"
        self.children: dict[str, subprocess.Popen[bytes]] = {}
        self.lock = threading.Lock()

    def load(self) -> dict[str, dict[str, Any]]:
        try:
            return dict(json.loads(self.file.read_text()))
        except (OSError, ValueError):
            return {}

    def save(self, entries: dict[str, dict[str, Any]]) -> None:
        atomic_write_bytes(self.file, json.dumps(entries, indent=1).encode())

    def refresh(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Bring a running entry's status up to date (exit code from the wrapper's file)."""
        if entry["status"] != "running":
            return entry
        child = self.children.get(entry["id"])
        if child is not None:
            child.poll()
        exit_file = Path(entry["exit_file"])
        if exit_file.exists():
            text = exit_file.read_text().strip()
            entry.update(
                status="completed",
                exit_code=int(text) if text.lstrip("-").isdigit() else None,
                ended_at=entry.get("ended_at") or time.time(),
            )
        elif not pid_alive(entry["pid"]) if child is None else child.returncode is not None:
            entry.update(
                status="completed",
                exit_code=None if child is None else child.returncode,
                ended_at=time.time(),
            )
        return entry

    def entries(self) -> dict[str, dict[str, Any]]:
        with self.lock:
            entries = self.load()
            for entry in entries.values():
                self.refresh(entry)
            self.save(entries)
            return entries

    def start(self, command: str, cwd: Path, env: dict[str, str], ctx: ToolContext) -> dict[str, Any]:
        pid_id = "bg-" + uuid.uuid4().hex[:8]
        log = self.dir / f"{pid_id}.log"
        exit_file = self.dir / f"{pid_id}.exit"
        # The wrapper records the exit status so that any later call (or program) can read it.
        wrapper = f'{SHELL} -c "$1"; echo $? > "$2"'
        with log.open("wb") as out:
            child = subprocess.Popen(
                [SHELL, "-c", wrapper, "sh", command, str(exit_file)],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        entry = {
            "id": pid_id,
            "pid": child.pid,
            "command": command,
            "cwd": str(cwd),
            "status": "running",
            "exit_code": None,
            "started_at": time.time(),
            "ended_at": None,
            "log": str(log),
            "exit_file": str(exit_file),
            "session_id": ctx.session_id,
            "chat_id": ctx.chat_id,
        }
        with self.lock:
            self.children[pid_id] = child
            entries = self.load()
            entries[pid_id] = entry
            self.save(entries)
        return entry

    def get(self, process_id: str) -> dict[str, Any]:
        entries = self.entries()
        if process_id not in entries:
            known = ", ".join(sorted(entries)) or "none"
            raise ToolError(f"no background process {process_id!r} (known: {known})", code="not_found")
        return entries[process_id]

    def kill(self, process_id: str) -> dict[str, Any]:
        entry = self.get(process_id)
        if entry["status"] == "running":
            _kill_group(entry["pid"], self.children.get(process_id))
            with self.lock:
                entries = self.load()
                entries[process_id].update(status="killed", ended_at=time.time(), exit_code=None)
                self.save(entries)
                entry = entries[process_id]
        return entry

    def kill_all(self) -> None:
        for pid_id, entry in self.entries().items():
            if entry["status"] == "running":
                self.kill(pid_id)


def _kill_group(pid: int, child: subprocess.Popen[bytes] | None, grace: float = 2.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if child is not None:
                if child.poll() is not None:
                    return
            elif not pid_alive(pid):
                return
            time.sleep(0.02)
    if child is not None:
        try:
            child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass


def process_table(ctx: ToolContext) -> ProcessTable:
    directory = ctx.state_dir() / "processes"
    with _tables_lock:
        key = str(directory)
        if key not in _tables:
            _tables[key] = ProcessTable(directory)
        return _tables[key]


def close_session(ctx: ToolContext) -> None:
    """End of a run: its background processes do not outlive it (they live for the run)."""
    process_table(ctx).kill_all()


def _environment(params: dict[str, Any]) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in (params.get("env") or {}).items():
        env[str(key)] = value if isinstance(value, str) else json.dumps(value)
    return env


def _limit_output(data: bytes, max_output: int, spill: Path) -> tuple[str, bool]:
    """Keep the head and the tail; the middle goes to a file whose path the result names."""
    if len(data) <= max_output:
        return data.decode("utf-8", errors="replace"), False
    atomic_write_bytes(spill, data)
    half = max_output // 2
    head = data[:half].decode("utf-8", errors="ignore")
    tail = data[-half:].decode("utf-8", errors="ignore")
    note = (
        f"\n[... {len(data) - 2 * half} bytes omitted; full output ({len(data)} bytes) saved to "
        f"{spill} ...]\n"
    )
    return head + note + tail, True


def bash(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    command: str = params["command"]
    if not command.strip():
        raise ToolError("command is empty")
    env = _environment(params)
    table = process_table(ctx)
    if params.get("run_in_background"):
        entry = table.start(command, ctx.root, env, ctx)
        return ToolResult(
            output=f"started background process {entry['id']} (pid {entry['pid']}); read its "
            f"output with bash_output, stop it with bash_kill\n",
            data={"process_id": entry["id"], "pid": entry["pid"]},
        )
    timeout_ms = clamp(params.get("timeout"), TIMEOUT_DEFAULT_MS, TIMEOUT_MAX_MS, minimum=1)
    max_output = clamp(params.get("max_output"), MAX_OUTPUT_DEFAULT, 10**9, minimum=64)
    run_id = uuid.uuid4().hex[:8]
    out_path = table.dir / f"call-{run_id}.out"
    started = time.monotonic()
    with out_path.open("wb") as out:
        child = subprocess.Popen(
            [SHELL, "-c", command],
            cwd=ctx.root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        timed_out = False
        try:
            code: int | None = child.wait(timeout=timeout_ms / 1000)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(child.pid, child)
            code = child.returncode
    data = out_path.read_bytes()
    out_path.unlink(missing_ok=True)
    if params.get("tail_lines") is not None:
        n = max(0, int(params["tail_lines"]))
        data = b"".join(data.splitlines(keepends=True)[-n:]) if n else b""
    text, spilled = _limit_output(data, max_output, table.dir / f"output-{run_id}.txt")
    elapsed = int((time.monotonic() - started) * 1000)
    if timed_out:
        text += f"\n[timed out after {timeout_ms} ms; the command was killed]\n"
    elif code:
        text += f"\n[exit code {code}]\n"
    return ToolResult(
        output=text,
        is_error=bool(timed_out or code),
        data={
            "exit_code": code,
            "timed_out": timed_out,
            "duration_ms": elapsed,
            "spilled_to": str(table.dir / f"output-{run_id}.txt") if spilled else None,
        },
    )


def _row(entry: dict[str, Any]) -> str:
    end = entry.get("ended_at") or time.time()
    state = entry["status"] + (f" (exit {entry['exit_code']})" if entry.get("exit_code") is not None else "")
    return f"{entry['id']}  {state}  {end - entry['started_at']:.1f}s  {entry['command']}"


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        k: entry[k]
        for k in (
            "id",
            "pid",
            "command",
            "status",
            "exit_code",
            "started_at",
            "ended_at",
            "session_id",
            "chat_id",
        )
    }


def bash_list(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    entries = list(process_table(ctx).entries().values())
    if not params.get("all"):
        entries = [e for e in entries if e["status"] == "running"]
    for key in ("session_id", "chat_id"):
        if params.get(key):
            entries = [e for e in entries if e.get(key) == params[key]]
    text = "".join(_row(e) + "\n" for e in entries) or "no background processes\n"
    return ToolResult(output=text, data={"processes": [_public(e) for e in entries]})


def bash_output(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    entry = process_table(ctx).get(params["process_id"])
    data = Path(entry["log"]).read_bytes() if Path(entry["log"]).exists() else b""
    limit = clamp(params.get("limit"), OUTPUT_LIMIT_DEFAULT, 10**9, minimum=1)
    size = len(data)
    next_offset = size
    if params.get("regex"):
        flags = re.IGNORECASE if params.get("regex_case_insensitive") else 0
        try:
            rx = re.compile(params["regex"], flags)
        except re.error as exc:
            raise ToolError(f"regex is not valid: {exc}") from None
        lines = data.decode("utf-8", errors="replace").splitlines()
        before = int(params.get("regex_context_before") or 0)
        after = int(params.get("regex_context_after") or 0)
        keep: set[int] = set()
        for i, line in enumerate(lines):
            if rx.search(line):
                keep.update(range(max(0, i - before), min(len(lines), i + after + 1)))
        chosen = [lines[i] for i in sorted(keep)]
        if params.get("tail") is not None:
            chosen = chosen[-int(params["tail"]) :] if int(params["tail"]) else []
        body = "".join(line + "\n" for line in chosen).encode()[:limit]
    elif params.get("tail") is not None:
        n = int(params["tail"])
        body = b"".join(data.splitlines(keepends=True)[-n:]) if n > 0 else b""
        body = body[-limit:]
    else:
        offset = max(0, int(params.get("offset") or 0))
        body = data[offset : offset + limit]
        next_offset = offset + len(body)
    status = entry["status"] + (
        f", exit code {entry['exit_code']}" if entry.get("exit_code") is not None else ""
    )
    text = body.decode("utf-8", errors="replace")
    footer = f"\n[{entry['id']}: {status}; {size} bytes of output"
    footer += f"; more from offset={next_offset}]\n" if next_offset < size else "]\n"
    return ToolResult(
        output=text + footer,
        data={
            "status": entry["status"],
            "exit_code": entry.get("exit_code"),
            "size": size,
            "next_offset": next_offset,
        },
    )


def bash_kill(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    table = process_table(ctx)
    before = table.get(params["process_id"])["status"]
    entry = table.kill(params["process_id"])
    if before != "running":
        return ToolResult(
            output=f"{entry['id']} is not running ({before}); nothing to kill\n",
            data={"status": entry["status"], "killed": False},
        )
    return ToolResult(
        output=f"killed {entry['id']} (pid {entry['pid']})\n",
        data={"status": entry["status"], "killed": True},
    )


TOOLS = [
    Tool(
        "bash",
        ("execution", "default"),
        "Run a command in a fresh POSIX shell in the project root. timeout default 60000 ms (max 600000); "
        "output over max_output keeps head and tail and saves the rest to a file.",
        schema(
            {
                "command": string("shell command; chain with && or ;"),
                "timeout": integer("milliseconds; default 60000; max 600000", minimum=1),
                "run_in_background": boolean("start in the background and return a process ID"),
                "env": {
                    "type": "object",
                    "description": "environment variables",
                    "additionalProperties": {"type": ["string", "number", "boolean"]},
                },
                "max_output": integer("bytes; default 16000", minimum=64),
                "tail_lines": integer("return only the last N lines", minimum=0),
            },
            ("command",),
        ),
        bash,
    ),
    Tool(
        "bash_list",
        ("execution", "readonly"),
        "List background processes (running only unless all is true).",
        schema(
            {
                "all": boolean("include completed; default running only"),
                "session_id": string("filter by session"),
                "chat_id": string("filter by chat"),
            }
        ),
        bash_list,
    ),
    Tool(
        "bash_output",
        ("execution", "readonly"),
        "Read a background process's output: by byte offset/limit, last lines, or lines matching a regex.",
        schema(
            {
                "process_id": string("ID returned by bash"),
                "offset": integer("start byte", minimum=0),
                "limit": integer("max bytes; default 16000", minimum=1),
                "tail": integer("last N lines instead", minimum=0),
                "regex": string("keep matching lines"),
                "regex_case_insensitive": boolean("case-insensitive regex"),
                "regex_context_before": integer("context lines before a match", minimum=0),
                "regex_context_after": integer("context lines after a match", minimum=0),
            },
            ("process_id",),
        ),
        bash_output,
    ),
    Tool(
        "bash_kill",
        ("execution",),
        "Terminate a background process (its whole process group).",
        schema({"process_id": string("ID returned by bash")}, ("process_id",)),
        bash_kill,
    ),
]
