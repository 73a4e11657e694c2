"""`framework generate` (docs/reference-authoring.md#commands): from protos and migrations, Go protobuf and Connect
code (buf with protoc-gen-go and protoc-gen-connect-go), handler stubs (scaffold-once, one file per
RPC), entity code, bootstrap wiring and the descriptor cache.

Idempotent: a second run changes nothing, byte for byte. `.framework/generated.json` records the
inputs' fingerprint and the generated files; when neither the inputs nor those files changed the
run returns without compiling anything (the no-change run of bench/generate.py).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from pydantic import BaseModel

from engine import __version__
from engine.authoring import entities, gocode, markers, mocks, naming, operator, template_versions, tools, workloads
from engine.authoring.annotation_spec import OPTIONS_PROTO, options_proto
from engine.authoring.config import AuthoringConfig, load
from engine.authoring.descriptor import CACHE, Descriptor, cache_text, compile_image, load_image, proto_files
from engine.authoring.frontends import CLIENTS, GEN_DIR, FrontendEntry, clients_ts, entries, protoc_gen_es
from engine.authoring.plan import FileResult, Plan, scratch_dir
from engine.authoring.record_files import DISOWNED, SCAFFOLDED, STATE, state_files
from engine.authoring.record_files import generation_state as _state
from engine.authoring.templates import render, templates_digest
from engine.errors import InvalidInput
from engine.paths import atomic_write_bytes
from engine.project import Project

MIGRATIONS = Path("db") / "migrations"


class GenerateResult(BaseModel):
    files: list[FileResult] = []
    changed: list[str] = []
    up_to_date: bool = False  # inputs and outputs unchanged since the last run: nothing compiled
    dry_run: bool = False
    services: list[str] = []


def _fingerprint(root: Path, cfg: AuthoringConfig) -> str:
    version = cfg.template_version or template_versions.current()
    h = hashlib.sha256(f"{__version__}\0{version}\0{templates_digest(version)}\0".encode())
    inputs = [root / "framework.yaml", root / "buf.yaml", root / "buf.gen.yaml", root / "go.mod",
              root / SCAFFOLDED, root / DISOWNED]
    proto = root / cfg.proto_dir
    if proto.is_dir():
        inputs += sorted(proto.rglob("*.proto"))
    if (root / MIGRATIONS).is_dir():
        inputs += sorted((root / MIGRATIONS).glob("*.up.sql"))
    inputs += mocks.contracts(root)
    inputs += operator.inputs(root, cfg)
    for path in inputs:
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"\0absent\0")
    return h.hexdigest()


def _outputs_intact(root: Path, paths: list[str]) -> bool:
    for rel in paths:
        path = root / rel
        if not path.is_file() or markers.check(rel, path.read_text(encoding="utf-8")) != "ok":
            return False
    return True


def _buf_outputs(root: Path, tmp: Path, plan: Plan, proto_dir: str,
                 fronts: list[FrontendEntry] | None = None) -> Descriptor:
    """`buf generate` and `buf build` (the descriptor) side by side: the run takes about as long as
    `buf generate` alone (bench/generate.py). Each frontend's protoc-gen-es runs in the same buf run."""
    import subprocess

    out = tmp / "out"
    argv = [tools.find("buf"), "generate", "-o", str(out)]
    if fronts:
        argv += ["--template", str(_frontend_template(root, tmp, fronts))]
    if not (root / "buf.yaml").is_file():
        argv.insert(2, proto_dir)
    gen = subprocess.Popen(argv, cwd=root, env=tools.tool_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        image = compile_image(root, tmp / "image.json", proto_dir)
    finally:
        stdout, stderr = gen.communicate(timeout=600)
    if gen.returncode != 0:
        detail = (stderr or stdout).strip()
        raise tools.ToolFailed(f"buf generate (protoc-gen-go, protoc-gen-connect-go) failed (exit {gen.returncode})"
                               + (f":\n{detail[-3000:]}" if detail else ""))
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        plan.generated(path.relative_to(out).as_posix(), path.read_text(encoding="utf-8"))
    return load_image(image, set(proto_files(root / proto_dir)))


def _frontend_template(root: Path, tmp: Path, fronts: list[FrontendEntry], *, only: bool = False) -> Path:
    """buf.gen.yaml (the user's) plus one protoc-gen-es plugin per frontend, from the frontend's own
    node_modules (its pinned version), into `<dir>/src/gen` (docs/reference-frontends.md#generate).
    `only`: the user's plugins left out (the rest of the template, managed mode included, kept)."""
    import yaml

    path = root / "buf.gen.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    if not isinstance(config, dict):
        config = {"version": "v2", "plugins": [{"local": "protoc-gen-go", "out": "gen", "opt": "paths=source_relative"},
                                               {"local": "protoc-gen-connect-go", "out": "gen",
                                                "opt": "paths=source_relative"}]}
    plugins = [] if only else list(config.get("plugins") or [])
    for entry in fronts:
        plugin = protoc_gen_es(root, entry)
        if not plugin.is_file():
            raise tools.ToolMissing(f"frontend {entry.name}: protoc-gen-es is not installed "
                                    f"({plugin.relative_to(root)})",
                                    hint=f"cd {entry.dir} && npm ci")
        # One protoc-gen-es process for every file (`directory`, buf's default, starts Node once per proto
        # directory: 30 services, 10 s instead of 0.5 s); its output per file is the same either way.
        plugins.append({"local": str(plugin), "out": f"{entry.dir}/{GEN_DIR}", "opt": ["target=ts"],
                        "strategy": "all"})
    config["plugins"] = plugins
    target = tmp / "buf.gen.frontends.json"
    target.write_text(json.dumps(config), encoding="utf-8")
    return target


def build_plan(project: Project, cfg: AuthoringConfig, tmp: Path) -> tuple[Plan, Descriptor]:
    """Every file generation writes (generated and scaffold-once), without writing any: the templates of the
    project's pinned version (engine/authoring/template_versions.py)."""
    return build_plans(project, cfg, tmp, [cfg.template_version or template_versions.current()])[0]


def build_plans(project: Project, cfg: AuthoringConfig, tmp: Path, versions: list[str]
                ) -> list[tuple[Plan, Descriptor]]:
    """`build_plan` for each template version, the tools (buf) run once: their output does not depend on the
    templates (`project upgrade --check` costs about one `generate`)."""
    root = project.root
    tool_plan = Plan()
    desc = Descriptor()
    fronts = entries(project.config, project.config_path) if cfg.enabled("frontend") else []
    has_protos = cfg.enabled("codegen") and (root / cfg.proto_dir).is_dir() and proto_files(root / cfg.proto_dir)
    if has_protos:
        # the options proto is regenerated: kept in step with the framework on upgrade
        if (root / cfg.proto_dir / OPTIONS_PROTO).is_file():
            tool_plan.generated(f"{cfg.proto_dir}/{OPTIONS_PROTO}", options_proto(cfg.module))
        desc = _buf_outputs(root, tmp, tool_plan, cfg.proto_dir, fronts)
        tool_plan.generated(CACHE.as_posix(), cache_text(desc))
        for entry in fronts:
            services = [(naming.service_key(s.name), s.name, s.file) for s in desc.services]
            tool_plan.generated(f"{entry.dir}/{CLIENTS}", clients_ts(entry, services))
    out = []
    for version in versions:
        plan = Plan()
        plan.files = {path: item.model_copy() for path, item in tool_plan.files.items()}
        with template_versions.rendering(version):
            _template_outputs(project, cfg, plan, desc, tmp, bool(fronts))
            template_versions.adjust(plan, version)
        out.append((plan, desc))
    return out


def _template_outputs(project: Project, cfg: AuthoringConfig, plan: Plan, desc: Descriptor, tmp: Path,
                      cors: bool) -> None:
    root = project.root
    if cfg.kind == "service":
        dirs: dict[str, str] = {}
        for svc in desc.services:
            other = dirs.setdefault(gocode.handler_dir(svc), svc.full_name)
            if other != svc.full_name:
                raise InvalidInput(f"{other} and {svc.full_name} would share {gocode.handler_dir(svc)}",
                                   hint="give one of the services another name")
        for svc in desc.services:
            where = gocode.handler_dir(svc)
            plan.generated(f"{where}/handler.go", gocode.handler_go(desc, svc))
            plan.generated(f"{where}/handler_test.go", gocode.handler_test_go(desc, svc))
            plan.generated(f"{where}/harness_test.go", gocode.harness_test_go(desc, svc))
            for method in svc.methods:
                plan.scaffold(f"{where}/{naming.rpc_file(method.name)}", gocode.rpc_stub(desc, svc, method))
        _bootstrap(plan, desc, cfg, cors)
        plan.generated("internal/bootstrap/bootstrap_test.go", render("go/bootstrap_test.go.tmpl"))
        if cfg.enabled("observability"):
            plan.generated("internal/bootstrap/observability.go", gocode.observability_go())
        plan.generated(f"cmd/{cfg.name}/main.go", gocode.main_go(cfg.name, cfg.module))
        workloads.add_generated(plan, cfg)
    if cfg.enabled("contracts"):
        for contract in mocks.contracts(root):
            rel_dir = contract.parent.relative_to(root).as_posix()
            text = mocks.mock_go(cfg.module, rel_dir, contract.read_text(encoding="utf-8"))
            if text is not None:
                plan.generated(f"{rel_dir}/{contract.parent.name}mock/mock.go", text, gofmt=True)
    operator.plan_outputs(root, cfg, plan, tmp)
    if cfg.enabled("orm") and any(m.entity for m in desc.messages):
        known = entities.tables(root / MIGRATIONS)
        for msg in desc.messages:
            table = known.get(naming.table_of(msg.go_name.split("_")[-1])) if msg.entity else None
            if table is not None:
                plan.generated(f"internal/entities/{naming.snake(msg.go_name)}.go", entities.entity_go(msg, table),
                               gofmt=True)


def _bootstrap(plan: Plan, desc: Descriptor, cfg: AuthoringConfig, cors: bool) -> None:
    """The service's bootstrap; with frontends, CORS for their dev servers' origins."""
    plan.generated("internal/bootstrap/bootstrap.go", gocode.bootstrap_go(desc, cfg.module, cfg.port,
                                                                          cfg.enabled("observability"),
                                                                          workloads.webhook_routes(cfg), cors=cors))
    if cors:  # the frontends' dev servers are other origins (docs/reference-frontends.md#env-up)
        plan.generated("internal/bootstrap/cors.go", gocode.cors_go())


def record_state(project: Project, files: list[str]) -> None:
    """`.framework/generated.json` as a `generate` that wrote `files` would leave it (`project upgrade`)."""
    text = json.dumps({"fingerprint": _fingerprint(project.root, load(project)), "files": sorted(files)}, indent=2)
    atomic_write_bytes(project.root / STATE, (text + "\n").encode())


def current(project: Project) -> bool:
    """The last `generate` is current: its inputs and outputs are unchanged (a no-change run would skip)."""
    state = _state(project.root)
    return (state.get("fingerprint") == _fingerprint(project.root, load(project))
            and _outputs_intact(project.root, state_files(project.root)))


def generate_frontend(project: Project, entry: FrontendEntry, *, by: str = "scaffold frontend") -> GenerateResult:
    """Only what adding `entry` changes in a project whose last `generate` was current before it was added
    (`current`): its protoc-gen-es output and clients.ts and, for the first frontend, the bootstrap's CORS;
    the same bytes a full `generate` writes, recorded so the next `generate` is a no-change run
    (docs/reference-frontends.md#scaffold-frontend). The descriptor is the cache the last run wrote."""
    import subprocess

    from engine.authoring.descriptor import read_cache

    root = project.root
    cfg = load(project)
    fronts = entries(project.config, project.config_path)
    plan = Plan()
    desc = Descriptor()
    if cfg.enabled("codegen") and (root / cfg.proto_dir).is_dir() and proto_files(root / cfg.proto_dir):
        desc = read_cache(root)
        with tempfile.TemporaryDirectory(prefix="framework-generate-", dir=scratch_dir()) as tmp:
            out = Path(tmp) / "out"
            argv = [tools.find("buf"), "generate", "-o", str(out), "--template",
                    str(_frontend_template(root, Path(tmp), [entry], only=True))]
            if not (root / "buf.yaml").is_file():
                argv.insert(2, cfg.proto_dir)
            proc = subprocess.run(argv, cwd=root, env=tools.tool_env(), capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                detail = (proc.stderr or proc.stdout).strip()
                raise tools.ToolFailed(f"buf generate (protoc-gen-es for {entry.name}) failed (exit {proc.returncode})"
                                       + (f":\n{detail[-3000:]}" if detail else ""))
            for path in sorted(p for p in out.rglob("*") if p.is_file()):
                plan.generated(path.relative_to(out).as_posix(), path.read_text(encoding="utf-8"))
        services = [(naming.service_key(s.name), s.name, s.file) for s in desc.services]
        plan.generated(f"{entry.dir}/{CLIENTS}", clients_ts(entry, services))
    if cfg.kind == "service" and [f.name for f in fronts] == [entry.name]:
        with template_versions.rendering(cfg.template_version):
            _bootstrap(plan, desc, cfg, cors=True)
    results = plan.apply(root, by)
    files = sorted(set(state_files(root)) | {p for p, f in plan.files.items() if f.kind == "generated"})
    _tidy(root, cfg)
    text = json.dumps({"fingerprint": _fingerprint(root, cfg), "files": files}, indent=2) + "\n"
    atomic_write_bytes(root / STATE, text.encode())
    return GenerateResult(files=results, changed=[r.path for r in results if r.status in ("written", "created")],
                          services=[s.full_name for s in desc.services])


def generate(project: Project, *, dry_run: bool = False, full: bool = False, by: str = "generate"
             ) -> GenerateResult:
    root = project.root
    cfg = load(project)
    state = _state(root)
    fingerprint = _fingerprint(root, cfg)
    previous = state_files(root)
    if not full and state.get("fingerprint") == fingerprint and _outputs_intact(root, previous):
        return GenerateResult(up_to_date=True, dry_run=dry_run)
    if not dry_run:
        operator.ensure_runtime(root, cfg)
    with tempfile.TemporaryDirectory(prefix="framework-generate-", dir=scratch_dir()) as tmp:
        plan, desc = build_plan(project, cfg, Path(tmp))
    results = plan.apply(root, by, dry_run=dry_run)
    generated = sorted(p for p, f in plan.files.items() if f.kind == "generated")
    for stale in sorted(set(previous) - set(generated)):
        path = root / stale
        # Only a file still exactly as generated is removed; an edited one is left for the user.
        if path.is_file() and markers.check(stale, path.read_text(encoding="utf-8")) == "ok":
            if not dry_run:
                path.unlink()
            results.append(FileResult(path=stale, kind="generated", status="removed"))
    if not dry_run:
        _tidy(root, cfg)
        new_state = {"fingerprint": _fingerprint(root, cfg), "files": generated}
        text = json.dumps(new_state, indent=2) + "\n"
        if (root / STATE).is_file() is False or (root / STATE).read_text(encoding="utf-8") != text:
            atomic_write_bytes(root / STATE, text.encode())
    changed = [r.path for r in results if r.status in ("written", "created", "removed")]
    return GenerateResult(files=results, changed=changed, dry_run=dry_run,
                          services=[s.full_name for s in desc.services])


def _tidy(root: Path, cfg: AuthoringConfig) -> None:
    """go.sum for the generated code's modules: once, when the project has none."""
    if (root / "go.mod").is_file() and not (root / "go.sum").is_file():
        tools.run([tools.go(), "mod", "tidy"], root, "go mod tidy")
