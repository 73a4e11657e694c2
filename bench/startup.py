"""Startup cost of headless commands against `python -c pass`, measured in the same run.

Prints the median wall time of each command and its ratio to the baseline. Aims:
`framework --help` <= 8x, a shell completion request (`framework env build <TAB>`, answered without
Typer: README.md#progress-and-shell-completion) <= 8x and `framework env list --json` <= 5x
(answered without Typer, pydantic or a YAML parser when warm: docs/reference-env.md#env-list).
Commands run without a terminal (stdout is a pipe), as in CI; `env list` runs in a copy of
examples/demo after one warm-up run has filled the KCL evaluation cache (the cold figure is printed
too).

    python bench/startup.py [--runs N]      # BENCH_SMOKE=1: one run (tests/test_bench_smoke.py)
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
BIN = Path(sys.executable).parent
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)


COMPLETE = {"_FRAMEWORK_COMPLETE": "bash_complete", "COMP_WORDS": "framework env build ", "COMP_CWORD": "3"}


def wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    if argv[-1] == "<TAB>":  # a completion request: the program run as the shell's script runs it
        argv, env = argv[:-1], {**env, **COMPLETE}
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1 if SMOKE else 21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        demo = root / "demo"
        shutil.copytree(REPO / "examples" / "demo", demo)
        env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache"), "HOME": str(root)}
        commands = {
            "baseline: python -c pass": [sys.executable, "-c", "pass"],
            "framework --help": [str(BIN / "framework"), "--help"],
            "completion: env build <TAB>": [str(BIN / "framework"), "<TAB>"],
            "framework env list --json": [str(BIN / "framework"), "env", "list", "--json"],
        }
        cold = wall(commands["framework env list --json"], demo, env)  # fills the cache
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):  # interleaved, so drift hits every command alike
            for name, argv in commands.items():
                samples[name].append(wall(argv, demo, env))
    base = statistics.median(samples["baseline: python -c pass"])
    aims = {"framework --help": 8.0, "completion: env build <TAB>": 8.0, "framework env list --json": 5.0}
    print(f"{'command':32} {'median ms':>10} {'ratio':>7} {'aim':>6}")
    for name, values in samples.items():
        median = statistics.median(values)
        aim = aims.get(name)
        print(f"{name:32} {median * 1000:10.1f} {median / base:6.1f}x {f'<={aim:.0f}x' if aim else '':>6}")
    print(f"{'env list --json, cold cache':32} {cold * 1000:10.1f} {cold / base:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
