"""Bench: the `framework project` inspection and upgrade commands on a generated project of 30 services x 10 RPCs
(docs/reference-project.md#project-map, docs/reference-project.md#speed).

- `project map` in a git checkout, against `git ls-files` plus reading and hashing every file it lists (sha256),
  measured in the same run (what any ownership map has to do at least once): the first map (every file read, the
  cache written), a warm map (the cache holds every file; none is read; aim <= 0.5x of the baseline), a map after
  one file changed (exactly that file is read again), and `framework project map --json` as a command, warm (aim
  < 300 ms wall), beside `framework project scaffolded --json` (the start-up every `project` command pays).
- `project shapes` as the user runs it (a process), and as the engine call alone, caches warm (the Go reader
  built, the per-file source cache filled by a first run): aim < 300 ms; baseline, in the same run on the
  same project: `framework project scaffolded --json` (the command floor: startup, finding the project, one
  small JSON read). Also shown: the first (cold) run and a run after one Go file changed (only that file is
  read again; docs/reference-project.md#project-shapes).
- `project upgrade --check` from the previous shipped release (0.0.9) to this one, against a full `generate`
  (`--full`: compiles even when nothing changed) of the same project at its pin, measured in the same run:
  aim <= 1.2x.
Each figure is the best of a few rounds. BENCH_SMOKE=1: 2 services x 2 RPCs, one round
(tests/test_bench_smoke.py).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402

SERVICES, RPCS, ROUNDS = (2, 2, 1) if SMOKE else (30, 10, 3)
OLD = "0.0.9"
FRAMEWORK = str(Path(sys.executable).with_name("framework"))


def _run(root: Path, *args: str) -> None:
    proc = subprocess.run([FRAMEWORK, "project", *args, "--json"], cwd=root, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"framework project {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")


def shapes_figure(base: Path) -> None:
    from engine.inspection.shapes import project_shapes
    from engine.project import Project

    root = seed_project(base, SERVICES, RPCS, name="shapes")  # a new root: its source cache starts empty
    cold = timed(lambda: _run(root, "shapes"))
    warm = min(timed(lambda: _run(root, "shapes")) for _ in range(ROUNDS))
    floor = min(timed(lambda: _run(root, "scaffolded")) for _ in range(ROUNDS))
    engine = min(timed(lambda: project_shapes(Project(root))) for _ in range(ROUNDS))
    stub = next((root / "internal" / "handlers").rglob("rpc_*.go"))
    stub.write_text(stub.read_text() + "\n// edited\n")
    changed = timed(lambda: _run(root, "shapes"))
    print(f"project shapes, {SERVICES} services x {RPCS} RPCs: cold {cold * 1000:.0f} ms; one Go file changed "
          f"{changed * 1000:.0f} ms; the engine call alone, warm: {engine * 1000:.0f} ms")
    print(f"project shapes warm: {warm * 1000:.0f} ms (aim < 300 ms); project scaffolded: {floor * 1000:.0f} ms; "
          f"ratio {warm / floor:.2f}x")


def _baseline(root: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in listed:
        if rel and (root / rel).is_file():
            hashlib.sha256((root / rel).read_bytes()).hexdigest()


def map_figure(base: Path) -> None:
    from engine.inspection.hashcache import CACHE
    from engine.inspection.map import project_map
    from engine.project import Project

    root = seed_project(base, SERVICES, RPCS, name="mapped")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "seed"], cwd=root, check=True)
    project = Project(root)
    files = project_map(project).files
    baseline, cold, warm, command, startup = [], [], [], [], []
    for _ in range(ROUNDS):
        baseline.append(timed(lambda: _baseline(root)))
        (root / CACHE).unlink(missing_ok=True)
        cold.append(timed(lambda: project_map(project)))
        warm.append(timed(lambda: project_map(project)))
        command.append(timed(lambda: subprocess.run([FRAMEWORK, "project", "map", "--json"], cwd=root,
                                                    capture_output=True, check=True)))
        startup.append(timed(lambda: subprocess.run([FRAMEWORK, "project", "scaffolded", "--json"],
                                                    cwd=root, capture_output=True, check=True)))
    handler = next((root / "internal" / "handlers").rglob("rpc_*.go"))
    handler.write_text(handler.read_text() + "\n// changed\n")
    reread = project_map(project).read
    b, c, w, cmd = min(baseline), min(cold), min(warm), min(command)
    print(f"project: {SERVICES} services x {RPCS} RPCs, {files} files mapped")
    print(f"baseline (git ls-files + sha256 of every file): {b * 1000:.1f} ms")
    print(f"first map (every file read, cache written): {c * 1000:.1f} ms; ratio {c / b:.2f}x")
    print(f"project map, warm cache: {w * 1000:.1f} ms; ratio {w / b:.2f}x (aim <= 0.5x)")
    print(f"after one file changed: {reread} file read again (aim 1)")
    print(f"framework project map --json, warm: {cmd * 1000:.0f} ms wall (aim < 300 ms); "
          f"framework project scaffolded --json: {min(startup) * 1000:.0f} ms")
    if reread != 1:
        raise SystemExit(f"a warm map after one change read {reread} files, not 1")


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
    # 0.0.9 -> 0.1.0: the bootstrap and each service's handler_test.go change; bootstrap_test.go and each
    # service's harness_test.go are new (docs/reference-project.md#template-versions)
    assert result.summary.get("changed") == 1 + SERVICES and result.summary.get("new") == 1 + SERVICES, result.summary
    f, c = min(full), min(check)
    print(f"project upgrade --check, {SERVICES} services x {RPCS} RPCs: {c * 1000:.0f} ms; generate --full: "
          f"{f * 1000:.0f} ms; ratio {c / f:.2f}x (aim <= 1.2x)")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-project-") as tmp:
        map_figure(Path(tmp))
        shapes_figure(Path(tmp))
        upgrade_figure(Path(tmp))


if __name__ == "__main__":
    main()
