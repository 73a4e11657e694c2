"""Operators and CRDs (docs/reference-authoring.md#operators-and-crds): `scaffold operator <name>` and
`scaffold crd <Kind>`, and what `generate` produces for them.

An operator is a controller-runtime manager in the project's Go module: `cmd/<name>/main.go` (yours),
the API types of one group-version under `--api-package` (default `api/<name>/<version>`; the
group-version file and each `<kind>_types.go` are yours), one reconciler shim and envtest test per kind
under `internal/<name>/controller/` (yours). Generated on every `generate`: `setup.go` (registers every
reconciler found), and with controller-gen (pinned, `make go-tools`) the deep-copy methods, the CRD
manifests (`deploy/operators/<name>/crd/`) and the ClusterRole from the RBAC markers
(`deploy/operators/<name>/rbac/role.yaml`).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.authoring import naming, tools
from engine.authoring.config import AuthoringConfig
from engine.authoring.plan import Plan
from engine.authoring.templates import render
from engine.errors import InvalidInput, UsageError
from engine.paths import pinned_tool

CONTROLLER_RUNTIME = "sigs.k8s.io/controller-runtime"
CONTROLLER_RUNTIME_VERSION = "v0.24.1"  # k8s.io/* v0.36: the project's test control plane is v1.36
CONTROLLER_TOOLS_VERSION = "v0.21.0"  # controller-gen, pinned with the Makefile (go-tools)
VERSION_RE = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
GROUP_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$")
KIND_RE = re.compile(r"^[A-Z][A-Za-z0-9]{0,62}$")
API_DIR_RE = re.compile(r"^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)*$")
SPEC_RE = re.compile(r"^type (?P<kind>[A-Z]\w*)Spec struct", re.M)
SETUP_RE = re.compile(r"^func \(r \*(?P<kind>[A-Z]\w*)Reconciler\) SetupWithManager\(", re.M)


@dataclass(frozen=True)
class Operator:
    name: str
    group: str
    version: str
    api_dir: str

    @property
    def controller_dir(self) -> str:
        return f"internal/{self.name}/controller"

    @property
    def deploy_dir(self) -> str:
        return f"deploy/operators/{self.name}"

    @property
    def dns(self) -> str:
        return self.name.replace("_", "-")

    def entry(self) -> dict[str, str]:
        return {"name": self.name, "group": self.group, "version": self.version, "api_package": self.api_dir}


def operators(cfg: AuthoringConfig) -> list[Operator]:
    out = []
    for item in cfg.operators:
        name = str(item.get("name") or "")
        if not name:
            raise InvalidInput("framework.yaml: an entry of `operators` has no name")
        version = str(item.get("version") or "v1alpha1")
        out.append(Operator(name=name, group=str(item.get("group") or default_group(name, cfg.module)),
                            version=version, api_dir=str(item.get("api_package") or f"api/{name}/{version}")))
    return out


def default_group(name: str, module: str) -> str:
    host = module.split("/", 1)[0]
    return f"{naming.go_package(name)}.{host if '.' in host else 'example.com'}"


def check_group(group: str) -> str:
    if len(group) > 253 or not GROUP_RE.match(group):
        raise UsageError(f"--group {group!r}: an API group is a lowercase DNS subdomain with a dot",
                         hint="e.g. --group widgets.example.com")
    return group


def check_version(version: str) -> str:
    if not VERSION_RE.match(version):
        raise UsageError(f"--version {version!r}: a Kubernetes API version such as v1, v1alpha1 or v2beta3")
    return version


def check_kind(kind: str) -> str:
    value = naming.camel(kind) if re.match(r"^[a-z][a-z0-9_]*$", kind) else kind  # widget_part -> WidgetPart
    if not KIND_RE.match(value):
        raise UsageError(f"CRD kind {kind!r} must be CamelCase letters and digits (e.g. Widget)")
    if value.endswith("List") or value in ("Status", "Spec"):
        raise UsageError(f"CRD kind {value!r} is reserved (its List type and spec/status types share the name)")
    return value


def check_api_dir(value: str) -> str:
    text = value.strip().strip("/")
    if not API_DIR_RE.match(text) or text.split("/")[0] in ("internal", "cmd", "gen", "deploy"):
        raise UsageError(f"--api-package {value!r}: a directory of the module such as api/widgets/v1alpha1",
                         hint="lowercase path segments; not under internal/, cmd/, gen/ or deploy/")
    return text


def plural(kind: str) -> str:
    return naming.plural(kind.lower())


# ---- files ---------------------------------------------------------------------------------------

def _values(op: Operator, module: str, kind: str | None = None) -> dict[str, Any]:
    values: dict[str, Any] = {"name": op.name, "group": op.group, "version": op.version, "module": module,
                              "api_dir": op.api_dir}
    if kind:
        values.update(Kind=kind, plural=plural(kind), lower=kind.lower())
    return values


def operator_files(plan: Plan, op: Operator, module: str) -> None:
    """The scaffold-once files of a new operator (also what `project rescaffold` re-creates them from)."""
    values = _values(op, module)
    plan.scaffold(f"cmd/{op.name}/main.go", render("operator/main.go.tmpl", **values))
    plan.scaffold(f"{op.api_dir}/groupversion_info.go", render("operator/groupversion_info.go.tmpl", **values))
    plan.scaffold(f"{op.controller_dir}/doc.go", render("operator/doc.go.tmpl", **values))


def crd_files(plan: Plan, op: Operator, module: str, kind: str) -> None:
    """The scaffold-once files of one CRD kind: its types, its reconciler shim and that shim's test."""
    values = _values(op, module, kind)
    snake = naming.snake(kind)
    plan.scaffold(f"{op.api_dir}/{snake}_types.go", render("operator/types.go.tmpl", **values))
    plan.scaffold(f"{op.controller_dir}/{snake}_controller.go", render("operator/controller.go.tmpl", **values))
    plan.scaffold(f"{op.controller_dir}/{snake}_controller_test.go",
                  render("operator/controller_test.go.tmpl", **values))


