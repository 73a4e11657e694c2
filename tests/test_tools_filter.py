"""Tags, tag membership and the tool filter (docs/reference-tools.md#tags-and-membership,
docs/reference-tools.md#tool-filter)."""

from __future__ import annotations

import pytest

from engine.tools.base import Tool, ToolResult
from engine.tools.filter import ToolFilterError, apply_filter
from engine.tools.registry import builtin_tools

MEMBERSHIP = {  # docs/reference-tools.md#tags-and-membership, verbatim
    "view": {"file", "readonly", "default"},
    **{t: {"file", "default"} for t in ("write", "edit", "patch", "find_replace", "move_code")},
    **{t: {"search", "readonly", "default"} for t in ("grep", "glob")},
    "bash": {"execution", "default"},
    **{t: {"execution", "readonly"} for t in ("bash_list", "bash_output")},
    "bash_kill": {"execution"},
    **{t: {"web", "readonly", "default"} for t in ("fetch", "websearch")},
    **{
        t: {"planning", "readonly", "default"}
        for t in ("create_plan", "update_plan", "get_plan", "list_tasks", "add_task", "update_task")
    },
    "create_subtask": {"planning", "readonly"},
    "project_analyzer": {"analysis", "readonly", "default"},
    "codegraph": {"analysis", "readonly"},
    "worktree": {"default"},
    **{
        t: {"workflow"}
        for t in ("read_workflow_state", "update_workflow", "set_workflow", "validate_workflow")
    },
}


def _with_mcp() -> dict[str, Tool]:
    tools = dict(builtin_tools())
    for name in ("mcp_github_issues", "mcp_github_prs", "mcp_docs_search"):
        tools[name] = Tool(name, ("mcp",), "", {"type": "object"}, lambda p, c: ToolResult(output=""), "mcp")
    return tools


def test_tag_membership_is_exactly_the_spec_table():
    """Every built-in tool exists with exactly the tags of the membership table
    (docs/reference-tools.md#tags-and-membership)."""
    tools = builtin_tools()
    assert {name: set(tool.tags) for name, tool in tools.items()} == MEMBERSHIP


def test_every_tool_has_an_object_json_schema():
    """Every tool carries a JSON schema whose required parameters are declared properties."""
    import jsonschema

    for tool in builtin_tools().values():
        jsonschema.Draft202012Validator.check_schema(tool.schema)
        assert tool.schema["type"] == "object"
        assert set(tool.schema["required"]) <= set(tool.schema["properties"]), tool.name


def test_empty_filter_is_the_default_tag():
    """An empty tool_filter selects the `default` tag."""
    selected = apply_filter([], builtin_tools()).tools
    assert set(selected) == {n for n, tags in MEMBERSHIP.items() if "default" in tags}


def test_tags_names_and_exclusions():
    """Steps 1-2: tag: entries and names are collected, then ! entries remove tools."""
    result = apply_filter(["tag:readonly", "bash", "!fetch", "!websearch"], builtin_tools())
    assert "fetch" not in result.tools and "websearch" not in result.tools
    assert "bash" in result.tools and "view" in result.tools and "write" not in result.tools


def test_globs_expand_against_all_tools_after_exclusions():
    """Step 3: globs expand against all available tools (an earlier ! does not remove glob matches)."""
    tools = _with_mcp()
    assert apply_filter(["mcp_github_*"], tools).tools == ["mcp_github_issues", "mcp_github_prs"]
    assert set(apply_filter(["tag:mcp"], tools).tools) == {
        "mcp_github_issues",
        "mcp_github_prs",
        "mcp_docs_search",
    }
    both = apply_filter(["tag:search", "!grep", "gr*"], tools).tools
    assert both == ["glob", "grep"]
    assert apply_filter(["bash_*"], tools).tools == ["bash_list", "bash_output", "bash_kill"]


def test_spawn_entries_are_parsed_into_presets():
    """Step 4: spawn:<workflow>(<preset>,<preset>) configures sub-agent presets."""
    result = apply_filter(["tag:file", "spawn:reviewer(readonly, web)", "spawn:solo()"], builtin_tools())
    assert [s.model_dump() for s in result.spawn] == [
        {"workflow": "reviewer", "presets": ["readonly", "web"]},
        {"workflow": "solo", "presets": []},
    ]


@pytest.mark.parametrize(
    "entry",
    ["tag:nope", "no_such_tool", "", "!", "spawn:x", "spawn:(a)", "spawn:x(a,,b)", "tag:", "a b", "!*"],
)
def test_malformed_entries_are_errors(entry):
    """Malformed tool_filter entries are errors (exit 2), not silently ignored."""
    with pytest.raises(ToolFilterError) as info:
        apply_filter([entry], builtin_tools())
    assert info.value.exit_code == 2


def test_unavailable_mcp_tool_or_empty_glob_is_a_warning():
    """A tool-server tool that is absent (server down) only warns; the rest keep working."""
    result = apply_filter(["view", "mcp_down_tool", "mcp_down_*"], builtin_tools())
    assert result.tools == ["view"] and len(result.warnings) == 2
