"""Bench: `framework generate` on a project of 30 services x 10 RPCs (docs/reference-authoring.md#speed).

Baselines, measured in the same run on the same protos:
- `buf generate` alone (protoc-gen-go + protoc-gen-connect-go): aim generate <= 1.5x of it;
- the first `generate`: aim a no-change `generate` <= 0.2x of it (unchanged inputs are skipped).
Each figure is the best of a few rounds; the first generate of every round starts from a fresh copy.
BENCH_SMOKE=1: 2 services x 2 RPCs, one round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402
from engine.authoring import tools  # noqa: E402
from engine.authoring.generate import generate  # noqa: E402
from engine.project import Project  # noqa: E402

SERVICES, RPCS, ROUNDS = (2, 2, 1) if SMOKE else (30, 10, 3)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
        base = Path(tmp)
        seed = seed_project(base, SERVICES, RPCS, run_generate=False)
        buf = tools.find("buf")
        env = tools.tool_env()
        first, baseline, again = [], [], []
        for r in range(ROUNDS):
            work = Path(shutil.copytree(seed, base / f"round{r}"))
            baseline.append(timed(lambda w=work: subprocess.run(
                [buf, "generate", "-o", str(w / "bufonly")], cwd=w, env=env, check=True, capture_output=True)))
            first.append(timed(lambda w=work: generate(Project(w))))
            again.append(timed(lambda w=work: generate(Project(w))))
        probe = generate(Project(base / "round0"))
        assert probe.up_to_date, "a no-change generate must skip"
        stubs = len(list((base / "round0" / "internal" / "handlers").rglob("rpc_*.go")))
        assert stubs == SERVICES * RPCS, stubs
        f, b, a = min(first), min(baseline), min(again)
        print(f"generate, {SERVICES} services x {RPCS} RPCs: {f * 1000:.0f} ms; buf generate alone: {b * 1000:.0f} ms; "
              f"ratio {f / b:.2f}x (aim <= 1.5x)")
        print(f"no-change generate: {a * 1000:.0f} ms; ratio to the first {a / f:.3f}x (aim <= 0.2x)")


if __name__ == "__main__":
    main()
