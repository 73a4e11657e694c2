"""Bench: the `framework project` inspection and upgrade commands on a project of 30 services x 10 RPCs
(docs/reference-project.md#speed).

- `project upgrade --check` from the previous shipped release (0.0.9) to this one, against a full `generate`
  (`--full`: compiles even when nothing changed) of the same project at its pin, measured in the same run:
  aim <= 1.2x.
Each figure is the best of a few rounds. BENCH_SMOKE=1: 2 services x 2 RPCs, one round
(tests/test_bench_smoke.py).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402

SERVICES, RPCS, ROUNDS = (2, 2, 1) if SMOKE else (30, 10, 3)
OLD = "0.0.9"


def upgrade_figure(base: Path) -> None:
    from engine.authoring.generate import generate
    from engine.paths import atomic_write_bytes
    from engine.project import Project
    from engine.upgrade.pin import set_version
    from engine.upgrade.upgrade import upgrade

    root = seed_project(base, SERVICES, RPCS, run_generate=False, name="upgrade")
    config = root / "framework.yaml"
    atomic_write_bytes(config, set_version(config, OLD).encode())
    generate(Project(root))  # the project as release 0.0.9 generated it
    full, check = [], []
    for _ in range(ROUNDS):
        full.append(timed(lambda: generate(Project(root), full=True)))
        check.append(timed(lambda: upgrade(Project(root), check=True)))
    result = upgrade(Project(root), check=True)
    assert result.summary.get("changed") == 1 and result.summary.get("new") == 1, result.summary
    f, c = min(full), min(check)
    print(f"project upgrade --check, {SERVICES} services x {RPCS} RPCs: {c * 1000:.0f} ms; generate --full: "
          f"{f * 1000:.0f} ms; ratio {c / f:.2f}x (aim <= 1.2x)")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-project-") as tmp:
        upgrade_figure(Path(tmp))


if __name__ == "__main__":
    main()
