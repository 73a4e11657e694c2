"""Shell completion of both programs (README.md#progress-and-shell-completion): click's protocol, driven
as bash, zsh and fish drive it, in child processes; the printed bash script in a real bash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BIN, run_cli

DEMO_ENVS = ["cloud", "cluster", "dev", "prod", "staging"]


def ask(program: str, shell: str, words: str, cwd: Path, cword: int | str | None = None) -> str:
    """One completion request as the shell's script makes it: the program run with the env protocol."""
    if cword is None:
        cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = {**os.environ, f"_{program.upper()}_COMPLETE": f"{shell}_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(cword)}
    proc = subprocess.run([str(BIN / program)], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout


def bash_values(out: str) -> list[str]:
    return [line.split(",", 1)[1] for line in out.splitlines() if line.startswith("plain,")]


def test_bash_protocol_completes_commands_subcommands_flags_and_environments(demo_project: Path) -> None:
    """README.md#progress-and-shell-completion: commands, subcommands, flags and the project's environment
    names (deploy/kcl/<env>/main.k) come back in click's bash format, `type,value` per line."""
    top = bash_values(ask("framework", "bash", "framework ", demo_project))
    assert {"env", "db", "release", "debug", "completion"} <= set(top)
    assert bash_values(ask("framework", "bash", "framework en", demo_project)) == ["env"]
    env_commands = set(bash_values(ask("framework", "bash", "framework env ", demo_project)))
    assert {"build", "deploy", "status", "list"} <= env_commands
    assert bash_values(ask("framework", "bash", "framework env deploy ", demo_project)) == DEMO_ENVS
    assert bash_values(ask("framework", "bash", "framework env build st", demo_project)) == ["staging"]
    flags = bash_values(ask("framework", "bash", "framework env build dev --", demo_project))
    assert {"--push", "--release", "--target", "--json", "--no-build"} <= set(flags)
    assert bash_values(ask("framework", "bash", "framework db seed apply --env ", demo_project)) == DEMO_ENVS
    # a value option's value is not a positional: after `--tag x` the env argument is still first
    assert bash_values(ask("framework", "bash", "framework env deploy --tag x ", demo_project)) == DEMO_ENVS
    migrate = bash_values(ask("framework", "bash", "framework db migrate ", demo_project))
    assert migrate == ["status", "up", "version", "force"]


def test_platform_and_its_framework_program_complete(demo_project: Path) -> None:
    """README.md#progress-and-shell-completion: `platform` completes its own commands, and `platform framework ...`
    completes exactly as `framework ...` does."""
    top = bash_values(ask("platform", "bash", "platform ", demo_project))
    assert {"server", "daemon", "tools", "framework", "completion"} <= set(top)
    assert set(bash_values(ask("platform", "bash", "platform daemon ", demo_project))) >= {"start", "stop", "status"}
    assert bash_values(ask("platform", "bash", "platform framework env up ", demo_project)) == DEMO_ENVS


def test_outside_a_project_no_environment_names(tmp_path: Path) -> None:
    """README.md#progress-and-shell-completion: environment names come from the project around the current
    directory; outside any project there are none (and no error)."""
    assert ask("framework", "bash", "framework env deploy ", tmp_path) == ""


def test_zsh_and_fish_formats(demo_project: Path) -> None:
    """README.md#progress-and-shell-completion: zsh gets (type, value, help or `_`) line triples, fish
    `type,value<TAB>help` lines, as click's scripts read them."""
    zsh = ask("framework", "zsh", "framework env b", demo_project).splitlines()
    assert zsh[0:2] == ["plain", "build"] and zsh[2].startswith("Build an environment")
    assert len(zsh) % 3 == 0
    fish_env = {**os.environ, "_FRAMEWORK_COMPLETE": "fish_complete", "COMP_WORDS": "framework env deploy s",
                "COMP_CWORD": "s"}
    fish = subprocess.run([str(BIN / "framework")], cwd=demo_project, env=fish_env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert fish.returncode == 0 and fish.stdout.splitlines() == ["plain,staging\tenvironment"]


def test_completion_never_imports_typer(demo_project: Path) -> None:
    """README.md#progress-and-shell-completion: completion is answered on the fast path, without Typer
    (it runs on every <TAB>)."""
    env = {**os.environ, "_FRAMEWORK_COMPLETE": "bash_complete", "COMP_WORDS": "framework env build ",
           "COMP_CWORD": "3", "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run([str(BIN / "framework")], cwd=demo_project, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0 and "plain,dev" in proc.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "app.completion" in imported  # the trace is real ...
    assert not {m for m in imported if m.split(".")[0] in ("typer", "click", "rich", "textual")}


def test_completion_command_prints_each_script(demo_project: Path) -> None:
    """README.md#progress-and-shell-completion: `framework completion bash|zsh|fish` prints the script to
    install, as does the protocol's `<shell>_source`; an unknown shell is exit 2 with a clear message."""
    for shell, marker in (("bash", "complete -o nosort -F _framework_completion framework"),
                          ("zsh", "#compdef framework"), ("fish", "complete --no-files --command framework")):
        res = run_cli("framework", "completion", shell, cwd=demo_project)
        assert res.exit_code == 0 and marker in res.stdout
        env = {"_FRAMEWORK_COMPLETE": f"{shell}_source"}
        assert run_cli("framework", cwd=demo_project, env=env).stdout == res.stdout
    res = run_cli("platform", "completion", "bash", "--json", cwd=demo_project)
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["ok"] and doc["shell"] == "bash" and "_platform_completion" in doc["script"]
    bad = run_cli("framework", "completion", "tcsh", "--json", cwd=demo_project)
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "usage"
    assert "unknown shell 'tcsh'" in bad.stderr and "Traceback" not in bad.stderr
    bad_var = run_cli("framework", cwd=demo_project, env={"_FRAMEWORK_COMPLETE": "csh_complete"})
    assert bad_var.exit_code == 2 and "expected <bash|zsh|fish>" in bad_var.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_printed_bash_script_completes_in_a_real_bash(demo_project: Path) -> None:
    """README.md#progress-and-shell-completion: the printed bash script, sourced in a real bash, registers
    `complete -F` for the program and fills COMPREPLY with the project's environments and a command's flags."""
    script = run_cli("framework", "completion", "bash", cwd=demo_project).stdout
    (demo_project / "framework.bash").write_text(script)
    program = (
        "source ./framework.bash\n"
        "complete -p framework\n"
        "COMP_WORDS=(framework env deploy ''); COMP_CWORD=3; COMPREPLY=()\n"
        "_framework_completion framework; echo \"envs: ${COMPREPLY[*]}\"\n"
        "COMP_WORDS=(framework db migrate up --j); COMP_CWORD=4; COMPREPLY=()\n"
        "_framework_completion framework; echo \"flags: ${COMPREPLY[*]}\"\n"
    )
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], cwd=demo_project, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "complete -o nosort -F _framework_completion framework"
    assert lines[1] == "envs: " + " ".join(DEMO_ENVS)
    assert lines[2] == "flags: --json"


def test_completion_table_is_generated_from_the_typer_apps() -> None:
    """README.md#progress-and-shell-completion: the command tree completion reads is generated from the Typer
    apps (`python -m app.help_options_gen`), so a new flag or command completes once regenerated."""
    from app.help_options_gen import COMPLETION_TARGET, render_completion

    assert COMPLETION_TARGET.read_text() == render_completion(), "stale: run `python -m app.help_options_gen`"
