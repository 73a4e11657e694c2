"""`{{ dotted.path }}` templates over a run's inputs (scripted tool calls and instructions).

A string that is exactly one `{{ ... }}` becomes the referenced value itself (object, number,
list); a template inside longer text is replaced by the value's text (JSON for objects). Paths
walk mappings by key and lists by index (`results.-1.output`). A missing key is an error, so an
automation never runs with a silently empty argument.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.errors import EngineError

_TEMPLATE = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


class TemplateError(EngineError):
    code = "template_error"


def lookup(context: dict[str, Any], path: str) -> Any:
    value: Any = context
    walked = []
    for part in path.split("."):
        walked.append(part)
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif (
            isinstance(value, list) and re.fullmatch(r"-?\d+", part) and -len(value) <= int(part) < len(value)
        ):
            value = value[int(part)]
        else:
            raise TemplateError(
                f"template '{{{{{path}}}}}': {'.'.join(walked)} is not defined",
                hint="available at the top: " + ", ".join(sorted(context)) if context else None,
            )
    return value


def render(value: Any, context: dict[str, Any]) -> Any:
    """Render every string inside `value` (recursively through lists and mappings)."""
    if isinstance(value, str):
        whole = _TEMPLATE.fullmatch(value.strip())
        if whole and value.strip() == value:
            return lookup(context, whole.group(1))

        def text(m: re.Match[str]) -> str:
            found = lookup(context, m.group(1))
            return found if isinstance(found, str) else json.dumps(found)

        return _TEMPLATE.sub(text, value)
    if isinstance(value, list):
        return [render(v, context) for v in value]
    if isinstance(value, dict):
        return {k: render(v, context) for k, v in value.items()}
    return value
