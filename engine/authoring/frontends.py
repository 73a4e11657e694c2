"""Frontends of a framework project (docs/reference-frontends.md): the kinds and their template sets,
their entries under `frontends[]` in framework.yaml, and what each kind builds, serves and generates.

Kinds: `web` (Next.js; `output` static export, standalone or server; base path -> `basePath`),
`vite-spa` (Vite + React + TypeScript), `mobile` (Expo; only its web export is built here).
Every template set carries a package.json with exact versions and its package-lock.json, so a
scaffold runs `npm ci` (docs/reference-frontends.md#pinned-packages).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import ConfigError, UsageError
from engine.paths import assets_dir

KINDS = ("web", "mobile", "vite-spa")
OUTPUTS = ("static", "standalone", "server")
AUTH_MODES = ("native",)
DEFAULT_PORT = {"web": 3000, "vite-spa": 5173, "mobile": 8081}
GEN_DIR = "src/gen"  # protoc-gen-es output and the framework's client helpers, under the frontend's dir
CLIENTS = f"{GEN_DIR}/framework/clients.ts"
_BASE_PATH = re.compile(r"^(/[A-Za-z0-9._~-]+)+$")
_ROUTE = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
# The API's address as each kind's bundler exposes it to the page (docs/reference-frontends.md#env-up).
_API_URL = {"web": 'process.env.NEXT_PUBLIC_API_URL ?? ""', "vite-spa": 'import.meta.env.VITE_API_URL ?? ""',
            "mobile": 'process.env.EXPO_PUBLIC_API_URL ?? ""'}


@dataclass
class FrontendEntry:
    """One entry of `frontends[]` in framework.yaml."""

    name: str
    kind: str = "web"
    dir: str = ""
    port: int = 0
    output: str = "static"
    routes: list[str] = field(default_factory=list)
    base_path: str = ""
    auth_mode: str = "native"

    def __post_init__(self) -> None:
        self.dir = self.dir or f"frontends/{self.name}"
        self.port = self.port or DEFAULT_PORT.get(self.kind, 3000)

    @property
    def built_dir(self) -> str:
        """The kind's build output, relative to the frontend's directory."""
        if self.kind == "web":
            return {"static": "out", "standalone": ".next/standalone", "server": ".next"}[self.output]
        return "dist"

    @property
    def build_command(self) -> list[str]:
        """The kind's own build: `next build`, `vite build`, `expo export --platform web`."""
        return {"web": ["node_modules/.bin/next", "build"], "vite-spa": ["node_modules/.bin/vite", "build"],
                "mobile": ["node_modules/.bin/expo", "export", "--platform", "web"]}[self.kind]

    @property
    def dev_command(self) -> list[str]:
        """The dev server `env up` runs (PORT, FRAMEWORK_API_URL and FRAMEWORK_BASE_PATH in its environment)."""
        if self.kind == "web":
            return ["node_modules/.bin/next", "dev", "-H", "127.0.0.1"]
        if self.kind == "vite-spa":
            return ["node_modules/.bin/vite"]
        return ["sh", "-c", 'EXPO_PUBLIC_API_URL="$FRAMEWORK_API_URL" exec node_modules/.bin/expo start --web '
                '--port "$PORT"']

    def as_config(self) -> dict[str, str]:
        item = {"name": self.name, "kind": self.kind, "dir": self.dir, "port": str(self.port),
                "output": self.output, "routes": "[" + ", ".join(self.routes) + "]", "auth_mode": self.auth_mode}
        if self.base_path:
            item["base_path"] = self.base_path
        return item


def check_entry(entry: FrontendEntry, exc: type[UsageError] | type[ConfigError] = UsageError) -> FrontendEntry:
    """The rules of a frontend's options (docs/reference-frontends.md#scaffold-frontend)."""
    if entry.kind not in KINDS:
        raise exc(f"--kind {entry.kind!r}: one of {', '.join(KINDS)}")
    if entry.output not in OUTPUTS:
        raise exc(f"--output {entry.output!r}: one of {', '.join(OUTPUTS)}")
    if entry.output != "static" and entry.kind != "web":
        raise exc(f"--output {entry.output}: only a web frontend has standalone or server output "
                  f"({entry.kind} builds static files)")
    if entry.auth_mode not in AUTH_MODES:
        raise exc(f"--auth-mode {entry.auth_mode!r}: native is the only mode")
    if entry.base_path and not _BASE_PATH.fullmatch(entry.base_path):
        raise exc(f"--base-path {entry.base_path!r}: a path prefix such as /shop (a leading slash, no trailing one)")
    if not 1 <= entry.port <= 65535:
        raise exc(f"--port {entry.port}: a TCP port (1-65535)")
    bad = [r for r in entry.routes if not _ROUTE.fullmatch(r)]
    if bad:
        raise exc(f"--routes {bad[0]!r}: a route is a lowercase path segment such as orders")
    if entry.routes and entry.kind != "web":
        raise exc(f"--routes: only a web frontend gets a page per route ({entry.kind}: pass --routes none)")
    return entry


def parse_routes(value: str | None) -> list[str]:
    if value is None or value.strip() in ("", "none"):
        return []
    return [r.strip() for r in value.split(",") if r.strip()]


