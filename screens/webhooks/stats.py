"""A trigger's stats (`s` on the Webhooks screen): deliveries per minute and answer latency (p50, p99)
over the last hour as sparklines, the rejected and deduplicated counts beside them; `n` shows the
minutes behind them. Same data as `platform trigger stats <automation> <trigger> --json`
(docs/reference-webhooks.md#trigger-stats)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from screens.widgets.chart_modal import Chart
from screens.widgets.charts import sparkline

COLUMNS = (("minute", "Minute"), ("deliveries", "Deliveries"), ("rejected", "Rejected"),
           ("deduplicated", "Deduplicated"), ("p50", "p50 (ms)"), ("p99", "p99 (ms)"))
LABEL = 16


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def stats_chart(server: tuple[str, str], automation: str, trigger: str, minutes: int = 60) -> Chart:
    from engine.hooks.client import stats

    st = stats(automation, trigger, minutes, server=server)
    per = st.per_minute
    picture = Text()
    lines: list[tuple[str, str, str]] = [
        ("deliveries/min", sparkline([m.deliveries for m in per]),
         f"{st.deliveries} in all, at most {max((m.deliveries for m in per), default=0)}/min"),
        ("p50 latency", sparkline([m.p50_ms for m in per]), f"p50 {_ms(st.p50_ms)} ms"),
        ("p99 latency", sparkline([m.p99_ms for m in per]), f"p99 {_ms(st.p99_ms)} ms"),
    ]
    for label, line, beside in lines:
        picture.append(f"{label:<{LABEL}}")
        picture.append(line, style="cyan")
        picture.append(f"  {beside}\n")
    picture.append(f"{'':<{LABEL}}-{st.minutes}m{'now':>{max(0, st.minutes - len(str(st.minutes)) - 2)}}\n")
    picture.append(f"rejected {st.rejected}   deduplicated {st.deduplicated}", style="bold")
    others = [f"{k} {v}" for k, v in st.outcomes.items() if k not in ("refused", "retry")]
    if others:
        picture.append("   (" + ", ".join(others) + ")")
    # Minutes newest first, named by how long ago they started: the same rows at any wall-clock time.
    rows: dict[str, Any] = {
        str(i): (f"-{st.minutes - i}m", str(m.deliveries), str(m.rejected), str(m.deduplicated), _ms(m.p50_ms),
                 _ms(m.p99_ms))
        for i, m in reversed(list(enumerate(per)))
    }
    summary = (f"{automation}/{trigger}: the last {st.minutes} minutes, one column a minute "
               f"(latency: receipt to the recorder's answer)")
    return Chart(summary=summary, picture=picture, rows=rows)
