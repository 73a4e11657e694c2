"""The descriptor of a project's protos, compiled by buf (the descriptor cache).

`buf build` yields an image (FileDescriptorSet as JSON, with source info); `load_image` keeps what
generation, `api curl` and `project introspect handlers` need. The cache `gen/framework_descriptor.json`
is written by `generate` and can be stale; commands that must be exact compile the protos again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.authoring import tools
from engine.errors import InvalidInput

CACHE = Path("gen") / "framework_descriptor.json"
ENTITY_MARKER = "framework:entity"
_SCALARS = {"TYPE_DOUBLE": "double", "TYPE_FLOAT": "float", "TYPE_INT64": "int64", "TYPE_UINT64": "uint64",
            "TYPE_INT32": "int32", "TYPE_FIXED64": "fixed64", "TYPE_FIXED32": "fixed32", "TYPE_BOOL": "bool",
            "TYPE_STRING": "string", "TYPE_GROUP": "group", "TYPE_MESSAGE": "message", "TYPE_BYTES": "bytes",
            "TYPE_UINT32": "uint32", "TYPE_ENUM": "enum", "TYPE_SFIXED32": "sfixed32", "TYPE_SFIXED64": "sfixed64",
            "TYPE_SINT32": "sint32", "TYPE_SINT64": "sint64"}


class Field(BaseModel):
    name: str
    json_name: str
    number: int
    type: str  # string, int64, message, enum ...
    repeated: bool = False
    type_name: str | None = None  # message or enum full name


class Message(BaseModel):
    full_name: str
    go_name: str  # Outer_Inner, as protoc-gen-go names nested messages
    file: str
    entity: bool = False
    map_entry: bool = False
    fields: list[Field] = []
    line: int = 0  # 1-based, from the image's source info (`project shapes`); 0 when unknown


class Method(BaseModel):
    name: str
    input: str
    output: str
    client_streaming: bool = False
    server_streaming: bool = False
    framework: dict[str, Any] = {}  # its (framework.v1.method) options (docs/reference-lint.md#markers)
    line: int = 0

    @property
    def stream(self) -> str | None:
        if self.client_streaming and self.server_streaming:
            return "bidi"
        return "client" if self.client_streaming else "server" if self.server_streaming else None


class Service(BaseModel):
    package: str
    name: str
    file: str
    methods: list[Method] = []
    framework: dict[str, Any] = {}  # its (framework.v1.service) options
    line: int = 0

    @property
    def full_name(self) -> str:
        return f"{self.package}.{self.name}" if self.package else self.name

    def procedure(self, method: str) -> str:
        return f"/{self.full_name}/{method}"


class EnumType(BaseModel):
    """An enum declared in one of the project's own files, where (`project shapes`)."""

    full_name: str
    file: str
    line: int = 0


class ProtoFile(BaseModel):
    name: str
    package: str
    go_import: str | None = None
    go_name: str | None = None
    local: bool = True  # in the project's module (not an import such as google/protobuf/...)


class Descriptor(BaseModel):
    files: list[ProtoFile] = []
    services: list[Service] = []
    messages: list[Message] = []
    enums: dict[str, str] = {}  # full name -> its zero value's name
    enum_types: list[EnumType] = []  # the local files' enums with their lines

    def message(self, full_name: str) -> Message | None:
        for m in self.messages:
            if m.full_name == full_name:
                return m
        return None

    def file(self, name: str) -> ProtoFile | None:
        for f in self.files:
            if f.name == name:
                return f
        return None


def _lines(file: dict[str, Any]) -> dict[tuple[int, ...], int]:
    """Each declaration's 1-based line by its source-info path (message 4,i; nested 4,i,3,j; enum 5,i or
    4,i,4,j; service 6,i; method 6,i,2,j)."""
    return {tuple(loc.get("path", [])): int(loc["span"][0]) + 1
            for loc in (file.get("sourceCodeInfo") or {}).get("location", []) if loc.get("span")}


def _comments(file: dict[str, Any]) -> dict[tuple[int, ...], str]:
    out: dict[tuple[int, ...], str] = {}
    for loc in (file.get("sourceCodeInfo") or {}).get("location", []):
        text = (loc.get("leadingComments") or "") + (loc.get("trailingComments") or "")
        text += "".join(loc.get("leadingDetachedComments") or [])
        if text:
            out[tuple(loc.get("path", []))] = text
    return out


