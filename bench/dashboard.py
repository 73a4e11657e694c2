"""Time to first paint of the dashboard on the demo project, against a bare Textual app with one
empty DataTable, both measured in the same run as whole processes (import, build, first frame).

Each app runs headless and exits on Textual's `Ready` event (sent once the first frame is shown).
Aim (issue 8): <= 1.5x.

    python bench/dashboard.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BARE = """
from textual.app import App
from textual.widgets import DataTable
class Bare(App):
    def compose(self):
        yield DataTable()
    def on_ready(self):
        self.exit()
Bare().run(headless=True, size=(120, 36))
"""

DASHBOARD = """
from app.dashboard import Dashboard
from app.settings import DashboardSettings
class FirstPaint(Dashboard):
    def on_ready(self):
        self.exit()
FirstPaint(settings=DashboardSettings(watch=False)).run(headless=True, size=(120, 36))
"""


def wall(code: str, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.decode()[-800:])
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        shutil.copytree(REPO / "examples" / "demo", demo)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache"), "HOME": tmp}
        wall(DASHBOARD, demo, env)  # warm-up: fills the KCL cache and the bytecode caches
        wall(BARE, demo, env)
        bare, dash = [], []
        for _ in range(args.runs):
            bare.append(wall(BARE, demo, env))
            dash.append(wall(DASHBOARD, demo, env))
    b, d = statistics.median(bare), statistics.median(dash)
    print(f"{'app':40} {'median ms':>10} {'ratio':>7}")
    print(f"{'bare Textual app + empty DataTable':40} {b * 1000:10.1f} {1.0:6.2f}x")
    print(f"{'dashboard on examples/demo':40} {d * 1000:10.1f} {d / b:6.2f}x   aim <= 1.5x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
