"""Benchmark: `env render` of a 200-workload environment against a bare kcl-lib exec_program.

Aim: <= 1.5x the bare evaluation cold (empty cache) and <= 0.2x warm (cached).
Both are measured in this run, on the same file, in this process (kcl-lib already imported).
BENCH_SMOKE=1: 5 workloads, one round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
WORKLOADS = 5 if SMOKE else 200
ROUNDS = 1 if SMOKE else 7


def _project(base: Path) -> Path:
    root = base / "bench-project"
    (root / "deploy" / "kcl" / "big").mkdir(parents=True)
    (root / "framework.yaml").write_text("name: bench\n")
    workloads = "\n".join(
        f"""        framework.Workload {{
            name = "svc-{i}"
            image = "registry.example.test/bench/svc-{i}"
            env = {{INDEX = "{i}", MODE = _mode}}
            secrets = ["DATABASE_URL"]
            ports = [framework.Port {{port = {8000 + i}}}]
            health = framework.HealthCheck {{}}
            replicas = 2
            routes = [framework.Route {{host = "svc-{i}.bench.example.test"}}]
        }}"""
        for i in range(WORKLOADS)
    )
    (root / "deploy" / "kcl" / "big" / "main.k").write_text(
        'import framework\n\n_mode = option("mode", type="str", default="bench", help="mode")\n\n'
        "environment = framework.Environment {\n"
        '    name = "big"\n    kind = "self_managed"\n'
        '    target = framework.K8sCluster {context = "k3d-bench"}\n'
        f"    workloads = [\n{workloads}\n    ]\n}}\n"
    )
    return root


def _time(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="kcl-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(base / "cache")
    os.environ["HOME"] = str(base / "home")
    try:
        from engine.environments.render.pipeline import render_environment
        from engine.kcl.evaluate import external_pkgs, kcl_api
        from engine.project import find_project

        root = _project(base)
        project = find_project(root)
        main_k = root / "deploy" / "kcl" / "big" / "main.k"
        api = kcl_api()
        args = api.ExecProgramArgs(
            k_filename_list=[str(main_k)], work_dir=str(main_k.parent), external_pkgs=external_pkgs()
        )

        def bare() -> None:
            result = api.API().exec_program(args)
            assert not result.err_message, result.err_message

        def render() -> None:
            rendered = render_environment(project, "big")
            assert len(rendered.objects) == 1 + 4 * WORKLOADS

        bare()  # load kcl-lib's native library once, outside the timings
        bare_times, cold_times, warm_times = [], [], []
        for _ in range(ROUNDS):
            bare_times.append(_time(bare))
            shutil.rmtree(base / "cache" / "framework" / "kcl", ignore_errors=True)
            cold_times.append(_time(render))
            warm_times.append(_time(render))
        b, c, w = (statistics.median(t) for t in (bare_times, cold_times, warm_times))
        print(f"workloads: {WORKLOADS}  rounds: {ROUNDS}  (medians)")
        print(f"bare exec_program : {b * 1000:8.1f} ms")
        print(f"render, cold cache: {c * 1000:8.1f} ms   ratio {c / b:5.2f}x  (aim <= 1.5x)")
        print(f"render, warm cache: {w * 1000:8.1f} ms   ratio {w / b:5.2f}x  (aim <= 0.2x)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
