"""Names derived from the spec's words: services, handler packages, RPC files, tables."""

from __future__ import annotations

import re

from engine import names
from engine.errors import UsageError

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
GO_KEYWORDS = {"break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for",
               "func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select",
               "struct", "switch", "type", "var", "main", "internal", "gen", "bootstrap", "handlers", "entities"}


def snake(name: str) -> str:
    """CamelCase or kebab-case -> snake_case (GetUser -> get_user, HTTPServer -> http_server)."""
    text = re.sub(r"[-\s.]+", "_", name)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    return re.sub(r"_+", "_", text).strip("_").lower()


def camel(name: str) -> str:
    """snake_case or kebab-case -> CamelCase (order_item -> OrderItem)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-\s]+", name) if part)


def check_name(name: str, what: str) -> str:
    """A lowercase identifier for a project, service, entity or binary (snake_case accepted)."""
    value = snake(names.length(name, what, names.MAX_IDENTIFIER))
    if not NAME_RE.match(value):
        raise UsageError(f"{what} name {name!r} must start with a letter and hold letters, digits or _",
                         hint=f"e.g. {what} orders")
    if value in GO_KEYWORDS:
        raise UsageError(f"{what} name {name!r} is reserved (a Go keyword or a generated package)")
    return value


def go_package(name: str) -> str:
    """A Go package name: lowercase letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def service_key(service: str) -> str:
    """A proto service's short key: GreeterService -> greeter (handler dir internal/handlers/<key>)."""
    base = service[: -len("Service")] if service.endswith("Service") and service != "Service" else service
    return snake(base)


def rpc_file(method: str) -> str:
    return f"rpc_{snake(method)}.go"


def plural(word: str) -> str:
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    return word + "s"


def table_of(message: str) -> str:
    """The table of a `framework:entity` message: snake_case plural (OrderItem -> order_items)."""
    return plural(snake(message))
