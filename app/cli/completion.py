"""`framework completion <shell>` and `platform completion <shell>`: print the completion script
(README.md#progress-and-shell-completion). Well-formed calls are answered by app.main without Typer
(`fast`); Typer handles --help and usage errors."""

from __future__ import annotations

import typer

from app.cli.options import JSON_OPTION


def fast(program: str, argv: list[str]) -> int | None:
    """`completion <shell> [--json]` without Typer; None for anything else (help, usage errors)."""
    words = [w for w in argv if w != "--json"]
    if len(words) != 1 or len(argv) - len(words) > 1 or words[0].startswith("-"):
        return None
    return emit(program, words[0], "--json" in argv)


def emit(program: str, shell: str, json_mode: bool) -> int:
    from app.completion import SHELLS, script
    from app.output import EXIT_USAGE, diagnose, document, print_document

    if shell not in SHELLS:
        from engine.names import shown

        message = f"unknown shell {shown(shell, 40)}: expected one of {', '.join(SHELLS)}"
        diagnose(message, f"{program} completion bash")
        if json_mode:
            print_document(document(EXIT_USAGE, {"code": "usage", "message": message}))
        return EXIT_USAGE
    text = script(program, shell)
    if json_mode:
        print_document(document(0, None, {"program": program, "shell": shell, "script": text}))
    else:
        import sys

        sys.stdout.write(text)
    return 0


def _shell_argument() -> object:
    return typer.Argument(..., help="The shell: bash, zsh or fish.")


def framework_command(shell: str = _shell_argument(), json_output: bool = JSON_OPTION) -> None:  # noqa: B008
    raise typer.Exit(emit("framework", shell, json_output))


def platform_command(shell: str = _shell_argument(), json_output: bool = JSON_OPTION) -> None:  # noqa: B008
    raise typer.Exit(emit("platform", shell, json_output))
