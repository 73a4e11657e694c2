"""`framework scaffold ...` (docs/reference-authoring.md#commands): entities (CRUD quintet injected once, an owned
create-table migration), services, RPC stubs, handler files and binaries. Every scaffold has
`--dry-run`: the same operation runs in a throwaway copy and the files it wrote are listed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from engine.authoring import entities, gocode, naming, protoedit, sandbox
from engine.authoring.config import AuthoringConfig, append_list_item, load
from engine.authoring.descriptor import Descriptor, Message, Service, compile_descriptor
from engine.authoring.generate import MIGRATIONS, GenerateResult, generate
from engine.authoring.plan import Plan
from engine.authoring.templates import render
from engine.errors import InvalidInput, UsageError
from engine.paths import atomic_write_bytes
from engine.project import Project


class ScaffoldResult(BaseModel):
    what: str
    dry_run: bool = False
    files: list[dict[str, str]] = []  # path and change: created | modified | removed
    born: list[str] = []  # entities (message full names) or services scaffolded
    snippet: str | None = None  # `scaffold rpc` for an RPC not in the proto yet
    generated: GenerateResult | None = None


def _dry_or_real(project: Project, what: str, op: Callable[[Project], ScaffoldResult], dry_run: bool
                 ) -> ScaffoldResult:
    """Run `op` on a throwaway copy of the project, then list what changed (--dry-run) or carry the
    changes over: a scaffold that fails half-way (a proto that does not compile, a tool missing)
    leaves the checkout as it was."""
    from engine.authoring.plan import scratch_dir

    with tempfile.TemporaryDirectory(prefix="framework-scaffold-", dir=scratch_dir()) as tmp:
        target = Project(sandbox.copy(project.root, Path(tmp) / "copy"))
        result = op(target)
        changes = sandbox.diff(project.root, target.root)
        if not dry_run:
            sandbox.carry_over(target.root, project.root, changes)
    result.what, result.dry_run = what, dry_run
    result.files = [{"path": p, "change": c} for p, c in changes]
    return result


# ---- entities -----------------------------------------------------------------------------------

def _crud(entity: str) -> tuple[list[str], list[tuple[str, str]]]:
    many = naming.camel(naming.plural(naming.snake(entity)))
    field = naming.snake(entity)
    rpcs = [(f"Create{entity}", f"Create{entity}Request", f"Create{entity}Response"),
            (f"Get{entity}", f"Get{entity}Request", f"Get{entity}Response"),
            (f"List{many}", f"List{many}Request", f"List{many}Response"),
            (f"Update{entity}", f"Update{entity}Request", f"Update{entity}Response"),
            (f"Delete{entity}", f"Delete{entity}Request", f"Delete{entity}Response")]
    bodies = {f"Create{entity}Request": f"{entity} {field} = 1;", f"Create{entity}Response": f"{entity} {field} = 1;",
              f"Get{entity}Request": "int64 id = 1;", f"Get{entity}Response": f"{entity} {field} = 1;",
              f"List{many}Request": "int32 page_size = 1;\n  string page_token = 2;",
              f"List{many}Response": f"repeated {entity} {naming.snake(many)} = 1;\n  string next_page_token = 2;",
              f"Update{entity}Request": f"{entity} {field} = 1;", f"Update{entity}Response": f"{entity} {field} = 1;",
              f"Delete{entity}Request": "int64 id = 1;", f"Delete{entity}Response": ""}
    lines = [f"rpc {n}({i}) returns ({o}) {{}}" for n, i, o in rpcs]
    return lines, [(name, f"message {name} {{\n  {body}\n}}\n" if body else f"message {name} {{}}\n")
                   for name, body in bodies.items()]


def _service_of_file(desc: Descriptor, file: str) -> Service | None:
    return next((s for s in desc.services if s.file == file), None)


def missing_entities(project: Project, desc: Descriptor, service: str | None = None) -> list[Message]:
    known = entities.tables(project.root / MIGRATIONS)
    out = []
    for msg in desc.messages:
        if not msg.entity or naming.table_of(msg.go_name.split("_")[-1]) in known:
            continue
        svc = _service_of_file(desc, msg.file)
        if service and (svc is None or service not in (naming.service_key(svc.name), svc.name, svc.full_name)):
            continue
        out.append(msg)
    return out


def _birth(project: Project, cfg: AuthoringConfig, desc: Descriptor, msg: Message) -> None:
    """Phase 1 for one entity: the CRUD quintet injected once into its service, the owned migration."""
    svc = _service_of_file(desc, msg.file)
    if svc is None:
        raise InvalidInput(f"entity {msg.full_name}: its file {msg.file} declares no service for its CRUD RPCs")
    path = project.root / cfg.proto_dir / msg.file
    text = path.read_text(encoding="utf-8")
    rpcs, messages = _crud(msg.go_name)
    new_rpcs = [r for r in rpcs if not protoedit.has_rpc(text, r.split()[1].split("(")[0])]
    if new_rpcs:
        text = protoedit.inject_rpcs(text, svc.name, new_rpcs)
    for name, block in messages:
        if not protoedit.has_message(text, name):
            text = protoedit.append(text, block)
    atomic_write_bytes(path, text.encode("utf-8"))
    if cfg.enabled("migrations"):
        from engine.database.files import load as load_migrations
        from engine.database.files import next_versions

        directory = project.root / MIGRATIONS
        directory.mkdir(parents=True, exist_ok=True)
        version = next_versions(load_migrations(directory).versions)[0]
        table = naming.table_of(msg.go_name.split("_")[-1])
        plan = Plan()
        plan.scaffold(f"{MIGRATIONS.as_posix()}/{version}_create_{table}.up.sql", entities.create_table_sql(msg))
        plan.apply(project.root, "scaffold entity")


def scaffold_missing(project: Project, *, service: str | None = None, dry_run: bool = False) -> ScaffoldResult:
    """`scaffold` with no noun: births every entity with no table, then generates; a no-op when none."""
    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        desc = compile_descriptor(target.root, cfg.proto_dir)
        todo = missing_entities(target, desc, service)
        if not todo:
            return ScaffoldResult(what="scaffold")
        for msg in todo:
            _birth(target, cfg, desc, msg)
        return ScaffoldResult(what="scaffold", born=[m.full_name for m in todo],
                              generated=generate(target, by="scaffold"))

    return _dry_or_real(project, "scaffold", op, dry_run)


def _find_service(desc: Descriptor, name: str) -> Service:
    hits = [s for s in desc.services if name in (naming.service_key(s.name), s.name, s.full_name)]
    if len(hits) != 1:
        names = ", ".join(naming.service_key(s.name) for s in desc.services) or "none"
        raise InvalidInput(f"{'no' if not hits else 'more than one'} service {name!r}", hint=f"services: {names}")
    return hits[0]


def scaffold_entity(project: Project, name: str, *, from_proto: str | None = None, dry_run: bool = False
                    ) -> ScaffoldResult:
    entity = naming.camel(naming.check_name(name, "entity"))

    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        desc = compile_descriptor(target.root, cfg.proto_dir)
        if from_proto:
            svc_name, _, message = from_proto.partition(".")
            svc = _find_service(desc, svc_name)
            message = message or entity
        else:
            if len(desc.services) != 1:
                raise InvalidInput(f"entity {entity}: which service? the project has {len(desc.services)}",
                                   hint="pass --from-proto <svc>[.<Message>]")
            svc, message = desc.services[0], entity
        path = target.root / cfg.proto_dir / svc.file
        text = path.read_text(encoding="utf-8")
        if protoedit.has_message(text, message):
            text = protoedit.mark_entity(text, message)
        elif from_proto and "." in from_proto:
            raise InvalidInput(f"message {message} is not declared in {svc.file}")
        else:
            text = protoedit.append(text, f"// framework:entity\nmessage {message} {{\n  int64 id = 1;\n"
                                          f"  string name = 2;\n}}\n")
        atomic_write_bytes(path, text.encode("utf-8"))
        desc = compile_descriptor(target.root, cfg.proto_dir)
        msg = next(m for m in desc.messages if m.file == svc.file and m.go_name == message)
        born = []
        if msg in missing_entities(target, desc):
            _birth(target, cfg, desc, msg)
            born = [msg.full_name]
        return ScaffoldResult(what="scaffold entity", born=born, generated=generate(target, by="scaffold entity"))

    return _dry_or_real(project, "scaffold entity", op, dry_run)


# ---- services, RPCs, handler files, binaries ------------------------------------------------------

def service_proto(cfg: AuthoringConfig, name: str) -> tuple[str, str]:
    """(path, text) of a new service's proto: package <name>.v1, service <Name>Service."""
    gopkg = naming.go_package(name)
    text = render("project/service.proto.tmpl", package=f"{name}.v1", Service=f"{naming.camel(name)}Service",
                  service=name, go_package=f"{cfg.module}/gen/{name}/v1;{gopkg}v1")
    return f"{cfg.proto_dir}/{name}/v1/{name}.proto", text


