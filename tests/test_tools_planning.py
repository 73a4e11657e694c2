"""Planning tools (docs/reference-tools.md#tools-parameters-defaults-and-limits: plan and task statuses; task
metadata keys)."""

from __future__ import annotations

import json

from engine.tools.base import ToolContext
from tests.tools_fixtures import call, ctx, isolated_home  # noqa: F401 - fixtures


def _plan(ctx):
    return call(
        ctx,
        "create_plan",
        title="Ship",
        description="Release v2",
        complexity="moderate",
        tasks=[{"title": "build", "description": "make"}, {"title": "test", "description": "pytest"}],
    )


def test_plan_lifecycle_persists_per_session(ctx):
    """create_plan/update_plan/get_plan persist in the session; another session has its own plan."""
    assert call(ctx, "get_plan").data["plan"] is None
    _plan(ctx)
    call(ctx, "update_plan", status="in_progress", title="Ship it")
    plan = json.loads((ctx.data_dir / "plan.json").read_text())
    assert plan["status"] == "in_progress" and plan["title"] == "Ship it" and len(plan["tasks"]) == 2
    again = ToolContext(root=ctx.root, session_id="test", data_dir=ctx.data_dir, settings={})
    assert call(again, "get_plan").data["plan"]["title"] == "Ship it"
    other = ToolContext(
        root=ctx.root, session_id="other", data_dir=ctx.data_dir.parent / "other", settings={}
    )
    assert call(other, "list_tasks").data["tasks"] == []


def test_statuses_are_the_spec_values(ctx):
    """Plan statuses pending/in_progress/completed/cancelled; task statuses add blocked, skipped, failed."""
    _plan(ctx)
    import pytest

    from engine.tools.base import InvalidParams

    with pytest.raises(InvalidParams):
        call(ctx, "update_plan", status="done")
    for status in ("pending", "in_progress", "completed", "failed", "blocked", "skipped", "cancelled"):
        assert call(ctx, "update_task", task_id="1", status=status).data["task"]["status"] == status
    with pytest.raises(InvalidParams):
        call(ctx, "update_task", task_id="1", status="waiting")


def test_tasks_positions_subtasks_and_metadata(ctx):
    """add_task (position, parent_id, metadata keys), update_task by ID or position, create_subtask."""
    _plan(ctx)
    added = call(
        ctx,
        "add_task",
        title="lint",
        position=1,
        metadata={
            "preferred_agent": "reviewer",
            "tool_hints": ["use_bash", "search_first"],
            "dependencies": ["task-1"],
            "notes": "fast",
            "priority": "high",
        },
    )
    assert added.data["task"]["metadata"]["priority"] == "high"
    tasks = call(ctx, "list_tasks").data["tasks"]
    assert [t["title"] for t in tasks] == ["lint", "build", "test"]
    sub = call(ctx, "create_subtask", parent_task_id="task-1", title="compile")
    assert sub.data["task"]["parent_id"] == "task-1"
    assert [t["title"] for t in call(ctx, "list_tasks").data["tasks"]] == ["lint", "build", "compile", "test"]
    updated = call(ctx, "update_task", task_id="task-3", status="completed", metadata={"notes": "ok"})
    assert updated.data["task"]["title"] == "lint" and updated.data["task"]["metadata"]["priority"] == "high"
    assert call(ctx, "update_task", task_id="task-99").is_error
    assert "    3. [pending] task-4: compile" in call(ctx, "list_tasks").output


def test_task_tools_without_a_plan_say_so(ctx):
    """Task tools before create_plan: a clear error naming create_plan."""
    result = call(ctx, "add_task", title="x")
    assert result.is_error and "create_plan" in result.output
