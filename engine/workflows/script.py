"""A scripted model's steps (docs/reference-tools.md#scripted-provider: the `scripted` provider replays a script of
tool calls and messages).

Read by the run engine's ScriptedProvider and checked by the workflow tool before a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import EngineError


class ProviderError(EngineError):
    code = "provider_error"


def load_script(model: dict[str, Any]) -> list[dict[str, Any]]:
    if model.get("steps") is not None:
        steps = model["steps"]
    else:
        import yaml

        path = Path(model["script"])
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProviderError(f"script file not found: {path}") from None
        except yaml.YAMLError as exc:
            raise ProviderError(f"script {path}: not valid YAML/JSON: {exc}") from None
        steps = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(steps, list):
        raise ProviderError("a script is a list of steps (or a mapping with `steps:`)")
    for n, step in enumerate(steps, start=1):
        if not isinstance(step, dict) or ("tool" in step) == ("message" in step):
            raise ProviderError(f"script step {n}: give exactly one of `tool` or `message`")
        if "tool" in step and not isinstance(step.get("params", {}), dict):
            raise ProviderError(f"script step {n}: `params` must be a mapping")
    return steps
