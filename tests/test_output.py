"""app/output.py: the one place that owns stdout/stderr, colour, the JSON envelope and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.output import document, run_command
from engine.errors import EngineError, KclError, ProjectNotFound, UsageError
from tests.conftest import read_terminal


def test_document_envelope_ok_false_exactly_when_exit_nonzero() -> None:
    """Output conventions (README, Output and exit codes): `ok` is false exactly when the exit code is non-zero."""
    assert document(0, None, {"x": 1}) == {"ok": True, "exit_code": 0, "error": None, "x": 1}
    for code in range(1, 9):
        doc = document(code, {"code": "c", "message": "m"})
        assert doc["ok"] is False and doc["exit_code"] == code


def test_document_refuses_payload_fields_that_shadow_the_envelope() -> None:
    """Output conventions: the envelope fields ok, exit_code and error cannot be overwritten by a payload."""
    with pytest.raises(ValueError):
        document(0, None, {"ok": False})


@pytest.mark.parametrize("error, code", [(ProjectNotFound("no project"), 1), (UsageError("bad"), 2),
                                         (EngineError("moved", exit_code=3, code="promotion_conflict"), 3),
                                         (KclError("x.k:1: boom", file="x.k", line=1), 1)])
def test_engine_errors_map_to_their_exit_code(
        error: EngineError, code: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Output conventions: engine errors are typed, carry their exit code, and the app maps them."""
    def action() -> tuple[object, int]:
        raise error

    assert run_command(True, action, lambda _: None) == code
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["ok"] is False and doc["exit_code"] == code and doc["error"]["code"] == error.code
    assert error.message in err  # the diagnostic goes to stderr as well


def test_human_mode_writes_data_to_stdout_and_diagnostics_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """Output conventions: data to stdout, diagnostics to stderr."""
    assert run_command(False, lambda: ({"n": 1}, 0), lambda p: print("DATA", p["n"])) == 0
    assert capsys.readouterr() == ("DATA 1\n", "")

    def fails() -> tuple[object, int]:
        raise EngineError("it broke", hint="try again")

    assert run_command(False, fails, lambda p: print("DATA")) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == "error: it broke\nhint: try again\n"


def test_partial_failure_keeps_payload_and_fills_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Output conventions: a payload that still has data but exits non-zero carries an error."""
    code = run_command(True, lambda: ({"items": [1]}, 1), lambda _: None,
                       partial_error=lambda p: {"code": "partial", "message": "1 failed"})
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["items"] == [1] and doc["error"] == {"code": "partial", "message": "1 failed"}


def test_unexpected_exception_is_an_internal_error_with_crash_file(
        capsys: pytest.CaptureFixture[str], isolated_home: Path) -> None:
    """Standards: bad input never shows a traceback; the details go to a 0600 crash file."""
    def boom() -> tuple[object, int]:
        raise RuntimeError("kaboom")

    assert run_command(True, boom, lambda _: None) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["error"]["code"] == "internal"
    assert "Traceback" not in err and "internal error: RuntimeError: kaboom" in err
    crashes = list((isolated_home / ".cache" / "framework" / "crash").glob("*.log"))
    assert len(crashes) == 1 and "Traceback" in crashes[0].read_text()
    assert crashes[0].stat().st_mode & 0o777 == 0o600


def test_no_colour_when_not_a_terminal_or_with_no_color(demo_project: Path) -> None:
    """Output conventions: colour only on a TTY and never with NO_COLOR."""
    import os
    import pty
    import subprocess
    import sys

    from tests.conftest import run_cli

    piped = run_cli("framework", "env", "list", cwd=demo_project)
    assert piped.exit_code == 0 and "\x1b[" not in piped.stdout

    def on_tty(extra: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", **extra}
        env.pop("NO_COLOR", None) if "NO_COLOR" not in extra else None
        proc = subprocess.run([str(Path(sys.executable).parent / "framework"), "env", "list", "--bogus"],
                              cwd=demo_project, stdin=follower, stdout=follower, stderr=follower, env=env,
                              timeout=60, check=False)
        os.close(follower)
        output = read_terminal(leader)
        assert proc.returncode == 2
        return output.decode(errors="replace")

    assert "\x1b[" in on_tty({})  # coloured diagnostics on a terminal ...
    assert "\x1b[" not in on_tty({"NO_COLOR": "1"})  # ... but never with NO_COLOR