def _messages(file: dict[str, Any], comments: dict[tuple[int, ...], str], out: list[Message],
              enums: dict[str, str], lines: dict[tuple[int, ...], int] | None = None,
              enum_types: list[EnumType] | None = None) -> None:
    """Messages and enums of one file; with `lines`, each carries its line and the enums are listed
    in `enum_types` (the project's own files only: imports keep the cache small)."""
    package = file.get("package", "")
    where = lines or {}

    def enum(full: str, value: dict[str, Any], path: tuple[int, ...]) -> None:
        enums[full] = (value.get("value") or [{"name": "0"}])[0]["name"]
        if enum_types is not None:
            enum_types.append(EnumType(full_name=full, file=file["name"], line=where.get(path, 0)))

    def walk(items: list[dict[str, Any]], prefix: str, go_prefix: str, path: tuple[int, ...]) -> None:
        for i, msg in enumerate(items):
            full = f"{prefix}.{msg['name']}" if prefix else msg["name"]
            go_name = f"{go_prefix}_{msg['name']}" if go_prefix else msg["name"]
            here = (*path, i)
            fields = [Field(name=f["name"], json_name=f.get("jsonName", f["name"]), number=f.get("number", 0),
                            type=_SCALARS.get(f.get("type", ""), f.get("type", "")),
                            repeated=f.get("label") == "LABEL_REPEATED",
                            type_name=(f.get("typeName") or "").lstrip(".") or None)
                      for f in msg.get("field", [])]
            out.append(Message(full_name=full, go_name=go_name, file=file["name"], fields=fields,
                               entity=ENTITY_MARKER in comments.get(here, ""),
                               map_entry=bool((msg.get("options") or {}).get("mapEntry")), line=where.get(here, 0)))
            for j, e in enumerate(msg.get("enumType", [])):
                enum(f"{full}.{e['name']}", e, (*here, 4, j))
            walk(msg.get("nestedType", []), full, go_name, (*here, 3))

    walk(file.get("messageType", []), package, "", (4,))
    for i, e in enumerate(file.get("enumType", [])):
        enum(f"{package}.{e['name']}" if package else e["name"], e, (5, i))


def framework_options(node: dict[str, Any], kind: str) -> dict[str, Any]:
    """The `(framework.v1.<kind>)` option of a service or method in buf's JSON image."""
    value = (node.get("options") or {}).get(f"[framework.v1.{kind}]")
    return {_snake(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def load_image(image: dict[str, Any], local_files: set[str] | None = None) -> Descriptor:
    desc = Descriptor()
    for file in image.get("file", []):
        name = file["name"]
        go_package = (file.get("options") or {}).get("goPackage")
        go_import, go_name = None, None
        if go_package:
            go_import, _, go_name = go_package.partition(";")
            go_name = go_name or go_import.rsplit("/", 1)[-1].replace("-", "_").replace(".", "_")
        local = local_files is None or name in local_files
        desc.files.append(ProtoFile(name=name, package=file.get("package", ""), go_import=go_import,
                                    go_name=go_name, local=local))
        comments = _comments(file)
        lines = _lines(file) if local else None
        _messages(file, comments, desc.messages, desc.enums, lines, desc.enum_types if local else None)
        if not local or lines is None:
            continue
        for i, svc in enumerate(file.get("service", [])):
            methods = [Method(name=m["name"], input=m["inputType"].lstrip("."), output=m["outputType"].lstrip("."),
                              client_streaming=bool(m.get("clientStreaming")),
                              server_streaming=bool(m.get("serverStreaming")),
                              framework=framework_options(m, "method"), line=lines.get((6, i, 2, j), 0))
                       for j, m in enumerate(svc.get("method", []))]
            desc.services.append(Service(package=file.get("package", ""), name=svc["name"], file=name,
                                         methods=methods, framework=framework_options(svc, "service"),
                                         line=lines.get((6, i), 0)))
    desc.services.sort(key=lambda s: s.full_name)
    return desc


def proto_files(proto_dir: Path) -> list[str]:
    return sorted(p.relative_to(proto_dir).as_posix() for p in proto_dir.rglob("*.proto"))


def compile_image(root: Path, out: Path, proto_dir: str = "proto", explicit: bool = False) -> dict[str, Any]:
    """`buf build` the module at `root` (buf.yaml; else, or when `explicit`, the directory `proto_dir`)
    into `out` (JSON, with source info: the `framework:entity` comments)."""
    buf = tools.find("buf")
    argv = [buf, "build", "-o", str(out)]
    if explicit or not (root / "buf.yaml").is_file():
        argv.insert(2, proto_dir)
    tools.run(argv, root, "buf build (compiling the protos)")
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def compile_descriptor(root: Path, proto_dir: str = "proto", explicit: bool = False) -> Descriptor:
    import tempfile

    base = root / proto_dir
    if not base.is_dir():
        raise InvalidInput(f"no proto directory {base}", hint="pass --proto-dir, or run from the project root")
    with tempfile.TemporaryDirectory(prefix="framework-buf-") as tmp:
        image = compile_image(root, Path(tmp) / "image.json", str(base) if explicit else proto_dir, explicit)
    return load_image(image, set(proto_files(base)))


def read_cache(root: Path) -> Descriptor:
    path = root / CACHE
    if not path.is_file():
        raise InvalidInput(f"no descriptor cache {CACHE}", hint="run `framework generate` first")
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("framework:hash", None)
    return Descriptor.model_validate(data)


def cache_text(desc: Descriptor) -> str:
    """One entry per line (readable diffs) with the C encoder (indent= falls back to pure Python)."""
    data = desc.model_dump(mode="json")
    parts = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, list) and value:
            inner = ",\n".join("    " + json.dumps(v, sort_keys=True) for v in value)
            parts.append(f"  {json.dumps(key)}: [\n{inner}\n  ]")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
