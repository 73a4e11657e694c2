"""Run every command of both programs in-process with hostile inputs (tests/test_hostile_inputs.py).

In-process through `app.main.run`, the programs' own entry (routing, fast paths, click's usage errors
and the `internal error` handler all run as in a real process); stdin is empty, each call has a time
limit (SIGALRM raising a BaseException the program's handlers do not catch).
"""

from __future__ import annotations

import io
import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

HOSTILE: dict[str, str | None] = {
    "missing": None,
    "traversal": "../../../etc/passwd",
    "empty": "",
    "long": "x" * 5000,
    "quotes-sql": "a'b\"c; DROP TABLE promotions; --",
    "negative": "-1",
    "nul": "a\x00b",  # refused before any command runs (no exec can pass one)
    "non-ascii": "caf\u00e9-\u2603-\u0645",
}
DOCUMENTED_EXITS = {0, 1, 2, 3, 4, 5, 6, 7, 8, 130}  # README.md#output-and-exit-codes
PER_CALL_S = 20.0

# Commands that serve until stopped: with any input they start serving, so they are not run here.
# Their bad-input handling is tested where they are started as real processes.
LONG_RUNNING = {
    ("platform", "server"): "serves HTTP until stopped (tests/test_server_*.py start it for real)",
    ("platform", "tools", "serve"): "an MCP server on stdio until its client leaves (tests/test_tools_mcp.py)",
    ("platform", "auth", "serve"): "an HTTP callback server until stopped (tests/test_auth_serve.py)",
    ("platform", "daemon", "start"): "dials the gateway and serves until stopped (tests/test_daemon_cli.py)",
}
# Options whose value the attack goes to when a command has no positional argument (first that exists).
NAME_OPTIONS = ("--env", "--name", "--service", "--file", "--from-dir", "--src-dir", "--dest-dir", "--dir",
                "--out", "--output", "--workflow", "--server", "--endpoint", "--root", "--key", "--signal")


class CallTimedOut(BaseException):
    """Raised by the alarm: a command waited longer than PER_CALL_S (for input it cannot get?)."""


@dataclass
class Call:
    argv: list[str]
    code: int | None
    stdout: str
    stderr: str
    raised: str | None  # a traceback that escaped the program


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subs = getattr(command, "commands", None) or {}
    own = [p for p in command.params if p.param_type_name != "argument" and p.name not in ("help", "version")]
    if path and (not subs or own):  # a leaf, or a group that runs itself with options of its own
        yield path, command
    for name, sub in sorted(subs.items()):
        yield from walk(sub, (*path, name))


def _arguments(command: Any) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "argument"]


def _text_options(command: Any) -> list[str]:
    """The options taking a string or a path (the ones a name or path is typed into)."""
    found = []
    for p in command.params:
        if p.param_type_name != "option" or p.is_flag or p.hidden:
            continue
        annotation = str(getattr(getattr(p, "type_descriptor", None), "annotation", ""))
        if "str" in annotation or "Path" in annotation:
            found.append(str(p.opts[0]))
    return found


def _target_option(command: Any) -> str | None:
    options = [p for p in command.params if p.param_type_name == "option" and not p.is_flag and not p.hidden]
    by_name = {opt: p for p in options for opt in p.opts}
    for name in NAME_OPTIONS:
        if name in by_name:
            return name
    text = _text_options(command)
    return text[0] if text else None


BENIGN = "dev"  # the other arguments' value while one is attacked (the demo's local environment)
EVERY_OPTION_VALUES = (HOSTILE["long"], HOSTILE["traversal"])


def attacks(path: tuple[str, ...], command: Any, value: str | None) -> list[list[str]]:
    """The argvs attacking `command` with `value`: in each positional argument in turn (the others
    benign), in its name option, and (5,000 characters, `../../../etc/passwd`) in every text option;
    `value` None leaves every argument out (when one is required)."""
    words = list(path[1:])
    arguments = _arguments(command)
    if value is None:
        required = any(p.required for p in command.params)
        return [words] if required else []
    option = _target_option(command)
    out = []
    for i in range(len(arguments)):
        values = [value if j == i else BENIGN for j in range(len(arguments))]
        out.append([*words, "--", *values] if value.startswith("-") else [*words, *values])
    benign = [BENIGN] * sum(p.required for p in arguments)
    if option is not None:
        out.append([*words, *benign, f"{option}={value}"])
    if value in EVERY_OPTION_VALUES:  # the inputs that reached the file system: into every text option too
        out += [[*words, *benign, f"{other}={value}"] for other in _text_options(command) if other != option]
    if not out:
        out.append([*words, value])  # no input of its own: an extra argument
    return out


