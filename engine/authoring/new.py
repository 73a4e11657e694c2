"""`framework project new <name>` (docs/reference-authoring.md#commands): a project with framework.yaml
(framework_version pinned to this framework), protos, a migrations directory, a `deploy/kcl/dev` that `env up` runs
and a README; then the first `generate`. `--disable <feature>` leaves that feature's part out entirely.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from engine import __version__
from engine.authoring import naming, template_versions, tools
from engine.authoring.annotation_spec import OPTIONS_PROTO, options_proto
from engine.authoring.config import FEATURES, KINDS, AuthoringConfig
from engine.authoring.features import unmet, unmet_message
from engine.authoring.generate import GenerateResult, generate
from engine.authoring.plan import FileResult, Plan
from engine.authoring.templates import render
from engine.errors import InvalidInput, UsageError
from engine.project import CONFIG_FILE, Project


class NewResult(BaseModel):
    root: str
    name: str
    module: str
    kind: str
    disabled: list[str]
    files: list[FileResult]
    generated: GenerateResult | None = None
    born: list[str] = []
    frontend: str | None = None  # the frontend's directory (--frontend)
    warnings: list[str] = []  # an enabled feature whose requirement --disable left out (engine/authoring/features.py)


def parse_features(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        for item in (v.strip() for v in value.split(",")):
            if not item:
                continue
            if item not in FEATURES:
                raise UsageError(f"--disable {item!r}: not a feature", hint=f"features: {', '.join(FEATURES)}")
            out.append(item)
    return sorted(set(out))


def _yaml_list(items: list[dict[str, str]]) -> str:
    if not items:
        return " []"
    lines = []
    for item in items:
        lines += [f"  - {k}: {v}" if i == 0 else f"    {k}: {v}" for i, (k, v) in enumerate(item.items())]
    return "\n" + "\n".join(lines)


def project_plan(cfg: AuthoringConfig, service: str | None, version: str | None = None) -> Plan:
    """The scaffold-once files of a new project (also what `project rescaffold` re-creates them from), in
    `version`'s templates (default: the project's pin, else this framework's)."""
    version = version or cfg.template_version or __version__
    with template_versions.rendering(version):
        return _project_plan(cfg, service, version)


def _project_plan(cfg: AuthoringConfig, service: str | None, version: str) -> Plan:
    plan = Plan()
    name, kind = cfg.name, cfg.kind
    svc = service or name
    on = cfg.enabled
    services: list[dict[str, str]] = []
    if kind == "service" and on("codegen"):
        services.append({"name": svc, "proto": f"{cfg.proto_dir}/{svc}/v1/{svc}.proto", "build": "go"})
    binaries = [{"name": name, "main": f"./cmd/{name}"}] if kind != "library" and on("build") else []
    features = "\n" + "\n".join(f"  {f}: {'true' if on(f) else 'false'}" for f in FEATURES)
    plan.scaffold(CONFIG_FILE, render("project/framework.yaml.tmpl", name=name, framework_version=version,
                                      module=cfg.module, kind=kind, features=features,
                                      services=_yaml_list(services), binaries=_yaml_list(binaries)))
    plan.scaffold("go.mod", render("project/go.mod.tmpl", module=cfg.module, connect_version=tools.CONNECT_VERSION,
                                   protobuf_version=tools.PROTOC_GEN_GO_VERSION))
    ignored = "" if cfg.commit_generated else "/gen/\n"
    plan.scaffold(".gitignore", render("project/gitignore.tmpl", ignored=ignored))
    if on("codegen"):
        plan.scaffold("buf.yaml", render("project/buf.yaml.tmpl"))
        plan.scaffold("buf.gen.yaml", render("project/buf.gen.yaml.tmpl"))
    if on("codegen"):
        plan.generated(f"{cfg.proto_dir}/{OPTIONS_PROTO}", options_proto(cfg.module))
    if services:
        from engine.authoring.scaffold import service_proto

        path, text = service_proto(cfg, svc)
        plan.scaffold(path, text)
    if on("migrations"):
        plan.scaffold("db/migrations/README.md", render("project/migrations_readme.md.tmpl"))
    if on("deploy") and kind == "service":
        plan.scaffold("deploy/kcl/dev/main.k", render("project/dev.k.tmpl", name=name))
    if on("ci"):
        plan.scaffold(".github/workflows/ci.yml", render("project/ci.yml.tmpl"))
    if on("docs"):
        plan.scaffold("README.md", render("project/README.md.tmpl", name=name, kind=kind, module=cfg.module,
                                          service_short=f"{naming.camel(svc)}Service"))
    if on("hot_reload") and kind == "service":
        plan.scaffold(".air.toml", render("project/air.toml.tmpl", name=name))
    if kind == "cli":
        plan.scaffold(f"cmd/{name}/main.go", render("project/cli_main.go.tmpl", name=name))
    elif kind == "library":
        plan.scaffold(f"{name}.go", render("project/library.go.tmpl", name=name, gopkg=naming.go_package(name)))
    if on("contracts") and kind == "service":
        plan.scaffold(f"internal/{naming.go_package(svc)}core/contract.go",
                      render("project/contract.go.tmpl", gopkg=f"{naming.go_package(svc)}core"))
    return plan


