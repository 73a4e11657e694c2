"""File tools (docs/reference-tools.md#tools-parameters-defaults-and-limits): view, write, edit, find_replace,
move_code."""

from __future__ import annotations

import os

from tests.tools_fixtures import call, ctx, isolated_home  # noqa: F401 - fixtures


def test_view_numbers_lines_and_pages_a_2001_line_file(ctx):
    """view: line numbers; limit default 500; offset is 0-indexed."""
    (ctx.root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 2002)))
    first = call(ctx, "view", file_path="big.txt")
    lines = first.output.splitlines()
    assert lines[0] == "     1\tline 1"
    assert lines[499] == "   500\tline 500"
    assert "continue with offset=500" in first.output and first.data["more"] is True
    last = call(ctx, "view", file_path="big.txt", offset=2000)
    assert last.output.splitlines() == ["  2001\tline 2001"] and last.data["more"] is False
    middle = call(ctx, "view", file_path=str(ctx.root / "big.txt"), offset=10, limit=2)
    assert middle.output.splitlines()[:2] == ["    11\tline 11", "    12\tline 12"]


def test_view_truncates_a_600_character_line(ctx):
    """view: lines longer than 500 characters are truncated."""
    (ctx.root / "wide.txt").write_text("x" * 600 + "\nshort\n")
    result = call(ctx, "view", file_path="wide.txt")
    first = result.output.splitlines()[0]
    assert first.startswith("     1\t" + "x" * 500 + "...") and "x" * 501 not in first
    assert "600 characters" in first and result.data["truncated_lines"] == 1


def test_view_output_is_capped_at_16_kb(ctx):
    """view: output max 16 KB, with the offset to continue from."""
    (ctx.root / "many.txt").write_text("".join("y" * 400 + "\n" for _ in range(1000)))
    result = call(ctx, "view", file_path="many.txt", limit=1000)
    assert len(result.output.encode()) <= 16 * 1024
    assert result.data["capped"] is True and f"offset={result.data['lines']}" in result.output


def test_view_limit_is_capped_at_256000(ctx):
    """view: limit max 256000 (a larger limit is clamped, not an error)."""
    (ctx.root / "a.txt").write_text("a\n")
    assert not call(ctx, "view", file_path="a.txt", limit=10**9).is_error


def test_view_missing_file_suggests_similar_names(ctx):
    """view on a missing file suggests similar file names
    (docs/reference-tools.md#tools-parameters-defaults-and-limits)."""
    (ctx.root / "src").mkdir()
    (ctx.root / "src" / "config.py").write_text("x = 1\n")
    result = call(ctx, "view", file_path="src/confg.py")
    assert result.is_error and "did you mean" in result.output and "config.py" in result.output


def test_write_creates_parents_reports_diff_and_skips_unchanged(ctx):
    """write: creates parent directories, reports a diff, skips an unchanged write."""
    result = call(ctx, "write", file_path="a/b/c.txt", content="one\n")
    assert (ctx.root / "a/b/c.txt").read_text() == "one\n" and "+one" in result.output
    stamp = os.stat(ctx.root / "a/b/c.txt").st_mtime_ns
    again = call(ctx, "write", file_path="a/b/c.txt", content="one\n")
    assert again.data["changed"] is False and "unchanged" in again.output
    assert os.stat(ctx.root / "a/b/c.txt").st_mtime_ns == stamp
    changed = call(ctx, "write", file_path="a/b/c.txt", content="two\n")
    assert "-one" in changed.output and "+two" in changed.output


def test_write_refuses_a_file_changed_on_disk_since_it_was_read(ctx):
    """write: checks for external modification before writing."""
    target = ctx.root / "f.txt"
    target.write_text("original\n")
    call(ctx, "view", file_path="f.txt")
    target.write_text("changed by someone else\n")
    result = call(ctx, "write", file_path="f.txt", content="mine\n")
    assert result.is_error and "modified on disk" in result.output
    assert target.read_text() == "changed by someone else\n"
    call(ctx, "view", file_path="f.txt")
    assert not call(ctx, "write", file_path="f.txt", content="mine\n").is_error


def test_edit_is_all_or_nothing_across_files(ctx):
    """edit: all edits in one call succeed or none do (also across files)."""
    a, b = ctx.root / "a.txt", ctx.root / "b.txt"
    a.write_text("alpha\n")
    b.write_text("beta\n")
    result = call(
        ctx,
        "edit",
        edits=[
            {"file_path": str(a), "old_string": "alpha", "new_string": "ALPHA"},
            {"file_path": str(b), "old_string": "gamma", "new_string": "GAMMA"},
        ],
    )
    assert result.is_error and "edit 2" in result.output and "nothing was changed" in result.output
    assert a.read_text() == "alpha\n" and b.read_text() == "beta\n"
    ok = call(
        ctx,
        "edit",
        edits=[
            {"file_path": str(a), "old_string": "alpha", "new_string": "ALPHA"},
            {"file_path": str(b), "old_string": "beta", "new_string": ""},
        ],
    )
    assert not ok.is_error and a.read_text() == "ALPHA\n" and b.read_text() == "\n"
    assert "-alpha" in ok.output and "+ALPHA" in ok.output


