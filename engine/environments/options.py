"""Render options: declared with KCL `option(...)`, set with `-D name=value` (docs/reference-env.md#render-options).

Names must be declared by the environment; the derived options are computed by the tool and
rejected on the command line ("derived options `env`, `namespace`, ... are rejected").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from engine.environments.derived import DEFAULT_IMAGE_TAG, DERIVED_OPTIONS, checkout_facts, derived_options, dns_label
from engine.errors import UsageError
from engine.project import Project

__all__ = [
    "DEFAULT_IMAGE_TAG", "DERIVED_OPTIONS", "EnvOptions", "RenderOption", "checkout_facts", "declared_options",
    "derived_options", "dns_label", "env_options", "parse_assignments", "validate_options",
]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


class RenderOption(BaseModel):
    """One option an environment declares: `option(name, type=, default=, help=)`."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    name: str
    type: str = "str"
    default: str | None = None
    required: bool = False
    help: str = ""


class EnvOptions(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    project: str
    env: str
    file: str
    options: list[RenderOption]
    derived: list[str] = list(DERIVED_OPTIONS)


def parse_assignments(pairs: Iterable[str]) -> dict[str, str]:
    """`-D name=value` arguments to a dict; a malformed pair is a usage error (exit 2)."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise UsageError(f"-D {pair!r}: expected name=value", hint="e.g. -D replicas=3")
        out[name] = value
    return out


def _default_text(literal: str | None) -> str | None:
    """kcl-lib gives defaults as KCL literals; show a string default without its quotes."""
    if not literal:
        return None
    if len(literal) >= 2 and literal[0] == literal[-1] == '"':
        try:
            return str(json.loads(literal))
        except ValueError:
            return literal
    return literal


def declared_options(file: Path, relative_to: Path | None = None) -> list[RenderOption]:
    """The options a KCL file declares, via kcl-lib's ListOptions (parse only, no evaluation)."""
    from engine.kcl.evaluate import external_pkgs, kcl_api, parse_kcl_error

    api = kcl_api()
    args = api.ParseProgramArgs(paths=[str(file)], external_pkgs=external_pkgs())
    try:
        result = api.API().list_options(args)
    except Exception as exc:  # noqa: BLE001 - kcl-lib raises bare Exception
        raise parse_kcl_error(str(exc), relative_to) from None
    seen: dict[str, RenderOption] = {}
    for opt in result.options:
        if opt.name in DERIVED_OPTIONS or opt.name in seen:
            continue
        seen[opt.name] = RenderOption(
            name=opt.name,
            type=opt.type or "str",
            default=_default_text(opt.default_value),
            required=bool(opt.required),
            help=opt.help or "",
        )
    return sorted(seen.values(), key=lambda o: o.name)


def env_options(project: Project, env: str) -> EnvOptions:
    from engine.environments.files import env_file

    path = env_file(project, env)
    return EnvOptions(
        project=project.name,
        env=env,
        file=str(path.relative_to(project.root)),
        options=declared_options(path, project.root),
    )


def _check_type(opt: RenderOption, value: str) -> None:
    ok = True
    if opt.type == "int":
        ok = re.fullmatch(r"[+-]?\d+", value) is not None
    elif opt.type == "float":
        ok = re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", value) is not None
    elif opt.type == "bool":
        ok = value in ("true", "false", "True", "False")
    if not ok:
        raise UsageError(f"-D {opt.name}={value}: option {opt.name!r} is of type {opt.type}")


def validate_options(project: Project, env: str, options: Mapping[str, str]) -> dict[str, str]:
    """Refuse derived and undeclared names (exit 2); check declared types."""
    if not options:
        return {}
    derived = sorted(set(options) & set(DERIVED_OPTIONS))
    if derived:
        raise UsageError(
            f"-D {', '.join(derived)}: derived option{'s' if len(derived) > 1 else ''} cannot be set; "
            f"{', '.join(DERIVED_OPTIONS)} are derived from the environment, release and checkout",
            hint=f"list the options you can set with: framework env options {env}",
        )
    from engine.environments.files import env_file

    declared = {o.name: o for o in declared_options(env_file(project, env), project.root)}
    unknown = sorted(set(options) - set(declared))
    if unknown:
        names = ", ".join(sorted(declared)) or "none"
        raise UsageError(
            f"-D {', '.join(unknown)}: not declared by environment {env!r} (declared: {names})",
            hint=f'declare it in deploy/kcl/{env}/main.k with option("{unknown[0]}", ...)',
        )
    for name, value in options.items():
        _check_type(declared[name], value)
    return dict(options)
