"""The Daemon screen's stats (`s`): transfer throughput and session count per minute over the last
hour as sparklines, from the daemon's samples; `n` shows the minutes behind them. Same data as
`platform daemon stats --name <name> --json` (docs/reference-daemon.md#daemon-stats)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from screens.widgets.chart_modal import Chart
from screens.widgets.charts import sparkline

COLUMNS = (("minute", "Minute"), ("read", "Read (bytes)"), ("written", "Written (bytes)"),
           ("throughput", "Bytes/s"), ("sessions", "Sessions (max)"))
LABEL = 16


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def stats_chart(name: str, minutes: int = 60) -> Chart:
    from engine.daemon.stats import daemon_stats

    st = daemon_stats(name, minutes)
    per = st.per_minute
    running = [m for m in per if m.sessions_max is not None]
    peak = max((m.throughput_bps for m in per), default=0.0)
    picture = Text()
    for label, line, beside in (
        ("throughput", sparkline([m.throughput_bps if m.sessions_max is not None else None for m in per]),
         f"peak {_bytes(peak)}/s"),
        ("sessions", sparkline([m.sessions_max for m in per]), f"at most {st.sessions_max}"),
    ):
        picture.append(f"{label:<{LABEL}}")
        picture.append(line, style="cyan")
        picture.append(f"  {beside}\n")
    picture.append(f"{'':<{LABEL}}-{st.minutes}m{'now':>{max(0, st.minutes - len(str(st.minutes)) - 2)}}\n")
    picture.append(f"read {_bytes(st.read_bytes)}   written {_bytes(st.written_bytes)}   "
                   f"{len(running)} of {st.minutes} minutes sampled", style="bold")
    # Minutes newest first, named by how long ago they started: the same rows at any wall-clock time.
    rows: dict[str, Any] = {
        str(i): (f"-{st.minutes - i}m", str(m.read_bytes), str(m.written_bytes), f"{m.throughput_bps:g}",
                 "-" if m.sessions_max is None else str(m.sessions_max))
        for i, m in reversed(list(enumerate(per)))
    }
    summary = (f"daemon {name}: the last {st.minutes} minutes, one column a minute (blank: no sample, "
               "the daemon was not running)")
    return Chart(summary=summary, picture=picture, rows=rows)
