"""Child process of FilterEvaluator: one JSON request per line in, one FilterResult per line out."""

from __future__ import annotations

import json
import sys
from typing import Any


def main() -> None:
    import cel  # noqa: F401 - loaded before "ready": the time limit covers evaluation only

    from engine.hooks.filters import FilterInvalid, FilterResult, compile_filter, evaluate_once

    programs: dict[str, Any] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        request = json.loads(line)
        source = request["filter"]
        try:
            if source not in programs:
                if len(programs) > 256:
                    programs.clear()
                programs[source] = compile_filter(source)
            result = evaluate_once(programs[source], request["payload"])
        except FilterInvalid as exc:
            result = FilterResult(matched=False, error=exc.message)
        sys.stdout.write(result.model_dump_json() + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
