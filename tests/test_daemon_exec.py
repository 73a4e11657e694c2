"""The daemon executes what the server asks over its one stream (spec 2 What the service does (1):
shell, file, tool-server and terminal execution; issue 16 Deliver 3)."""

from __future__ import annotations

from tests.gateway_fixtures import Stack, stack  # noqa: F401


def test_shell_streams_output_exit_code_env_stdin_and_cwd(stack: Stack) -> None:
    """Shell: cwd inside the allowed roots, env, stdin, stdout/stderr and the exit code come back."""
    (stack.work / "sub").mkdir(exist_ok=True)
    r = stack.api("POST", "/dev/shell", json={"command": "pwd; echo $GREETING; cat; echo oops >&2; exit 3",
                                              "cwd": "sub", "env": {"GREETING": "hi"}, "stdin": "from-stdin"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["stdout"].splitlines() == [str((stack.work / "sub").resolve()), "hi", "from-stdin"]
    assert doc["stderr"] == "oops\n" and doc["exit_code"] == 3 and not doc["timed_out"]