def scaffold_services(project: Project, names: list[str], *, resume: bool = False, force: bool = False,
                      dry_run: bool = False) -> ScaffoldResult:
    if resume and force:
        # `scaffold service --resume` with `--force`: mutually exclusive (exit 2).
        raise UsageError("--resume and --force are mutually exclusive",
                         hint="--resume continues a batch (skips services already written); --force re-creates them")
    checked = [naming.check_name(n, "service") for n in names]

    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        listed = {str(s.get("name")) for s in cfg.services}
        plan, born = Plan(), []
        for name in checked:
            path, text = service_proto(cfg, name)
            if (target.root / path).exists() and not force:
                if resume:
                    continue
                raise InvalidInput(f"service {name} exists ({path})",
                                   hint="--resume skips the services already written; --force re-creates them")
            plan.scaffold(path, text)
            born.append(name)
        plan.apply(target.root, "scaffold service", force=force)
        for name in born:
            if name not in listed:
                append_list_item(target.config_path, "services",
                                 {"name": name, "proto": f"{cfg.proto_dir}/{name}/v1/{name}.proto", "build": "go"})
        # One generation run for the whole batch.
        return ScaffoldResult(what="scaffold service", born=born,
                              generated=generate(Project(target.root), by="scaffold service"))

    return _dry_or_real(project, "scaffold service", op, dry_run)


