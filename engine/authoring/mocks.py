"""Mocks of internal package contracts (docs/reference-authoring.md#commands, `generate`).

`internal/<name>/contract.go` declares the package's Go interfaces; `generate` writes a mock of each
in `internal/<name>/<name>mock/mock.go`: a struct with one `<Method>Func` field per method, the calls
recorded, and a compile-time check that it implements the interface. The contract is read as text:
method signatures on one or more lines, named or unnamed parameters, variadics; embedded interfaces
are not mockable here and make that interface skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from engine.authoring import naming

_IFACE = re.compile(r"^type\s+([A-Z]\w*)\s+interface\s*\{", re.M)
_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)", re.M | re.S)
_IMPORT_ONE = re.compile(r'^import\s+(\w+\s+)?"([^"]+)"', re.M)
_EXPORTED = re.compile(r"(?<![\w.])([A-Z]\w*)")


@dataclass
class Param:
    name: str
    type: str


@dataclass
class MockMethod:
    name: str
    params: list[Param]
    results: str  # as written: "", "error", "(string, error)"


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _params(text: str) -> list[Param]:
    parts = _split_top(text)
    named = any(re.match(r"^\w+\s+\S", p) and not p.startswith(("func", "map", "chan")) for p in parts)
    if not named:
        return [Param(f"p{i}", p) for i, p in enumerate(parts)]
    out: list[Param] = []
    pending: list[str] = []
    for p in parts:
        m = re.match(r"^(\w+)\s+(.+)$", p)
        if m is None:
            pending.append(p)
            continue
        for name in pending:
            out.append(Param(name, m[2]))
        pending = []
        out.append(Param(m[1], m[2]))
    return out


def _body(text: str, start: int) -> str:
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start:i - 1]


def interfaces(text: str) -> dict[str, list[MockMethod]]:
    out: dict[str, list[MockMethod]] = {}
    clean = re.sub(r"//[^\n]*", "", text)
    for m in _IFACE.finditer(clean):
        body = _body(clean, m.end())
        methods: list[MockMethod] = []
        # Join the lines of one method: a method ends where its parentheses balance at a newline.
        chunks, cur, depth = [], "", 0
        for ch in body:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "\n" and depth == 0:
                if cur.strip():
                    chunks.append(cur.strip())
                cur = ""
            else:
                cur += ch
        if cur.strip():
            chunks.append(cur.strip())
        ok = True
        for chunk in chunks:
            mm = re.match(r"^([A-Za-z_]\w*)\s*\((.*)$", chunk, re.S)
            if mm is None:
                ok = False  # an embedded interface
                break
            rest, depth, i = mm[2], 1, 0
            while i < len(rest) and depth:
                depth += {"(": 1, ")": -1}.get(rest[i], 0)
                i += 1
            methods.append(MockMethod(mm[1], _params(" ".join(rest[:i - 1].split())),
                                      " ".join(rest[i:].split())))
        if ok:
            out[m[1]] = methods
    return out


def _imports(text: str) -> dict[str, str]:
    """alias -> import path of the contract file."""
    specs: list[tuple[str | None, str]] = []
    for block in _IMPORT_BLOCK.findall(text):
        for line in block.splitlines():
            mm = re.match(r'^\s*(\w+\s+)?"([^"]+)"', line)
            if mm:
                specs.append(((mm[1] or "").strip() or None, mm[2]))
    specs += [((a or "").strip() or None, p) for a, p in _IMPORT_ONE.findall(text)]
    return {alias or path.rsplit("/", 1)[-1]: path for alias, path in specs}


def mock_go(module: str, rel_dir: str, text: str) -> str | None:
    """The mock file of one contract, or None when it declares no mockable interface."""
    ifaces = interfaces(text)
    if not ifaces:
        return None
    pkg_match = re.search(r"^package\s+(\w+)", text, re.M)
    pkg = pkg_match[1] if pkg_match else naming.go_package(Path(rel_dir).name)
    mock_pkg = f"{pkg}mock"

    def qualify(t: str) -> str:
        return _EXPORTED.sub(lambda m: f"{pkg}.{m[1]}", t)

    lines, used = [], set()
    for iface, methods in sorted(ifaces.items()):
        fields, funcs = [], []
        for method in methods:
            params = [Param(p.name, qualify(p.type)) for p in method.params]
            results = qualify(method.results)
            sig = ", ".join(f"{p.name} {p.type}" for p in params)
            used.add(sig + " " + results)
            fields.append(f"\t{method.name}Func func({sig}) {results}".rstrip())
            args = ", ".join(p.name + ("..." if p.type.startswith("...") else "") for p in params)
            call = f"m.{method.name}Func({args})"
            funcs += [f"// {method.name} records the call and runs {method.name}Func.",
                      f"func (m *{iface}) {method.name}({sig}) {results} {{".replace(") {", ") {", 1),
                      "\tm.mu.Lock()", f'\tm.Calls = append(m.Calls, "{method.name}")', "\tm.mu.Unlock()",
                      f"\tif m.{method.name}Func == nil {{",
                      f'\t\tpanic("{mock_pkg}.{iface}.{method.name}: {method.name}Func is not set")', "\t}",
                      f"\t{'return ' if results else ''}{call}", "}", ""]
        lines += [f"// {iface} is a mock of {pkg}.{iface}: set a Func per method; Calls records the calls.",
                  f"type {iface} struct {{", *fields, "\tCalls []string", "\tmu    sync.Mutex", "}", "",
                  f"var _ {pkg}.{iface} = (*{iface})(nil)", "", *funcs]
    sigs = " ".join(used)
    imports = {f'"{module}/{rel_dir}"'} | {'"sync"'}
    for alias, path in _imports(text).items():
        if re.search(rf"(?<![\w.]){re.escape(alias)}\.", sigs):
            imports.add(f'{alias} "{path}"' if alias != path.rsplit("/", 1)[-1] else f'"{path}"')
    head = ["// Code generated by framework. DO NOT EDIT.", "",
            f"// Package {mock_pkg} holds mocks of the contract of {rel_dir}.", f"package {mock_pkg}", "",
            "import (", *[f"\t{i}" for i in sorted(imports)], ")", ""]
    return "\n".join(head + lines).rstrip("\n") + "\n"


def contracts(root: Path) -> list[Path]:
    base = root / "internal"
    if not base.is_dir():
        return []
    return sorted(p for p in base.glob("*/contract.go") if p.parent.name not in ("handlers", "bootstrap",
                                                                                  "entities"))
