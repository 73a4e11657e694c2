"""The suite's seconds per test file, for ordering the work (tests/conftest.py runs the longest
units first). `python tests/suite_durations.py run.xml` rewrites tests/durations.json from a whole
run's JUnit report (`pytest --junitxml=run.xml`, whose test times include setup and teardown)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("durations.json")


@cache
def weights() -> dict[str, float]:
    """File path (as in a test id) -> seconds; empty when the table is missing or unreadable."""
    try:
        doc = json.loads(TABLE.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in doc.items()} if isinstance(doc, dict) else {}


def from_junit(report: Path) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        # "tests.test_x" for a function, "tests.test_x.TestY" for a method
        candidates = ["/".join(parts) + ".py", "/".join(parts[:-1]) + ".py"]
        path = next((c for c in candidates if (TABLE.parent.parent / c).is_file()), None)
        if path is None:
            continue
        seconds[path] = seconds.get(path, 0.0) + float(case.get("time") or 0)
    return {path: round(value, 1) for path, value in sorted(seconds.items())}


if __name__ == "__main__":
    table = from_junit(Path(sys.argv[1]))
    tmp = TABLE.with_suffix(".tmp")
    tmp.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    tmp.replace(TABLE)
    print(f"{len(table)} files, {sum(table.values()):.0f} s in all -> {TABLE}")
