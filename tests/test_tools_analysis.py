"""Analysis, git and workflow-builder tools (docs/reference-tools.md#tools-parameters-defaults-and-limits:
project_analyzer, codegraph, worktree, workflow tag)."""

from __future__ import annotations

import subprocess

import pytest

from tests.tools_fixtures import call, ctx, isolated_home  # noqa: F401 - fixtures


def _project(root):
    (root / "pyproject.toml").write_text("[project]\nname='x'\n")
    (root / "Makefile").write_text("all:\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "core.py").write_text(
        "import os\nfrom . import util\n\nclass Engine:\n    def start(self):\n"
        "        return helper()\n\ndef helper():\n    return 1\n"
    )
    (root / "pkg" / "util.py").write_text("def helper_two():\n    pass\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text("from pkg.core import helper\n")
    (root / "web").mkdir()
    (root / "web" / "app.ts").write_text("export function render() {}\nexport class View {}\n")
    (root / "web" / "app.test.ts").write_text("test('x', () => {})\n")
    (root / "main.go").write_text("package main\nfunc main() {}\ntype Server struct{}\n")


def test_project_analyzer_actions(ctx):
    """project_analyzer: detect_type, find_build_files, detect_languages, find_tests."""
    _project(ctx.root)
    assert call(ctx, "project_analyzer", action="detect_type").data["types"] == ["python"]
    builds = call(ctx, "project_analyzer", action="find_build_files").data["build_files"]
    assert builds == [".github/workflows/ci.yml", "Makefile", "pyproject.toml"]
    langs = {
        r["language"]: r["files"]
        for r in call(ctx, "project_analyzer", action="detect_languages").data["languages"]
    }
    assert langs["Python"] == 3 and langs["TypeScript"] == 2 and langs["Go"] == 1
    tests = call(ctx, "project_analyzer", action="find_tests")
    assert tests.data["tests"] == ["tests/test_core.py", "web/app.test.ts"]
    assert tests.data["frameworks"] == ["pytest", "jest/vitest"]
    assert call(ctx, "project_analyzer", action="detect_type", path="web").data["types"] == []


def test_codegraph_symbols_references_imports(ctx):
    """codegraph (designed here): symbols, whole-word references, Python imports."""
    _project(ctx.root)
    symbols = call(ctx, "codegraph", action="symbols", path="pkg/core.py").data["symbols"]
    assert [(s["name"], s["kind"], s["line"]) for s in symbols] == [
        ("Engine", "class", 4),
        ("Engine.start", "method", 5),
        ("helper", "function", 8),
    ]
    go = call(ctx, "codegraph", action="symbols", path="main.go").data["symbols"]
    assert [s["name"] for s in go] == ["main", "Server"]
    refs = call(ctx, "codegraph", action="references", symbol="helper").data["references"]
    assert sorted(r.split(":")[0] for r in refs) == ["pkg/core.py", "pkg/core.py", "tests/test_core.py"]
    imports = call(ctx, "codegraph", action="imports", path="pkg").data["imports"]
    assert {"file": "pkg/core.py", "imports": "os"} in imports and {
        "file": "pkg/core.py",
        "imports": ".",
    } in imports


@pytest.fixture
def repo(ctx, monkeypatch):
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "Test")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "test@example.org")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ctx.root, check=True)
    (ctx.root / "README.md").write_text("hi\n")
    (ctx.root / ".env").write_text("SECRET=1\n")
    (ctx.root / ".gitignore").write_text(".env\n")
    subprocess.run(["git", "add", "README.md", ".gitignore"], cwd=ctx.root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=ctx.root, check=True)
    return ctx.root


def test_worktree_create_list_get_delete(ctx, repo):
    """worktree: create (auto branch, copy_files, session), list, get, delete on a real git repository."""
    created = call(ctx, "worktree", action="create", name="feature", copy_files=[".env"], session_id="s1")
    assert not created.is_error, created.output
    path = repo / ".worktrees" / "feature"
    assert (path / "README.md").read_text() == "hi\n" and (path / ".env").read_text() == "SECRET=1\n"
    assert created.data["branch"] == "wt/feature"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    assert status == ""  # the worktrees directory does not dirty the main checkout
    names = [w["name"] for w in call(ctx, "worktree", action="list").data["worktrees"]]
    assert names == ["(main)", "feature"]
    assert [w["name"] for w in call(ctx, "worktree", action="list", session_id="s1").data["worktrees"]] == [
        "feature"
    ]
    (path / "README.md").write_text("changed\n")
    got = call(ctx, "worktree", action="get", name="feature")
    assert got.data["dirty"] is True and got.data["session_id"] == "s1"
    assert call(ctx, "worktree", action="delete", name="feature").is_error  # local changes need force
    assert not call(ctx, "worktree", action="delete", name="feature", force=True).is_error
    assert not path.exists()


def test_worktree_errors_and_force(ctx, repo):
    """worktree: name required for create/get/delete; an existing one needs force; base_branch honoured."""
    assert "needs `name`" in call(ctx, "worktree", action="get").output
    assert not call(ctx, "worktree", action="create", name="w", branch="topic", base_branch="main").is_error
    again = call(ctx, "worktree", action="create", name="w")
    assert again.is_error and "force" in again.output
    assert not call(ctx, "worktree", action="create", name="w", branch="topic2", force=True).is_error
    assert call(ctx, "worktree", action="get", name="w").data["branch"] == "topic2"


def test_worktree_outside_git_is_a_clear_error(ctx):
    """worktree: outside a git repository the tool says so."""
    result = call(ctx, "worktree", action="list")
    assert result.is_error and "not inside a git repository" in result.output


def test_workflow_builder_tools(ctx):
    """workflow tools (designed here): set, update, read state and validate a workflow definition."""
    assert call(ctx, "read_workflow_state").data["definition"] is None
    bad = call(ctx, "set_workflow", definition={"name": "x", "model": {"provider": "nope"}})
    assert bad.is_error and "provider" in bad.output
    ok = call(
        ctx,
        "set_workflow",
        definition={
            "name": "x",
            "model": {"provider": "scripted", "steps": []},
            "tool_filter": ["tag:readonly"],
        },
    )
    assert ok.data["valid"] is True
    updated = call(
        ctx, "update_workflow", changes={"instructions": "look", "tool_filter": ["tag:file", "!write"]}
    )
    assert updated.data["definition"]["instructions"] == "look"
    assert call(ctx, "read_workflow_state").data["definition"]["tool_filter"] == ["tag:file", "!write"]
    assert call(ctx, "update_workflow", changes={"tool_filter": ["tag:bogus"]}).is_error
    checked = call(ctx, "validate_workflow", definition={"name": "y", "model": {"provider": "openai"}})
    assert checked.data["valid"] is False and "model" in checked.output
    call(
        ctx,
        "set_workflow",
        path="flows/a.yaml",
        definition={"name": "a", "model": {"provider": "scripted", "steps": []}},
    )
    assert (ctx.root / "flows" / "a.yaml").exists()
