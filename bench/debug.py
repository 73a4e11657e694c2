"""Debug sessions (docs/reference-debug.md), each figure against a baseline measured in the same run.

1. Time to a breakpoint: `debug start` + `break` + waiting for the stop, against running the same
   program plainly until it first executes the same line (ratio).
2. One `step` as a whole CLI process (`framework debug step --json`), against `python -c pass`
   and `python -c "import typer"` (what any Typer command pays before it does anything), and the
   same step as an in-process call to the broker (what the step itself costs). Aim: < 150 ms.
3. One step inside the dashboard: key `n` pressed until the Debug screen shows the new line.
   Aim: < 50 ms.

    python bench/debug.py [--runs N]        # BENCH_SMOKE=1: one run of each (tests/test_bench_smoke.py)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
sys.path.insert(0, str(REPO))

PROGRAM = '''import os
import sys
import time


def inner(x):
    y = x + 1  # INNER
    return y * 2


def outer(n):
    a = inner(n)  # CALL
    b = a + 1
    return b


if __name__ == "__main__":
    first = True
    while True:
        outer(4)
        if first and os.environ.get("BENCH_PLAIN"):
            print("reached", flush=True)  # the plain run's marker: the CALL line has executed
            sys.exit(0)
        first = False
        time.sleep(0.001)
'''


GO_PROGRAM = """package main

import "time"

func inner(x int) int {
	y := x + 1 // INNER
	return y * 2
}