def entries(config: dict[str, Any], where: Path) -> list[FrontendEntry]:
    """framework.yaml's `frontends[]`, checked (a bad entry is a configuration error naming the file)."""
    raw = config.get("frontends") or []
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: `frontends` must be a list")
    out = []
    for item in raw:
        if not isinstance(item, dict) or not item.get("name"):
            raise ConfigError(f"{where}: an entry of `frontends` has no name")
        routes = item.get("routes") or []
        entry = FrontendEntry(name=str(item["name"]), kind=str(item.get("kind") or "web"),
                              dir=str(item.get("dir") or ""),
                              port=int(item.get("port") or 0), output=str(item.get("output") or "static"),
                              routes=[str(r) for r in routes] if isinstance(routes, list) else [],
                              base_path=str(item.get("base_path") or ""),
                              auth_mode=str(item.get("auth_mode") or "native"))
        out.append(check_entry(entry, ConfigError))
    return out


# ---- template sets ------------------------------------------------------------------------------

def template_files(entry: FrontendEntry, service: tuple[str, str] | None) -> dict[str, str]:
    """The scaffold-once files of a frontend (path relative to the project -> text). `service` is
    (client helper, service name) of the service the first page calls, or None."""
    base = assets_dir() / "templates" / "frontend" / entry.kind
    values = {"__NAME__": entry.name, "__BASE_PATH__": entry.base_path, "__PORT__": str(entry.port),
              "__NEXT_OUTPUT__": {"static": '"export"', "standalone": '"standalone"', "server": "undefined"}[
                  entry.output]}
    if service is not None:
        values |= {"__CLIENT__": service[0], "__SERVICE__": service[1]}
    files: dict[str, str] = {}
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        rel = path.relative_to(base).as_posix()
        if rel.endswith(".api"):
            if service is None:
                continue
            rel = rel[:-4]
        elif service is not None and (base / f"{rel}.api").is_file():
            continue
        text = path.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace(key, value)
        files[f"{entry.dir}/{'.gitignore' if rel == 'gitignore' else rel}"] = text
    # A go.mod of its own keeps `go build ./...` and `go vet ./...` out of node_modules (some npm
    # packages ship .go files).
    files[f"{entry.dir}/go.mod"] = (f"// Keeps the Go tools out of this frontend's node_modules.\n"
                                    f"module {entry.name}-frontend\n")
    if entry.base_path and entry.kind == "web":
        files[f"{entry.dir}/.env"] = f"NEXT_PUBLIC_BASE_PATH={entry.base_path}\n"
    for route in entry.routes:
        files[f"{entry.dir}/app/{route}/page.tsx"] = (
            f"export default function Page() {{\n  return (\n    <main>\n      <h1>{route}</h1>\n    </main>\n"
            "  );\n}\n")
    return files


def kcl_entry(entry: FrontendEntry) -> str:
    """The frontend's `framework.Frontend` in the dev environment's KCL (its dev command and port)."""
    dev = ", ".join(f'"{_kcl_escape(a)}"' for a in entry.dev_command)
    lines = [f'name = "{entry.name}"', f'dir = "{entry.dir}"', f'build = "{" ".join(entry.build_command)}"',
             f"dev = [{dev}]", f'output = "{entry.built_dir}"', f'output_kind = "{entry.output}"',
             f"port = {entry.port}"]
    if entry.base_path:
        lines.append(f'base_path = "{entry.base_path}"')
    body = "".join(f"            {line}\n" for line in lines)
    return f"        framework.Frontend {{\n{body}        }}"


def _kcl_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")


def add_to_kcl(text: str, entry: FrontendEntry) -> str:
    """`text` (a dev environment's main.k) with the frontend appended to its `frontends` list (one is
    added before the environment's closing brace when absent)."""
    block = kcl_entry(entry)
    m = re.search(r"^(\s*)frontends\s*=\s*\[", text, re.M)
    if m:
        return text[:m.end()] + "\n" + block + ("," if text[m.end():].strip()[:1] != "]" else "") + text[m.end():]
    close = text.rstrip().rfind("}")
    if close < 0:
        raise ConfigError("the dev environment's main.k has no closing brace to add `frontends` before")
    return text[:close] + f"    frontends = [\n{block}\n    ]\n" + text[close:]


# ---- generated clients --------------------------------------------------------------------------

def client_name(service_key: str) -> str:
    parts = re.split(r"[-_]", service_key)
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:]) + "Client"


def clients_ts(entry: FrontendEntry, services: list[tuple[str, str, str]]) -> str:
    """`src/gen/framework/clients.ts`: one typed helper per service (key, service name, proto file),
    over one Connect transport to the API's address."""
    lines = ["// Code generated by framework. DO NOT EDIT.",
             "// One typed Connect client per service; `framework generate` rewrites this file.",
             'import { createClient, type Client } from "@connectrpc/connect";',
             'import { createConnectTransport } from "@connectrpc/connect-web";']
    for _key, name, file in services:
        lines.append(f'import {{ {name} }} from "../{file.removesuffix(".proto")}_pb";')
    lines += ["", "/** The API's address: FRAMEWORK_API_URL from `framework env up`, else same origin. */",
              f"export const apiBaseUrl: string = {_API_URL[entry.kind]};", "",
              "export const transport = createConnectTransport({ baseUrl: apiBaseUrl });", ""]
    for key, name, _file in services:
        lines += [f"/** A client of {name}. */",
                  f"export function {client_name(key)}(): Client<typeof {name}> {{",
                  f"  return createClient({name}, transport);", "}", ""]
    return "\n".join(lines).rstrip() + "\n"


def protoc_gen_es(root: Path, entry: FrontendEntry) -> Path:
    return root / entry.dir / "node_modules" / ".bin" / "protoc-gen-es"
