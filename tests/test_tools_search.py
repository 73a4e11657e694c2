"""Search tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): grep and glob on real ripgrep."""

from __future__ import annotations

import os
import time

from tests.tools_fixtures import call, ctx, isolated_home  # noqa: F401 - fixtures


def _tree(root):
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("def alpha():\n    return 'Alpha'\n# alphabet\n")
    (root / "src" / "b.go").write_text("package main\nfunc alpha() {}\n")
    (root / "notes.txt").write_text("nothing here\n--flag value\n")


def test_grep_output_modes(ctx):
    """grep: files_with_matches (default), content with line numbers, count per file."""
    _tree(ctx.root)
    files = call(ctx, "grep", pattern="alpha")
    assert sorted(files.data["results"]) == ["src/a.py", "src/b.go"]
    content = call(ctx, "grep", pattern="alpha", output_mode="content", path="src/a.py")
    assert "1:def alpha():" in content.output and "3:# alphabet" in content.output
    counts = call(ctx, "grep", pattern="alpha", output_mode="count")
    assert sorted(counts.data["results"]) == ["src/a.py:2", "src/b.go:1"]


def test_grep_files_sorted_by_modification_time(ctx):
    """grep: files_with_matches lists file paths sorted by modification time (newest first)."""
    for i, name in enumerate(["old.txt", "mid.txt", "new.txt"]):
        (ctx.root / name).write_text("needle\n")
        stamp = time.time() - 1000 + i * 100
        os.utime(ctx.root / name, (stamp, stamp))
    assert call(ctx, "grep", pattern="needle").data["results"] == ["new.txt", "mid.txt", "old.txt"]


def test_grep_flags(ctx):
    """grep: -i, word_boundary, fixed_strings, multiline, type, glob, -A/-B/-C, head_limit."""
    _tree(ctx.root)
    assert call(ctx, "grep", pattern="ALPHA", **{"-i": True}).data["total"] == 2
    word = call(ctx, "grep", pattern="alpha", word_boundary=True, output_mode="content", path="src/a.py")
    assert "alphabet" not in word.output and "def alpha" in word.output
    assert call(ctx, "grep", pattern="alpha()", fixed_strings=True).data["total"] == 2
    assert call(ctx, "grep", pattern=r"alpha\(\):\n    return", multiline=True).data["results"] == [
        "src/a.py"
    ]
    assert call(ctx, "grep", pattern="alpha", type="go").data["results"] == ["src/b.go"]
    assert call(ctx, "grep", pattern="alpha", glob="*.py").data["results"] == ["src/a.py"]
    ctx_lines = call(ctx, "grep", pattern="return", output_mode="content", **{"-B": 1, "-A": 1})
    assert "src/a.py-1-def alpha():" in ctx_lines.output and "src/a.py-3-# alphabet" in ctx_lines.output
    around = call(ctx, "grep", pattern="return", output_mode="content", **{"-C": 1})
    assert around.output.count("src/a.py-") == 2
    limited = call(ctx, "grep", pattern="a", output_mode="content", head_limit=2)
    assert len(limited.data["results"]) == 2 and "more result(s) not shown" in limited.output


def test_grep_pattern_beginning_with_dash(ctx):
    """grep: a pattern beginning with `-` is a pattern, not an option."""
    _tree(ctx.root)
    result = call(ctx, "grep", pattern="--flag", output_mode="content")
    assert not result.is_error and "notes.txt:2:--flag value" in result.output


def test_grep_no_match_and_bad_regex(ctx):
    """grep: no match is a plain answer; an invalid regex is a clear error."""
    _tree(ctx.root)
    assert call(ctx, "grep", pattern="zzz_not_there").output == "No matches found\n"
    bad = call(ctx, "grep", pattern="(unclosed")
    assert bad.is_error and "regex" in bad.output.lower()


def test_search_survives_a_symlink_loop(ctx):
    """grep and glob follow symlinks and do not hang on a loop (rg reports it and goes on)."""
    (ctx.root / "d").mkdir()
    (ctx.root / "d" / "f.txt").write_text("findme\n")
    os.symlink(ctx.root / "d", ctx.root / "d" / "loop")
    result = call(ctx, "grep", pattern="findme")
    assert "d/f.txt" in result.data["results"] and not result.is_error
    assert any("loop" in w.lower() for w in result.data["warnings"])
    assert "d/f.txt" in call(ctx, "glob", pattern="**/*.txt").data["files"]


def test_glob_patterns_and_default_head_limit_200(ctx):
    """glob: recursive name patterns; head_limit default 200."""
    (ctx.root / "pkg" / "sub").mkdir(parents=True)
    for i in range(250):
        (ctx.root / "pkg" / f"m{i}.py").write_text("")
    (ctx.root / "pkg" / "sub" / "deep.py").write_text("")
    (ctx.root / "pkg" / "readme.md").write_text("")
    result = call(ctx, "glob", pattern="**/*.py")
    assert len(result.data["files"]) == 200 and result.data["total"] == 251
    assert "51 more file(s)" in result.output
    assert call(ctx, "glob", pattern="**/deep.py").data["files"] == ["pkg/sub/deep.py"]
    assert call(ctx, "glob", pattern="*.md", path="pkg").data["files"] == ["pkg/readme.md"]
    assert call(ctx, "glob", pattern="*.md").data["files"] == []
