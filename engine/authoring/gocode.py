"""Go code of a project rendered from the descriptor (`generate`: stubs, bootstrap wiring).

Generated files (handler.go, handler_test.go, harness_test.go, bootstrap, main) are rewritten freely; RPC stubs
`internal/handlers/<svc>/rpc_<name>.go` are scaffold-once (the user's from birth).
"""

from __future__ import annotations

from engine.authoring import naming
from engine.authoring.descriptor import Descriptor, Method, Service
from engine.authoring.templates import render
from engine.errors import InvalidInput


class Imports:
    """Go imports of one file: import path -> alias, aliases kept unique."""

    def __init__(self) -> None:
        self.by_path: dict[str, str] = {}

    def add(self, path: str, name: str) -> str:
        if path in self.by_path:
            return self.by_path[path]
        alias, n = name, 2
        while alias in self.by_path.values():
            alias, n = f"{name}{n}", n + 1
        self.by_path[path] = alias
        return alias

    def block(self) -> str:
        return "".join(f'\t{alias} "{path}"\n' for path, alias in sorted(self.by_path.items()))


def _go_file(desc: Descriptor, proto_file: str) -> tuple[str, str]:
    f = desc.file(proto_file)
    if f is None or not f.go_import or not f.go_name:
        raise InvalidInput(f"{proto_file}: no `option go_package` (needed to generate Go code)",
                           hint='add e.g. option go_package = "<module>/gen/<name>/v1;<name>v1";')
    return f.go_import, f.go_name


def message_type(desc: Descriptor, full_name: str, imports: Imports) -> str:
    msg = desc.message(full_name)
    if msg is None:
        raise InvalidInput(f"message {full_name} is not in the compiled protos")
    path, name = _go_file(desc, msg.file)
    return f"{imports.add(path, name)}.{msg.go_name}"


def connect_package(desc: Descriptor, svc: Service) -> tuple[str, str]:
    path, name = _go_file(desc, svc.file)
    return f"{path}/{name}connect", f"{name}connect"


def handler_dir(svc: Service) -> str:
    return f"internal/handlers/{naming.service_key(svc.name)}"


def handler_package(svc: Service) -> str:
    return naming.go_package(naming.service_key(svc.name))


def handler_go(desc: Descriptor, svc: Service) -> str:
    path, alias = connect_package(desc, svc)
    return render("go/handler.go.tmpl", gopkg=handler_package(svc), Service=svc.name, connect_alias=alias,
                  connect_import=path)


def harness_test_go(desc: Descriptor, svc: Service) -> str:
    """The generated test harness (docs/reference-project.md#project-migrate-tdd): `NewHarness(t)`,
    `NewHarnessFor(t, h)`; `project migrate tdd` moves hand-rolled handler tests onto it."""
    path, alias = connect_package(desc, svc)
    return render("go/harness_test.go.tmpl", gopkg=handler_package(svc), Service=svc.name, connect_alias=alias,
                  connect_import=path)


def handler_test_go(desc: Descriptor, svc: Service) -> str:
    # Release 0.0.9's template (assets/templates/versions/0.0.9) served the handler itself and imported the
    # Connect package into the same block: its variables are rendered beside the current ones.
    imports, imports_009 = Imports(), Imports()
    path, alias = connect_package(desc, svc)
    connect_alias = imports_009.add(path, alias)
    calls = calls_009 = ""
    for m in svc.methods:
        if m.stream:
            continue
        calls += _unary_check(m.name, message_type(desc, m.input, imports))
        calls_009 += _unary_check(m.name, message_type(desc, m.input, imports_009))
    return render("go/handler_test.go.tmpl", gopkg=handler_package(svc), Service=svc.name, imports=imports.block(),
                  calls=calls, connect_alias=connect_alias, imports_009=imports_009.block(), calls_009=calls_009)


def _unary_check(name: str, req: str) -> str:
    return (f"\tif _, err := client.{name}(ctx, connect.NewRequest(&{req}{{}})); "
            f"connect.CodeOf(err) == connect.CodeUnimplemented {{\n"
            f'\t\tt.Errorf("{name}: %v", err)\n\t}}\n')


def rpc_stub(desc: Descriptor, svc: Service, method: Method) -> str:
    imports = Imports()
    req = message_type(desc, method.input, imports)
    res = message_type(desc, method.output, imports)
    kind = method.stream or "unary"
    return render(f"go/rpc_{kind}.go.tmpl", gopkg=handler_package(svc), Method=method.name, In=req, Out=res,
                  procedure=svc.procedure(method.name), imports=imports.block())


def snippet_stub(svc: Service, gopkg_alias: str, pb_import: str, name: str, stream: str | None) -> str:
    """A stub for an RPC not (yet) in the proto: its request/response types follow the convention
    <Name>Request / <Name>Response, so it builds once the printed proto snippet is added."""
    imports = Imports()
    alias = imports.add(pb_import, gopkg_alias)
    kind = stream or "unary"
    return render(f"go/rpc_{kind}.go.tmpl", gopkg=handler_package(svc), Method=name, In=f"{alias}.{name}Request",
                  Out=f"{alias}.{name}Response", procedure=svc.procedure(name), imports=imports.block())


def proto_snippet(name: str, stream: str | None) -> str:
    req = f"stream {name}Request" if stream in ("client", "bidi") else f"{name}Request"
    res = f"stream {name}Response" if stream in ("server", "bidi") else f"{name}Response"
    return (f"  rpc {name}({req}) returns ({res}) {{}}\n\n"
            f"message {name}Request {{\n}}\n\nmessage {name}Response {{\n}}\n")


def bootstrap_go(desc: Descriptor, module: str, port: object, observability: bool,
                 webhooks: list[tuple[str, str, str]] | None = None, cors: bool = False) -> str:
    """`webhooks`: (route, import path, package) of each inbound webhook (scaffold webhook); `cors`: answer the
    frontends' dev servers (loopback origins only, docs/reference-frontends.md#generate)."""
    imports = Imports()
    routes = ""
    for svc in desc.services:
        path, alias = connect_package(desc, svc)
        alias = imports.add(path, alias)
        handlers = imports.add(f"{module}/{handler_dir(svc)}", handler_package(svc))
        routes += f"\tmux.Handle({alias}.New{svc.name}Handler(&{handlers}.Handler{{}}))\n"
    for route, path, package in webhooks or []:
        routes += f'\tmux.Handle("POST {route}", {imports.add(path, package)}.New())\n'
    return render("go/bootstrap.go.tmpl", imports=("\n" + imports.block()) if imports.by_path else "",
                  routes=routes, config_port="" if port in (None, "") else str(port),
                  handler=_handler(observability, cors))


def _handler(observability: bool, cors: bool) -> str:
    handler = "Observe(Mux())" if observability else "Mux()"
    return f"LoopbackCORS({handler})" if cors else handler


def cors_go() -> str:
    return render("go/cors.go.tmpl")


def observability_go() -> str:
    return render("go/observability.go.tmpl")


def main_go(name: str, module: str) -> str:
    return render("go/main.go.tmpl", name=name, module=module)
