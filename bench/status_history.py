"""Bench: the ledger reads of `env status --history` on 100,000 promotions vs 1,000 (aim: ratio <= 1.5).

Both ledgers are real SQLite files built in a temp dir; the same status reads (current promotion,
newest promotion, one history page and the next page by cursor) run against each.
BENCH_SMOKE=1: 100 vs 1,000 promotions, 2 rounds (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.deploy.status import _history  # noqa: E402
from engine.ledger.store import Ledger  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
SMALL, LARGE, ROUNDS = (100, 1_000, 2) if SMOKE else (1_000, 100_000, 200)


def build(path: Path, n: int) -> None:
    led = Ledger.open("bench", path)
    images = json.dumps({"api": {"kind": "file", "coordinate": "files:api", "digest": "sha256:" + "a" * 64}})
    rows = [(f"prm_{i:08d}", "bench", "prod" if i % 2 else "dev", f"v{i}", images, "AHEAD", "u@h", float(i))
            for i in range(n)]
    led.conn.execute("BEGIN")
    led.conn.executemany("INSERT INTO promotions (id, project, env, release, images, direction, who, created_at)"
                         " VALUES (?,?,?,?,?,?,?,?)", rows)
    last = next(r[0] for r in reversed(rows) if r[2] == "prod")
    led.conn.execute("INSERT INTO current (project, env, promotion_id) VALUES ('bench', 'prod', ?)", (last,))
    led.conn.execute("COMMIT")
    led.close()


def reads(led: Ledger) -> None:
    led.current("prod")
    led.history("prod", limit=1)
    page = _history(led, "prod", 20, None)
    _history(led, "prod", 20, page["next_before"])


def best(led: Ledger, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        reads(led)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FRAMEWORK_LEDGER_HOME"] = tmp
        small, large = Path(tmp) / "small.sqlite3", Path(tmp) / "large.sqlite3"
        build(small, SMALL)
        build(large, LARGE)
        with Ledger.open("bench", small) as a, Ledger.open("bench", large) as b:
            t_small, t_large = best(a), best(b)
    print(f"status --history reads: {SMALL:,} promotions {t_small * 1000:.3f} ms, {LARGE:,} promotions "
          f"{t_large * 1000:.3f} ms; ratio {t_large / t_small:.2f}x (aim <= 1.5x)")


if __name__ == "__main__":
    main()
