"""`framework scaffold operator <name>` and `framework scaffold crd <Kind>`
(docs/reference-authoring.md#operators-and-crds). Both run in a throwaway copy of the project (a
failure leaves the checkout untouched; `--dry-run` lists the files and writes none), record an
entry under `operators` (and `binaries`) of framework.yaml, add the operator to the dev environment's
KCL (engine/authoring/workloads.py, as `scaffold worker` does), and then generate (controller-gen:
deep-copy, CRD manifests, RBAC) unless `--no-generate`.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.authoring import naming, workloads
from engine.authoring.config import append_list_item, load
from engine.authoring.generate import generate
from engine.authoring.operator import (
    Operator,
    check_api_dir,
    check_group,
    check_kind,
    check_version,
    crd_files,
    default_group,
    kinds,
    operator_files,
    operators,
)
from engine.authoring.ownership import SCAFFOLDED
from engine.authoring.plan import FileResult, Plan
from engine.authoring.scaffold import ScaffoldResult, _dry_or_real
from engine.errors import InvalidInput, UsageError
from engine.project import Project

APPENDED = ("framework.yaml", workloads.DEV_KCL, SCAFFOLDED.as_posix())  # the files a scaffold here modifies


def _created(results: list[FileResult]) -> list[dict[str, str]]:
    return [{"path": r.path, "change": "created"} for r in results if r.status == "created"]


def _scaffold(project: Project, what: str, op: Callable[[Project], ScaffoldResult], *, dry_run: bool,
              no_generate: bool) -> ScaffoldResult:
    """With generation or --dry-run: in a throwaway copy (scaffold._dry_or_real). `--no-generate` runs in
    place, without copying the project (its < 300 ms aim, bench/scaffold_operator.py): the operation checks
    everything before its first write, then writes only new files and appends to the files of APPENDED."""
    if dry_run or not no_generate:
        return _dry_or_real(project, what, op, dry_run)

    def digest(rel: str) -> bytes | None:
        path = project.root / rel
        return path.read_bytes() if path.is_file() else None

    before = {rel: digest(rel) for rel in APPENDED}
    result = op(project)
    changed = [{"path": rel, "change": "modified" if old is not None else "created"}
               for rel, old in before.items() if digest(rel) != old]
    result.what, result.files = what, sorted(result.files + changed, key=lambda f: f["path"])
    return result


def _find_operator(cfg_ops: list[Operator], name: str | None) -> Operator:
    if name is not None:
        hit = next((o for o in cfg_ops if o.name in (name, naming.snake(name))), None)
        if hit is None:
            known = ", ".join(o.name for o in cfg_ops) or "none"
            raise InvalidInput(f"no operator {name!r} in framework.yaml `operators`", hint=f"operators: {known}")
        return hit
    if len(cfg_ops) != 1:
        raise InvalidInput(f"which operator? the project has {len(cfg_ops)}" if cfg_ops
                           else "the project has no operator",
                           hint="pass --operator <name>" if cfg_ops else "framework scaffold operator <name> first")
    return cfg_ops[0]


def scaffold_operator(project: Project, name: str, *, group: str | None = None, version: str = "v1alpha1",
                      api_package: str | None = None, with_placeholder_crd: bool = False,
                      crd_type: str | None = None, no_generate: bool = False, dry_run: bool = False
                      ) -> ScaffoldResult:
    op_name = naming.check_name(name, "operator")
    if not op_name.isalnum():
        raise UsageError(f"operator name {name!r}: lowercase letters and digits only",
                         hint="it names a binary, a Go path and a dev workload (a DNS label): e.g. widgets")
    version = check_version(version)
    if group is not None:
        check_group(group)
    api_dir = check_api_dir(api_package) if api_package is not None else f"api/{op_name}/{version}"
    if api_dir.rsplit("/", 1)[-1] != version:
        raise UsageError(f"--api-package {api_dir}: its last segment is the Go package, which must be the "
                         f"version {version}", hint=f"e.g. --api-package api/{op_name}/{version}")
    kind = check_kind(crd_type) if crd_type else naming.camel(op_name)
    placeholder = with_placeholder_crd or crd_type is not None

    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        if cfg.kind == "library":
            raise InvalidInput("a library project has no binaries: an operator needs kind service or cli")
        the_op = Operator(name=op_name, group=group or default_group(op_name, cfg.module), version=version,
                          api_dir=api_dir)
        if any(o.name == op_name for o in operators(cfg)):
            raise InvalidInput(f"operator {op_name} is already declared under `operators`")
        if any(b.get("name") == op_name for b in cfg.binaries) or (target.root / f"cmd/{op_name}").exists():
            raise InvalidInput(f"cmd/{op_name} or a binary {op_name} exists: give the operator another name")
        if (target.root / api_dir).exists():
            raise InvalidInput(f"{api_dir} exists", hint="pass --api-package <dir> for the operator's API types")
        plan = Plan()
        operator_files(plan, the_op, cfg.module)
        if placeholder:
            crd_files(plan, the_op, cfg.module, kind)
        written = plan.apply(target.root, "scaffold operator", force=True)
        append_list_item(target.config_path, "operators", the_op.entry())
        append_list_item(target.config_path, "binaries", {"name": op_name, "main": f"./cmd/{op_name}"})
        block = workloads.add_dev_workload(target.root, op_name) if cfg.enabled("deploy") else None
        result = ScaffoldResult(what="scaffold operator", born=[op_name] + ([kind] if placeholder else []),
                                files=_created(written),
                                snippet=f"add to the workloads of {workloads.DEV_KCL}:\n{block}" if block else None)
        if not no_generate:
            result.generated = generate(Project(target.root), by="scaffold operator")
        return result

    return _scaffold(project, "scaffold operator", op, dry_run=dry_run, no_generate=no_generate)


def scaffold_crd(project: Project, name: str, *, operator: str | None = None, no_generate: bool = False,
                 dry_run: bool = False) -> ScaffoldResult:
    kind = check_kind(name)

    def op(target: Project) -> ScaffoldResult:
        cfg = load(target)
        the_op = _find_operator(operators(cfg), operator)
        if kind in kinds(target.root, the_op):
            raise InvalidInput(f"operator {the_op.name} already reconciles {kind}")
        plan = Plan()
        crd_files(plan, the_op, cfg.module, kind)
        existing = [p for p in plan.files if (target.root / p).exists()]
        if existing:
            raise InvalidInput(f"{existing[0]} exists (it is yours: scaffolds never overwrite it)")
        written = plan.apply(target.root, "scaffold crd", force=True)
        result = ScaffoldResult(what="scaffold crd", born=[kind], files=_created(written))
        if not no_generate:
            result.generated = generate(Project(target.root), by="scaffold crd")
        return result

    return _scaffold(project, "scaffold crd", op, dry_run=dry_run, no_generate=no_generate)
