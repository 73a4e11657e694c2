"""The argv parser of the commands `app.main` runs without Typer (`debug` session commands,
`env deploy`): only well-formed invocations; None hands anything else to Typer (help, usage errors,
`--opt=value`, `--`, unknown options), which then says it properly."""

from __future__ import annotations

from typing import Any

# option -> (parameter, kind): bool for a flag, list for a repeatable value, else the value's type
Options = dict[str, tuple[str, Any]]


def parse(argv: list[str], options: Options, defaults: dict[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """(positional words, parameters) of a well-formed `argv`, else None."""
    params = {k: list(v) if isinstance(v, list) else v for k, v in defaults.items()}
    positional: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in options:
            dest, kind = options[word]
            if kind is bool:
                params[dest] = True
            else:
                if i + 1 >= len(argv):
                    return None
                if kind is list:
                    params[dest].append(argv[i + 1])
                else:
                    try:
                        params[dest] = kind(argv[i + 1])
                    except ValueError:
                        return None
                i += 1
        elif word.startswith("-") and word != "-":
            return None
        else:
            positional.append(word)
        i += 1
    return positional, params


def encodable(argv: list[str]) -> bool:
    """No undecodable bytes (surrogate escapes) in argv: those are Typer's to handle."""
    try:
        for arg in argv:
            arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
