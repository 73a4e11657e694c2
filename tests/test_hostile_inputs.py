"""Every command of both programs, given hostile input in each argument, fails cleanly.

README.md#output-and-exit-codes: no traceback, an exit code from the documented set, never
`internal error` for a bad name or path (docs/reference-env.md#names: names get their limits where
they enter; an OS error on a path the user gave names the path and its problem); nothing written
outside the project, the ledger home and HOME; no command waits for input it cannot get (stdin is
empty, every call has a time limit). Commands run in-process through `app.main.run` (the programs'
own entry and error handlers), in a copy of examples/demo, see tests/hostile_harness.py.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from app.cli import build
from tests.conftest import DEMO
from tests.hostile_harness import HOSTILE, LONG_RUNNING, environment, sweep

FRAGMENTS = ("passwd", "DROP TABLE", "caf\u00e9", "x" * 64)


def _files(root: Path, allowed: list[Path]) -> set[str]:
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d not in allowed]
        found |= {str(here / name) for name in [*dirnames, *filenames]}
    return found


def test_every_command_refuses_hostile_inputs_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README.md#output-and-exit-codes and docs/reference-env.md#names: hostile inputs (a missing name,
    `../../../etc/passwd`, "", 5,000 characters, quotes and SQL, -1, a NUL, non-ASCII) in each argument
    of every command: documented exit, no traceback, no internal error, no write outside, no waiting."""
    from deploy_fixtures import dev_database_off

    sandbox = tmp_path / "sandbox"
    project = sandbox / "a" / "b" / "c" / "demo"  # ../../../ from the project stays in the sandbox
    shutil.copytree(DEMO, project, ignore=shutil.ignore_patterns(".framework", "__pycache__"))
    dev_database_off(project)
    # dev's build steps stay real shell builds, but check their file instead of starting a Python each
    # (~40 of the calls get as far as building dev; what the step does is not what this test checks)
    dev = project / "deploy" / "kcl" / "dev" / "main.k"
    assert dev.read_text().count("python3 -m py_compile services/") == 2
    dev.write_text(dev.read_text().replace("python3 -m py_compile services/", "test -f services/"))
    env = environment(str(project.parent))
    for key, value in env.items():
        if key in ("HOME", "FRAMEWORK_LEDGER_HOME", "TMPDIR"):
            Path(value).mkdir(parents=True)
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(tempfile, "tempdir", env["TMPDIR"])
    monkeypatch.chdir(project)
    system_tmp = Path("/tmp")
    tmp_before = set(os.listdir(system_tmp))
    passwd = Path("/etc/passwd").stat()
    skeleton = _files(sandbox, [project, project.parent / "h1"])

    # The calls run in this process (app.main.run); each builds its program's Typer tree from the same
    # modules, so one tree per (program, group) serves them all, as click's CliRunner reuses a command.
    import functools

    import app.cli

    monkeypatch.setattr(app.cli, "build", functools.cache(app.cli.build))
    # "no waiting" is each call's own alarm (hostile_harness.PER_CALL_S), not a total wall time
    findings, commands, calls = sweep({"framework": build("framework"), "platform": build("platform")})

    assert commands >= 230 and calls > commands * 4, (commands, calls)
    assert not findings, f"{len(findings)} of {calls} calls:\n" + "\n".join(findings[:60])
    # A path typed on the command line is resolved against the current directory, as every tool does:
    # `--dir ../../../etc/passwd` from the project is sandbox/a/etc/passwd, which the user named.
    named = sandbox / "a" / "etc"
    stray = _files(sandbox, [project, project.parent / "h1", named]) - skeleton
    assert not stray, sorted(stray)[:20]
    hostile_in_tmp = [n for n in set(os.listdir(system_tmp)) - tmp_before if any(f in n for f in FRAGMENTS)]
    assert not hostile_in_tmp
    after = Path("/etc/passwd").stat()
    assert (after.st_mtime_ns, after.st_size) == (passwd.st_mtime_ns, passwd.st_size)
    assert len(HOSTILE) == 8 and len(LONG_RUNNING) == 4


def test_real_processes_refuse_long_names_and_paths_clearly(demo_project: Path) -> None:
    """docs/reference-env.md#names: a 5,000-character environment or run id is exit 2 stating the limit; a
    5,000-character file path is exit 1 `path_error` naming the problem; neither says `internal error`,
    and the value is not echoed back whole (the installed programs, no terminal)."""
    from tests.conftest import run_cli

    long = "x" * 5000
    for program, args, code, words in (
        ("framework", ("env", "render", long), 2, "longer than 128 characters"),
        ("platform", ("runs", "show", long), 2, "longer than 128 characters"),
        ("framework", ("kcl", "eval", long), 1, "File name too long"),
        ("framework", ("env", "render", "../../../etc/passwd"), 2, "invalid environment name"),
    ):
        done = run_cli(program, *args, "--json", cwd=demo_project, timeout=60)
        assert done.exit_code == code, (args[:2], done.stderr[:300])
        assert words in done.stderr and "internal error" not in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr) < 600 and len(done.stdout) < 900
        error = json.loads(done.stdout)["error"]
        assert error["code"] == ("usage" if code == 2 else "path_error")