def new_project(name: str, *, parent: Path, module: str | None = None, kind: str = "service",
                service: str | None = None, in_place: bool = False, display_name: str | None = None,
                disable: list[str] | None = None, force: bool = False, frontend: str | None = None,
                version: str | None = None) -> NewResult:
    """`version`: the framework release the project is pinned to and generated with (a shipped one; default
    this framework's): how the upgrade tests make a project of the previous release."""
    if version is not None and not template_versions.is_shipped(version):
        raise UsageError(f"framework version {version!r} is not shipped",
                         hint=f"shipped: {', '.join(template_versions.shipped())}")
    slug = naming.check_name(display_name or name, "project")
    if kind not in KINDS:
        raise UsageError(f"--kind {kind!r}: one of {', '.join(KINDS)}")
    if frontend is not None and (kind != "service"):
        raise UsageError("--frontend applies to --kind service (a frontend calls the project's services)")
    if service is not None and kind != "service":
        raise UsageError("--service applies to --kind service")
    svc = naming.check_name(service, "service") if service else None
    disabled = parse_features(disable or [])
    if frontend is not None:
        import re

        if not re.fullmatch(r"[a-z][a-z0-9-]{0,52}", frontend):
            raise UsageError(f"--frontend {frontend!r}: a lowercase DNS label (letters, digits, '-')")
        if "frontend" in disabled:
            raise UsageError("--frontend with --disable frontend: choose one")
        from engine.authoring.scaffold_frontend import npm

        npm()  # before writing anything: no project left without its frontend
    root = (parent if in_place else parent / name).resolve()
    if (root / CONFIG_FILE).exists() and not force:
        raise InvalidInput(f"{root} already holds a project ({CONFIG_FILE})", hint="pass --force to write over it")
    if not in_place and root.is_dir() and any(root.iterdir()) and not force:
        raise InvalidInput(f"{root} exists and is not empty", hint="pass --in-place to use it, or --force")
    if "codegen" not in disabled:
        for tool in ("buf", "protoc-gen-go", "protoc-gen-connect-go"):
            tools.find(tool)  # before writing anything: no project left without its generated half
    tools.go()
    cfg = AuthoringConfig(name=slug, module=module or slug, kind=kind,
                          features={f: f not in disabled for f in FEATURES}, template_version=version or __version__)
    plan = project_plan(cfg, svc)
    root.mkdir(parents=True, exist_ok=True)
    files = plan.apply(root, "project new", force=force)
    project = Project(root)
    result = NewResult(root=str(root), name=slug, module=cfg.module, kind=kind, disabled=disabled, files=files,
                       warnings=[unmet_message(f, need) for f, need in unmet(cfg.enabled)])
    if svc and "codegen" not in disabled:
        from engine.authoring.scaffold import scaffold_entity

        born = scaffold_entity(project, svc, from_proto=svc)
        result.born, result.generated = born.born, born.generated
    else:
        result.generated = generate(project, by="project new")
    if frontend is not None:
        from engine.authoring.frontends import FrontendEntry
        from engine.authoring.scaffold_frontend import scaffold_frontend

        made = scaffold_frontend(Project(root), FrontendEntry(name=frontend), by="project new")
        result.frontend = made.dir
        result.generated = made.generated or result.generated
    return result
