"""Typer apps of both programs. `invoke` builds one and runs argv through it."""

from __future__ import annotations

import sys
from typing import Any

from app.output import EXIT_USAGE, diagnose, document, print_document


def _typer_app(help_text: str, examples: tuple[str, ...]) -> Any:
    import typer

    epilog = "Examples:\n\n" + "\n\n".join(f"  {ex}" for ex in examples) if examples else None
    return typer.Typer(help=help_text, epilog=epilog, no_args_is_help=True, add_completion=False,
                       context_settings={"help_option_names": ["--help", "-h"]},
                       pretty_exceptions_enable=False)


def group_app(program: str, name: str) -> Any:
    """An empty Typer group carrying the registry's help for `program name`."""
    from app.registry import FRAMEWORK, PLATFORM

    group = (FRAMEWORK if program == "framework" else PLATFORM).groups[name]
    return _typer_app(group.help, group.examples)


# Group name -> module defining `app` (a Typer group). Keep in step with app/registry.py.
FRAMEWORK_GROUP_MODULES: dict[str, str] = {
    "login": "app.cli.login:login_app",
    "logout": "app.cli.login:logout_app",
    "cloud": "app.cli.cloud",
    "env": "app.cli.env",
    "kcl": "app.cli.kcl",
    "ci": "app.cli.ci",
    "release": "app.cli.release",
    "ledger": "app.cli.ledger",
    "gate": "app.cli.gate",
    "db": "app.cli.database",
    "project": "app.cli.project",
    "debug": "app.cli.debug",
    "registry": "app.cli.registry",
    "doctor": "app.cli.doctor:app",
    # Project authoring (docs/reference-authoring.md).
    "generate": "app.cli.generate:generate_app",
    "build": "app.cli.generate:build_app",
    "lint": "app.cli.lint:lint_app",
    "scaffold": "app.cli.scaffold",
    "component": "app.cli.component",
    "package": "app.cli.package",
    "api": "app.cli.api",
    # Local clusters (docs/reference-cluster.md).
    "cluster": "app.cli.cluster",
    # Domains (docs/reference-domains.md).
    "domain": "app.cli.domain",
    "completion": "app.cli.completion:framework_command",
}
PLATFORM_GROUP_MODULES: dict[str, str] = {
    "server": "app.cli.server",
    "auth": "app.cli.auth",
    "db": "app.cli.db",
    "automation": "app.cli.automation",
    "trigger": "app.cli.trigger",
    "daemon": "app.cli.daemon",
    "tools": "app.cli.tools",
    "run": "app.cli.run",
    "runs": "app.cli.runs",
    "completion": "app.cli.completion:platform_command",
}


def _add_groups(root: Any, modules: dict[str, str], only: str | None = None, program: str = "framework") -> None:
    """Register the groups; with `only`, just that one (running a command needs no other group)."""
    import importlib
    import inspect

    from app.registry import PROGRAMS

    for name, module in modules.items():
        if only is not None and name != only:
            continue
        module, _, attribute = module.partition(":")  # "module:attribute" names a Typer app other than `app`
        mod = importlib.import_module(module)
        if attribute and inspect.isfunction(getattr(mod, attribute)):  # a top-level command, the registry's help
            group = PROGRAMS[program].groups[name]
            epilog = "Examples:\n\n" + "\n\n".join(f"  {ex}" for ex in group.examples)
            root.command(name=name, help=group.help, epilog=epilog)(getattr(mod, attribute))
        elif attribute:
            root.add_typer(getattr(mod, attribute), name=name)
        elif hasattr(mod, "command"):  # a single command at the top level, e.g. `platform run <workflow>`
            root.command(name=name, help=mod.HELP, epilog=mod.EPILOG)(mod.command)
        else:
            root.add_typer(mod.app, name=name)


def framework_app(only: str | None = None) -> Any:
    from app.registry import FRAMEWORK

    root = _typer_app(FRAMEWORK.help, FRAMEWORK.examples)
    _add_groups(root, FRAMEWORK_GROUP_MODULES, only, "framework")
    _version_callback(root, "framework")
    return root


def platform_app(only: str | None = None) -> Any:
    from app.registry import PLATFORM

    root = _typer_app(PLATFORM.help, PLATFORM.examples)
    # `platform framework ...` is routed to the framework program in app.main before Typer runs;
    # it is added here too so that `platform --help` on a terminal lists it.
    if only is None:
        root.add_typer(framework_app(), name="framework", help=PLATFORM.groups["framework"].help)
    _add_groups(root, PLATFORM_GROUP_MODULES, only, "platform")
    _version_callback(root, "platform")
    return root


def _version_callback(root: Any, program: str) -> None:
    import typer

    from app.registry import FRAMEWORK, PLATFORM

    def show_version(value: bool) -> None:
        if value:
            from engine import __version__

            typer.echo(f"{program} {__version__}")
            raise typer.Exit(0)

    @root.callback()
    def main(version: bool = typer.Option(False, "--version", "-V", callback=show_version, is_eager=True,
                                          help="Show the version and exit.")) -> None:
        pass

    main.__doc__ = (FRAMEWORK if program == "framework" else PLATFORM).help


def build(program: str, only: str | None = None) -> Any:
    """The click command of `program`; `only` limits it to one group (the one argv names)."""
    import typer.main

    return typer.main.get_command(framework_app(only) if program == "framework" else platform_app(only))


def invoke(program: str, argv: list[str]) -> int:
    from engine.pydantic_plugins import skip_plugin_discovery

    skip_plugin_discovery()  # no importlib.metadata scan when no pydantic plugin is installed (~25 ms)
    modules = FRAMEWORK_GROUP_MODULES if program == "framework" else PLATFORM_GROUP_MODULES
    command = build(program, only=argv[0] if argv and argv[0] in modules else None)
    try:
        result = command.main(args=argv, prog_name=program, standalone_mode=False)
    except Exception as exc:  # click's exceptions come from Typer's vendored copy: match by shape
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            code = int(exc.exit_code)
            ctx = getattr(exc, "ctx", None)
            usage = ctx.get_usage() if ctx is not None else f"Usage: {program} ..."
            diagnose(exc.format_message(), f"{usage.strip()}\n  Try '{program} {_group_path(argv, modules)}--help'.")
            if "--json" in argv:
                print_document(document(code, {"code": "usage", "message": exc.format_message()}))
            return code or EXIT_USAGE
        if type(exc).__name__ == "Abort":
            diagnose("aborted")
            return 130
        raise
    return int(result or 0)


def _group_path(argv: list[str], modules: dict[str, str]) -> str:
    """The known group named by argv, for the "Try ... --help" hint ("" when argv names none)."""
    return f"{argv[0]} " if argv and argv[0] in modules else ""


if __name__ == "__main__":  # pragma: no cover - debugging aid
    sys.exit(invoke(sys.argv[1], sys.argv[2:]))
