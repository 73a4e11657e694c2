"""Metrics screen (key 0; docs/reference-metrics.md#in-the-dashboard): the four delivery measures per
environment, then the selected environment's measures over time as sparklines; `t` shows the table
behind the pictures (one row per bucket), `w` switches day and week buckets.

Same engine call as `framework ledger metrics --json` (engine.ledger.metrics), read on a daemon
thread; rows are diffed by key so the cursor stays put on reload.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Sparkline, Static

from screens.base import DashboardScreen
from screens.environments.delivery import MetricsLoaded, read_metrics, values
from screens.widgets.background import read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_sync import sync_rows

ENV_COLUMNS = (("env", "Environment"), ("deploys", "Deploys"), ("per_day", "/day"),
               ("lead_median", "Lead median"), ("lead_p90", "Lead p90"), ("cfr", "Failure rate"),
               ("restore", "Restore median"), ("incidents", "Incidents"))
SERIES_COLUMNS = (("start", "Bucket (UTC)"), ("deploys", "Deploys"), ("lead", "Lead median"),
                  ("promotions", "Promotions"), ("failed", "Failed"), ("cfr", "Failure rate"),
                  ("restore", "Restore median"))
# (series field, label): the four pictures, in the order of the measures
PICTURES = (("deploys", "Deployment frequency"), ("lead_time_median_seconds", "Lead time, median"),
            ("change_failure_rate", "Change failure rate"), ("restore_median_seconds", "Time to restore, median"))


def _env_row(e: Any) -> tuple[str, ...]:
    from engine.ledger.metrics import duration, percent

    cfr = e.change_failure_rate
    return (e.env, str(e.deployment_frequency.count), f"{e.deployment_frequency.per_day:.2f}",
            duration(e.lead_time.median_seconds), duration(e.lead_time.p90_seconds),
            f"{percent(cfr.rate)} ({cfr.failed}/{cfr.promotions})", duration(e.time_to_restore.median_seconds),
            f"{e.time_to_restore.incidents} ({e.time_to_restore.unrestored} open)")


def _series_row(b: Any) -> tuple[str, ...]:
    from engine.ledger.metrics import duration, percent

    return (b.start[:10], str(b.deploys), duration(b.lead_time_median_seconds), str(b.promotions), str(b.failed),
            percent(b.change_failure_rate), duration(b.restore_median_seconds))


def _figures(e: Any) -> tuple[str, ...]:
    """Each picture's whole-window figure, beside its label."""
    from engine.ledger.metrics import duration, percent

    return (f"{e.deployment_frequency.count}", duration(e.lead_time.median_seconds),
            percent(e.change_failure_rate.rate), duration(e.time_to_restore.median_seconds))


