"""Bench: `framework generate` on a project of 30 services x 10 RPCs (docs/reference-authoring.md#speed).

Baselines, measured in the same run on the same protos:
- `buf generate` alone (protoc-gen-go + protoc-gen-connect-go): aim generate <= 1.5x of it;
- the first `generate`: aim a no-change `generate` <= 0.2x of it (unchanged inputs are skipped).
Each figure is the best of a few rounds; the first generate of every round starts from a fresh copy.
BENCH_SMOKE=1: 2 services x 2 RPCs, one round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.authoring import tools  # noqa: E402
from engine.authoring.generate import generate  # noqa: E402
from engine.authoring.new import new_project  # noqa: E402
from engine.project import Project  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
SERVICES, RPCS, ROUNDS = (2, 2, 1) if SMOKE else (30, 10, 3)


def _proto(module: str, i: int) -> str:
    rpcs = "\n".join(f"  rpc Do{j}(Do{j}Request) returns (Do{j}Response) {{}}" for j in range(RPCS))
    msgs = "\n".join(f"message Do{j}Request {{\n  string id = 1;\n  int64 n = 2;\n}}\n\n"
                     f"message Do{j}Response {{\n  string id = 1;\n}}\n" for j in range(RPCS))
    return (f'syntax = "proto3";\n\npackage s{i}.v1;\n\noption go_package = "{module}/gen/s{i}/v1;s{i}v1";\n\n'
            f"service S{i}Service {{\n{rpcs}\n}}\n\n{msgs}")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
        base = Path(tmp)
        new_project("bench", parent=base, module="example.com/bench", disable=["observability"])
        seed = base / "bench"
        shutil.rmtree(seed / "proto" / "bench")
        shutil.rmtree(seed / "internal" / "handlers" / "bench")
        for i in range(SERVICES):
            path = seed / "proto" / f"s{i}" / "v1" / f"s{i}.proto"
            path.parent.mkdir(parents=True)
            path.write_text(_proto("example.com/bench", i))
        buf = tools.find("buf")
        env = tools.tool_env()
        first, baseline, again = [], [], []
        for r in range(ROUNDS):
            work = Path(shutil.copytree(seed, base / f"round{r}"))
            baseline.append(_timed(lambda w=work: subprocess.run(
                [buf, "generate", "-o", str(w / "bufonly")], cwd=w, env=env, check=True, capture_output=True)))
            first.append(_timed(lambda w=work: generate(Project(w))))
            again.append(_timed(lambda w=work: generate(Project(w))))
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
