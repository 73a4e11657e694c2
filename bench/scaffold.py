"""Bench: each scaffold of docs/reference-authoring.md#workers-and-webhooks on a project of 30 services x 10 RPCs.

Aims (docs/reference-authoring.md#speed): a scaffold with generation <= 1.5x of the `generate` it
triggers (baseline: `generate --full` of the project the scaffold produced, in the same run: the same
protos, the same new inputs); `scaffold worker --no-generate` < 300 ms. Each figure is the best of a
few rounds, each on a fresh copy. BENCH_SMOKE=1: 2 services, one round, two scaffolds (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.authoring.generate import generate  # noqa: E402
from engine.authoring.new import new_project  # noqa: E402
from engine.authoring.packages import scaffold_library, scaffold_package  # noqa: E402
from engine.authoring.scaffold_workloads import scaffold_webhook, scaffold_worker  # noqa: E402
from engine.project import Project  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"
SERVICES, ROUNDS = (2, 1) if SMOKE else (30, 3)

SCAFFOLDS: dict[str, Callable[[Project], object]] = {
    "worker": lambda p: scaffold_worker(p, "mailer"),
    "webhook": lambda p: scaffold_webhook(p, "gh", service="s0", sender="github"),
    "package": lambda p: scaffold_package(p, "pricing"),
    "adapter": lambda p: scaffold_package(p, "payments", type_="adapter", by="scaffold adapter"),
    "package --kind eventbus": lambda p: scaffold_package(p, "bus", kind="eventbus"),
    "library": lambda p: scaffold_library(p, "textutil"),
}


def _proto(module: str, i: int, rpcs: int = 10) -> str:
    methods = "\n".join(f"  rpc Do{j}(Do{j}Request) returns (Do{j}Response) {{}}" for j in range(rpcs))
    msgs = "\n".join(f"message Do{j}Request {{\n  string id = 1;\n}}\n\nmessage Do{j}Response {{}}\n"
                     for j in range(rpcs))
    return (f'syntax = "proto3";\n\npackage s{i}.v1;\n\noption go_package = "{module}/gen/s{i}/v1;s{i}v1";\n\n'
            f"service S{i}Service {{\n{methods}\n}}\n\n{msgs}")


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-scaffold-") as tmp:
        base = Path(tmp)
        new_project("bench", parent=base, module="example.com/bench", disable=["observability"])
        seed = base / "bench"
        shutil.rmtree(seed / "proto" / "bench")
        shutil.rmtree(seed / "internal" / "handlers" / "bench")
        for i in range(SERVICES):
            path = seed / "proto" / f"s{i}" / "v1" / f"s{i}.proto"
            path.parent.mkdir(parents=True)
            path.write_text(_proto("example.com/bench", i))
        generate(Project(seed))
        n = 0
        worst = 0.0
        for what, scaffold in SCAFFOLDS.items():
            if SMOKE and what not in ("worker", "library"):
                continue  # smoke: the bench still runs end to end, in seconds
            took, baseline = [], []
            for _ in range(ROUNDS):
                n += 1
                work = Path(shutil.copytree(seed, base / f"r{n}", symlinks=True))
                took.append(_timed(lambda w=work, s=scaffold: s(Project(w))))
                baseline.append(_timed(lambda w=work: generate(Project(w), full=True)))
            t, b = min(took), min(baseline)
            worst = max(worst, t / b)
            print(f"scaffold {what}, {SERVICES} services: {t * 1000:.0f} ms; its generate: {b * 1000:.0f} ms; "
                  f"ratio {t / b:.2f}x (aim <= 1.5x)")
        quick = []
        for _ in range(ROUNDS):
            n += 1
            work = Path(shutil.copytree(seed, base / f"r{n}", symlinks=True))
            quick.append(_timed(lambda w=work: scaffold_worker(Project(w), "mailer", no_generate=True)))
        print(f"scaffold worker --no-generate, {SERVICES} services: {min(quick) * 1000:.0f} ms (aim < 300 ms)")
        print(f"worst ratio {worst:.2f}x (aim <= 1.5x)")


if __name__ == "__main__":
    main()
