"""`framework api curl` and `framework project introspect handlers` (docs/reference-authoring.md#commands).

`api curl` prints (never runs) a Connect request: POST, `Content-Type: application/json`, the URL
`http://127.0.0.1:<port>/<package>.<Service>/<Method>`, a zero-value JSON body from the descriptor
unless `--body`. The short service form (`Service.Method`, or the service key `greeter.Method`) is
accepted when it names one service; otherwise the error lists the candidates.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.authoring import naming
from engine.authoring.config import DEFAULT_PORT
from engine.authoring.descriptor import Descriptor, Method, Service, compile_descriptor, read_cache
from engine.errors import InvalidInput, UsageError
from engine.project import Project

_ZERO = {"string": "", "bytes": "", "bool": False, "double": 0, "float": 0, "int32": 0, "uint32": 0,
         "sint32": 0, "fixed32": 0, "sfixed32": 0,
         # proto3 JSON writes 64-bit integers as strings
         "int64": "0", "uint64": "0", "sint64": "0", "fixed64": "0", "sfixed64": "0"}
_WELL_KNOWN: dict[str, Any] = {"google.protobuf.Timestamp": "1970-01-01T00:00:00Z", "google.protobuf.Duration": "0s",
               "google.protobuf.Empty": {}, "google.protobuf.Struct": {}, "google.protobuf.Value": None,
               "google.protobuf.Any": {}, "google.protobuf.FieldMask": ""}


class CurlCommand(BaseModel):
    procedure: str
    url: str
    method: str = "POST"
    content_type: str = "application/json"
    body: str
    command: str


class HandlerList(BaseModel):
    procedures: list[str]


def zero_value(desc: Descriptor, full_name: str, seen: frozenset[str] = frozenset()) -> Any:
    if full_name in _WELL_KNOWN:
        return _WELL_KNOWN[full_name]
    msg = desc.message(full_name)
    if msg is None or full_name in seen:
        return {}
    out: dict[str, Any] = {}
    for f in msg.fields:
        if f.repeated:
            nested = desc.message(f.type_name or "")
            out[f.json_name] = {} if nested is not None and nested.map_entry else []
        elif f.type == "message":
            out[f.json_name] = zero_value(desc, f.type_name or "", seen | {full_name})
        elif f.type == "enum":
            out[f.json_name] = desc.enums.get(f.type_name or "", 0)
        else:
            out[f.json_name] = _ZERO.get(f.type, None)
    return out


def resolve(desc: Descriptor, target: str) -> tuple[Service, Method]:
    service_part, _, method_name = target.rpartition(".")
    if not service_part or not method_name:
        raise UsageError(f"{target!r}: expected <service>.<method>, e.g. greeter.v1.GreeterService.Ping")
    hits = [s for s in desc.services
            if service_part in (s.full_name, s.name, naming.service_key(s.name))]
    if not hits:
        names = ", ".join(s.full_name for s in desc.services) or "none"
        raise InvalidInput(f"no service {service_part!r}", hint=f"services: {names}")
    if len(hits) > 1:
        raise InvalidInput(f"{service_part!r} names more than one service: "
                           + ", ".join(s.full_name for s in hits), hint="use the full name <package>.<Service>")
    svc = hits[0]
    method = next((m for m in svc.methods if m.name == method_name), None)
    if method is None:
        raise InvalidInput(f"{svc.full_name} has no method {method_name!r}",
                           hint="methods: " + ", ".join(m.name for m in svc.methods))
    return svc, method


def curl(project: Project, target: str, *, body: str | None = None, port: int | None = None) -> CurlCommand:
    desc = read_cache(project.root)
    svc, method = resolve(desc, target)
    if body is not None:
        try:
            json.loads(body)
        except ValueError as exc:
            raise UsageError(f"--body is not JSON: {exc}") from None
        text = body
    else:
        text = json.dumps(zero_value(desc, method.input), separators=(",", ":"))
    if port is None:
        configured = project.config.get("port", DEFAULT_PORT)
        port = int(configured) if str(configured).isdigit() else DEFAULT_PORT
    url = f"http://127.0.0.1:{port}{svc.procedure(method.name)}"
    command = (f"curl -sS -X POST -H 'Content-Type: application/json' -d {shlex.quote(text)} {shlex.quote(url)}")
    return CurlCommand(procedure=svc.procedure(method.name), url=url, body=text, command=command)


def introspect_handlers(root: Path, proto_dir: str | None = None) -> HandlerList:
    """`/<package>.<Service>/<Method>` per RPC, sorted, compiled from the protos themselves."""
    desc = compile_descriptor(root, proto_dir or "proto", explicit=proto_dir is not None)
    return HandlerList(procedures=sorted(s.procedure(m.name) for s in desc.services for m in s.methods))
