"""Workflow files (YAML): the model, the instructions and the `tool_filter` input of a run.

name: changelog
model:
  provider: scripted            # or: openai
  script: changelog.script.yaml # scripted: path relative to this file
  # openai: base_url, model, api_key_env, temperature, timeout
instructions: Summarise the changes to {{trigger.payload.body.ref}}.
tool_filter: [tag:file, tag:search, "!write"]
inputs: {branch: main}          # optional defaults, overridden by the run's inputs
max_steps: 50                   # optional; model turns before the run fails
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from engine.errors import EngineError

PROVIDERS = ("scripted", "openai")


class WorkflowError(EngineError):
    """The workflow file is missing or not valid (exit 2: bad input)."""

    code = "invalid_workflow"
    exit_code = 2


class Workflow(BaseModel):
    name: str = Field(min_length=1)
    model: dict[str, Any]
    instructions: str = ""
    tool_filter: list[str] = []
    inputs: dict[str, Any] = {}
    max_steps: int = Field(default=50, ge=1, le=1000)
    target: str = "local"
    """Where the run's tools execute: `local`, or `daemon:<name>` (a connected local tools daemon)."""
    source: str | None = None  # the file it was loaded from

    @field_validator("target")
    @classmethod
    def _target(cls, target: str) -> str:
        if target != "local" and not (target.startswith("daemon:") and len(target) > len("daemon:")):
            raise ValueError(f"target must be `local` or `daemon:<name>`, not {target!r}")
        return target

    @field_validator("model")
    @classmethod
    def _provider(cls, model: dict[str, Any]) -> dict[str, Any]:
        provider = model.get("provider")
        if provider not in PROVIDERS:
            raise ValueError(f"model.provider must be one of {', '.join(PROVIDERS)}, not {provider!r}")
        if provider == "scripted" and not (model.get("script") or model.get("steps") is not None):
            raise ValueError("a scripted model needs `script` (a file) or inline `steps`")
        if provider == "openai" and not model.get("model"):
            raise ValueError("an openai model needs `model` (the model name)")
        return model


def parse_workflow(data: Any, *, source: str | None = None, base_dir: Path | None = None) -> Workflow:
    if not isinstance(data, dict):
        raise WorkflowError(f"{source or 'workflow'}: expected a mapping at the top level")
    try:
        workflow = Workflow.model_validate({**data, "source": source})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise WorkflowError(f"{source or 'workflow'}: {where}: {first['msg']}") from exc
    script = workflow.model.get("script")
    if workflow.model["provider"] == "scripted" and isinstance(script, str) and base_dir is not None:
        path = Path(script).expanduser()
        workflow.model["script"] = str(path if path.is_absolute() else (base_dir / path).resolve())
    return workflow


def load_workflow(path: Path) -> Workflow:
    """Read a workflow YAML file; WorkflowError (exit 2) when missing or invalid."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkflowError(f"workflow file not found: {path}") from None
    except OSError as exc:
        raise WorkflowError(f"cannot read workflow {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise WorkflowError(f"{path}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    return parse_workflow(data, source=str(path), base_dir=path.parent.resolve())


def parse_inputs(pairs: list[str]) -> dict[str, Any]:
    """`--input k=v` values: v is JSON when it parses (numbers, true, objects), else text;
    a dotted key nests (`trigger.payload.body.ref=main`)."""
    import json

    inputs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise WorkflowError(f"--input {pair!r}: expected KEY=VALUE")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        parts = key.strip().split(".")
        node = inputs
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise WorkflowError(f"--input {pair!r}: {part} is already set to a value")
            node = child
        node[parts[-1]] = value
    return inputs