def kinds(root: Path, op: Operator) -> list[str]:
    """The kinds whose reconciler is declared (a SetupWithManager method in *_controller.go)."""
    found: set[str] = set()
    for path in sorted((root / op.controller_dir).glob("*_controller.go")):
        found.update(m["kind"] for m in SETUP_RE.finditer(path.read_text(encoding="utf-8")))
    return sorted(found)


def scaffold_plan(root: Path, cfg: AuthoringConfig) -> Plan:
    """Every scaffold-once file the project's operators are born with today (rescaffold's source):
    the kinds are those with a reconciler or a `<Kind>Spec` type, so either file can be re-created."""
    plan = Plan()
    for op in operators(cfg):
        operator_files(plan, op, cfg.module)
        typed = {m["kind"] for p in sorted((root / op.api_dir).glob("*_types.go"))
                 for m in SPEC_RE.finditer(p.read_text(encoding="utf-8"))}
        for kind in sorted(typed | set(kinds(root, op))):
            crd_files(plan, op, cfg.module, kind)
    return plan


def setup_go(root: Path, op: Operator) -> str:
    body = "".join(f"\tif err := (&{k}Reconciler{{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}})."
                   f"SetupWithManager(mgr); err != nil {{\n\t\treturn err\n\t}}\n" for k in kinds(root, op))
    return render("operator/setup.go.tmpl", name=op.name, body=body or "\t_ = mgr\n")


def inputs(root: Path, cfg: AuthoringConfig) -> list[Path]:
    """The files generation reads for operators (the fingerprint of `generate`)."""
    out: list[Path] = []
    for op in operators(cfg):
        out += [p for p in sorted((root / op.api_dir).glob("*.go")) if not p.name.startswith("zz_generated")]
        out += sorted((root / op.controller_dir).glob("*_controller.go"))
    return out


# ---- generation ----------------------------------------------------------------------------------

def controller_gen() -> str:
    found = pinned_tool("controller-gen")
    if not found:
        raise tools.ToolMissing("controller-gen is not installed",
                                hint=f"make go-tools   (installs controller-gen {CONTROLLER_TOOLS_VERSION} into "
                                     ".tools/bin)")
    return found


def has_runtime(root: Path) -> bool:
    gomod = root / "go.mod"
    return gomod.is_file() and f"{CONTROLLER_RUNTIME} " in gomod.read_text(encoding="utf-8")


def ensure_runtime(root: Path, cfg: AuthoringConfig) -> bool:
    """controller-runtime required by the project's go.mod once it has an operator, then `go mod tidy`
    (go.sum for every import of the operator's code, envtest's too); True when it was added."""
    if not cfg.operators or not (root / "go.mod").is_file() or has_runtime(root):
        return False
    go = tools.go()
    tools.run([go, "get", f"{CONTROLLER_RUNTIME}@{CONTROLLER_RUNTIME_VERSION}"], root,
              f"go get {CONTROLLER_RUNTIME}@{CONTROLLER_RUNTIME_VERSION}")
    tools.run([go, "mod", "tidy"], root, "go mod tidy")
    return True


def plan_outputs(root: Path, cfg: AuthoringConfig, plan: Plan, tmp: Path) -> None:
    """Generated files of every operator: setup.go, then controller-gen's deep-copy methods, CRD
    manifests and ClusterRole, produced in a scratch directory and planned like any generated file."""
    ops = operators(cfg)
    if not ops:
        return
    gen = controller_gen()
    for op in ops:
        plan.generated(f"{op.controller_dir}/setup.go", setup_go(root, op))
        out = tmp / "operators" / op.name
        api = f"./{op.api_dir}/..."
        argv = [gen, "object", f"paths={api}", f"output:object:dir={out / 'object'}"]
        _controller_gen(argv, root)
        argv = [gen, "crd", f"rbac:roleName={op.dns}-manager", f"paths={api}", f"paths=./{op.controller_dir}/...",
                f"output:crd:dir={out / 'crd'}", f"output:rbac:dir={out / 'rbac'}"]
        _controller_gen(argv, root)
        for sub, dest in (("object", op.api_dir), ("crd", f"{op.deploy_dir}/crd"), ("rbac", f"{op.deploy_dir}/rbac")):
            for path in sorted((out / sub).glob("*")):
                if path.is_file():
                    plan.generated(f"{dest}/{path.name}", path.read_text(encoding="utf-8"))


def _controller_gen(argv: list[str], root: Path) -> None:
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise tools.ToolFailed(f"controller-gen failed (exit {proc.returncode})"
                               + (f":\n{detail[-3000:]}" if detail else ""))
