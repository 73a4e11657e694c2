"""Bench: deploy plan computation for 1,000 images (aim <= 50 ms).

Baseline, measured in the same run: serialising the same two image maps with json.dumps
(the least any plan over them must do). Prints absolute times and the ratio.
BENCH_SMOKE=1: 50 images, 2 rounds (the script still runs; tests/test_bench_smoke.py).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.deploy.plan import compute_plan  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
N = 50 if SMOKE else 1000
ROUNDS = 2 if SMOKE else 20


def best(fn, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    cur = {f"w{i}": {"kind": "oci", "coordinate": f"r.test/app/w{i}", "digest": f"sha256:{i:064x}"} for i in range(N)}
    new = {k: dict(v, digest=f"sha256:{i * 7:064x}") if i % 3 == 0 else v for i, (k, v) in enumerate(cur.items())}
    new.pop("w1")
    new["w_new"] = {"kind": "oci", "coordinate": "r.test/app/new", "digest": "sha256:" + "f" * 64}
    target = {"version": "v2", "created_at": 2.0, "provenance": {}}
    current_release = {"version": "v1", "created_at": 1.0, "provenance": {}}
    promotion = {"id": "prm_1", "images": cur}
    plan_s = best(lambda: compute_plan("prod", target, new, promotion, current_release, None))
    base_s = best(lambda: (json.dumps(cur, sort_keys=True), json.dumps(new, sort_keys=True)))
    plan = compute_plan("prod", target, new, promotion, current_release, None)
    assert plan is not None and len(plan.images) == N + 1
    print(f"plan for {N} images: {plan_s * 1000:.2f} ms (aim <= 50 ms); "
          f"baseline json.dumps of both maps: {base_s * 1000:.2f} ms; ratio {plan_s / base_s:.1f}x")


if __name__ == "__main__":
    main()
