"""Rollouts screen: deploys in flight on the process and k8s runtimes, live — phase per workload (`pending`,
`progressing`, `stabilizing`, `ready`, `DEGRADED`, `SUPERSEDED`), health probes, elapsed time
against the wait budget, each workload's log tail (a Kubernetes workload: its ready replicas in the
probes column and its events tail); `s` supersedes the rollout in flight (with
confirmation; the engine's `--supersede` path); `t` draws the selected environment's rollout timeline
(screens/deploys/timeline.py). With nothing in flight: the last rollout per
environment, and the screen says so.

Same data as `framework env status <env>` and `framework ledger show <env>`; polled in a thread
worker at the settings' refresh rate; rows diffed by key (cursor and scroll stay put).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from screens.base import DashboardScreen
from screens.deploys.support import DeployFinished, DeployProgress, command_line, deploy_argv, run_deploy
from screens.widgets.background import read_worker
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

ENV_COLUMNS = (("env", "Environment"), ("state", "State"), ("release", "Release"), ("phase", "Phase"),
               ("elapsed", "Elapsed / budget"), ("outcome", "Outcome"))
WORKLOAD_COLUMNS = (("name", "Workload"), ("phase", "Phase"), ("restarts", "Restarts"), ("healthy", "Healthy"),
                    ("probes", "Health probes"))


@dataclass
class RolloutsLoaded(Message):
    view: Any = None
    error: Any = None


def _elapsed(row: Any, clocks: bool) -> str:
    from screens.widgets.status_text import seconds

    if row.elapsed_seconds is None:
        return "-"
    budget = f" / {row.wait_budget:g}s" if row.wait_budget is not None else " / budget not recorded"
    return seconds(row.elapsed_seconds, clocks) + budget


def _state(row: Any) -> str:
    if row.in_flight:
        return "IN FLIGHT"
    return "last rollout" if row.started_at else "-"


class RolloutsScreen(TableKeys, DashboardScreen):
    NAME = "rollouts"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("s", "supersede", "Supersede", id="rollouts.supersede"),
        Binding("r", "reload", "Reload", id="rollouts.reload"),
        Binding("t", "timeline", "Timeline", id="rollouts.timeline"),
        *table_bindings("rollouts", filter=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.view: Any = None
        self.loads = 0
        self.superseding: str | None = None
        self.progress: list[str] = []
        self.last_deploy: Any = None

    def compose_body(self) -> ComposeResult:
        yield Static("loading rollouts ...", id="rollouts-status", classes="status-line")
        yield DataTable(id="rollout-envs", cursor_type="row")
        yield Static("", id="rollout-summary", markup=False)
        yield DataTable(id="rollout-workloads", cursor_type="row")
        with VerticalScroll(id="rollout-log"):
            yield Static("", id="rollout-log-text", markup=False)

    def on_mount(self) -> None:
        for table_id, columns in (("#rollout-envs", ENV_COLUMNS), ("#rollout-workloads", WORKLOAD_COLUMNS)):
            table = self.query_one(table_id, DataTable)
            for key, label in columns:
                table.add_column(label, key=key)
        self.query_one("#rollout-envs", DataTable).focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)

    def _main_table(self) -> DataTable[str]:
        focused = self.focused
        return focused if isinstance(focused, DataTable) else self.query_one("#rollout-envs", DataTable)

    @read_worker("rollouts")
    def load(self) -> RolloutsLoaded:
        from engine.deploy.rollouts import rollouts
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            return RolloutsLoaded(view=rollouts(find_project(self.app.project_dir)))
        except EngineError as exc:
            return RolloutsLoaded(error=exc)

    def on_rollouts_loaded(self, message: RolloutsLoaded) -> None:
        self.loads += 1
        status = self.query_one("#rollouts-status", Static)
        if message.error is not None:
            status.update(f"error: {message.error.message}")
            return
        self.view = message.view
        self._render_rows()

    def _render_rows(self) -> None:
        if self.view is None:
            return
        clocks = self.app.settings.show_volatile
        view = self.view
        sync_rows(self.query_one("#rollout-envs", DataTable), [k for k, _ in ENV_COLUMNS],
                  {r.env: (r.env, _state(r), r.release or "-", r.phase or "-", _elapsed(r, clocks),
                           r.outcome or ("running" if r.in_flight else r.message or "-"))
                   for r in view.environments})
        if view.in_flight:
            head = f"{view.in_flight} rollout(s) in flight"
        else:
            head = "Nothing in flight: showing the last rollout per environment"
        self.query_one("#rollouts-status", Static).update(
            head + "   (same as: framework env status <env>; framework ledger show <env>)")
        self._render_selected()

    def _selected_env(self) -> Any:
        table = self.query_one("#rollout-envs", DataTable)
        if self.view is None or not table.row_count:
            return None
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        return next((r for r in self.view.environments if r.env == key), None)

    def _render_selected(self) -> None:
        row = self._selected_env()
        workloads = self.query_one("#rollout-workloads", DataTable)
        if row is None:
            sync_rows(workloads, [k for k, _ in WORKLOAD_COLUMNS], {})
            return
        volatile = self.app.settings.show_volatile  # restart counts depend on timing: hidden in snapshots
        rows = {}
        for w in row.workloads:
            healthy = "-" if w.healthy is None else ("yes" if w.healthy else "no")
            rows[w.name] = (w.name, w.phase, str(w.restarts) if volatile else "hidden", healthy,
                            "; ".join(w.probes) or w.message or "-")
        sync_rows(workloads, [k for k, _ in WORKLOAD_COLUMNS], rows)
        promotion = (row.promotion_id or "-") if self.app.settings.show_volatile else "hidden"
        lines = [f"{row.env}: " + (row.message or f"release {row.release}, promotion {promotion}"
                                    + (f", deploy pid {row.pid}" if row.in_flight and promotion != "hidden" else ""))]
        if row.in_flight:
            argv = deploy_argv(row.env, row.release or "<version>", supersede=True)
            lines.append(f"s: supersede this rollout   (same as: {command_line(argv)})")
        if row.superseded_by_pid:
            lines.append(f"superseded by the deploy process {row.superseded_by_pid}")
        if self.progress:
            lines.append(self.progress[-1])
        self.query_one("#rollout-summary", Static).update("\n".join(lines))
        self._render_log(row)

    def _render_log(self, row: Any) -> None:
        table = self.query_one("#rollout-workloads", DataTable)
        if not row.workloads or not table.row_count:
            text = "No workload logs for this environment."
        else:
            key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
            w = next((w for w in row.workloads if w.name == key), row.workloads[0])
            if w.tail_kind == "events":
                text = f"events tail of {w.name}:\n" + ("\n".join(w.log_tail) or "(no events)")
            else:
                text = f"log tail of {w.name}:\n" + ("\n".join(w.log_tail) or "(empty)") if w.log_file else \
                    f"{w.name}: no log on this machine"
        self.query_one("#rollout-log-text", Static).update(text)

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._render_selected()

    def action_timeline(self) -> None:
        from functools import partial

        from screens.deploys.timeline import COLUMNS, timeline_chart
        from screens.widgets.chart_modal import ChartModal

        row = self._selected_env()
        if row is None:
            self.notify("no environment selected", severity="warning")
            return
        self.app.push_screen(ChartModal(f"Timeline of {row.env}'s latest rollout", COLUMNS,
                                        partial(timeline_chart, self.app.project_dir, row.env),
                                        f"framework ledger timeline {row.env} --json"))

    # -- supersede -------------------------------------------------------------------------
    def action_supersede(self) -> None:
        from screens.deploys.confirm import ConfirmDeployScreen

        row = self._selected_env()
        if row is None or not row.in_flight or not row.release:
            self.notify("nothing in flight to supersede in this environment", severity="warning")
            return
        if self.superseding:
            self.notify("a supersede started here is still running", severity="warning")
            return
        argv = deploy_argv(row.env, row.release, supersede=True, timeout=self.app.settings.deploy_timeout)
        body = (f"The rollout of {row.release} to {row.env} (deploy pid {row.pid}) is replaced by a new one of "
                "the same release; both record it (the old one ends SUPERSEDED).")
        protected = row.env in self.app.settings.protected_environments
        self.app.push_screen(
            ConfirmDeployScreen(f"Supersede the rollout of {row.env}?", body, command_line(argv), row.env, protected),
            lambda ok: self._supersede(row.env, row.release) if ok else None)

    def _supersede(self, env: str, version: str) -> None:
        self.superseding, self.progress = env, [f"superseding {env} ..."]
        self._run_supersede(env, version)

    @work(thread=True, exclusive=True, group="rollouts-supersede")
    def _run_supersede(self, env: str, version: str) -> None:
        run_deploy(self, self.app.project_dir, env, version, approve=None, supersede=True,
                   timeout=self.app.settings.deploy_timeout)

    def on_deploy_progress(self, message: DeployProgress) -> None:
        self.progress.append(message.line)
        self.load()

    def on_deploy_finished(self, message: DeployFinished) -> None:
        self.superseding, self.last_deploy = None, message
        if message.error is not None:
            self.progress.append(f"supersede failed: {message.error.message}")
        else:
            r = message.result
            self.progress.append(f"supersede finished: exit {r.exit_code}, rollout {(r.rollout or {}).get('phase')}")
        self.load()
