"""`framework project delete service <name>` (docs/reference-project.md#project-delete-service): remove a
service's handler scaffold and leave a types-only tombstone.

Refused (exit 1, naming who) while the graph shows something depends on the service: a frontend calling
its client, another service or a package importing its Connect client, a webhook of it. Otherwise, in a
throwaway copy of the project (a failure leaves the checkout as it was; `--dry-run` lists the changes):
internal/handlers/<svc>/ and its birth records go, framework.yaml's `services` entry goes, a workload
named after the service goes from each environment's KCL, the proto keeps its messages and enums but loses its `service`
block (the tombstone: other protos importing its messages still build), and `generate` runs (the
service's handler wiring and Connect code are removed as stale generated files).
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from engine.errors import InvalidInput
from engine.project import Project

if TYPE_CHECKING:
    from engine.authoring.scaffold import ScaffoldResult

TOMBSTONE = "// framework: types-only tombstone of service {name} (project delete service); its messages stay."


def delete_service(project: Project, name: str, *, dry_run: bool = False) -> ScaffoldResult:
    from engine.authoring import naming
    from engine.authoring.scaffold import _dry_or_real
    from engine.inspection.graph import project_graph

    key = naming.check_name(name, "service")
    graph = project_graph(project)
    node = f"service:{key}"
    if not any(n.id == node for n in graph.nodes):
        known = ", ".join(n.name for n in graph.nodes if n.kind == "service") or "none"
        raise InvalidInput(f"no service {key!r} in the protos", hint=f"services: {known}")
    blockers = [e for e in graph.dependents(node) if not e.source.startswith("workload:")]
    if blockers:
        who = "; ".join(f"{e.source} ({e.via})" for e in blockers)
        raise InvalidInput(f"service {key} is still depended on: {who}",
                           hint="remove those uses first (`framework project graph` shows the edges)")

    def op(target: Project) -> ScaffoldResult:
        from engine.authoring.generate import generate
        from engine.authoring.ownership import forget_births
        from engine.authoring.scaffold import ScaffoldResult

        _drop_service_block(target, key)
        handlers = f"internal/handlers/{key}/"
        shutil.rmtree(target.root / handlers, ignore_errors=True)
        forget_births(target.root, handlers)
        _drop_config_entry(target, key)
        _drop_workloads(target, key)
        return ScaffoldResult(what="project delete service", born=[key],
                              generated=generate(Project(target.root), by="project delete service"))

    result = _dry_or_real(project, "project delete service", op, dry_run)
    if not dry_run:  # the carried-over removals leave their directories; empty ones go too
        for rel in sorted({f["path"].rsplit("/", 1)[0] for f in result.files if f["change"] == "removed"},
                          key=lambda d: -d.count("/")):
            directory = project.root / rel
            while directory != project.root and directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
                directory = directory.parent
    return result


def _drop_service_block(target: Project, key: str) -> None:
    from engine.authoring import naming, protoedit
    from engine.authoring.config import load
    from engine.authoring.descriptor import compile_descriptor
    from engine.paths import atomic_write_bytes

    cfg = load(target)
    svc = next(s for s in compile_descriptor(target.root, cfg.proto_dir).services
               if naming.service_key(s.name) == key)
    path = target.root / cfg.proto_dir / svc.file
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = svc.line - 1  # the descriptor's source info: the `service` keyword's line
    text = "".join(lines)
    first = start
    while first > 0 and lines[first - 1].lstrip().startswith("//"):  # its leading comment goes with it
        first -= 1
    offset = sum(len(line) for line in lines[:start])
    open_at = text.index("{", offset)
    end = protoedit._block_end(text, open_at)
    end_line = text.count("\n", 0, end)
    new = lines[:first] + [TOMBSTONE.format(name=svc.name) + "\n"] + lines[end_line + 1:]
    atomic_write_bytes(path, "".join(new).encode("utf-8"))


def _drop_config_entry(target: Project, key: str) -> None:
    """Remove `- name: <key>` (and the lines indented under it) from framework.yaml's `services`, keeping the
    rest of the file as written; a file this cannot edit safely is refused before anything is written."""
    import textwrap

    import yaml

    from engine.paths import atomic_write_bytes

    def indent(line: str) -> int:
        return len(line) - len(line.lstrip())

    lines = target.config_path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "services:"), None)
    if start is None:
        return
    out, i = lines[:start + 1], start + 1
    while i < len(lines) and (not lines[i].strip() or lines[i][:1] in " -"):
        item, i = [lines[i]], i + 1
        if item[0].lstrip().startswith("- "):  # an entry: its continuation lines are indented deeper than its dash
            while i < len(lines) and lines[i].strip() and indent(lines[i]) > indent(item[0]):
                item.append(lines[i])
                i += 1
        try:
            parsed = yaml.safe_load(textwrap.dedent("".join(item))) if item[0].lstrip().startswith("- ") else None
        except yaml.YAMLError:
            parsed = None
        if not (isinstance(parsed, list) and parsed and isinstance(parsed[0], dict) and parsed[0].get("name") == key):
            out += item
    text = "".join(out + lines[i:])
    try:
        data = yaml.safe_load(text)  # never leave a file that does not parse, or still names the service
    except yaml.YAMLError:
        data = None
    services = data.get("services") if isinstance(data, dict) else None
    if isinstance(data, dict) and not any(isinstance(s, dict) and s.get("name") == key for s in services or []):
        atomic_write_bytes(target.config_path, text.encode("utf-8"))
        return
    raise InvalidInput(f"{target.config_path.name}: the services entry of {key} is not in a shape this command "
                       f"can remove", hint="remove it by hand, then run this again")


def _drop_workloads(target: Project, key: str) -> None:
    """A `framework.Workload` named `<key>` in each environment's KCL, in the shape `scaffold worker` writes."""
    from engine.paths import atomic_write_bytes

    for path in sorted(target.kcl_dir.glob("*/main.k")) if target.kcl_dir.is_dir() else []:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for i, line in enumerate(lines):
            if line.strip() == f'name = "{key}"' and i > 0 and lines[i - 1].strip() == "framework.Workload {":
                indent = len(lines[i - 1]) - len(lines[i - 1].lstrip())
                end = next((j for j in range(i + 1, len(lines))
                            if lines[j].strip() == "}" and len(lines[j]) - len(lines[j].lstrip()) == indent), None)
                if end is not None:
                    atomic_write_bytes(path, "".join(lines[:i - 1] + lines[end + 1:]).encode("utf-8"))
                break
