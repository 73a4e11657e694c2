"""Workflow-builder tools (tag `workflow`; their parameters are designed here:
docs/reference-tools.md#tools-parameters-defaults-and-limits).

They edit a workflow definition (the YAML format of engine.workflows.definition) held in a file: `path`
(relative to the project root) or, by default, the session's draft `<session>/workflow.yaml`.
- read_workflow_state {path?}: the current definition and whether it is valid.
- set_workflow {definition, path?}: replace the whole definition (validated; refused if invalid).
- update_workflow {changes, path?}: merge top-level fields (`model` merged key by key; null removes).
- validate_workflow {definition? | path?}: check a definition: fields, provider, tool_filter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.paths import atomic_write_bytes
from engine.tools.base import Tool, ToolContext, ToolError, ToolResult, schema, string

PATH = string("workflow file (relative to the project root); default the session's draft")
DEFINITION = {
    "type": "object",
    "description": "workflow: name, model, instructions, tool_filter, inputs, max_steps",
}


def _path(params: dict[str, Any], ctx: ToolContext) -> Path:
    return ctx.resolve(params["path"]) if params.get("path") else ctx.state_dir() / "workflow.yaml"


def _read(path: Path) -> dict[str, Any]:
    import yaml

    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ToolError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ToolError(f"{path} does not hold a mapping")
    return data


def problems(definition: dict[str, Any], base_dir: Path | None = None) -> list[str]:
    """Everything wrong with a definition, empty when it would run."""
    from engine.errors import EngineError
    from engine.tools.filter import apply_filter
    from engine.tools.registry import available_tools
    from engine.workflows.definition import parse_workflow
    from engine.workflows.script import load_script

    try:
        workflow = parse_workflow(definition, base_dir=base_dir)
    except EngineError as exc:
        return [exc.message]
    found = []
    try:
        apply_filter(workflow.tool_filter, available_tools(with_mcp=False))
    except EngineError as exc:
        found.append(exc.message)
    if workflow.model.get("provider") == "scripted":
        try:
            load_script(workflow.model)
        except EngineError as exc:
            found.append(exc.message)
    return found


def _save(path: Path, definition: dict[str, Any]) -> None:
    import yaml

    atomic_write_bytes(path, yaml.safe_dump(definition, sort_keys=False, allow_unicode=True).encode())


def _report(verb: str, path: Path, definition: dict[str, Any]) -> ToolResult:
    import yaml

    found = problems(definition, path.parent)
    state = "valid" if not found else "invalid: " + "; ".join(found)
    text = f"{verb} {path} ({state})\n" + yaml.safe_dump(definition, sort_keys=False, allow_unicode=True)
    return ToolResult(
        output=text, data={"path": str(path), "definition": definition, "valid": not found, "problems": found}
    )


def read_workflow_state(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = _path(params, ctx)
    if not path.exists():
        return ToolResult(
            output=f"no workflow at {path} yet; create it with set_workflow\n",
            data={"path": str(path), "definition": None, "valid": False, "problems": ["missing"]},
        )
    return _report("workflow", path, _read(path))


def set_workflow(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = _path(params, ctx)
    found = problems(params["definition"], path.parent)
    if found:
        raise ToolError("workflow not saved: " + "; ".join(found))
    _save(path, params["definition"])
    return _report("saved", path, params["definition"])


def update_workflow(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = _path(params, ctx)
    definition = _read(path)
    for key, value in params["changes"].items():
        if value is None:
            definition.pop(key, None)
        elif key == "model" and isinstance(value, dict) and isinstance(definition.get("model"), dict):
            merged = {**definition["model"], **value}
            definition["model"] = {k: v for k, v in merged.items() if v is not None}
        else:
            definition[key] = value
    found = problems(definition, path.parent)
    if found:
        raise ToolError("workflow not saved: " + "; ".join(found))
    _save(path, definition)
    return _report("updated", path, definition)


def validate_workflow(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    if params.get("definition") is not None:
        found = problems(params["definition"], ctx.root)
        text = "valid\n" if not found else "invalid:\n" + "".join(f"- {p}\n" for p in found)
        return ToolResult(output=text, data={"valid": not found, "problems": found})
    path = _path(params, ctx)
    if not path.exists():
        raise ToolError(f"no workflow at {path}")
    return _report("workflow", path, _read(path))


_TAGS = ("workflow",)
TOOLS = [
    Tool(
        "read_workflow_state",
        _TAGS,
        "The workflow being built and whether it is valid.",
        schema({"path": PATH}),
        read_workflow_state,
    ),
    Tool(
        "update_workflow",
        _TAGS,
        "Merge fields into the workflow (model merged by key; null removes a field).",
        schema({"changes": {**DEFINITION, "description": "fields to set"}, "path": PATH}, ("changes",)),
        update_workflow,
    ),
    Tool(
        "set_workflow",
        _TAGS,
        "Replace the whole workflow definition (refused when invalid).",
        schema({"definition": DEFINITION, "path": PATH}, ("definition",)),
        set_workflow,
    ),
    Tool(
        "validate_workflow",
        _TAGS,
        "Validate a workflow definition or file: fields, model provider, tool_filter.",
        schema({"definition": DEFINITION, "path": PATH}),
        validate_workflow,
    ),
]
