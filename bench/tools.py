"""Agent tools against their bare baselines, measured in the same run.

- grep through the tool (parameter validation, rg, result shaping) on Python's standard library
  against bare `rg` with the same arguments: aim <= 1.3x.
- view and edit on a 50 MB file against reading / reading+writing it with plain Python: aim <= 2x.
Prints one line per case with the median times and the ratio. BENCH_SMOKE=1: grep on the `json`
package, a 1 MB file, one timed round each (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.tools.base import ToolContext  # noqa: E402
from engine.tools.registry import call_tool  # noqa: E402
from engine.tools.search import COMMON_ARGS, rg_path  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
REPEAT = 1 if SMOKE else 7
BIG_MB = 1 if SMOKE else 50


def median_time(fn: Callable[[], object], repeat: int = REPEAT) -> float:
    fn()  # warm caches (page cache, imports) for both sides alike
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(name: str, ours: float, base: float, aim: float) -> bool:
    ratio = ours / base
    verdict = "ok" if ratio <= aim else "OVER AIM"
    print(
        f"{name:44s} tool {ours * 1000:9.1f} ms   baseline {base * 1000:9.1f} ms   ratio {ratio:5.2f}x "
        f"(aim <= {aim}x) {verdict}"
    )
    return ratio <= aim


def bench_grep() -> list[bool]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    stdlib = stdlib / "json" if SMOKE else stdlib
    ctx = ToolContext(root=stdlib, session_id="bench", data_dir=Path(tempfile.mkdtemp()), settings={})
    results = []
    cases = [
        (
            "grep files_with_matches 'def \\w+\\(self'",
            {"pattern": r"def \w+\(self"},
            ["--files-with-matches"],
        ),
        (
            "grep count 'import os'",
            {"pattern": "import os", "output_mode": "count"},
            ["--count", "--with-filename"],
        ),
        (
            "grep content -i 'deprecationwarning' head 200",
            {"pattern": "deprecationwarning", "output_mode": "content", "-i": True, "head_limit": 200},
            ["--line-number", "--no-heading", "--with-filename", "--ignore-case"],
        ),
    ]
    for name, params, flags in cases:
        args = [rg_path(), *COMMON_ARGS, "--color", "never", *flags, "-e", params["pattern"]]

        def bare(args: list[str] = args) -> None:
            subprocess.run(args, cwd=stdlib, capture_output=True, text=True)

        def tool(params: dict[str, object] = params) -> None:
            assert not call_tool("grep", dict(params), ctx).is_error

        results.append(report(name, median_time(tool), median_time(bare), 1.3))
    return results


def bench_big_file() -> list[bool]:
    work = Path(tempfile.mkdtemp())
    big = work / "big.txt"
    line = "the quick brown fox jumps over the lazy dog; " * 2 + "\n"
    count = BIG_MB * 1024 * 1024 // len(line)
    big.write_text(line * (count // 2) + "MARKER line in the middle\n" + line * (count - count // 2))
    ctx = ToolContext(root=work, session_id="bench", data_dir=work / "session", settings={})
    results = []

    def read_plain() -> None:
        with big.open("r", encoding="utf-8") as fh:
            fh.read()

    def view_end() -> None:
        assert not call_tool("view", {"file_path": str(big), "offset": count - 10}, ctx).is_error

    def view_head() -> None:
        assert not call_tool("view", {"file_path": str(big)}, ctx).is_error

    results.append(
        report(f"view first 500 lines of {BIG_MB} MB", median_time(view_head), median_time(read_plain), 2.0)
    )
    results.append(
        report(f"view last lines of {BIG_MB} MB (offset)", median_time(view_end), median_time(read_plain), 2.0)
    )

    state = {"flip": False}

    def edit_tool() -> None:
        old, new = ("MARKER", "marker") if not state["flip"] else ("marker", "MARKER")
        state["flip"] = not state["flip"]
        result = call_tool(
            "edit", {"edits": [{"file_path": str(big), "old_string": old, "new_string": new}]}, ctx
        )
        assert not result.is_error, result.output

    def edit_plain() -> None:
        text = big.read_text(encoding="utf-8")
        old, new = ("MARKER", "marker") if "MARKER" in text else ("marker", "MARKER")
        big.write_text(text.replace(old, new, 1), encoding="utf-8")

    results.append(
        report(
            f"edit one line of {BIG_MB} MB (atomic, diff)",
            median_time(edit_tool, min(REPEAT, 5)),
            median_time(edit_plain, min(REPEAT, 5)),
            2.0,
        )
    )
    shutil.rmtree(work, ignore_errors=True)
    return results


def main() -> int:
    print(f"python {sys.version.split()[0]}, rg {rg_path()}, cpus {os.cpu_count()}")
    ok = bench_grep() + bench_big_file()
    print(f"{sum(ok)} of {len(ok)} cases within their aim")
    return 0


if __name__ == "__main__":
    sys.exit(main())
