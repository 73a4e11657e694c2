"""Console entry points `framework` and `platform`.

Startup is kept cheap on purpose: this module imports only the standard library. `--version`
and plain (non-terminal) `--help` are answered from `app.registry` without importing Typer;
everything else builds the Typer app; the Textual dashboard is imported only when it opens.
"""

from __future__ import annotations

import os
import sys

HELP_FLAGS = ("--help", "-h")
# `framework <group> <command>` answered without Typer when well formed: (module, function taking the rest of argv
# and returning an exit code, or None to hand the command to Typer). Their benches: env list (bench/startup.py),
# project map and shapes (bench/project.py), cluster status (bench/cluster.py).
FAST = {
    ("env", "list"): ("app.cli.env_list_ops", "fast"),
    ("env", "status"): ("app.cli.env_status_ops", "fast"),
    ("ledger", "show"): ("app.cli.ledger_show_ops", "fast"),
    ("project", "map"): ("app.cli.project_map_ops", "fast"),
    ("project", "shapes"): ("app.cli.project_shapes_ops", "fast"),
    ("cluster", "status"): ("app.cli.cluster_views", "fast_status"),
}
_FINISHED = [False]  # a command that has written and closed everything: its process may end at once


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def run(program: str, argv: list[str]) -> int:
    """Run `program` with `argv` and return its exit code."""
    # httpx imports its own command-line tool at import (click, rich's console, pygments: ~40 ms of
    # every command talking HTTP); neither program runs it, so it is marked absent and httpx keeps
    # the stub it has for an install without its CLI extra.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[assignment]
    instruction = os.environ.get("_FRAMEWORK_COMPLETE" if program == "framework" else "_PLATFORM_COMPLETE")
    if instruction:  # the shell asks for completions (app/completion.py): answered from tables, no Typer
        from app.completion import answer

        return answer(program, instruction)
    if program == "platform" and argv[:1] == ["framework"]:
        # `platform framework ...` is the framework program: identical output and exit codes.
        program, argv = "framework", argv[1:]
    if any("\x00" in arg for arg in argv):  # no OS call can take it; exec never passes one, run() can
        return _refuse_nul(argv)
    if not argv:
        from app.registry import plain_help

        if _isatty(sys.stdin) and _isatty(sys.stdout):
            from app.dashboard import run_dashboard

            return run_dashboard(program)
        sys.stderr.write(plain_help(program, []) or "")
        return 2
    if argv[0] in ("--version", "-V"):
        from engine import __version__

        sys.stdout.write(f"{program} {__version__}\n")
        return 0
    if argv[-1] in HELP_FLAGS and not _isatty(sys.stdout):
        from app.registry import plain_help

        text = plain_help(program, argv[:-1])
        if text is not None:
            sys.stdout.write(text)
            return 0
    if argv[0] == "completion":  # prints the script without Typer when well formed
        from app.cli.completion import fast as fast_completion

        code = fast_completion(program, argv[1:])
        if code is not None:
            return code
    if argv[0] == "debug":  # session commands skip Typer's import when well formed (bench/debug.py)
        from app.cli.debug_ops import fast

        code = fast(argv[1:])
        if code is not None:
            return code
    if program == "framework" and argv[:2] == ["env", "deploy"]:  # skips Typer when well formed (bench/k8s.py)
        import gc

        from app.cli.env_deploy_ops import fast as fast_deploy
        from engine.pydantic_plugins import skip_plugin_discovery

        skip_plugin_discovery()  # no importlib.metadata scan when no pydantic plugin is installed (~25 ms)

        # A deploy is one short-lived process making few reference cycles: the collector's passes
        # over its imports' ~30k objects and the dicts of its manifests and kubectl's answer (and a
        # last one as the interpreter exits) cost tens of ms of a 0.6 s deploy (bench/k8s.py). Not
        # off: a long rollout wait (process runtime, --timeout of hours) still collects, rarely.
        thresholds = gc.get_threshold()
        gc.set_threshold(200_000, 50, 100)
        code = fast_deploy(argv[2:])
        if code is not None:
            gc.freeze()  # the exit's last collection then has nothing to walk
            _FINISHED[0] = True
            return code
        gc.set_threshold(*thresholds)
    fast = FAST.get((argv[0], argv[1])) if program == "framework" and len(argv) > 1 else None
    if fast is not None:  # well formed, these skip Typer's import and parse; anything else goes to Typer
        from importlib import import_module

        code = getattr(import_module(fast[0]), fast[1])(argv[2:])
        if code is not None:
            return code
    from app.cli import invoke

    return invoke(program, argv)


def _refuse_nul(argv: list[str]) -> int:
    from app.output import EXIT_USAGE, diagnose, document, print_document

    position = next(i for i, arg in enumerate(argv) if "\x00" in arg) + 1
    message = f"argument {position} holds a NUL character"
    diagnose(message)
    if "--json" in argv:
        print_document(document(EXIT_USAGE, {"code": "usage", "message": message}))
    return EXIT_USAGE


def framework_main() -> None:
    code = run("framework", sys.argv[1:])
    if _FINISHED[0]:
        # the deploy closed its ledger, renamed its files into place and waited for its kubectl:
        # only the interpreter's own teardown of its modules is left (~10 ms), skipped
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)
    sys.exit(code)


def platform_main() -> None:
    sys.exit(run("platform", sys.argv[1:]))


if __name__ == "__main__":
    # python -m app.main <program> [args...]
    name = sys.argv[1] if len(sys.argv) > 1 else os.path.basename(sys.argv[0])
    sys.exit(run(name if name in ("framework", "platform") else "framework", sys.argv[2:]))
