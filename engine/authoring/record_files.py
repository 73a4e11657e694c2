"""The ownership records as files (docs/reference-authoring.md, Ownership), read without pydantic: the birth ledger
`.framework/scaffolded.json`, the disowned list `.framework/disowned.json` and the last generation's record
`.framework/generated.json`. `engine/authoring/ownership.py` models and writes them; `project map` reads them here
(its start-up: bench/project.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCAFFOLDED = Path(".framework") / "scaffolded.json"
DISOWNED = Path(".framework") / "disowned.json"
STATE = Path(".framework") / "generated.json"  # the last generation's record (written by `generate`)


def read_items(root: Path, rel: Path) -> list[dict[str, Any]]:
    path = root / rel
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        from engine.errors import ConfigError

        raise ConfigError(f"{rel}: not readable JSON", hint="restore it from version control") from None
    items = data.get("files", []) if isinstance(data, dict) else []
    return [i for i in items if isinstance(i, dict) and "path" in i]


def generation_state(root: Path) -> dict[str, object]:
    """The last generation's record (inputs' fingerprint, generated files); {} when absent or unreadable.
    Here, not in generate.py, so that readers of ownership (`project map`) do not import generation."""
    try:
        data = json.loads((root / STATE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def state_files(root: Path) -> list[str]:
    """The generated files the last run recorded."""
    files = generation_state(root).get("files", [])
    return [p for p in files if isinstance(p, str)] if isinstance(files, list) else []


def paths(root: Path, rel: Path) -> set[str]:
    """The paths a record lists (scaffolded or disowned)."""
    return {str(i["path"]) for i in read_items(root, rel)}
