"""Component registries in the shadcn registry schema (docs/reference-frontends.md#components).

A registry is a directory or an HTTP(S) base URL holding `registry.json` (the index: `name`,
`homepage`, `items[]`, each item a registry-item: `name`, `type`, `title`, `description`,
`dependencies`, `devDependencies`, `registryDependencies`, `files[]` of `path`, `type`, `target`,
`content`). An item's file contents come from `<base>/<name>.json` when the registry serves one
(shadcn's built form, contents inline), else from each file's `path` under the base (the source form,
as the default registry in assets/components/ is shipped).
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import InvalidInput, NotFound, UsageError

NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")  # shadcn names: kebab-case
MAX_NAME = 64
FETCH_TIMEOUT_S = 15.0
MAX_DOCUMENT = 4 * 1024 * 1024  # a registry document or file over this is refused


class RegistryFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str
    type: str = "registry:ui"
    target: str | None = None
    content: str | None = None


class RegistryItem(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    name: str
    type: str = "registry:ui"
    title: str = ""
    description: str = ""
    dependencies: list[str] = []
    dev_dependencies: list[str] = Field(default=[], alias="devDependencies")
    registry_dependencies: list[str] = Field(default=[], alias="registryDependencies")
    files: list[RegistryFile] = []

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "title": self.title, "description": self.description,
                "dependencies": self.dependencies, "dev_dependencies": self.dev_dependencies,
                "registry_dependencies": self.registry_dependencies, "files": [f.path for f in self.files]}


class RegistryIndex(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = ""
    homepage: str = ""
    items: list[RegistryItem] = []


def check_component_name(name: str) -> str:
    if len(name) > MAX_NAME:
        raise UsageError(f"component name is longer than {MAX_NAME} characters")
    if not NAME_RE.match(name):
        raise UsageError(f"component name {name!r} must be kebab-case: lowercase letters, digits and -",
                         hint="framework component list shows the names")
    return name


def default_registry() -> Path:
    from engine.paths import assets_dir

    return assets_dir() / "components"


def safe_rel(path: str, what: str) -> str:
    """A relative path that stays below its base (a registry's files, an install target)."""
    norm = posixpath.normpath(path.replace("\\", "/"))
    if not path or "\x00" in path or norm.startswith("../") or norm == ".." or posixpath.isabs(norm):
        raise InvalidInput(f"{what} {path!r} must be a relative path inside its base")
    return norm


class Registry:
    """One registry: its location (`where`, shown to the user), index and items."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.is_url = where.startswith(("http://", "https://"))
        if self.is_url:
            self.base = where[:-len("registry.json")].rstrip("/") if where.endswith("registry.json") \
                else where.rstrip("/")
        else:
            path = Path(where)
            self.dir = path.parent if path.name == "registry.json" else path
        self._client: Any = None
        self.index = self._load_index()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # ---- reading -------------------------------------------------------------------------------

    def _read(self, rel: str) -> bytes | None:
        """The bytes at `rel` under the registry's base; None when it has none."""
        if self.is_url:
            import httpx

            if self._client is None:
                self._client = httpx.Client(timeout=FETCH_TIMEOUT_S, follow_redirects=True)
            url = f"{self.base}/{rel}"
            try:
                response = self._client.get(url)
            except httpx.HTTPError as exc:
                raise InvalidInput(f"registry {self.where}: cannot fetch {url}: {exc}",
                                   hint="check the URL, or pass a registry directory") from exc
            if response.status_code == 404:
                return None
            if response.status_code >= 400:
                raise InvalidInput(f"registry {self.where}: {url} answered HTTP {response.status_code}")
            data = response.content
        else:
            target = self.dir / rel
            if not target.is_file():
                return None
            data = target.read_bytes()
        if len(data) > MAX_DOCUMENT:
            raise InvalidInput(f"registry {self.where}: {rel} is over {MAX_DOCUMENT} bytes")
        return data

    def _json(self, rel: str, data: bytes) -> Any:
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"registry {self.where}: {rel} is not JSON ({exc})") from exc

    def _load_index(self) -> RegistryIndex:
        if not self.is_url and not self.dir.is_dir():
            raise InvalidInput(f"registry {self.where}: no such directory",
                               hint="--registry takes a directory holding registry.json, or an http(s) URL")
        data = self._read("registry.json")
        if data is None:
            raise InvalidInput(f"registry {self.where}: no registry.json",
                               hint="a registry holds registry.json (shadcn's registry schema)")
        try:
            index = RegistryIndex.model_validate(self._json("registry.json", data))
        except ValidationError as exc:
            raise InvalidInput(f"registry {self.where}: registry.json does not follow the registry schema: "
                               f"{exc.errors()[0]['loc']} {exc.errors()[0]['msg']}") from exc
        for item in index.items:
            if not NAME_RE.match(item.name) or len(item.name) > MAX_NAME:
                raise InvalidInput(f"registry {self.where}: item name {item.name[:80]!r} is not kebab-case")
        return index

    def names(self) -> list[str]:
        return [item.name for item in self.index.items]

    def entry(self, name: str) -> RegistryItem:
        hit = next((item for item in self.index.items if item.name == name), None)
        if hit is None:
            raise NotFound(f"no component {name!r} in registry {self.where}",
                           hint=f"framework component search {name.split('-')[0]}")
        return hit

    def item(self, name: str) -> RegistryItem:
        """The item with every file's content: `<name>.json` when served, else the index entry with
        each file read from its path."""
        entry = self.entry(name)
        built = self._read(f"{name}.json") if name != "registry" else None
        item = entry
        if built is not None:
            try:
                item = RegistryItem.model_validate(self._json(f"{name}.json", built))
            except ValidationError as exc:
                raise InvalidInput(f"registry {self.where}: {name}.json is not a registry item") from exc
        files = []
        for f in item.files:
            if f.content is None:
                data = self._read(safe_rel(f.path, f"registry file of {name}:"))
                if data is None:
                    raise InvalidInput(f"registry {self.where}: {name}: file {f.path} is missing")
                try:
                    f = f.model_copy(update={"content": data.decode("utf-8")})
                except UnicodeDecodeError as exc:
                    raise InvalidInput(f"registry {self.where}: {name}: {f.path} is not UTF-8 text") from exc
            files.append(f)
        return item.model_copy(update={"files": files})

    def resolve(self, names: list[str]) -> list[RegistryItem]:
        """The named items and their registryDependencies, dependencies first (each once); a cycle
        is an error naming it."""
        order: list[RegistryItem] = []
        done: set[str] = set()

        def visit(name: str, path: tuple[str, ...]) -> None:
            if name in done:
                return
            if name in path:
                raise InvalidInput(f"registry {self.where}: registryDependencies cycle: "
                                   f"{' -> '.join((*path, name))}")
            entry = self.entry(name)
            for dep in entry.registry_dependencies:
                visit(_local_name(dep, self.where), (*path, name))
            done.add(name)
            order.append(self.item(name))

        for name in names:
            visit(check_component_name(name), ())
        return order


