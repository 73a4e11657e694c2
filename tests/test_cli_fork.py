"""The tests' CLI fork server (tests/cli_fork.py) gives what an exec of the console script gives.

Most tests run `framework` / `platform` through it (docs/architecture.md#tests); the rules here are what
makes that equivalent to starting the installed script: the same exit code, output and error output
for the same argv, directory and environment; stdin; timeouts; signals; and no state carried from the
imports done once in the server into a command (the environment, the directory, the umask).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest

BIN = Path(sys.executable).parent


def _both(argv: list[str], **kwargs: object) -> tuple[subprocess.CompletedProcess[str], ...]:
    forked = cli_fork.run(argv, text=True, **kwargs)  # type: ignore[arg-type]
    stdin = {} if "input" in kwargs else {"stdin": subprocess.DEVNULL}
    execed = subprocess.run(argv, text=True, capture_output=True, check=False, **stdin,
                            **kwargs)  # type: ignore[call-overload]
    return forked, execed


@pytest.mark.parametrize("args", [
    ["env", "list", "--json"],            # a fast path
    ["release", "list", "--json"],        # through Typer
    ["env", "render", "dev", "--json"],   # KCL evaluated
    ["env", "nosuch"],                    # a usage error (exit 2)
])
def test_a_forked_command_answers_as_the_executed_script(demo_project: Path, args: list[str]) -> None:
    """docs/architecture.md#tests: a forked CLI call gives the exec'd console script's exit code, stdout
    and stderr, byte for byte, for the same argv, directory and environment."""
    forked, execed = _both([str(BIN / "framework"), *args], cwd=demo_project)
    assert (forked.returncode, forked.stdout, forked.stderr) == (execed.returncode, execed.stdout, execed.stderr)
    assert cli_fork._server.get("pid") == os.getpid()  # it was forked, not a fall-back exec


def test_the_environment_directory_and_umask_are_the_calls_not_the_servers(demo_project: Path, tmp_path: Path) -> None:
    """docs/architecture.md#tests: the server imported the modules under another HOME, directory and umask;
    a command sees the call's: its ledger home, its working directory, the mode of the files it makes."""
    cli_fork.run([str(BIN / "framework"), "--version"], cwd=tmp_path)  # the server is up before the changes
    ledger = tmp_path / "elsewhere" / "ledger"
    old = os.umask(0o077)
    try:
        forked, execed = _both([str(BIN / "framework"), "env", "list", "--json"], cwd=demo_project,
                               env={**os.environ, "FRAMEWORK_LEDGER_HOME": str(ledger), "COLUMNS": "61"})
    finally:
        os.umask(old)
    assert forked.stdout == execed.stdout and json.loads(forked.stdout)["root"] == str(demo_project)
    outside = cli_fork.run([str(BIN / "framework"), "env", "list", "--json"], cwd=tmp_path, text=True)
    assert outside.returncode != 0 and json.loads(outside.stdout)["error"]["code"] == "project_not_found"


def test_stdin_is_fed_and_a_timeout_kills_the_child(demo_project: Path) -> None:
    """docs/architecture.md#tests: `input=` reaches the command's stdin whole (larger than a pipe's
    buffer), and a call past its timeout raises TimeoutExpired as subprocess.run does."""
    events = [{"Action": "run", "Package": "shop/api", "Test": f"TestCase{i}"} for i in range(3000)]
    events += [{"Action": "pass", "Package": "shop/api", "Test": f"TestCase{i}", "Elapsed": 0.01} for i in range(3000)]
    events.append({"Action": "pass", "Package": "shop/api", "Elapsed": 1.5})
    stream = "".join(json.dumps(event) + "\n" for event in events)
    assert len(stream) > 65536 * 4
    forked, execed = _both([str(BIN / "framework"), "ci", "verify-test-run", "--json"], cwd=demo_project,
                           input=stream)
    assert (forked.returncode, forked.stdout, forked.stderr) == (execed.returncode, execed.stdout, execed.stderr)
    assert "3000" in forked.stdout or "3,000" in forked.stdout, forked.stdout[:400]
    with pytest.raises(subprocess.TimeoutExpired):
        cli_fork.run([str(BIN / "framework"), "ci", "verify-test-run"], cwd=demo_project,
                     input=stream, timeout=0.001)


def test_a_forked_server_prints_and_ends_as_the_executed_one(tmp_path: Path) -> None:
    """docs/architecture.md#tests: a long-running child (`platform server`) started through the fork
    server prints as the script does, and ends on SIGTERM with the exec'd script's exit code."""
    codes = []
    for start in (cli_fork.popen, subprocess.Popen):
        proc = start([sys.executable, "-m", "app.main", "platform", "server", "--port", "0", "--data-dir",
                      str(tmp_path / start.__name__)], cwd=tmp_path, stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT, text=True)
        assert isinstance(proc, cli_fork.Forked if start is cli_fork.popen else subprocess.Popen)
        lines = []
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("daemon gateway listening on "):
                break
        assert any(line.startswith("platform server listening on http://127.0.0.1:") for line in lines), lines
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        codes.append(proc.wait(30))
        proc.stdout.close()  # type: ignore[union-attr]
    assert codes[0] == codes[1], codes
