"""Output conventions, in one place.

- Data goes to stdout, diagnostics (errors, hints, progress) to stderr.
- Colour only on a terminal and never with NO_COLOR (rich honours both by itself).
- `--json` prints exactly one document: `ok`, `exit_code`, `error`, then the payload;
  `ok` is false exactly when the exit code is non-zero.
- Engine errors are typed and carry their exit code; this module maps them to the process exit.
  Anything unexpected is an internal error: one line on stderr, the traceback in a crash file,
  exit 1 — never a traceback on the terminal.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def to_jsonable(payload: Any) -> dict[str, Any]:
    if payload is None:
        return {}
    if hasattr(payload, "model_dump"):
        return payload.model_dump(mode="json")
    if hasattr(payload, "__dataclass_fields__"):  # a plain dataclass of JSON values (engine/inspection/map.py)
        import dataclasses

        return dataclasses.asdict(payload)
    if isinstance(payload, dict):
        return payload
    raise TypeError(f"cannot render {type(payload).__name__} as a JSON document")


def document(exit_code: int, error: dict[str, Any] | None, payload: Any = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"ok": exit_code == 0, "exit_code": exit_code, "error": error}
    for key, value in to_jsonable(payload).items():
        if key in doc:
            raise ValueError(f"payload field {key!r} collides with the document envelope")
        doc[key] = value
    return doc


def print_document(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def plain(text: str) -> None:
    """One plain line of data on stdout: no markup, no emoji codes, no wrapping (names like `:shell:` stay)."""
    sys.stdout.write(text + "\n")


def stdout_console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _styled_stderr() -> bool:
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR")


def progress(message: str) -> None:
    """Progress of long work on stderr: styled on a terminal, plain lines otherwise (STYLE, Commands)."""
    if _styled_stderr():
        from rich.markup import escape

        stderr_console().print(f"[cyan]>[/] {escape(message)}")
        return
    sys.stderr.write(f"  {message}\n")
    sys.stderr.flush()


def diagnose(message: str, hint: str | None = None, *, label: str = "error") -> None:
    """One diagnostic on stderr; plain when not a terminal or with NO_COLOR."""
    if _styled_stderr():
        from rich.markup import escape

        con = stderr_console()
        con.print(f"[bold red]{label}:[/] {escape(message)}")
        if hint:
            con.print(f"[dim]hint:[/] {escape(hint)}")
        return
    sys.stderr.write(f"{label}: {message}\n")
    if hint:
        sys.stderr.write(f"hint: {hint}\n")


def _crash_report(exc: BaseException) -> str:
    import traceback

    from engine.paths import atomic_write_bytes, cache_dir

    path = cache_dir() / "crash" / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        atomic_write_bytes(path, text.encode(), mode=0o600)
    except OSError:
        return "(crash report could not be written)"
    return str(path)


def _internal(exc: BaseException, json_mode: bool) -> int:
    where = _crash_report(exc)
    message = f"internal error: {type(exc).__name__}: {exc}"
    diagnose(message, f"details in {where}; please report it")
    if json_mode:
        print_document(document(EXIT_FAILED, {"code": "internal", "message": message}))
    return EXIT_FAILED


def _path_error(exc: OSError) -> dict[str, Any]:
    """An OS error on a path (most often one the user named): the path and its problem, exit 1."""
    from engine.names import shown

    path = shown(os.fsdecode(exc.filename), 120)
    message = f"cannot use {path}: {exc.strerror or exc}"
    error: dict[str, Any] = {"code": "path_error", "message": message}
    if exc.errno == errno.ENAMETOOLONG:
        error["hint"] = "a file name is at most 255 bytes and a path 4096"
    return error


def run_command(json_mode: bool, action: Callable[[], tuple[Any, int]],
                human: Callable[[Any], None], *, partial_error: Callable[[Any], dict[str, Any]] | None = None
                ) -> int:
    """Run one engine call and render it. `action` returns (payload, exit code).

    `partial_error` describes why a payload that still has data exits non-zero (e.g. one of
    several environments failed to evaluate); it fills the document's `error`.
    """
    from engine.errors import EngineError

    try:
        payload, code = action()
    except EngineError as exc:
        diagnose(exc.message, exc.hint)
        if json_mode:
            print_document(document(exc.exit_code, exc.to_dict()))
        return exc.exit_code
    except OSError as exc:
        if exc.filename is None:  # not about a path the command was given: unexpected
            return _internal(exc, json_mode)
        error = _path_error(exc)
        diagnose(error["message"], error.get("hint"))
        if json_mode:
            print_document(document(EXIT_FAILED, error))
        return EXIT_FAILED
    except KeyboardInterrupt:
        diagnose("interrupted")
        if json_mode:
            print_document(document(130, {"code": "interrupted", "message": "interrupted"}))
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks for users
        return _internal(exc, json_mode)
    error = None
    if code:
        error = partial_error(payload) if partial_error else {"code": "failed", "message": f"exit {code}"}
    if json_mode:
        print_document(document(code, error if code else None, payload))
    else:
        human(payload)
        if error:
            diagnose(str(error.get("message")), error.get("hint"))
    return code
