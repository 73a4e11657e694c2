"""Bench: `ledger metrics` over 100,000 promotions (aim: < 500 ms), against sqlite3 reading the same
promotion rows (the baseline, measured in the same run).

The ledger is a real SQLite file built in a temp dir: 100,000 promotions over 4 environments across
a year, each with its rollout (90% ready, 7% failed, 3% timed out), a gate on every tenth (a fifth of
those failed) and a BEHIND promotion every 25th. The metrics query is `engine.ledger.metrics`'
indexed read and one pass (docs/reference-metrics.md#how-it-is-computed), over the whole year by day.
BENCH_SMOKE=1: 2,000 promotions, 1 round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ledger.metrics import machine_metrics  # noqa: E402
from engine.ledger.store import Ledger  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
N, ROUNDS = (2_000, 1) if SMOKE else (100_000, 5)
ENVS = ("dev", "staging", "prod", "preview")
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
SPAN = 365 * 86400.0


def build(path: Path, n: int) -> None:
    led = Ledger.open("bench", path)
    images = json.dumps({"api": {"kind": "file", "coordinate": "files:api", "digest": "sha256:" + "a" * 64}})
    step = SPAN / n
    promotions, applies, gates = [], [], []
    for i in range(n):
        at = START + i * step
        env = ENVS[i % len(ENVS)]
        pid = f"prm_{i:08d}"
        direction = "BEHIND" if i % 25 == 0 else "AHEAD"
        promotions.append((pid, "bench", env, f"v{i // 4}", images, direction, "u@h", at, at - 3600 - i % 7200))
        outcome = "failed" if i % 100 < 7 else "timed_out" if i % 100 < 10 else "ready"
        applies.append(("bench", env, pid, f"v{i // 4}", 1, "h", at, at + 120 + i % 600, outcome, outcome))
        if i % 10 == 0:
            gates.append(("bench", env, pid, "e2e", "failed" if i % 50 == 0 else "passed", "ci", at + 900))
    led.conn.execute("BEGIN")
    led.conn.executemany("INSERT INTO promotions (id, project, env, release, images, direction, who, created_at,"
                         " committed_at) VALUES (?,?,?,?,?,?,?,?,?)", promotions)
    led.conn.executemany("INSERT INTO applies (project, env, promotion_id, release, pid, host, started_at,"
                         " finished_at, phase, outcome) VALUES (?,?,?,?,?,?,?,?,?,?)", applies)
    led.conn.executemany("INSERT INTO gates (project, env, promotion_id, name, status, run_id, recorded_at)"
                         " VALUES (?,?,?,?,?,?,?)", gates)
    led.conn.execute("COMMIT")
    led.close()


def best(fn, rounds: int = ROUNDS) -> tuple[float, float]:
    """The best wall time of `rounds` runs, and the best CPU time of this process (what a machine shared
    with other work inflates least)."""
    walls, cpus = [], []
    for _ in range(rounds):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FRAMEWORK_LEDGER_HOME"] = tmp
        path = Path(tmp) / "ledger.sqlite3"
        build(path, N)
        with Ledger.open("bench", path) as led:
            def baseline() -> None:  # sqlite3 reading the promotion rows the metrics read
                led.conn.execute("SELECT env, created_at, direction, committed_at, id FROM promotions "
                                 "WHERE project = 'bench' ORDER BY env, seq").fetchall()

            def query() -> None:
                machine_metrics(led.conn, "bench", str(path), None, START, START + SPAN, "day")

            result = machine_metrics(led.conn, "bench", str(path), None, START, START + SPAN, "day")
            (t_base, c_base), (t_query, c_query) = best(baseline), best(query)
    prod = next(e for e in result.environments if e.env == "prod")
    print(f"prod: {prod.deployment_frequency.count} deploys, change failure rate "
          f"{prod.change_failure_rate.rate:.3f}, {len(prod.series)} day buckets")
    print(f"ledger metrics over {N:,} promotions: {t_query * 1000:.1f} ms (aim < 500 ms); sqlite3 reading "
          f"the rows {t_base * 1000:.1f} ms; ratio {t_query / t_base:.2f}x")
    print(f"CPU time of this process: metrics {c_query * 1000:.1f} ms, sqlite3 reading the rows {c_base * 1000:.1f} ms")


if __name__ == "__main__":
    main()
