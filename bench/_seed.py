"""The project the authoring benches measure on (not a bench: `_`-prefixed names are skipped by
tests/test_bench_smoke.py): `project new` with its first service replaced by N services of M RPCs each,
optionally generated. One copy for bench/generate.py, scaffold.py, scaffold_operator.py, lint.py,
frontends.py and project.py."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
MODULE = "example.com/bench"


def proto(i: int, rpcs: int, module: str = MODULE) -> str:
    """Service `S<i>Service` in package `s<i>.v1` with RPCs `Do0..Do<rpcs-1>` (or one `Ping` when rpcs=0)."""
    names = [f"Do{j}" for j in range(rpcs)] or ["Ping"]
    methods = "\n".join(f"  rpc {n}({n}Request) returns ({n}Response) {{}}" for n in names)
    messages = "\n".join(f"message {n}Request {{\n  string id = 1;\n  int64 n = 2;\n}}\n\n"
                         f"message {n}Response {{\n  string id = 1;\n}}\n" for n in names)
    return (f'syntax = "proto3";\n\npackage s{i}.v1;\n\noption go_package = "{module}/gen/s{i}/v1;s{i}v1";\n\n'
            f"service S{i}Service {{\n{methods}\n}}\n\n{messages}")


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def seed_project(base: Path, services: int, rpcs: int, *, run_generate: bool = True, name: str = "bench") -> Path:
    """`project new <name>` under `base` (observability off), its first service replaced by `services`
    services of `rpcs` RPCs; then `generate` unless `run_generate` is false. Returns the project root."""
    from engine.authoring.generate import generate
    from engine.authoring.new import new_project
    from engine.project import Project

    new_project(name, parent=base, module=MODULE, disable=["observability"])
    root = base / name
    shutil.rmtree(root / "proto" / name)
    shutil.rmtree(root / "internal" / "handlers" / name)
    for i in range(services):
        path = root / "proto" / f"s{i}" / "v1" / f"s{i}.proto"
        path.parent.mkdir(parents=True)
        path.write_text(proto(i, rpcs))
    if run_generate:
        generate(Project(root))
    return root