def scaffold_rpc(project: Project, service: str, name: str, *, stream: str | None = None, dry_run: bool = False
                 ) -> ScaffoldResult:
    if stream not in (None, "server", "client", "bidi"):
        raise UsageError(f"--stream {stream!r}: one of server, client, bidi (omit for unary)")
    method_name = naming.camel(name)

    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        desc = compile_descriptor(target.root, cfg.proto_dir)
        svc = _find_service(desc, service)
        rel = f"{gocode.handler_dir(svc)}/{naming.rpc_file(method_name)}"
        if (target.root / rel).exists():
            raise InvalidInput(f"{rel} exists (it is yours: scaffolds never overwrite it)")
        method = next((m for m in svc.methods if m.name == method_name), None)
        plan, snippet = Plan(), None
        if method is not None:
            if stream is not None and stream != method.stream:
                raise InvalidInput(f"{svc.name}.{method_name} is {method.stream or 'unary'} in the proto, "
                                   f"not {stream}")
            plan.scaffold(rel, gocode.rpc_stub(desc, svc, method))  # pb-through: the proto's own types
        else:
            f = desc.file(svc.file)
            if f is None or not f.go_import or not f.go_name:
                raise InvalidInput(f"{svc.file}: no `option go_package`")
            plan.scaffold(rel, gocode.snippet_stub(svc, f.go_name, f.go_import, method_name, stream))
            snippet = gocode.proto_snippet(method_name, stream)
        plan.apply(target.root, "scaffold rpc", force=True)
        return ScaffoldResult(what="scaffold rpc", snippet=snippet)

    return _dry_or_real(project, "scaffold rpc", op, dry_run)


def scaffold_handler_file(project: Project, service: str, name: str, *, dry_run: bool = False) -> ScaffoldResult:
    file = naming.check_name(name, "handler file")

    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        svc = _find_service(compile_descriptor(target.root, cfg.proto_dir), service)
        rel = f"{gocode.handler_dir(svc)}/{file}.go"
        if (target.root / rel).exists():
            raise InvalidInput(f"{rel} exists")
        plan = Plan()
        plan.scaffold(rel, render("go/handler_file.go.tmpl", gopkg=gocode.handler_package(svc), Service=svc.name,
                                  name=file))
        plan.apply(target.root, "scaffold handler-file", force=True, args={"service": service, "name": file})
        return ScaffoldResult(what="scaffold handler-file")

    return _dry_or_real(project, "scaffold handler-file", op, dry_run)


def scaffold_binary(project: Project, name: str, *, dry_run: bool = False) -> ScaffoldResult:
    binary = naming.check_name(name, "binary")

    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        if any(b.get("name") == binary for b in cfg.binaries):
            raise InvalidInput(f"binary {binary} is already declared under `binaries`")
        rel = f"cmd/{binary}/main.go"
        if (target.root / rel).exists():
            raise InvalidInput(f"{rel} exists")
        plan = Plan()
        plan.scaffold(rel, render("go/binary_main.go.tmpl", name=binary))
        plan.apply(target.root, "scaffold binary", force=True, args={"name": binary})
        append_list_item(target.config_path, "binaries", {"name": binary, "main": f"./cmd/{binary}"})
        return ScaffoldResult(what="scaffold binary", born=[binary])

    return _dry_or_real(project, "scaffold binary", op, dry_run)
