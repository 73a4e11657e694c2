"""Planning tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): one plan per session with its
tasks, persisted as JSON.

The plan lives in `<session data dir>/plan.json`, written atomically after every change, so a
run's record and later sessions see exactly what the agent planned. Plan statuses and task
statuses and metadata keys are the spec's.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from engine.paths import atomic_write_bytes
from engine.tools.base import Tool, ToolContext, ToolError, ToolResult, integer, schema, string

PLAN_STATUSES = ("pending", "in_progress", "completed", "cancelled")
TASK_STATUSES = ("pending", "in_progress", "completed", "failed", "blocked", "skipped", "cancelled")
COMPLEXITIES = ("simple", "moderate", "complex")
PRIORITIES = ("high", "medium", "low")
METADATA = {
    "type": "object",
    "additionalProperties": False,
    "description": "task metadata: preferred_agent, tool_hints, dependencies, notes, priority",
    "properties": {
        "preferred_agent": {"type": "string", "description": "agent type"},
        "tool_hints": {
            "type": "array",
            "items": {"type": "string"},
            "description": "suggested tools such as use_bash, search_first",
        },
        "dependencies": {
            "type": "array",
            "items": {"type": "string"},
            "description": "task IDs this waits on",
        },
        "notes": {"type": "string"},
        "priority": {"type": "string", "enum": list(PRIORITIES)},
    },
}


def plan_file(ctx: ToolContext) -> Path:
    return ctx.state_dir() / "plan.json"


def load_plan(ctx: ToolContext) -> dict[str, Any] | None:
    try:
        return dict(json.loads(plan_file(ctx).read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ToolError(f"the session's plan file {plan_file(ctx)} is unreadable: {exc}") from None


def _save(ctx: ToolContext, plan: dict[str, Any]) -> None:
    plan["updated_at"] = time.time()
    atomic_write_bytes(plan_file(ctx), json.dumps(plan, indent=1).encode())


def _require(ctx: ToolContext) -> dict[str, Any]:
    plan = load_plan(ctx)
    if plan is None:
        raise ToolError("this session has no plan yet; create one with create_plan", code="no_plan")
    return plan


def _new_task(
    plan: dict[str, Any],
    title: str,
    description: str = "",
    parent_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    plan["next_id"] = plan.get("next_id", 1)
    task = {
        "id": f"task-{plan['next_id']}",
        "title": title,
        "description": description,
        "status": "pending",
        "parent_id": parent_id,
        "metadata": metadata or {},
        "created_at": time.time(),
    }
    plan["next_id"] += 1
    return task


def _render(plan: dict[str, Any]) -> str:
    lines = [f"Plan: {plan['title']} [{plan['status']}, {plan['complexity']}]", plan["description"], ""]
    lines += _task_lines(plan)
    return "\n".join(lines) + "\n"


def _task_lines(plan: dict[str, Any]) -> list[str]:
    out = []
    for n, task in enumerate(plan["tasks"], start=1):
        indent = "    " if task.get("parent_id") else ""
        meta = task.get("metadata") or {}
        extra = f" (priority {meta['priority']})" if meta.get("priority") else ""
        out.append(f"{indent}{n}. [{task['status']}] {task['id']}: {task['title']}{extra}")
    return out or ["(no tasks)"]


def _find(plan: dict[str, Any], ref: str) -> dict[str, Any]:
    for task in plan["tasks"]:
        if task["id"] == ref:
            return task
    if ref.isdigit() and 1 <= int(ref) <= len(plan["tasks"]):
        return plan["tasks"][int(ref) - 1]
    raise ToolError(
        f"no task {ref!r} in the plan (give a task ID or a position 1-{len(plan['tasks'])})", code="not_found"
    )


def create_plan(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    plan: dict[str, Any] = {
        "title": params["title"],
        "description": params["description"],
        "complexity": params["complexity"],
        "status": "pending",
        "session_id": ctx.session_id,
        "created_at": time.time(),
        "next_id": 1,
        "tasks": [],
    }
    replaced = load_plan(ctx) is not None
    for item in params["tasks"]:
        plan["tasks"].append(_new_task(plan, item["title"], item.get("description", "")))
    _save(ctx, plan)
    head = "replaced the session's plan\n" if replaced else "created plan\n"
    return ToolResult(output=head + _render(plan), data={"plan": plan})


def update_plan(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    plan = _require(ctx)
    for key in ("title", "description", "complexity", "status"):
        if params.get(key) is not None:
            plan[key] = params[key]
    _save(ctx, plan)
    return ToolResult(output="updated plan\n" + _render(plan), data={"plan": plan})


def get_plan(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    plan = load_plan(ctx)
    if plan is None:
        return ToolResult(output="this session has no plan\n", data={"plan": None})
    return ToolResult(output=_render(plan), data={"plan": plan})


def list_tasks(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    plan = load_plan(ctx)
    tasks = plan["tasks"] if plan else []
    text = "\n".join(_task_lines(plan)) + "\n" if plan else "this session has no plan\n"
    return ToolResult(output=text, data={"tasks": tasks})


def add_task(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    plan = _require(ctx)
    parent = params.get("parent_id")
    if parent:
        parent = _find(plan, str(parent))["id"]
    task = _new_task(plan, params["title"], params.get("description") or "", parent, params.get("metadata"))
    position = params.get("position")
    if position is None:
        plan["tasks"].append(task)
    else:
        plan["tasks"].insert(max(0, min(int(position) - 1, len(plan["tasks"]))), task)
    _save(ctx, plan)
    return ToolResult(
        output=f"added {task['id']}: {task['title']}\n" + "\n".join(_task_lines(plan)) + "\n",
        data={"task": task},
    )


def update_task(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    plan = _require(ctx)
    task = _find(plan, str(params["task_id"]))
    if params.get("status") is not None:
        task["status"] = params["status"]
    if params.get("description") is not None:
        task["description"] = params["description"]
    if params.get("metadata") is not None:
        task["metadata"] = {**(task.get("metadata") or {}), **params["metadata"]}
    task["updated_at"] = time.time()
    _save(ctx, plan)
    return ToolResult(
        output=f"updated {task['id']}: [{task['status']}] {task['title']}\n", data={"task": task}
    )


def create_subtask(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    plan = _require(ctx)
    parent = _find(plan, str(params["parent_task_id"]))
    task = _new_task(plan, params["title"], params.get("description") or "", parent["id"])
    # Subtasks sit right after their parent's last existing subtask, so list_tasks reads as a tree.
    at = plan["tasks"].index(parent) + 1
    while at < len(plan["tasks"]) and plan["tasks"][at].get("parent_id") == parent["id"]:
        at += 1
    plan["tasks"].insert(at, task)
    _save(ctx, plan)
    return ToolResult(
        output=f"added subtask {task['id']} under {parent['id']}: {task['title']}\n", data={"task": task}
    )


_TAGS = ("planning", "readonly", "default")
_TASK_ITEM = {
    "type": "object",
    "required": ["title", "description"],
    "additionalProperties": False,
    "properties": {"title": string("task title"), "description": string("what to do")},
}
TOOLS = [
    Tool(
        "create_plan",
        _TAGS,
        "Create the session's plan with its tasks (replaces an existing plan).",
        schema(
            {
                "title": string("plan title"),
                "description": string("objectives and approach"),
                "complexity": string("simple, moderate or complex", enum=list(COMPLEXITIES)),
                "tasks": {"type": "array", "items": _TASK_ITEM, "description": "tasks in order"},
            },
            ("title", "description", "complexity", "tasks"),
        ),
        create_plan,
    ),
    Tool(
        "update_plan",
        _TAGS,
        "Change the plan's title, description, complexity or status.",
        schema(
            {
                "title": string("new title"),
                "description": string("new description"),
                "complexity": string("simple, moderate or complex", enum=list(COMPLEXITIES)),
                "status": string("pending, in_progress, completed or cancelled", enum=list(PLAN_STATUSES)),
            }
        ),
        update_plan,
    ),
    Tool("get_plan", _TAGS, "The current session's plan.", schema({}), get_plan),
    Tool("list_tasks", _TAGS, "The current session's tasks, numbered by position.", schema({}), list_tasks),
    Tool(
        "add_task",
        _TAGS,
        "Add a task (optionally at a position, under a parent, with metadata).",
        schema(
            {
                "title": string("task title"),
                "description": string("what to do"),
                "position": integer("1-based position in the task list", minimum=1),
                "parent_id": string("parent task for a subtask"),
                "metadata": METADATA,
            },
            ("title",),
        ),
        add_task,
    ),
    Tool(
        "update_task",
        _TAGS,
        "Change a task's status, description or metadata.",
        schema(
            {
                "task_id": string("task ID or position number"),
                "status": string("task status", enum=list(TASK_STATUSES)),
                "description": string("new description"),
                "metadata": METADATA,
            },
            ("task_id",),
        ),
        update_task,
    ),
    Tool(
        "create_subtask",
        ("planning", "readonly"),
        "Add a subtask under a task.",
        schema(
            {
                "parent_task_id": string("parent task ID or position"),
                "title": string("subtask title"),
                "description": string("what to do"),
            },
            ("parent_task_id", "title"),
        ),
        create_subtask,
    ),
]
