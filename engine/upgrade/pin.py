"""framework.yaml's `framework_version` (docs/reference-project.md#project-upgrade): changed in place, the rest of
the file (comments, order) kept as the user wrote it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from engine.errors import ConfigError

_LINE = re.compile(r"^framework_version\s*:\s*(?P<value>[^#\n]*?)(?P<comment>\s+#.*)?$")


def set_version(config_path: Path, version: str) -> str:
    """The file's text with the pin set to `version` (the line replaced, or added after `name:`)."""
    text = config_path.read_text(encoding="utf-8")
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if _LINE.match(line)), None)
    if at is not None:
        m = _LINE.match(lines[at])
        assert m is not None
        lines[at] = f"framework_version: {version}{m['comment'] or ''}"
    else:
        after = next((i + 1 for i, line in enumerate(lines) if line.startswith("name:")), 0)
        lines.insert(after, f"framework_version: {version}")
    new_text = "\n".join(lines) + "\n"
    try:
        data = yaml.safe_load(new_text)
    except yaml.YAMLError:
        data = None
    if not isinstance(data, dict) or str(data.get("framework_version")) != version:
        raise ConfigError(f"{config_path.name}: could not set framework_version on a line of its own",
                          hint=f"write `framework_version: {version}` on its own line, then upgrade again")
    return new_text
