"""`framework scaffold worker` and `framework scaffold webhook` (docs/reference-authoring.md#workers-and-webhooks).

Both run like every scaffold: in a throwaway copy of the project, carried over only when they
succeeded; `--dry-run` lists the changes and carries nothing.
"""

from __future__ import annotations

from engine.authoring import naming, workloads
from engine.authoring.config import append_list_item, load
from engine.authoring.descriptor import compile_descriptor
from engine.authoring.generate import generate
from engine.authoring.scaffold import ScaffoldResult, _dry_or_real, _find_service
from engine.errors import InvalidInput, UsageError
from engine.project import Project

# Names the generated Go beside them already uses (bootstrap and main imports, generated packages).
_TAKEN = {"bootstrap", "context", "errors", "slog", "net", "http", "os", "signal", "syscall", "time", "main",
          "handlers", "entities", "workers", "webhooks"}


def _check(name: str, what: str) -> str:
    value = naming.check_name(name, what)
    if naming.go_package(value) in _TAKEN:
        raise UsageError(f"{what} name {name!r} clashes with a package the generated code imports",
                         hint=f"e.g. {what} {value}_{what}")
    return value


def _service_project(target: Project, what: str) -> None:
    cfg = load(target)
    if cfg.kind != "service":
        raise InvalidInput(f"{what} needs a service project (this one is kind {cfg.kind})",
                           hint="workers and webhooks run under the service bootstrap")


def scaffold_worker(project: Project, name: str, *, no_generate: bool = False, dry_run: bool = False
                    ) -> ScaffoldResult:
    """`internal/workers/<name>/` (yours), framework.yaml `workers` and `binaries`, a workload of the
    dev environment; then `generate` writes `cmd/<name>/main.go` (unless --no-generate)."""
    worker = _check(name, "worker")

    def op(target: Project) -> ScaffoldResult:
        _service_project(target, "scaffold worker")
        cfg = load(target)
        if worker == cfg.name or any(b.get("name") == worker for b in cfg.binaries) or \
                any(w.get("name") == worker for w in cfg.workers):
            raise InvalidInput(f"{worker} is already a binary or worker of this project (framework.yaml)")
        for rel in (f"{workloads.WORKERS_DIR}/{worker}", f"cmd/{worker}"):
            if (target.root / rel).exists():
                raise InvalidInput(f"{rel} exists", hint="choose another name")
        workloads.worker_plan(worker).apply(target.root, "scaffold worker", args={"name": worker})
        append_list_item(target.config_path, "workers", {"name": worker, "main": f"./cmd/{worker}"})
        if cfg.enabled("build"):
            append_list_item(target.config_path, "binaries", {"name": worker, "main": f"./cmd/{worker}"})
        snippet = None
        if cfg.enabled("deploy"):
            block = workloads.add_dev_workload(target.root, worker)
            if block is not None:
                snippet = f"add to the workloads of {workloads.DEV_KCL}:\n{block}"
        generated = None if no_generate else generate(Project(target.root), by="scaffold worker")
        return ScaffoldResult(what="scaffold worker", born=[worker], snippet=snippet, generated=generated)

    return _dry_or_real(project, "scaffold worker", op, dry_run)


def scaffold_webhook(project: Project, name: str, *, service: str | None, sender: str = "generic",
                     dry_run: bool = False) -> ScaffoldResult:
    """An inbound webhook on a service: `internal/webhooks/<name>/handle.go` (yours), framework.yaml
    `webhooks`; `generate` writes the receiver and its test and mounts it in the bootstrap."""
    if not service:
        raise UsageError("--service is required: the service the webhook is an endpoint of",
                         hint="framework scaffold webhook <name> --service <svc>")
    hook = _check(name, "webhook")
    workloads.check_sender(sender)

    def op(target: Project) -> ScaffoldResult:
        _service_project(target, "scaffold webhook")
        cfg = load(target)
        listed = {str(s.get("name")) for s in cfg.services}
        # framework.yaml names the services by key; any other form is resolved from the protos.
        key = service if service in listed else \
            naming.service_key(_find_service(compile_descriptor(target.root, cfg.proto_dir), service).name)
        if any(h.get("name") == hook for h in cfg.webhooks) or (target.root / workloads.WEBHOOKS_DIR / hook).exists():
            raise InvalidInput(f"webhook {hook} exists ({workloads.WEBHOOKS_DIR}/{hook})")
        workloads.webhook_plan(hook).apply(target.root, "scaffold webhook", args={"name": hook})
        append_list_item(target.config_path, "webhooks", {"name": hook, "service": key, "sender": sender})
        return ScaffoldResult(what="scaffold webhook", born=[hook],
                              generated=generate(Project(target.root), by="scaffold webhook"))

    return _dry_or_real(project, "scaffold webhook", op, dry_run)
