"""Bench: each scaffold of docs/reference-authoring.md#workers-and-webhooks on a project of 30 services x 10 RPCs.

Aims (docs/reference-authoring.md#speed): a scaffold with generation <= 1.5x of the `generate` it
triggers (baseline: `generate --full` of the project the scaffold produced, in the same run: the same
protos, the same new inputs); `scaffold worker --no-generate` < 300 ms. Each figure is the best of a
few rounds, each on a fresh copy. BENCH_SMOKE=1: 2 services, one round, two scaffolds (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402
from engine.authoring.generate import generate  # noqa: E402
from engine.authoring.packages import scaffold_library, scaffold_package  # noqa: E402
from engine.authoring.scaffold_workloads import scaffold_webhook, scaffold_worker  # noqa: E402
from engine.project import Project  # noqa: E402

SERVICES, ROUNDS = (2, 1) if SMOKE else (30, 3)

SCAFFOLDS: dict[str, Callable[[Project], object]] = {
    "worker": lambda p: scaffold_worker(p, "mailer"),
    "webhook": lambda p: scaffold_webhook(p, "gh", service="s0", sender="github"),
    "package": lambda p: scaffold_package(p, "pricing"),
    "adapter": lambda p: scaffold_package(p, "payments", type_="adapter", by="scaffold adapter"),
    "package --kind eventbus": lambda p: scaffold_package(p, "bus", kind="eventbus"),
    "library": lambda p: scaffold_library(p, "textutil"),
}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-scaffold-") as tmp:
        base = Path(tmp)
        seed = seed_project(base, SERVICES, 10)
        n = 0
        worst = 0.0
        for what, scaffold in SCAFFOLDS.items():
            if SMOKE and what not in ("worker", "library"):
                continue  # smoke: the bench still runs end to end, in seconds
            took, baseline = [], []
            for _ in range(ROUNDS):
                n += 1
                work = Path(shutil.copytree(seed, base / f"r{n}", symlinks=True))
                took.append(timed(lambda w=work, s=scaffold: s(Project(w))))
                baseline.append(timed(lambda w=work: generate(Project(w), full=True)))
            t, b = min(took), min(baseline)
            worst = max(worst, t / b)
            print(f"scaffold {what}, {SERVICES} services: {t * 1000:.0f} ms; its generate: {b * 1000:.0f} ms; "
                  f"ratio {t / b:.2f}x (aim <= 1.5x)")
        quick = []
        for _ in range(ROUNDS):
            n += 1
            work = Path(shutil.copytree(seed, base / f"r{n}", symlinks=True))
            quick.append(timed(lambda w=work: scaffold_worker(Project(w), "mailer", no_generate=True)))
        print(f"scaffold worker --no-generate, {SERVICES} services: {min(quick) * 1000:.0f} ms (aim < 300 ms)")
        print(f"worst ratio {worst:.2f}x (aim <= 1.5x)")


if __name__ == "__main__":
    main()
