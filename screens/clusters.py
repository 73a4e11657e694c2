"""Clusters view (docs/reference-cluster.md#dashboard): the local clusters this checkout created, each
with its provider (named with what it runs), state, nodes and context; for the selected one its managed
namespaces, ingress URLs and the tail of its workloads' logs, and the command lines that print the same.

Opened from the Environments screen (`c`) and the command palette ("Clusters"); the number keys 0-9 all
name sidebar screens. Same engine call as the commands (engine.cluster.ops.overview: `cluster status`,
`cluster instances`, `cluster urls`, `cluster logs --no-follow`), read on a daemon thread; rows are
diffed by key so the cursor stays put on reload.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from screens.widgets.background import read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_sync import sync_rows

COLUMNS = (("name", "Cluster"), ("provider", "Provider"), ("state", "State"), ("nodes", "Nodes"),
           ("context", "Context"), ("source", "Declared in"))
COMMANDS = ("framework cluster status --json", "framework cluster instances", "framework cluster urls",
            "framework cluster logs --tail 5 --no-follow")


@dataclass
class ClustersLoaded(Message):
    clusters: Any = None
    error: Any = None


def _row(item: Any) -> tuple[str, ...]:
    s = item.status
    nodes = s.get("nodes") or []
    ready = sum(1 for n in nodes if n.get("ready"))
    return (s["name"], s.get("provider_description") or "-", s["state"], f"{ready}/{len(nodes)} ready",
            s["context"], s["source"])


def detail_text(item: Any) -> str:
    """The selected cluster's namespaces, URLs and logs tail, as plain lines."""
    s = item.status
    lines = [f"{s['name']}: {s.get('provider_description') or '-'}", ""]
    lines.append("Namespaces (framework cluster instances):")
    lines += [f"  {i['namespace']:<28} env {i.get('env') or '-':<10} {i['workloads']} workload(s)  {i['phase']}"
              for i in item.instances] or ["  none"]
    lines += ["", "URLs (framework cluster urls):"]
    if item.urls_notice:
        lines.append(f"  {item.urls_notice}")
    lines += [f"  {u['url']:<48} {u['namespace']}/{u['service']}" for u in item.urls] or ["  none"]
    lines += ["", "Logs, last lines per pod (framework cluster logs --tail 5 --no-follow):"]
    lines += [f"  [{ln['pod']}] {ln['line']}" for ln in item.logs] or ["  none"]
    lines += [f"  ! {p}" for p in item.problems]
    return "\n".join(lines)


class ClustersScreen(Screen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "reload", "Reload", id="clusters.reload"),
        Binding("escape", "app.back", "Back", id="clusters.back"),
        Binding("j", "cursor_down", "Down", id="clusters.down", show=False),
        Binding("k", "cursor_up", "Up", id="clusters.up", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.clusters: list[Any] = []
        self.loads = 0

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="body"):
            yield Static("Clusters", classes="title")
            yield Static("loading clusters ...", id="clusters-status", classes="status-line")
            yield DataTable(id="clusters-table", cursor_type="row")
            yield Static("", id="clusters-detail", markup=False)
            yield EmptyState("", "", id="clusters-empty")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#clusters-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#clusters-empty").display = False
        table.focus()
        self.load()

    @read_worker("clusters")
    def load(self) -> ClustersLoaded:
        from engine.cluster.ops import overview
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            return ClustersLoaded(clusters=overview(find_project(self.app.project_dir)))  # type: ignore[attr-defined]
        except EngineError as exc:
            return ClustersLoaded(error=exc)

    def on_clusters_loaded(self, message: ClustersLoaded) -> None:
        self.loads += 1
        empty = self.query_one("#clusters-empty", EmptyState)
        table = self.query_one("#clusters-table", DataTable)
        if message.error is not None:
            self._show(False)
            empty.update("Cannot read the clusters", message.error.message)
            return
        self.clusters = message.clusters
        if not self.clusters:
            self._show(False)
            empty.update("No local cluster was created from this checkout.",
                         "Create one with:\n  framework cluster up            (deploy/k3d.yaml or the defaults)\n"
                         "  framework cluster up <env>      (an environment's K8sCluster k3d-<name>)\n\n"
                         "The provider is k3d where Docker answers, else kwok (simulated nodes).")
            return
        self._show(True)
        self.query_one("#clusters-status", Static).update("same as: " + "; ".join(COMMANDS))
        sync_rows(table, [k for k, _ in COLUMNS], {c.status["name"]: _row(c) for c in self.clusters})
        self._detail()

    def _show(self, data: bool) -> None:
        for wid in ("#clusters-table", "#clusters-detail", "#clusters-status"):
            self.query_one(wid).display = data
        self.query_one("#clusters-empty").display = not data

    def _detail(self) -> None:
        table = self.query_one("#clusters-table", DataTable)
        if not self.clusters or table.row_count == 0:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        item = next((c for c in self.clusters if c.status["name"] == key), self.clusters[0])
        self.query_one("#clusters-detail", Static).update(detail_text(item))

    @on(DataTable.RowHighlighted, "#clusters-table")
    def _highlighted(self) -> None:
        self._detail()

    def action_reload(self) -> None:
        self.load()

    def action_cursor_down(self) -> None:
        self.query_one("#clusters-table", DataTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one("#clusters-table", DataTable).action_cursor_up()
