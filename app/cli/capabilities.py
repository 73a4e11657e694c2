"""`framework project capabilities` (docs/reference-project.md#project-capabilities): every command, analyzer and
marker, generated, never hand-listed: the commands by walking the real Typer trees of both programs (with the
command registry's one-line help, app/registry.py), the analyzers from engine/lint's table and the markers from
engine/authoring/annotation_spec.py. It lives in the app layer: the engine never imports the command tree."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Command(BaseModel):
    path: str  # "framework project capabilities"
    group: bool  # has sub-commands
    help: str  # the registry's one-line help where it names the command, else the command's own
    options: list[str]
    arguments: list[str]
    hidden: bool = False


class AnalyzerRow(BaseModel):
    name: str
    flag: str
    input: str
    summary: str
    markers: list[str]  # the annotations it reads (annotation_spec)


class MarkerRow(BaseModel):
    name: str
    kind: str
    value: str
    meaning: str
    analyzers: list[str]


class Capabilities(BaseModel):
    programs: list[str]
    aliases: dict[str, str]  # a command tree that runs another program's
    commands: list[Command]
    analyzers: list[AnalyzerRow]
    linters: list[str]
    markers: list[MarkerRow]
    counts: dict[str, int]


# `platform framework ...` runs the framework program (app/main.py routes it): listed once, as `framework ...`.
ALIASES = {"platform framework": "framework"}


def _registry_help(path: list[str]) -> str | None:
    from app.registry import PROGRAMS

    program = PROGRAMS.get(path[0])
    if program is None:
        return None
    if len(path) == 1:
        return program.help
    group = program.groups.get(path[1])
    if group is None:
        return None
    if len(path) == 2:
        return group.help
    return group.commands.get(path[2]) if len(path) == 3 else None


def walk(command: Any, path: list[str], out: list[Command], skip: frozenset[str] = frozenset(ALIASES)) -> None:
    """Every command under `command` (itself included), depth first in the tree's order."""
    ctx = command.context_class(command, info_name=" ".join(path), **command.context_settings)
    options: list[str] = []
    arguments: list[str] = []
    for param in command.get_params(ctx):
        if param.param_type_name == "argument":
            arguments.append((param.name or "").upper() + ("..." if param.nargs == -1 else ""))
        else:
            options += sorted(o for o in [*param.opts, *param.secondary_opts] if o.startswith("--"))
    children = getattr(command, "commands", None) or {}
    text = _registry_help(path) or command.get_short_help_str(limit=200)
    out.append(Command(path=" ".join(path), group=bool(children), help=text, options=options, arguments=arguments,
                       hidden=bool(getattr(command, "hidden", False))))
    for name, child in children.items():
        if " ".join([*path, name]) not in skip:
            walk(child, [*path, name], out, skip)


def capabilities() -> Capabilities:
    from app.cli import build
    from app.registry import PROGRAMS
    from engine.authoring.annotation_spec import MARKERS
    from engine.lint.model import ANALYZERS, LINTERS

    commands: list[Command] = []
    for program in PROGRAMS:
        walk(build(program), [program], commands)
    reads: dict[str, list[str]] = {}
    for marker in MARKERS:
        for analyzer in marker.analyzers:
            reads.setdefault(analyzer, []).append(marker.name)
    analyzers = [AnalyzerRow(name=a.name, flag=f"--{a.name}", input=a.group, summary=a.summary,
                             markers=reads.get(a.name, [])) for a in ANALYZERS]
    markers = [MarkerRow(name=m.name, kind=m.kind, value=m.value, meaning=m.meaning, analyzers=list(m.analyzers))
               for m in MARKERS]
    return Capabilities(programs=list(PROGRAMS), aliases=dict(ALIASES), commands=commands, analyzers=analyzers,
                        linters=list(LINTERS), markers=markers,
                        counts={"commands": sum(1 for c in commands if not c.group), "groups":
                                sum(1 for c in commands if c.group), "analyzers": len(analyzers),
                                "markers": len(markers)})