class MetricsScreen(DashboardScreen):
    NAME = "metrics"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("t", "toggle_table", "Table", id="metrics.table"),
        Binding("w", "toggle_bucket", "Day/week", id="metrics.bucket"),
        Binding("r", "reload", "Reload", id="metrics.reload"),
        Binding("j", "cursor_down", "Down", id="metrics.down", show=False),
        Binding("k", "cursor_up", "Up", id="metrics.up", show=False),
    ]

    def __init__(self, since: float | None = None, until: float | None = None) -> None:
        super().__init__()
        self.since, self.until = since, until  # None: the last 30 days (a test pins both)
        self.bucket = "day"
        self.metrics: Any = None
        self.selected: str | None = None
        self.show_table = False  # `t`: the table behind the pictures instead of the pictures
        self.loads = 0

    def compose_body(self) -> ComposeResult:
        yield Static("loading metrics ...", id="metrics-status", classes="status-line")
        table: DataTable[str] = DataTable(id="metrics-envs", cursor_type="row")
        yield table
        with Vertical(id="metrics-pictures"):
            yield Static("", id="metrics-picture-title", classes="metrics-picture-title")
            for field, label in PICTURES:
                with Horizontal(classes="metrics-picture"):
                    yield Static(label, classes="metrics-label", id=f"label-{field}")
                    yield Sparkline([], id=f"spark-{field}")
        series: DataTable[str] = DataTable(id="metrics-series", cursor_type="row", zebra_stripes=True)
        yield series
        yield EmptyState("", "", id="metrics-empty")

    def on_mount(self) -> None:
        envs = self.query_one("#metrics-envs", DataTable)
        for key, label in ENV_COLUMNS:
            envs.add_column(label, key=key)
        series = self.query_one("#metrics-series", DataTable)
        for key, label in SERIES_COLUMNS:
            series.add_column(label, key=key)
        self.query_one("#metrics-empty").display = False
        envs.focus()
        self.load()

    @read_worker("metrics")
    def load(self) -> MetricsLoaded:
        return read_metrics(self.app.project_dir, since=self.since, until=self.until, bucket=self.bucket)

    def on_metrics_loaded(self, message: MetricsLoaded) -> None:
        self.loads += 1
        self.metrics = message.metrics
        if message.error is not None:
            self._empty("Cannot read the ledger", message.error.message + (f"\n{message.error.hint}"
                                                                            if message.error.hint else ""))
            return
        m = message.metrics
        self.query_one("#metrics-status", Static).update(
            f"{m.since[:10]} to {m.until[:10]} by {m.bucket}, project {m.project}   "
            "(same as: framework ledger metrics --json)")
        if not m.environments:
            self._empty("No promotions in the ledger",
                        "Deploy an environment (framework env deploy <env>) and its measures show here.")
            return
        self.query_one("#metrics-empty").display = False
        table = self.query_one("#metrics-envs", DataTable)
        table.display = self.query_one("#metrics-pictures").display = True
        sync_rows(table, [k for k, _ in ENV_COLUMNS], {e.env: _env_row(e) for e in m.environments})
        if self.selected not in {e.env for e in m.environments}:
            self.selected = m.environments[0].env
        self._show_selected()

    def _empty(self, title: str, body: str) -> None:
        for wanted in ("#metrics-envs", "#metrics-pictures", "#metrics-series"):
            self.query_one(wanted).display = False
        empty = self.query_one("#metrics-empty", EmptyState)
        empty.display = True
        empty.update(title, body + "\n\nSame as: framework ledger metrics")

    def _show_selected(self) -> None:
        env = next((e for e in self.metrics.environments if e.env == self.selected), None) if self.metrics else None
        if env is None:
            return
        self.query_one("#metrics-series").display = self.show_table
        for picture in self.query(".metrics-picture"):
            picture.display = not self.show_table
        self.query_one("#metrics-picture-title", Static).update(
            f"{env.env} per {self.metrics.bucket} ({'table; t pictures' if self.show_table else 'pictures; t table'})")
        for (field, label), figure in zip(PICTURES, _figures(env), strict=True):
            self.query_one(f"#label-{field}", Static).update(f"{label:<25}{figure}")
            self.query_one(f"#spark-{field}", Sparkline).data = values(env.series, field)
        sync_rows(self.query_one("#metrics-series", DataTable), [k for k, _ in SERIES_COLUMNS],
                  {b.start: _series_row(b) for b in env.series})

    @on(DataTable.RowHighlighted, "#metrics-envs")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value != self.selected:
            self.selected = str(event.row_key.value)
            self._show_selected()

    def action_toggle_table(self) -> None:
        """The table behind the pictures: one row per bucket, the same numbers the sparklines draw."""
        self.show_table = not self.show_table
        self._show_selected()

    def action_toggle_bucket(self) -> None:
        self.bucket = "week" if self.bucket == "day" else "day"
        self.load()

    def action_reload(self) -> None:
        self.load()

    def action_cursor_down(self) -> None:
        self.query_one("#metrics-envs", DataTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one("#metrics-envs", DataTable).action_cursor_up()
