"""`--frontend-stores` (docs/reference-lint.md#frontend-stores): a frontend reaches its API only through the
generated clients (`src/gen/framework/clients.ts`): no Connect client or transport of its own and no raw
`fetch`/`axios`/`XMLHttpRequest` to the API's address or to a Connect procedure path."""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine.lint.model import ERROR, Finding

NAME = "frontend-stores"
_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs")
_PRUNE = {"node_modules", "gen", ".next", "dist", "out", "build", ".expo", "web-build"}
_FACTORIES = {"createClient", "createPromiseClient", "createCallbackClient", "createConnectTransport",
              "createGrpcWebTransport", "createGrpcTransport"}
_IMPORT = re.compile(r"""import\s*(?:type\s*)?\{(?P<names>[^}]*)\}\s*from\s*"""
                     r"""["']@connectrpc/connect(?:-web|-node)?["']""")
_CALL = re.compile(r"\b(?:fetch|axios(?:\.(?:get|post|put|patch|delete|request))?)\s*\(|\.open\s*\(")  # .open: XHR
# The API's address as the generated clients and each kind's bundler name it, and a Connect procedure path
# (`/shop.v1.ShopService/Ping`).
_API = re.compile(r"\b(?:apiBaseUrl|NEXT_PUBLIC_API_URL|VITE_API_URL|EXPO_PUBLIC_API_URL|FRAMEWORK_API_URL)\b|"
                  r"/[a-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\.[A-Z][A-Za-z0-9_]*/[A-Z][A-Za-z0-9_]*")
_HINT = "call the generated client instead: import { <service>Client } from \"<src>/gen/framework/clients\""


def strip_comments(text: str) -> str:
    """`text` with // and /* */ comments blanked (newlines kept, so offsets and lines stay), strings kept."""
    out = list(text)
    i, n = 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "\"'`":
            quote = c
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [ch if ch == "\n" else " " for ch in text[i:end]]
            i = end
            continue
        i += 1
    return "".join(out)


def _sources(frontend: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(frontend):
        base = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not (d in _PRUNE and (d != "gen" or base.name == "src")))
        out += [base / f for f in sorted(filenames) if f.endswith(_SUFFIXES) and not f.endswith(".d.ts")]
    return out


def _line(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _call_text(code: str, start: int) -> str:
    """The call's argument text from `start` up to its closing parenthesis (or the line's end)."""
    depth, i = 0, code.find("(", start)
    if i < 0:
        return code[start:code.find("\n", start)]
    for j in range(i, min(len(code), i + 2000)):
        depth += {"(": 1, ")": -1}.get(code[j], 0)
        if depth == 0:
            return code[i:j + 1]
    return code[i:i + 2000]


def check(root: Path, frontends: list[Path]) -> list[Finding]:
    out: list[Finding] = []
    for fe in frontends:
        for path in _sources(fe):
            try:
                code = strip_comments(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                continue
            rel = path.relative_to(root).as_posix()

            def report(offset: int, message: str, rel: str = rel, code: str = code) -> None:
                line, col = _line(code, offset)
                out.append(Finding(analyzer=NAME, rule=NAME, severity=ERROR, file=rel, line=line, column=col,
                                   message=message, hint=_HINT))

            for m in _IMPORT.finditer(code):
                for name in re.finditer(r"[A-Za-z_]\w*", m["names"]):
                    if name[0] in _FACTORIES:
                        report(m.start("names") + name.start(), f"builds its own Connect {name[0]} instead of "
                               "using the generated clients")
            for m in _CALL.finditer(code):
                hit = _API.search(_call_text(code, m.start()))
                if hit:
                    what = m[0].rstrip("( ").lstrip(".")
                    report(m.start() + (1 if m[0].startswith(".") else 0),
                           f"{what}() to the API ({hit[0]}) bypasses the generated clients")
    return out
