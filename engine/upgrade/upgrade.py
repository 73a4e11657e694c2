"""`framework project upgrade` (docs/reference-project.md#project-upgrade): regenerate the forge-space files with
the target release's templates.

Per file (docs/reference-project.md#merge-rules): a generated file still as generated is rewritten; one edited
by hand (its marker no longer matches) gets a three-way merge (base = the file as the pinned release generates
it from the project's inputs, ours = the file on disk, theirs = the target's), conflicts left as conflict
markers; a scaffold-once file only when named with `--force` (merged the same way); a disowned file never.
`--check` computes the same and writes nothing. Writes happen in a sandbox copy and are carried into the
checkout at the end: a failure leaves it as it was.
"""

from __future__ import annotations

import difflib
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from engine.authoring import markers, ownership, sandbox, template_versions
from engine.authoring.config import AuthoringConfig, load
from engine.authoring.plan import Plan, PlannedFile, scratch_dir
from engine.errors import InvalidInput, UsageError
from engine.project import CONFIG_FILE, Project
from engine.upgrade.merge import merge

CONFLICT_EXIT = 3  # the upgrade was applied and some files hold conflict markers (docs/reference-project.md)
STATUSES = ("new", "changed", "merged", "removed", "conflict", "skipped-disowned", "skipped-scaffold-once",
            "unchanged")
_WRITES = ("new", "changed", "merged", "removed", "conflict")


class FileChange(BaseModel):
    path: str
    kind: str  # generated | scaffold
    status: str  # one of STATUSES
    detail: str = ""
    diff: str = ""  # unified diff: the file on disk -> the file after the upgrade (skipped: had it been written)


class UpgradeResult(BaseModel):
    from_version: str
    to_version: str
    check: bool
    files: list[FileChange] = []
    summary: dict[str, int] = {}
    conflicts: list[str] = []
    pinned: bool = False  # framework.yaml's framework_version moved to to_version
    playbooks: list[str] = []  # pending migration playbooks for the range (project upgrade list)


@dataclass
class _Outcome:
    change: FileChange
    text: str | None  # what the file becomes (None: removed, or not written)
    write: bool


def from_version(project: Project) -> str:
    value = project.config.get("framework_version")
    pin = str(value) if value is not None else ""
    if not template_versions.is_shipped(pin):
        raise InvalidInput(f"framework.yaml pins framework_version {pin or '(none)'!r}, a release whose templates "
                           "this framework does not ship: the merge base cannot be rebuilt",
                           hint=f"shipped: {', '.join(template_versions.shipped())}")
    return pin


def _rel(project: Project, path: str) -> str:
    root = project.root.resolve()
    full = Path(path) if Path(path).is_absolute() else Path.cwd() / path
    full = full.resolve()
    if root not in full.parents:
        full = (root / path).resolve()
        if root not in full.parents:
            raise UsageError(f"{path}: outside the project")
    return full.relative_to(root).as_posix()


def _renders(project: Project, cfg: AuthoringConfig, old: str, new: str
             ) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """{path: (kind, final text)} of each version: generation's plan plus `project new`'s scaffold-once files
    (framework.yaml left out: the upgrade edits only its pin)."""
    from engine.authoring.generate import build_plans
    from engine.authoring.new import project_plan

    with tempfile.TemporaryDirectory(prefix="framework-upgrade-", dir=scratch_dir()) as tmp:
        plans = build_plans(project, cfg, Path(tmp), [old, new])
    service = next((str(s.get("name")) for s in cfg.services if s.get("name")), None)
    out: list[dict[str, tuple[str, str]]] = []
    for (plan, _), version in zip(plans, (old, new), strict=True):
        scaffolds = project_plan(cfg, service, version)
        plan.files = {**scaffolds.files, **plan.files}
        plan.files = {**_born(project, cfg, version, set(plan.files)), **plan.files}
        plan.gofmt()
        out.append({p: (str(f.kind), plan.final(f)) for p, f in plan.files.items() if p != CONFIG_FILE})
    return out[0], out[1]


