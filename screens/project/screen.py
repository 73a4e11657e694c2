"""The Project screen (docs/reference-project.md#project-screen): `project map` as a tree coloured by ownership
with drift marked, `project audit`'s categories and findings, `project upgrade --check`'s per-file summary in its
own panel, and the command line of each action. Same engine calls as `framework project map --json`,
`framework project audit --json` and `framework project upgrade --check --json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static, Tree

from screens.base import DashboardScreen

# Ownership colours (docs/reference-project.md#project-screen); drifted files are also tagged in words.
STYLES = {"user": "", "generated": "dim", "scaffold": "green", "drifted": "bold red", "disowned": "yellow"}
STATUS_STYLES = {"ok": "green", "warning": "yellow", "error": "bold red", "skipped": "dim"}
UPGRADE_ROWS = 8  # files listed in the upgrade panel; the rest are counted (the command lists them all)


@dataclass
class ProjectLoaded(Message):
    project_map: Any = None
    report: Any = None
    upgrade: Any = None  # project upgrade --check's result
    upgrade_error: Any = None  # why the check could not run (the map and audit still show)
    error: Any = None


def file_commands(path: str, ownership: str) -> list[str]:
    """The command lines of what can be done to one file, by its ownership."""
    diff = f"framework project upgrade --check {path}   (what an upgrade changes in it)"
    if ownership == "drifted":
        return ["framework generate   (rewrites it: the hand edit is lost)",
                f"framework project disown {path} --reason '<why>'   (keeps the edit: out of generation)", diff]
    if ownership == "generated":
        return [f"framework project disown {path} --reason '<why>'", diff]
    if ownership == "scaffold":
        return ["framework project scaffolded", "framework project rescaffold <path>   (once deleted)",
                f"framework project upgrade --force {path}   (rewrite it with the new templates, merged)"]
    if ownership == "disowned":
        return ["re-adopt: delete its entry in .framework/disowned.json, then framework generate"]
    return ["yours: no framework command writes it"]


class ProjectScreen(DashboardScreen):
    NAME = "project"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "reload", "Reload", id="project.reload"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0
        self.project_map: Any = None
        self.report: Any = None
        self.selected: tuple[str, str] | None = None  # (path, ownership) of the file under the cursor

    def compose_body(self) -> ComposeResult:
        yield Static("mapping ...", id="project-status", classes="status-line", markup=False)
        with Horizontal(id="project-panes"):
            yield Tree("project", id="project-map")
            with Vertical(id="project-side"):
                yield Static("", id="project-audit")
                yield Static("upgrade check ...", id="project-upgrade", markup=False)
                yield Static("", id="project-commands", markup=False)

    def on_mount(self) -> None:
        self.query_one("#project-map", Tree).focus()
        self.load()

    @work(thread=True, exclusive=True, group="project")
    def load(self) -> None:
        from engine.errors import EngineError
        from engine.inspection.audit import audit
        from engine.inspection.map import project_map
        from engine.project import find_project

        try:
            project = find_project(self.app.project_dir)
            loaded = ProjectLoaded(project_map=project_map(project), report=audit(project))
        except EngineError as exc:
            self.post_message(ProjectLoaded(error=exc))
            return
        from engine.upgrade.upgrade import check_upgrade

        try:
            loaded.upgrade = check_upgrade(project)
        except EngineError as exc:
            loaded.upgrade_error = exc
        self.post_message(loaded)

    def on_project_loaded(self, message: ProjectLoaded) -> None:
        self.loads += 1
        status = self.query_one("#project-status", Static)
        if message.error is not None:
            hint = getattr(message.error, "hint", None)
            status.update(f"error: {message.error.message}" + (f"   hint: {hint}" if hint else ""))
            return
        self.project_map, self.report = message.project_map, message.report
        counts = ", ".join(f"{n} {kind}" for kind, n in self.project_map.counts.items() if n)
        status.update(f"{self.project_map.files} files: {counts}   audit: {self.report.errors} errors, "
                      f"{self.report.warnings} warnings")
        self._fill_tree()
        self._fill_audit()
        self._fill_upgrade(message)
        self._commands()

    def _fill_tree(self) -> None:
        from pathlib import Path

        tree = self.query_one("#project-map", Tree)
        tree.clear()
        pmap = self.project_map
        tree.root.set_label(Text(f"{Path(pmap.root).name}/  {_counts(pmap.counts)}", style="bold"))
        tree.root.data = None
        parents: dict[str, Any] = {"": tree.root}
        for node in pmap.nodes:
            parent = parents[node.path.rsplit("/", 1)[0] if "/" in node.path else ""]
            if node.kind == "dir":
                label = Text(f"{node.name}/  ", style="bold")
                label.append(_counts(node.counts), style="red" if node.counts.get("drifted") else "dim")
                parents[node.path] = parent.add(label, data=None, expand=bool(node.counts.get("drifted")))
            else:
                label = Text(node.name, style=STYLES[node.ownership])
                tag = "DRIFTED" if node.ownership == "drifted" else node.ownership
                label.append(f"  [{tag}{'' if node.present else ', deleted'}]", style=STYLES[node.ownership] or "dim")
                parent.add_leaf(label, data=(node.path, node.ownership))
        tree.root.expand()

    def _fill_audit(self) -> None:
        text = Text()
        for category in self.report.categories:
            text.append(f"{category.status.upper():8}", style=STATUS_STYLES[category.status])
            text.append(f" {category.name}: {category.summary}\n")
            for f in category.findings[:8]:
                where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
                text.append(f"    {where + ': ' if where else ''}{f.message}\n",
                            style="red" if f.severity == "error" else "")
            if len(category.findings) > 8:
                text.append(f"    ... {len(category.findings) - 8} more: {category.command}\n", style="dim")
        self.query_one("#project-audit", Static).update(text)

    def _fill_upgrade(self, message: ProjectLoaded) -> None:
        panel = self.query_one("#project-upgrade", Static)
        if message.upgrade_error is not None:
            panel.update(f"upgrade check: {message.upgrade_error.message}")
            return
        result = message.upgrade
        counts = ", ".join(f"{n} {status}" for status, n in sorted(result.summary.items())) or "nothing to change"
        lines = [f"upgrade check {result.from_version} -> {result.to_version}: {counts}"]
        lines += [f"  {f.status:22} {f.path}" for f in result.files[:UPGRADE_ROWS]]
        if len(result.files) > UPGRADE_ROWS:
            lines.append(f"  ... {len(result.files) - UPGRADE_ROWS} more")
        lines.append("framework project upgrade --check    framework project upgrade" + (
            "    framework project upgrade list" if result.playbooks else ""))
        panel.update("\n".join(lines))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        self.selected = event.node.data
        self._commands()

    def on_tree_node_selected(self, event: Tree.NodeSelected[Any]) -> None:
        self.selected = event.node.data
        self._commands()

    def _commands(self) -> None:
        lines = ["r: framework project map --json    framework project audit",
                 "drift only: framework project map --filter drifted"]
        if self.selected:
            path, ownership = self.selected
            lines.append(f"{path} [{ownership}]:")
            lines += [f"  {c}" for c in file_commands(path, ownership)]
        self.query_one("#project-commands", Static).update("\n".join(lines))

    def action_reload(self) -> None:
        self.query_one("#project-status", Static).update("mapping ...")
        self.load()


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "empty"