def call(program: str, argv: list[str]) -> Call:
    from app.main import run

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err

    def alarm(signum: int, frame: Any) -> None:
        raise CallTimedOut(f"{program} {' '.join(argv)[:200]} ran over {PER_CALL_S:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, PER_CALL_S)
    code: int | None = None
    raised = None
    try:
        code = run(program, list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except CallTimedOut as exc:
        raised = f"timed out: {exc}"
    except BaseException:  # noqa: BLE001 - a traceback the program let escape is the finding
        raised = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.stdin, sys.stdout, sys.stderr = saved
    return Call([program, *argv], code, out.getvalue(), err.getvalue(), raised)


def problems(result: Call) -> list[str]:
    found = []
    if result.raised:
        found.append(result.raised.strip().splitlines()[-1][:300])
    if "Traceback (most recent call last)" in result.stderr + result.stdout:
        found.append("a traceback on the output")
    if "internal error" in result.stderr:
        found.append(result.stderr.strip().splitlines()[0][:300])
    if result.code is not None and result.code not in DOCUMENTED_EXITS:
        found.append(f"undocumented exit {result.code}")
    return found


def environment(root: str) -> dict[str, str]:
    return {
        "HOME": f"{root}/h1/h2/h3/home", "XDG_CACHE_HOME": f"{root}/h1/h2/h3/home/.cache",
        "XDG_CONFIG_HOME": f"{root}/h1/h2/h3/home/.config", "FRAMEWORK_LEDGER_HOME": f"{root}/h1/h2/h3/ledger",
        "TMPDIR": f"{root}/h1/h2/h3/tmp", "PLATFORM_SERVER_URL": "http://127.0.0.1:9",
        "DATABASE_URL": "", "NO_COLOR": "1", "COLUMNS": "120",
        # no browser, no desktop, no credential: a sign-in is refused at once instead of waiting
        "BROWSER": "", "DISPLAY": "", "WAYLAND_DISPLAY": "", "PLATFORM_TOKEN": "",
        "FRAMEWORK_CONTROL_PLANE_TOKEN": "", "FRAMEWORK_CREDENTIAL_HELPER": "",
    }


# `platform framework ...` is routed to the framework program before anything else runs (app.main.run;
# tests/test_cli.py checks identical output): one input per command proves the routing keeps the checks.
ROUTED_INPUTS = ("long",)


def sweep(programs: Any, only: set[str] | None = None) -> tuple[list[str], int, int]:
    """Every command x every hostile input; the problems found, the commands and the calls."""
    findings: list[str] = []
    calls = commands = 0
    for program, root in programs.items():
        for path, command in walk(root, (program,)):
            commands += 1
            if path in LONG_RUNNING or (only and " ".join(path) not in only):
                continue
            routed = path[:2] == ("platform", "framework")
            for label, value in HOSTILE.items():
                if routed and label not in ROUTED_INPUTS:
                    continue
                for argv in attacks(path, command, value):
                    started = time.monotonic()
                    result = call(program, argv)
                    if os.environ.get("HOSTILE_SLOW") and (time.monotonic() - started > 0.5 or result.code == 0):
                        sys.__stderr__.write(f"slow {time.monotonic() - started:.1f}s {program} {' '.join(argv)[:100]} "
                                             f"-> {result.code}\n")
                    calls += 1
                    findings += [f"{' '.join(argv)[:150]} [{label}] exit {result.code}: {p}" for p in problems(result)]
    return findings, commands, calls


if __name__ == "__main__":  # exploration aid: python -m tests.hostile_harness <demo copy> [command ...]
    from app.cli import build

    os.chdir(sys.argv[1])
    for key, val in environment(os.path.dirname(os.path.abspath(sys.argv[1]))).items():
        if key in ("HOME", "FRAMEWORK_LEDGER_HOME", "TMPDIR"):
            os.makedirs(val, exist_ok=True)
        os.environ[key] = val
    start = time.time()
    found, _, n = sweep({"framework": build("framework"), "platform": build("platform")},
                     set(sys.argv[2:]) or None)
    print("\n".join(found))
    print(f"{n} calls, {len(found)} problems, {time.time() - start:.1f} s", file=sys.stderr)