def test_edit_ambiguous_match_says_how_many(ctx):
    """edit: a repeated old_string without replace_all fails and says how many matches."""
    f = ctx.root / "r.txt"
    f.write_text("x = 1\nx = 1\nx = 1\n")
    result = call(ctx, "edit", edits=[{"file_path": str(f), "old_string": "x = 1", "new_string": "x = 2"}])
    assert result.is_error and "matches 3 times" in result.output
    ok = call(
        ctx,
        "edit",
        edits=[{"file_path": str(f), "old_string": "x = 1", "new_string": "x = 2", "replace_all": True}],
    )
    assert not ok.is_error and f.read_text() == "x = 2\n" * 3


def test_edit_empty_old_string_creates_a_file(ctx):
    """edit: empty old_string creates a file; it will not overwrite one with content."""
    path = ctx.root / "new" / "made.txt"
    assert not call(
        ctx, "edit", edits=[{"file_path": str(path), "old_string": "", "new_string": "hi\n"}]
    ).is_error
    assert path.read_text() == "hi\n"
    again = call(ctx, "edit", edits=[{"file_path": str(path), "old_string": "", "new_string": "x"}])
    assert again.is_error and path.read_text() == "hi\n"


def test_edit_preserves_crlf_line_endings(ctx):
    """edit: a CRLF file stays CRLF (line endings preserved)."""
    f = ctx.root / "win.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = call(
        ctx, "edit", edits=[{"file_path": str(f), "old_string": "one\ntwo", "new_string": "1\n2\n2b"}]
    )
    assert not result.is_error
    assert f.read_bytes() == b"1\r\n2\r\n2b\r\nthree\r\n"


def test_find_replace_with_capture_groups_and_glob(ctx):
    """find_replace: regex capture groups $1, $2; file_glob restricts files; a summary is reported."""
    (ctx.root / "src").mkdir()
    (ctx.root / "src" / "a.py").write_text("def old_name(x):\n    return old_name(x)\n")
    (ctx.root / "notes.md").write_text("old_name stays here\n")
    result = call(
        ctx,
        "find_replace",
        find_pattern=r"old_(\w+)",
        replace_text="new_$1_${1}",
        use_regex=True,
        file_glob="**/*.py",
    )
    assert not result.is_error
    assert (ctx.root / "src" / "a.py").read_text() == "def new_name_name(x):\n    return new_name_name(x)\n"
    assert (ctx.root / "notes.md").read_text() == "old_name stays here\n"
    assert result.data["total"] == 2 and "src/a.py: 2 replacement(s)" in result.output
    literal = call(ctx, "find_replace", find_pattern="STAYS", replace_text="$1 moved", ignore_case=True)
    assert (ctx.root / "notes.md").read_text() == "old_name $1 moved here\n" and literal.data["total"] == 1


def test_move_code_moves_and_copies_line_ranges(ctx):
    """move_code: source lines 1-indexed inclusive; target_line inserts after; 0 = beginning; copy keeps."""
    f = ctx.root / "m.txt"
    f.write_text("a\nb\nc\nd\ne\n")
    assert not call(
        ctx,
        "move_code",
        source_file="m.txt",
        source_start=2,
        source_end=3,
        target_file="m.txt",
        target_line=5,
    ).is_error
    assert f.read_text() == "a\nd\ne\nb\nc\n"
    assert not call(
        ctx,
        "move_code",
        source_file="m.txt",
        source_start=4,
        source_end=5,
        target_file="m.txt",
        target_line=0,
    ).is_error
    assert f.read_text() == "b\nc\na\nd\ne\n"
    assert not call(
        ctx,
        "move_code",
        source_file="m.txt",
        source_start=1,
        source_end=1,
        target_file="o.txt",
        target_line=0,
        operation="copy",
    ).is_error
    assert (ctx.root / "o.txt").read_text() == "b\n" and f.read_text() == "b\nc\na\nd\ne\n"
    bad = call(
        ctx,
        "move_code",
        source_file="m.txt",
        source_start=2,
        source_end=4,
        target_file="m.txt",
        target_line=3,
    )
    assert bad.is_error and "inside" in bad.output


def test_invalid_parameters_are_refused_by_the_schema(ctx):
    """Every tool has a JSON schema: a missing required parameter is refused before the tool runs."""
    import pytest

    from engine.tools.base import InvalidParams

    with pytest.raises(InvalidParams, match="file_path"):
        call(ctx, "view")
