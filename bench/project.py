"""Bench: `framework project map --json` on a generated project of 30 services x 10 RPCs
(docs/reference-project.md#project-map), in a git checkout.

Baseline, measured in the same run on the same tree: `git ls-files` plus reading and hashing every file it lists
(sha256), what any ownership map has to do at least once. Figures:
- the first map (every file read and hashed, the cache written): ratio to the baseline;
- a warm map (the cache holds every file; none is read): aim <= 0.5x of the baseline;
- a map after one file changed: exactly that file is read again;
- `framework project map --json` as a command, warm: aim < 300 ms wall; beside it `framework project scaffolded
  --json` (the same command start-up, one small JSON record read), what any `project` command costs at least.
Each figure is the best of a few rounds. BENCH_SMOKE=1: 2 services x 2 RPCs, one round (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._seed import SMOKE, seed_project, timed  # noqa: E402
from engine.inspection.hashcache import CACHE  # noqa: E402
from engine.inspection.map import project_map  # noqa: E402
from engine.project import Project  # noqa: E402

SERVICES, RPCS, ROUNDS = (2, 2, 1) if SMOKE else (30, 10, 5)
FRAMEWORK = Path(sys.executable).parent / "framework"


def _baseline(root: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in listed:
        if rel and (root / rel).is_file():
            hashlib.sha256((root / rel).read_bytes()).hexdigest()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-project-") as tmp:
        root = seed_project(Path(tmp), SERVICES, RPCS)
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
            command.append(timed(lambda: subprocess.run([str(FRAMEWORK), "project", "map", "--json"], cwd=root,
                                                        capture_output=True, check=True)))
            startup.append(timed(lambda: subprocess.run([str(FRAMEWORK), "project", "scaffolded", "--json"],
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
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
