"""`filter` (docs/reference-webhooks.md#endpoints): a CEL expression over `trigger.payload`, via
common-expression-language.

Compiled when the trigger is saved (refused with its position when invalid); limited in size;
evaluated in a child process with a time limit, so a runaway expression is killed rather than
stalling a worker. An evaluation error or timeout counts as "did not match" (recorded in history).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError

MAX_FILTER_CHARS = 4096
DEFAULT_TIMEOUT_S = 1.0
_POSITION = re.compile(r"<input>:(\d+):(\d+): (.*)")


class FilterInvalid(EngineError):
    """The trigger's filter does not compile; nothing is saved."""

    code = "invalid_filter"
    exit_code = 2

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        super().__init__(
            message,
            hint="see https://github.com/google/cel-spec for the syntax; "
            "guard optional fields with has(), e.g. has(trigger.payload.body.action)",
        )
        self.line = line
        self.column = column

    def to_dict(self) -> dict[str, object]:
        doc = super().to_dict()
        doc.update({"line": self.line, "column": self.column})
        return doc


class FilterResult(BaseModel):
    matched: bool
    error: str | None = None


def compile_filter(source: str) -> Any:
    """Compile (and so validate) a filter; raises FilterInvalid with line and column."""
    import cel

    if len(source) > MAX_FILTER_CHARS:
        raise FilterInvalid(f"filter is {len(source)} characters; the limit is {MAX_FILTER_CHARS}")
    if not source.strip():
        raise FilterInvalid("filter is empty")
    try:
        return cel.compile(source)
    except (ValueError, RuntimeError, TypeError) as exc:
        text = str(exc)
        match = _POSITION.search(text)
        if match:
            line, column = int(match[1]), int(match[2])  # CEL columns are 1-based
            raise FilterInvalid(
                f"filter does not compile at line {line}, column {column}: {match[3].strip()}",
                line=line,
                column=column,
            ) from None
        raise FilterInvalid(f"filter does not compile: {text.splitlines()[0]}") from None


def timeout_seconds() -> float:
    try:
        return float(os.environ.get("PLATFORM_FILTER_TIMEOUT_MS", "")) / 1000
    except ValueError:
        return DEFAULT_TIMEOUT_S


class FilterEvaluator:
    """A child process evaluating filters one at a time; killed and replaced on timeout."""

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout if timeout is not None else timeout_seconds()
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _child(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "engine.hooks.filter_child"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            assert self._proc.stdout is not None
            # The time limit is for evaluation, not interpreter start-up: wait for "ready" first.
            self._proc.stdout.readline()
        return self._proc

    def evaluate(self, source: str, payload: dict[str, Any]) -> FilterResult:
        request = json.dumps({"filter": source, "payload": payload}).encode() + b"\n"
        with self._lock:
            proc = self._child()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(request)
                proc.stdin.flush()
            except OSError:
                self.close()
                return FilterResult(matched=False, error="filter evaluator stopped")
            answer: list[bytes] = []
            stdout = proc.stdout
            reader = threading.Thread(target=lambda: answer.append(stdout.readline()), daemon=True)
            reader.start()
            reader.join(self.timeout)
            timed_out = reader.is_alive()
            if timed_out or not answer or not answer[0]:
                self.close()
                reader.join(1)
                if timed_out:
                    return FilterResult(
                        matched=False,
                        error=f"filter evaluation exceeded the time limit of {self.timeout:g} s",
                    )
                return FilterResult(matched=False, error="filter evaluator stopped")
        return FilterResult.model_validate_json(answer[0])

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
            self._proc = None


def evaluate_once(program: Any, payload: dict[str, Any]) -> FilterResult:
    """In-process evaluation (used by the child): errors become "did not match"."""
    try:
        value = program.execute({"trigger": {"payload": payload}})
    except Exception as exc:  # noqa: BLE001 - any CEL runtime error is "did not match"
        return FilterResult(matched=False, error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    if not isinstance(value, bool):
        return FilterResult(matched=False, error=f"filter returned {type(value).__name__}, not a boolean")
    return FilterResult(matched=value)
