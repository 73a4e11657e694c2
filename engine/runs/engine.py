"""The run engine: executes a workflow's agent loop with the tools its `tool_filter` selects.

Each model turn may call tools; every call and result is a `RunStep`, reported to `on_step` as
it happens and recorded (with the session's plan and tasks) in the run store. `execute_run`
does not raise for a failing run: the record says `failed` and why. Background processes the
run started are killed when it ends (they live for the run's lifetime).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.errors import EngineError
from engine.runs.records import RunRecord, RunStep
from engine.workflows.definition import Workflow

__all__ = ["RunRecord", "RunStep", "execute_run", "new_run_id"]


def new_run_id() -> str:
    return "run-" + time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


def execute_run(
    workflow: Workflow,
    *,
    inputs: dict[str, Any],
    root: Path,
    run_id: str | None = None,
    on_step: Callable[[RunStep], None] | None = None,
    runs_home: Path | None = None,
    settings: dict[str, Any] | None = None,
    tool_runner: Callable[[str, Any], Any] | None = None,
) -> RunRecord:
    """Run `workflow` in `root` with `inputs` (the workflow's own `inputs` are the defaults).

    Tools run here, or, with the workflow's `target: daemon:<name>`, on that daemon's machine
    (through the server's daemon API; `tool_runner` replaces that caller). Every tool call step
    records where it ran (`ran_on`)."""
    from engine.runs.store import run_dir, save_run
    from engine.tools.base import ToolContext

    run_id = run_id or new_run_id()
    merged = {**workflow.inputs, **(inputs or {})}
    record = RunRecord(
        id=run_id, workflow=workflow.name, status="running", inputs=merged, started_at=time.time()
    )
    session = run_dir(run_id, runs_home) / "session"
    ctx = ToolContext(root=Path(root).resolve(), session_id=run_id, data_dir=session, settings=settings)
    save_run(record, runs_home)

    def add(kind: str, name: str | None, data: dict[str, Any]) -> None:
        step = RunStep(index=len(record.steps), kind=kind, name=name, data=data)
        record.steps.append(step)
        save_run(record, runs_home)
        if on_step is not None:
            on_step(step)

    try:
        _loop(workflow, merged, ctx, record, add, tool_runner)
        record.status = "succeeded"
    except EngineError as exc:
        record.status, record.error = "failed", exc.message
    except Exception as exc:  # noqa: BLE001 - a run records any failure instead of crashing its caller
        record.status, record.error = "failed", f"internal error: {type(exc).__name__}: {exc}"
    finally:
        from engine.tools.execution import close_session
        from engine.tools.planning import load_plan

        try:
            close_session(ctx)
        except Exception:  # noqa: BLE001, S110 - cleanup must not hide the run's outcome
            pass
        try:
            plan = load_plan(ctx)
        except EngineError:
            plan = None
        record.plan = plan
        record.tasks = list(plan.get("tasks", [])) if plan else []
        record.finished_at = time.time()
        save_run(record, runs_home)
    return record


def _loop(
    workflow: Workflow,
    inputs: dict[str, Any],
    ctx: Any,
    record: RunRecord,
    add: Callable[[str, str | None, dict[str, Any]], None],
    tool_runner: Callable[[str, Any], Any] | None = None,
) -> None:
    from engine.runs.providers import ScriptedProvider, make_provider
    from engine.runs.template import render
    from engine.tools.filter import apply_filter
    from engine.tools.registry import available_tools, call_tool

    tools = available_tools(ctx.settings)
    selection = apply_filter(workflow.tool_filter, tools)
    selected = {name: tools[name] for name in selection.tools}
    record.tools = list(selected)
    record.spawn = [preset.model_dump() for preset in selection.spawn]
    instructions = str(render(workflow.instructions, inputs))
    provider = make_provider(workflow.model, instructions, inputs, selected)
    ran_on = workflow.target
    if tool_runner is None and ran_on.startswith("daemon:"):
        from engine.daemon.remote import DaemonTools

        tool_runner = DaemonTools(ran_on.removeprefix("daemon:"), session=record.id).call

    def run_tool(name: str, params: Any) -> Any:
        return tool_runner(name, params) if tool_runner else call_tool(name, params, ctx, tools=selected)

    for turn_number in range(workflow.max_steps + 1):
        if turn_number == workflow.max_steps:
            raise EngineError(f"the run exceeded max_steps ({workflow.max_steps}) model turns")
        turn = provider.next_turn()
        if turn.message:
            add("message", None, {"text": turn.message})
        if not turn.tool_calls:
            if isinstance(provider, ScriptedProvider) and not provider.finished():
                continue
            return
        results = []
        for call in turn.tool_calls:
            add("tool_call", call.name, {"id": call.id, "params": call.params, "ran_on": ran_on})
            result = _call(call.name, call.params, selected, tools, run_tool)
            add("tool_result", call.name, {"id": call.id, **result.model_dump()})
            results.append((call, result))
            if result.is_error and not call.allow_error:
                raise EngineError(f"tool {call.name} failed: {result.output.strip()[:500]}")
        provider.tool_results(results)


def _call(name: str, params: Any, selected: dict[str, Any], tools: dict[str, Any], run_tool: Any) -> Any:
    from engine.tools.base import ToolResult

    if name not in selected:
        why = "is not selected by the workflow's tool_filter" if name in tools else "does not exist"
        return ToolResult(
            output=f"error: tool {name!r} {why}\n",
            is_error=True,
            data={"error": {"code": "tool_not_allowed", "message": f"tool {name!r} {why}"}},
        )
    try:
        return run_tool(name, params)
    except EngineError as exc:  # invalid parameters: the agent sees the error and may retry
        return ToolResult(output=f"error: {exc.message}\n", is_error=True, data={"error": exc.to_dict()})