def _local_name(dep: str, where: str) -> str:
    """A registryDependencies entry: a name in the same registry (a URL or namespaced entry is refused)."""
    if NAME_RE.match(dep):
        return dep
    raise InvalidInput(f"registry {where}: registryDependencies entry {dep!r} is not a name in this registry",
                       hint="entries name items of the same registry")


def open_registry(where: str | None, cwd: Path | None = None) -> Registry:
    """The registry `--registry` names (a directory, its registry.json, or an http(s) URL); the default
    registry without one."""
    if where is None:
        return Registry(str(default_registry()))
    if "\x00" in where or not where.strip():
        raise UsageError("--registry needs a directory or an http(s) URL")
    if where.startswith(("http://", "https://")):
        return Registry(where)
    if "://" in where:
        raise UsageError(f"--registry {where[:80]!r}: only http(s) URLs and directories are registries")
    path = Path(where)
    return Registry(str(path if path.is_absolute() else (cwd or Path.cwd()) / path))


def search(registry: Registry, query: str) -> list[RegistryItem]:
    """Items whose name, title or description hold every word of `query` (case-insensitive)."""
    words = query.lower().split()
    if not words:
        raise UsageError("search needs a word", hint="framework component list shows every component")
    return [item for item in registry.index.items
            if all(w in f"{item.name} {item.title} {item.description}".lower() for w in words)]
