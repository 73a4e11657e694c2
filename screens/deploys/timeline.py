"""The Rollouts screen's timeline (`t`): each workload's phases against time for the selected
environment's latest rollout, from the ledger's phase records; `n` shows the spans behind it.
Same data as `framework ledger timeline <env> --json` (docs/reference-deploy.md#ledger-timeline)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from screens.widgets.chart_modal import Chart
from screens.widgets.charts import PHASE_MARKS, phase_legend, timeline_row

COLUMNS = (("workload", "Workload"), ("phase", "Phase"), ("start", "From (s)"), ("end", "To (s)"),
           ("seconds", "Lasted (s)"))
BAR = 80
NAME = 18


def timeline_chart(project_dir: Path | None, env: str) -> Chart:
    from engine.ledger.timeline import timeline
    from engine.project import find_project

    t = timeline(find_project(project_dir), env)
    outcome = f" ({t.outcome})" if t.outcome and t.outcome != t.phase else ""
    state = "in flight" if t.in_flight else f"ended {t.phase}{outcome}"
    summary = f"{t.env}: release {t.release}, {state}, {t.duration:g}s"
    picture = Text()
    if not t.workloads:
        picture.append("No phase records for this rollout (applies before phase records were kept).")
    for w in t.workloads:
        picture.append(f"{w.name[:NAME]:<{NAME}} ")
        picture.append_text(timeline_row(w.spans, t.duration, BAR))
        picture.append("\n")
    picture.append(f"{'':<{NAME}} 0s{f'{t.duration:g}s':>{BAR - 2}}\n")
    seen = [p for p in PHASE_MARKS if any(s.phase == p for w in t.workloads for s in w.spans)]
    picture.append_text(phase_legend(seen))
    rows = {f"{w.name}/{i}": (w.name, s.phase, f"{s.start:.3f}", f"{s.end:.3f}", f"{s.seconds:.3f}")
            for w in t.workloads for i, s in enumerate(w.spans)}
    return Chart(summary=summary, picture=picture, rows=rows)