def _born(project: Project, cfg: AuthoringConfig, version: str, known: set[str]) -> dict[str, PlannedFile]:
    """The other scaffold-once files in `version`'s templates: each birth's scaffold re-run with the arguments
    the birth ledger recorded (the table `project rescaffold` uses); one that cannot be re-run is left alone."""
    from engine.authoring import rescaffolders
    from engine.errors import EngineError

    out: dict[str, PlannedFile] = {}
    runs: dict[tuple[object, ...], Plan | None] = {}
    with template_versions.rendering(version):
        for birth in ownership.scaffolded(project.root):
            scaffold = rescaffolders.lookup(birth.by)
            if birth.path in known or scaffold is None:
                continue
            key = (birth.by, tuple(sorted(birth.args.items())), "" if birth.args else birth.path)
            if key not in runs:
                try:
                    runs[key] = scaffold(project, cfg, birth.path, birth.args)
                except (EngineError, KeyError, ValueError):
                    runs[key] = None
            made = runs[key]
            if made is not None and birth.path in made.files:
                out[birth.path] = made.files[birth.path]
    return out


def _diff(path: str, before: str | None, after: str | None) -> str:
    lines = difflib.unified_diff((before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
                                 f"a/{path}" if before is not None else "/dev/null",
                                 f"b/{path}" if after is not None else "/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _classify(path: str, old: tuple[str, str] | None, new: tuple[str, str] | None, disk: str | None, *,
              disowned: bool, forced: bool, labels: tuple[str, str]) -> _Outcome | None:
    kind = (new or old or ("generated", ""))[0]
    o_text, n_text = (old[1] if old else None), (new[1] if new else None)

    def out(status: str, text: str | None, write: bool, detail: str = "", before: str | None = disk) -> _Outcome:
        shown = "" if status == "unchanged" else _diff(path, before, text)
        return _Outcome(FileChange(path=path, kind=kind, status=status, detail=detail, diff=shown), text, write)

    def merged(base: str) -> _Outcome:
        assert disk is not None and n_text is not None
        m = merge(path, disk, base, n_text, base_label=labels[0], theirs_label=labels[1])
        if m.text == disk:
            return out("unchanged", disk, False)
        if m.conflicts:
            return out("conflict", m.text, True, f"{m.conflicts} conflicting hunk(s): resolve the conflict markers")
        return out("changed" if disk == base else "merged", m.text, True)

    if disowned:
        if o_text == n_text or disk is None:
            return None
        return out("skipped-disowned", n_text, False, "disowned: never written (the target's change shown)",
                   before=o_text)
    if kind == "scaffold":
        if n_text is None:
            return None  # a scaffold-once file the target no longer writes: the user's
        if o_text == n_text:
            return out("unchanged", disk, False) if disk is not None else None
        if disk is None:
            return out("new", n_text, True, "scaffold-once: born now") if old is None else None
        result = merged(o_text or "")
        if result.change.status == "unchanged" or forced:
            return result
        return _Outcome(result.change.model_copy(update={
            "status": "skipped-scaffold-once", "detail": "scaffold-once: written only when named with --force"}),
            None, False)
    if n_text is None:  # the target no longer generates it
        if disk is None:
            return None
        if markers.check(path, disk) == "ok":
            return out("removed", None, True)
        return out("conflict", disk, False, f"{labels[1]} no longer generates it and it was edited here: kept")
    if disk is None:
        return out("new", n_text, True)
    if disk == n_text:
        return out("unchanged", disk, False)
    if markers.check(path, disk) == "ok" or forced:
        return out("changed", n_text, True, "forced: your edits replaced" if forced and
                   markers.check(path, disk) != "ok" else "")
    return merged(o_text or "")


def upgrade(project: Project, *, to: str | None = None, check: bool = False, paths: list[str] | None = None,
            force: list[str] | None = None, all_files: bool = False) -> UpgradeResult:
    """`project upgrade`: with `check`, what would change (no write); else the upgrade, pin included."""
    from engine.upgrade import playbooks

    root = project.root
    target = template_versions.target(to)
    start = from_version(project)
    if template_versions.key(target) < template_versions.key(start):
        raise UsageError(f"--to {target}: older than the pinned framework_version {start} (no downgrades)")
    only = {_rel(project, p) for p in paths or []}
    forced = {_rel(project, p) for p in force or []}
    gone = {d.path for d in ownership.disowned(root)}
    for rel in sorted(forced & gone):
        raise InvalidInput(f"--force {rel}: disowned files are never written by the framework",
                           hint="delete its entry in .framework/disowned.json to re-adopt it")
    cfg = load(project)
    old, new = _renders(project, cfg, start, target)
    labels = (f"framework {start}", f"framework {target}")
    outcomes: list[_Outcome] = []
    for path in sorted(set(old) | set(new)):
        if only and path not in only:
            continue
        full = root / path
        disk = full.read_text(encoding="utf-8") if full.is_file() else None
        outcome = _classify(path, old.get(path), new.get(path), disk, disowned=path in gone,
                            forced=path in forced, labels=labels)
        if outcome is not None and (all_files or outcome.change.status != "unchanged"):
            outcomes.append(outcome)
    unknown = sorted(forced - set(old) - set(new))
    if unknown:
        raise InvalidInput(f"--force {unknown[0]}: not a file the framework writes", hint="see --check")
    result = UpgradeResult(from_version=start, to_version=target, check=check, files=[o.change for o in outcomes])
    for o in outcomes:
        result.summary[o.change.status] = result.summary.get(o.change.status, 0) + 1
    result.conflicts = [o.change.path for o in outcomes if o.change.status == "conflict"]
    if not check and (start != target or any(o.write for o in outcomes)):
        _apply(project, new, outcomes, result)
    result.playbooks = [p.id for p in playbooks.pending(Project(root), target)]
    return result


def _apply(project: Project, new: dict[str, tuple[str, str]], outcomes: list[_Outcome], result: UpgradeResult
           ) -> None:
    """Every write in a sandbox copy, then carried into the checkout (sandbox.carry_over): all or nothing."""
    from engine.authoring.generate import record_state
    from engine.paths import atomic_write_bytes
    from engine.upgrade import pin, playbooks

    root = project.root
    with tempfile.TemporaryDirectory(prefix="framework-upgrade-", dir=scratch_dir()) as tmp:
        work = sandbox.copy(root, Path(tmp) / "project")
        births = []
        for o in outcomes:
            if not o.write:
                continue
            target = work / o.change.path
            if o.text is None:
                target.unlink(missing_ok=True)
                continue
            mode = target.stat().st_mode & 0o777 if target.is_file() else 0o644
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, o.text.encode("utf-8"), mode, durable=False)
            if o.change.kind == "scaffold" and o.change.status == "new":
                births.append(o.change.path)
        if births:
            ownership.record_births(work, births, "project upgrade")
        if result.from_version != result.to_version:
            config = work / CONFIG_FILE
            atomic_write_bytes(config, pin.set_version(config, result.to_version).encode("utf-8"))
            result.pinned = True
        playbooks.record_upgrade(work, result.from_version, result.to_version, result.conflicts)
        record_state(Project(work), sorted(p for p, (kind, _) in new.items() if kind == "generated"))
        sandbox.carry_over(work, root, sandbox.diff(root, work))


def check_upgrade(project: Project, to: str | None = None, path: str | None = None) -> UpgradeResult:
    """What `project upgrade --check [path]` reports (the Project screen's upgrade panel): per file its status
    and unified diff, nothing written."""
    return upgrade(project, to=to, check=True, paths=[path] if path else None)
