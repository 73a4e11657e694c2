"""What `project rescaffold` re-runs for a scaffold-once file born by a scaffold command
(docs/reference-authoring.md#ownership): the birth ledger names the command (`by`) and, since this
build, its arguments (`args`); each entry returns that scaffold's scaffold-once files as it writes
them today. Files `project new` and `generate` write are re-created from their own plans (records.py).

One table for every scaffold: a new scaffold adds its line (`"scaffold <noun>": "module:function"`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.authoring.config import AuthoringConfig
    from engine.authoring.plan import Plan
    from engine.project import Project

# by -> "module:function(project, cfg, rel, args) -> Plan | None"
RESCAFFOLDERS: dict[str, str] = {
    "scaffold handler-file": "engine.authoring.rescaffolders:handler_file",
    "scaffold binary": "engine.authoring.rescaffolders:binary",
    "scaffold worker": "engine.authoring.rescaffolders:worker",
    "scaffold webhook": "engine.authoring.rescaffolders:webhook",
    "scaffold package": "engine.authoring.rescaffolders:package",
    "scaffold adapter": "engine.authoring.rescaffolders:package",
    "package new": "engine.authoring.rescaffolders:package",
    "scaffold library": "engine.authoring.rescaffolders:library",
}

Rescaffolder = Callable[["Project", "AuthoringConfig", str, dict[str, str]], "Plan | None"]


def lookup(by: str) -> Rescaffolder | None:
    target = RESCAFFOLDERS.get(by)
    if target is None:
        return None
    module, _, function = target.partition(":")
    found: Rescaffolder = getattr(importlib.import_module(module), function)
    return found


def handler_file(project: Project, cfg: AuthoringConfig, rel: str, args: dict[str, str]) -> Plan | None:
    """`internal/handlers/<svc>/<name>.go`; births older than `args` are read from the path."""
    from engine.authoring import gocode
    from engine.authoring.descriptor import compile_descriptor
    from engine.authoring.plan import Plan
    from engine.authoring.templates import render

    m = re.fullmatch(r"internal/handlers/([^/]+)/([^/]+)\.go", rel)
    if m is None:
        return None
    desc = compile_descriptor(project.root, cfg.proto_dir)
    svc = next((s for s in desc.services if gocode.handler_dir(s) == f"internal/handlers/{m[1]}"), None)
    if svc is None:
        return None
    plan = Plan()
    plan.scaffold(rel, render("go/handler_file.go.tmpl", gopkg=gocode.handler_package(svc), Service=svc.name,
                              name=args.get("name", m[2])))
    return plan


def binary(project: Project, cfg: AuthoringConfig, rel: str, args: dict[str, str]) -> Plan | None:
    from engine.authoring.plan import Plan
    from engine.authoring.templates import render

    m = re.fullmatch(r"cmd/([^/]+)/main\.go", rel)
    if m is None:
        return None
    plan = Plan()
    plan.scaffold(rel, render("go/binary_main.go.tmpl", name=args.get("name", m[1])))
    return plan


def worker(project: Project, cfg: AuthoringConfig, rel: str, args: dict[str, str]) -> Plan | None:
    from engine.authoring.workloads import worker_plan

    return worker_plan(args["name"]) if args.get("name") else None


def webhook(project: Project, cfg: AuthoringConfig, rel: str, args: dict[str, str]) -> Plan | None:
    from engine.authoring.workloads import webhook_plan

    return webhook_plan(args["name"]) if args.get("name") else None


def package(project: Project, cfg: AuthoringConfig, rel: str, args: dict[str, str]) -> Plan | None:
    from engine.authoring.packages import package_plan

    if not args.get("name"):
        return None
    return package_plan(args["name"], args.get("type") or "service", args.get("kind") or "")


def library(project: Project, cfg: AuthoringConfig, rel: str, args: dict[str, str]) -> Plan | None:
    from engine.authoring.packages import library_plan

    if not args.get("name") or not args.get("path"):
        return None
    return library_plan(args["name"], args["path"])
