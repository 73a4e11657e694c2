"""Execution tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): bash, bash_list,
bash_output, bash_kill."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.tools_fixtures import call, ctx, isolated_home  # noqa: F401 - fixtures
from tests.waiting import until


def test_fresh_shell_in_the_root_with_env_and_chaining(ctx):
    """bash: every command runs in a fresh shell in the project root; env is passed; commands chain."""
    first = call(ctx, "bash", command="export KEEP=1; cd /; pwd && echo $GREETING", env={"GREETING": "hi"})
    assert first.output == "/\nhi\n"
    second = call(ctx, "bash", command='pwd; echo "keep=${KEEP:-unset}"')
    assert second.output == f"{ctx.root}\nkeep=unset\n"


def test_exit_code_and_stderr_are_reported(ctx):
    """bash: a failing command's output and exit code are what the agent sees."""
    result = call(ctx, "bash", command="echo out; echo err >&2; exit 7")
    assert result.is_error and result.data["exit_code"] == 7
    assert "out\n" in result.output and "err\n" in result.output and "[exit code 7]" in result.output


def test_timeout_kills_the_command(ctx):
    """bash: timeout in milliseconds; the command (and its children) are killed when it passes."""
    started = time.monotonic()
    result = call(ctx, "bash", command="echo started; sleep 30 & sleep 30", timeout=300)
    assert time.monotonic() - started < 10
    assert result.is_error and result.data["timed_out"] and "timed out after 300 ms" in result.output


def test_output_over_max_output_keeps_head_and_tail_and_spills(ctx):
    """bash: max_output bytes (default 16000): head and tail kept, the middle spilled to a named file."""
    result = call(ctx, "bash", command="seq 1 20000")
    assert len(result.output.encode()) < 16000 + 300
    lines = result.output.splitlines()
    assert lines[0] == "1" and lines[-1] == "20000"
    spilled = Path(result.data["spilled_to"])
    assert str(spilled) in result.output and spilled.read_text() == "".join(f"{i}\n" for i in range(1, 20001))
    small = call(ctx, "bash", command="seq 1 1000", max_output=200)
    assert len(small.output.encode()) < 200 + 300 and small.data["spilled_to"]


def test_tail_lines(ctx):
    """bash: tail_lines returns only the last N lines."""
    assert call(ctx, "bash", command="seq 1 100", tail_lines=3).output == "98\n99\n100\n"


def test_background_job_is_listed_read_and_killed(ctx):
    """bash run_in_background returns a process ID; bash_list, bash_output and bash_kill act on it."""
    started = call(
        ctx,
        "bash",
        command="echo ready; i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.05; done",
        run_in_background=True,
    )
    pid_id = started.data["process_id"]
    listed = call(ctx, "bash_list")
    assert [p["id"] for p in listed.data["processes"]] == [pid_id]
    assert until(lambda: "tick 5" in call(ctx, "bash_output", process_id=pid_id).output)
    first = call(ctx, "bash_output", process_id=pid_id, offset=0, limit=6)
    assert first.output.startswith("ready\n") and first.data["next_offset"] == 6
    tail = call(ctx, "bash_output", process_id=pid_id, tail=2)
    assert tail.output.count("tick") == 2
    grep = call(
        ctx,
        "bash_output",
        process_id=pid_id,
        regex="TICK 3$",
        regex_case_insensitive=True,
        regex_context_before=1,
        regex_context_after=1,
    )
    assert grep.output.splitlines()[:3] == ["tick 2", "tick 3", "tick 4"]
    pid = started.data["pid"]
    killed = call(ctx, "bash_kill", process_id=pid_id)
    assert killed.data["killed"] is True
    assert until(lambda: not _running(pid))
    assert call(ctx, "bash_list").data["processes"] == []
    assert [p["status"] for p in call(ctx, "bash_list", all=True).data["processes"]] == ["killed"]
    assert call(ctx, "bash_kill", process_id="bg-nope").is_error


def test_background_job_completion_and_filters(ctx):
    """bash_list: running only by default, `all` includes completed; session_id filters."""
    started = call(ctx, "bash", command="echo done; exit 3", run_in_background=True)
    pid_id = started.data["process_id"]
    assert until(lambda: call(ctx, "bash_list", all=True).data["processes"][0]["status"] == "completed")
    entry = call(ctx, "bash_list", all=True, session_id="test").data["processes"][0]
    assert entry["exit_code"] == 3 and entry["id"] == pid_id
    assert call(ctx, "bash_list", all=True, session_id="other").data["processes"] == []
    assert "exit code 3" in call(ctx, "bash_output", process_id=pid_id).output


def test_end_of_session_kills_background_processes(ctx):
    """Background processes live for the run's lifetime: closing the session kills them."""
    from engine.tools.execution import close_session

    started = call(ctx, "bash", command="sleep 60", run_in_background=True)
    close_session(ctx)
    assert until(lambda: not _running(started.data["pid"]))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False
