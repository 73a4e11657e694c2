"""A promotion ledger with known times, built through the machine ledger's own API (append_promotion,
update_apply, record_gate) for `ledger metrics` and its screens (docs/reference-metrics.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.ledger.store import Gate, Ledger

T0 = datetime(2026, 11, 2, tzinfo=UTC).timestamp()  # a Monday, 00:00 UTC
H, D = 3600.0, 86400.0
SINCE, UNTIL = T0, T0 + 7 * D
IMAGES = {"api": {"kind": "file", "coordinate": "files:api", "digest": "sha256:" + "a" * 64}}

# (env, release, direction, promoted at, committed at or None, rollout outcome or None (in flight),
#  rollout closed at, gate status or None)
PROMOTIONS = (
    ("prod", "v1", "INITIAL", T0 + 1 * H, T0, "ready", T0 + 1 * H + 600, "passed"),
    ("prod", "v2", "AHEAD", T0 + D, T0 + D - 2 * H, "failed", T0 + D + 300, None),
    ("prod", "v3", "AHEAD", T0 + D + H, T0 + D - H, "ready", T0 + D + H + 1200, None),
    ("prod", "v4", "AHEAD", T0 + 2 * D, T0 + 2 * D - 1800, "ready", T0 + 2 * D + 600, "failed"),
    ("prod", "v1", "BEHIND", T0 + 2 * D + 2 * H, T0, "ready", T0 + 2 * D + 2 * H + 300, None),
    ("prod", "v5", "AHEAD", T0 + 3 * D, None, "ready", T0 + 3 * D + 900, None),
    ("prod", "v6", "AHEAD", T0 + 4 * D, T0 + 4 * D - H, "timed_out", T0 + 4 * D + 1800, None),
    ("dev", "v1", "INITIAL", T0 + H, T0, "ready", T0 + H + 60, None),
    ("dev", "v2", "AHEAD", T0 + 2 * D, T0 + 2 * D - H, None, None, None),
)


def recent_shift(now: float) -> float:
    """The shift that moves PROMOTIONS to end yesterday: T0 becomes 00:00 UTC eight days before today."""
    return (now // D) * D - 8 * D - T0


def build_known_ledger(project: str, shift: float = 0.0) -> None:
    """The ledger of PROMOTIONS (times set explicitly, moved by `shift` seconds) in `project`'s machine ledger."""
    def moved(t: float | None) -> float | None:
        return None if t is None else t + shift

    with Ledger.open(project) as ledger:
        for env, release, direction, at, committed, outcome, closed, gate in (
                (e, r, d, moved(a), moved(c), o, moved(x), g) for e, r, d, a, c, o, x, g in PROMOTIONS):
            p = ledger.append_promotion(env, release, IMAGES, direction=direction,
                                        expected_current=ledger.current_id(env), created_at=at,
                                        committed_at=committed, open_apply=True, run_id="local")
            if outcome is not None:
                ledger.update_apply(ledger.last_apply_seq, phase=outcome, outcome=outcome, finished=True,
                                    finished_at=closed)
            if gate is not None:
                ledger.record_gate(env, p.id, Gate(name="e2e", status=gate, run_id="ci-1", recorded_at=closed or 0.0))
