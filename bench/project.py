"""Bench: `framework project shapes` on a project of 30 services x 10 RPCs (docs/reference-project.md#project-shapes).

Measured as the user runs it (a process), and as the engine call alone, caches warm (the Go reader
built, the per-file source cache filled by a first run): aim < 300 ms. Baseline, in the same run on the
same project: `framework project scaffolded --json` (the command floor: startup, finding the project,
one small JSON read). Also shown: the first (cold) run and a run after one Go file changed (only that
file is read again).
BENCH_SMOKE=1: 2 services x 2 RPCs, one round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402

SERVICES, RPCS, ROUNDS = (2, 2, 1) if SMOKE else (30, 10, 5)
FRAMEWORK = str(Path(sys.executable).with_name("framework"))


def _run(root: Path, *args: str) -> None:
    proc = subprocess.run([FRAMEWORK, "project", *args, "--json"], cwd=root, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"framework project {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")


def shapes(base: Path) -> None:
    root = seed_project(base, SERVICES, RPCS)
    cold = timed(lambda: _run(root, "shapes"))
    warm = min(timed(lambda: _run(root, "shapes")) for _ in range(ROUNDS))
    floor = min(timed(lambda: _run(root, "scaffolded")) for _ in range(ROUNDS))
    from engine.inspection.shapes import project_shapes
    from engine.project import Project

    engine = min(timed(lambda: project_shapes(Project(root))) for _ in range(ROUNDS))
    stub = next((root / "internal" / "handlers").rglob("rpc_*.go"))
    stub.write_text(stub.read_text() + "\n// edited\n")
    changed = timed(lambda: _run(root, "shapes"))
    print(f"project shapes, {SERVICES} services x {RPCS} RPCs: cold {cold * 1000:.0f} ms; one Go file changed "
          f"{changed * 1000:.0f} ms; the engine call alone, warm: {engine * 1000:.0f} ms")
    print(f"project shapes warm: {warm * 1000:.0f} ms (aim < 300 ms); project scaffolded: {floor * 1000:.0f} ms; "
          f"ratio {warm / floor:.2f}x")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-project-") as tmp:
        shapes(Path(tmp))  # a new root: its source cache starts empty


if __name__ == "__main__":
    main()