func main() {
	total := 0
	for {
		total += inner(4) // CALL
		time.Sleep(time.Millisecond)
	}
}
"""


def framework(root: Path, env: dict[str, str], *args: str) -> dict:
    out = subprocess.run([str(BIN / "framework"), "debug", *args, "--json"], cwd=root, env=env,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    doc = json.loads(out.stdout)
    if not doc["ok"] and args[0] not in ("continue",):
        raise SystemExit(f"debug {' '.join(args)}: {doc['error']}")
    return doc


def wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def time_to_breakpoint(root: Path, env: dict[str, str], line: int) -> float:
    start = time.perf_counter()
    framework(root, env, "start", "calc.py")
    framework(root, env, "break", f"calc.py:{line}")
    doc = framework(root, env, "continue", "--timeout", "30")
    elapsed = time.perf_counter() - start
    assert doc["stopped"]["line"] == line, doc
    framework(root, env, "stop")
    return elapsed


def time_plain(root: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "calc.py"], cwd=root, env={**env, "BENCH_PLAIN": "1"},
                         capture_output=True, text=True, check=True)
    assert "reached" in out.stdout
    return time.perf_counter() - start


def dashboard_steps(root: Path, runs: int) -> dict[str, list[float]]:
    """Key `n` on the Debug screen: from the key's action to the source pane showing the new line,
    and to stack and variables filled; plus Pilot's whole press round trip (which includes its
    own waits for the app to go idle)."""
    import screens.debug.screen as debug_screen
    from app.dashboard import Dashboard
    from app.settings import deterministic_settings
    from screens.debug.widgets import SourcePane

    marks: dict[str, float] = {}
    original_resume = debug_screen.DebugScreen.action_resume
    original_show = SourcePane.show
    original_fill = debug_screen.DebugScreen._fill_stopped

    def action_resume(self: Any, op: str) -> None:
        marks["key"] = time.perf_counter()
        original_resume(self, op)

    def show(self: Any, path: Any, current: Any, breakpoints: Any, follow: bool) -> None:
        changed = current != self.current
        original_show(self, path, current, breakpoints, follow)
        if changed and "shown" not in marks:
            marks["shown"] = time.perf_counter()

    def fill(self: Any, message: Any, root: str) -> None:
        original_fill(self, message, root)
        marks["filled"] = time.perf_counter()

    debug_screen.DebugScreen.action_resume = action_resume  # type: ignore[method-assign]
    SourcePane.show = show  # type: ignore[method-assign]
    debug_screen.DebugScreen._fill_stopped = fill  # type: ignore[method-assign]
    samples: dict[str, list[float]] = {"shown": [], "filled": [], "press": []}

    async def scenario() -> None:
        app = Dashboard(project_dir=root, settings=deterministic_settings(refresh_seconds=3600))
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("8")
            while not (app.current_mode == "debug" and (getattr(app.screen, "status", None) or {}).get("stopped")):
                await pilot.pause(0.01)
            screen = app.screen
            for _ in range(runs):
                marks.clear()
                start = time.perf_counter()
                await pilot.press("n")
                while "filled" not in marks or screen.busy is not None:
                    await asyncio.sleep(0.001)
                samples["press"].append(time.perf_counter() - start)
                samples["shown"].append(marks["shown"] - marks["key"])
                samples["filled"].append(marks["filled"] - marks["key"])

    asyncio.run(scenario())
    return samples


def go_steps(root: Path, env: dict[str, str], runs: int, broker_call: Any, project: Any) -> tuple[list[float], ...]:
    """The same step with delve on a small Go program (CLI process, in-process broker call)."""
    loop = root / "goloop"
    loop.mkdir()
    (loop / "go.mod").write_text("module example.com/loop\n\ngo 1.22\n")
    (loop / "main.go").write_text(GO_PROGRAM)
    call = next(i for i, t in enumerate(GO_PROGRAM.splitlines(), 1) if "// CALL" in t)
    framework(root, env, "start", "goloop")
    framework(root, env, "break", f"goloop/main.go:{call}")
    framework(root, env, "continue", "--timeout", "60")
    framework(root, env, "clear", "1")
    cli, inproc = [], []
    for _ in range(runs):
        cli.append(wall([str(BIN / "framework"), "debug", "step", "--json"], root, env))
        start = time.perf_counter()
        broker_call(project, "step", {"timeout": 30})
        inproc.append(time.perf_counter() - start)
    framework(root, env, "stop")
    return cli, inproc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1 if SMOKE else 11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        shutil.copytree(REPO / "examples" / "demo", root, ignore=shutil.ignore_patterns(".framework", "__pycache__"))
        (root / "calc.py").write_text(PROGRAM)
        env = {**os.environ, "HOME": tmp, "XDG_CACHE_HOME": f"{tmp}/cache", "FRAMEWORK_LEDGER_HOME": f"{tmp}/ledger"}
        call = next(i for i, t in enumerate(PROGRAM.splitlines(), 1) if "# CALL" in t)
        to_bp, plain = [], []
        for _ in range(max(1 if SMOKE else 3, args.runs // 3)):  # interleaved: drift hits both alike
            plain.append(time_plain(root, env))
            to_bp.append(time_to_breakpoint(root, env, call))
        framework(root, env, "start", "calc.py")
        framework(root, env, "break", f"calc.py:{call}")
        framework(root, env, "continue", "--timeout", "30")
        framework(root, env, "clear", "1")
        os.chdir(root)
        from engine.debug.session import call as broker_call
        from engine.project import find_project

        project = find_project(root)
        cli, baseline, typer_only, inproc = [], [], [], []
        for _ in range(args.runs):
            baseline.append(wall([sys.executable, "-c", "pass"], root, env))
            typer_only.append(wall([sys.executable, "-c", "import typer"], root, env))
            cli.append(wall([str(BIN / "framework"), "debug", "step", "--json"], root, env))
            start = time.perf_counter()
            broker_call(project, "step", {"timeout": 30})
            inproc.append(time.perf_counter() - start)
        dash = dashboard_steps(root, args.runs)
        framework(root, env, "stop")
        go_cli, go_inproc = go_steps(root, env, args.runs, broker_call, project)

    def ms(values: list[float]) -> float:
        return statistics.median(values) * 1000

    print(f"{'measure':52} {'median ms':>10} {'ratio':>8}")
    print(f"{'plain run until the line executes (baseline)':52} {ms(plain):10.1f} {'1.0x':>8}")
    print(f"{'debug start + break + continue until stopped':52} {ms(to_bp):10.1f} {ms(to_bp) / ms(plain):7.1f}x")
    print(f"{'python -c pass (baseline)':52} {ms(baseline):10.1f} {'1.0x':>8}")
    label = 'python -c "import typer"'
    print(f"{label:52} {ms(typer_only):10.1f} {ms(typer_only) / ms(baseline):7.1f}x")
    print(f"{'framework debug step --json (whole process)':52} {ms(cli):10.1f} {ms(cli) / ms(baseline):7.1f}x"
          f"   aim < 150 ms: {'met' if ms(cli) < 150 else 'missed'}")
    print(f"{'step as an in-process broker call':52} {ms(inproc):10.1f}")
    print(f"{'dashboard: key n until the source shows the new line':52} {ms(dash['shown']):10.1f}"
          f"   aim < 50 ms: {'met' if ms(dash['shown']) < 50 else 'missed'}")
    print(f"{'dashboard: key n until stack and variables are filled':52} {ms(dash['filled']):10.1f}")
    print(f"{'dashboard: Pilot press round trip (its idle waits too)':52} {ms(dash['press']):10.1f}")
    print(f"{'Go (delve): framework debug step --json, whole process':52} {ms(go_cli):10.1f} "
          f"{ms(go_cli) / ms(baseline):7.1f}x")
    print(f"{'Go (delve): step as an in-process broker call':52} {ms(go_inproc):10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
