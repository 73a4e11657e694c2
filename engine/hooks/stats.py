"""`platform trigger stats <automation> <trigger>` (docs/reference-webhooks.md#trigger-stats).

Per minute over a window that ends now (default the last 60 minutes): the trigger's deliveries,
their answer latency (p50, p99: nearest rank), and beside them the counts by outcome, with
`rejected` (refused after authentication) and `deduplicated` (a retry of an earlier delivery) named.
Answer latency is `decided_at - received_at` (assets/migrations/0008_delivery_decided_at.sql);
deliveries without it (replays, rows from before the column) count but have no latency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.engine import Engine

from engine.errors import EngineError
from engine.hooks.automations import _trigger_row, iso
from engine.hooks.journal import catch_up
from engine.hooks.models import MinuteStats, TriggerStats
from engine.serverstore import store
from engine.serverstore.store import deliveries, now_us

__all__ = ["MAX_MINUTES", "MinuteStats", "TriggerStats", "percentile", "trigger_stats"]

MAX_MINUTES = 24 * 60
MINUTE_US = 60_000_000


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest rank: the smallest value with at least p% of the values at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _ms(us: float | None) -> float | None:
    return None if us is None else round(us / 1000, 3)


def trigger_stats(engine: Engine, automation: str, trigger: str, minutes: int = 60,
                  until_us: int | None = None) -> TriggerStats:
    """The trigger's deliveries received in [until - minutes, until), per minute (until: now)."""
    if not 1 <= minutes <= MAX_MINUTES:
        raise EngineError(f"--minutes must be 1-{MAX_MINUTES}, not {minutes}", code="usage", exit_code=2)
    until = now_us() if until_us is None else until_us
    since = until - minutes * MINUTE_US
    catch_up(engine)  # every delivery answered 202 is read (engine.hooks.journal)
    with store.read(engine) as conn:
        _auto, trow = _trigger_row(conn, automation, trigger)
        rows = conn.execute(
            select(deliveries.c.received_at, deliveries.c.decided_at, deliveries.c.outcome)
            .where(deliveries.c.trigger_id == trow.id, deliveries.c.received_at >= since,
                   deliveries.c.received_at < until)
        ).all()
    counts = [0] * minutes
    rejected = [0] * minutes
    retries = [0] * minutes
    latencies: list[list[int]] = [[] for _ in range(minutes)]
    outcomes: dict[str, int] = {}
    for received, decided, outcome in rows:
        i = (received - since) // MINUTE_US
        counts[i] += 1
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        rejected[i] += outcome == "refused"
        retries[i] += outcome == "retry"
        if decided is not None:
            latencies[i].append(decided - received)
    every = [v for minute in latencies for v in minute]
    per_minute = [
        MinuteStats(start=iso(since + i * MINUTE_US) or "", deliveries=counts[i], rejected=rejected[i],
                    deduplicated=retries[i], p50_ms=_ms(percentile(latencies[i], 50)),
                    p99_ms=_ms(percentile(latencies[i], 99)))
        for i in range(minutes)
    ]
    return TriggerStats(
        automation=automation, trigger=trigger, minutes=minutes, since=iso(since) or "", until=iso(until) or "",
        deliveries=len(rows), rejected=sum(rejected), deduplicated=sum(retries),
        outcomes=dict(sorted(outcomes.items())), p50_ms=_ms(percentile(every, 50)),
        p99_ms=_ms(percentile(every, 99)), per_minute=per_minute,
    )
