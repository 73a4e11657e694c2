"""Deploy of an unchanged release to a Compose environment: `framework env deploy <env> <v> --yes` of the
release already running (re-deploying it appends nothing; it still applies and waits) against
`docker-compose up -d` of the same compose file alone, measured in the same run on the same real
Docker daemon (tests/compose_daemon.py: Debian's dockerd, docker-registry, a busybox image pushed
there). Aim: <= 1.3x (docs/reference-cluster.md#compose-target).

The deploy's extra work over Compose's own: the interpreter and its imports, evaluating and rendering
the KCL, the ledger's compare-and-set and apply record, one `docker image inspect` (are the images
there?), and the rollout wait (one `docker ps` + `docker inspect`: every container was running from
before, so ready at once).

    python bench/compose.py    # BENCH_ROUNDS=7
    BENCH_SMOKE=1: one round (tests/test_bench_smoke.py)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # one round, no aim (tests/test_bench_smoke.py)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1" if SMOKE else "7"))
AIM = 1.3


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return took


def main() -> int:
    from compose_daemon import TestDaemon, missing_tools
    from deploy_fixtures import FRAMEWORK_BIN, make_demo
    from test_compose_deploy import KCL, Box

    from engine.processes import free_port

    missing = missing_tools()
    if missing:
        print(f"bench/compose.py needs Debian's {', '.join(missing)}: `make system-deps` installs them")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-compose-") as tmp:
        daemon = TestDaemon(Path(tmp) / "dockerd")
        try:
            daemon.start()
            image, digest = daemon.build_and_push("demo/api", "v1")
            demo = make_demo(Path(tmp))
            demo.env.update(daemon.env())
            project, port = f"bench{free_port()}", free_port()
            (demo.root / "deploy" / "kcl" / "box").mkdir(parents=True)
            (demo.root / "deploy" / "kcl" / "box" / "main.k").write_text(KCL.format(
                env="box", kind="self_managed", project=project, image=image, port=port))
            Box(daemon, demo, project, port, image, digest).release("v1", digest)
            deploy = [FRAMEWORK_BIN, "env", "deploy", "box", "v1", "--yes", "--json"]
            first = timed(deploy, demo.root, demo.env)
            compose_file = Path(demo.env["FRAMEWORK_LEDGER_HOME"]) / "projects" / "demo" / "runtime" / "box" / \
                "compose.yaml"
            alone = ["docker-compose", "-p", project, "-f", str(compose_file), "up", "-d", "--remove-orphans"]
            baseline, subject = [], []
            for _ in range(ROUNDS):
                baseline.append(timed(alone, demo.root, demo.env))
                subject.append(timed(deploy, demo.root, demo.env))
        finally:
            daemon.stop()
    b, s = statistics.median(baseline), statistics.median(subject)
    print(f"first deploy (pull + up -d + rollout): {first:.2f}s")
    print(f"docker-compose up -d alone (nothing to change): median {b:.3f}s ({ROUNDS} rounds)")
    print(f"framework env deploy of the unchanged release: median {s:.3f}s")
    ratio = s / b
    verdict = "smoke: no aim" if SMOKE else ("ok" if ratio <= AIM else "ABOVE AIM")
    print(f"compose unchanged deploy / docker-compose up -d alone: ratio {ratio:.2f}x (aim <= {AIM}x): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
