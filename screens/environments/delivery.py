"""The Delivery panel of the Environments screen (docs/reference-metrics.md#in-the-dashboard): per
environment, deploys per day and median lead time per day over the last 14 days, as sparklines.

Same engine call as `framework ledger metrics --since <14 days ago> --json` (engine.ledger.metrics),
read on a daemon thread. The panel stays hidden while the ledger holds no promotion in the window:
nothing to picture is not a row of empty lines. The numbers behind it are on the Metrics screen (0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static

PANEL_DAYS = 14


@dataclass
class MetricsLoaded(Message):
    """One `ledger metrics` result for a screen (either `metrics` or `error` is set)."""

    metrics: Any = None
    error: Any = None


def read_metrics(project_dir: Path, *, days: int | None = None, since: float | None = None,
                 until: float | None = None, bucket: str = "day") -> MetricsLoaded:
    """The engine call (on a daemon thread): the machine ledger's measures for every environment."""
    import time

    from engine.errors import EngineError
    from engine.ledger.metrics import metrics
    from engine.project import find_project

    end = until if until is not None else time.time()
    start = since if since is not None else end - (days or 30) * 86400
    try:
        return MetricsLoaded(metrics=metrics(find_project(project_dir), None, since=str(start), until=str(end),
                                             bucket=bucket))
    except EngineError as exc:
        return MetricsLoaded(error=exc)


def values(series: list[Any], field: str) -> list[float]:
    """A series field as sparkline data: a bucket without a value draws as zero."""
    return [float(getattr(b, field) or 0) for b in series]


class DeliveryRow(Horizontal):
    """One environment: its name, deploys per day and lead time per day."""

    def __init__(self, env: str, e: Any) -> None:
        super().__init__(id=f"delivery-{env}", classes="delivery-row")
        self.env = env
        self.first = e  # drawn by compose, so a new row is never shown empty

    def compose(self) -> ComposeResult:
        from textual.widgets import Sparkline  # only once there is something to draw: not on the first frame

        yield Static(self.env, classes="delivery-env")
        yield Static(self.count_text(self.first), classes="delivery-count")
        yield Sparkline(values(self.first.series, "deploys"), classes="delivery-deploys")
        yield Static("lead", classes="delivery-label")
        yield Sparkline(values(self.first.series, "lead_time_median_seconds"), classes="delivery-lead")

    @staticmethod
    def count_text(e: Any) -> str:
        count = e.deployment_frequency.count
        return f"{count} deploy{'' if count == 1 else 's'}"

    def show(self, e: Any) -> None:
        from textual.widgets import Sparkline

        self.query_one(".delivery-count", Static).update(self.count_text(e))
        self.query_one(".delivery-deploys", Sparkline).data = values(e.series, "deploys")
        self.query_one(".delivery-lead", Sparkline).data = values(e.series, "lead_time_median_seconds")


class DeliveryPanel(Vertical):
    """Sparklines of deploys per day and lead time per environment (hidden without promotions)."""

    def __init__(self) -> None:
        super().__init__(id="delivery")
        self.metrics: Any = None
        # Hidden until a read finds promotions; its title is mounted then (not styled in the first frame).
        self.display = False

    def show(self, loaded: MetricsLoaded) -> None:
        """Rows keyed by environment: updated in place, added or removed, never rebuilt."""
        self.metrics = loaded.metrics
        envs = [e for e in (loaded.metrics.environments if loaded.metrics else [])
                if e.deployment_frequency.count or e.change_failure_rate.promotions]
        self.display = bool(envs)
        if envs and not self.query(".delivery-title"):
            self.mount(Static(f"Delivery, last {PANEL_DAYS} days: deploys per day, lead time per day "
                              "(0 Metrics; framework ledger metrics)", classes="delivery-title"))
        wanted = {e.env for e in envs}
        for row in list(self.query(DeliveryRow)):
            if row.env not in wanted:
                row.remove()
        present = {row.env: row for row in self.query(DeliveryRow)}
        for e in envs:
            row = present.get(e.env)
            if row is None:
                self.mount(DeliveryRow(e.env, e))
            else:
                row.show(e)
