"""The patch tool (docs/reference-tools.md#tools-parameters-defaults-and-limits): the `*** Begin Patch`
format, atomic across files."""

from __future__ import annotations

from tests.tools_fixtures import call, ctx, isolated_home  # noqa: F401 - fixtures


def test_update_add_delete_in_one_patch(ctx):
    """patch: update (with an @@ anchor), add and delete files."""
    (ctx.root / "app.py").write_text("import os\n\ndef main():\n    print('hi')\n    return 0\n")
    (ctx.root / "old.txt").write_text("bye\n")
    text = """*** Begin Patch
*** Update File: app.py
@@ def main():
-    print('hi')
+    print('hello')
     return 0
*** Add File: docs/new.md
+# New
+text
*** Delete File: old.txt
*** End Patch"""
    result = call(ctx, "patch", patch_text=text)
    assert not result.is_error, result.output
    assert (ctx.root / "app.py").read_text() == "import os\n\ndef main():\n    print('hello')\n    return 0\n"
    assert (ctx.root / "docs/new.md").read_text() == "# New\ntext\n"
    assert not (ctx.root / "old.txt").exists()


def test_anchor_picks_among_repeated_lines(ctx):
    """patch: the @@ anchor selects which of several identical blocks changes (repeated lines)."""
    (ctx.root / "r.py").write_text(
        "def a():\n    return 1\n\ndef b():\n    return 1\n\ndef c():\n    return 1\n"
    )
    text = (
        "*** Begin Patch\n*** Update File: r.py\n@@ def b():\n-    return 1\n+    return 2\n*** End Patch\n"
    )
    assert not call(ctx, "patch", patch_text=text).is_error
    assert (
        ctx.root / "r.py"
    ).read_text() == "def a():\n    return 1\n\ndef b():\n    return 2\n\ndef c():\n    return 1\n"


def test_end_of_file_marker_matches_the_last_occurrence(ctx):
    """patch: `*** End of File` anchors a chunk at the end of the file."""
    (ctx.root / "e.txt").write_text("x\ny\nx\ny\n")
    text = "*** Begin Patch\n*** Update File: e.txt\n x\n-y\n+z\n*** End of File\n*** End Patch"
    assert not call(ctx, "patch", patch_text=text).is_error
    assert (ctx.root / "e.txt").read_text() == "x\ny\nx\nz\n"


def test_heredoc_wrapped_patch_is_accepted(ctx):
    """patch: a patch wrapped in a shell heredoc (apply_patch <<'EOF' ... EOF) is applied."""
    (ctx.root / "h.txt").write_text("one\n")
    text = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: h.txt\n-one\n+two\n*** End Patch\nEOF\n"
    assert not call(ctx, "patch", patch_text=text).is_error
    assert (ctx.root / "h.txt").read_text() == "two\n"


def test_later_hunk_failing_applies_nothing(ctx):
    """patch: atomic across files: when a later hunk fails, no file is changed."""
    (ctx.root / "a.txt").write_text("alpha\n")
    (ctx.root / "b.txt").write_text("beta\n")
    text = """*** Begin Patch
*** Update File: a.txt
-alpha
+ALPHA
*** Add File: c.txt
+new
*** Update File: b.txt
@@
-gamma
+GAMMA
*** End Patch"""
    result = call(ctx, "patch", patch_text=text)
    assert result.is_error and "nothing was applied" in result.output and "b.txt" in result.output
    assert (ctx.root / "a.txt").read_text() == "alpha\n"
    assert (ctx.root / "b.txt").read_text() == "beta\n"
    assert not (ctx.root / "c.txt").exists()


def test_context_matching_tolerates_whitespace_and_unicode_punctuation(ctx):
    """patch: context matches exactly, then ignoring trailing whitespace, both ends, Unicode punctuation."""
    (ctx.root / "w.txt").write_text("a = 1   \n  b = \u201cq\u201d \u2014 x\n")
    text = '*** Begin Patch\n*** Update File: w.txt\n a = 1\n-b = "q" - x\n+b = 2\n*** End Patch'
    assert not call(ctx, "patch", patch_text=text).is_error
    # As in the reference, the matched segment (context included) becomes the patch's new lines.
    assert (ctx.root / "w.txt").read_text() == "a = 1\nb = 2\n"


def test_crlf_file_keeps_crlf(ctx):
    """patch: a CRLF file keeps its line endings."""
    (ctx.root / "c.txt").write_bytes(b"l1\r\nl2\r\n")
    assert not call(
        ctx, "patch", patch_text="*** Begin Patch\n*** Update File: c.txt\n-l2\n+L2\n*** End Patch"
    ).is_error
    assert (ctx.root / "c.txt").read_bytes() == b"l1\r\nL2\r\n"


def test_malformed_patches_are_refused(ctx):
    """patch: first line `*** Begin Patch`, last line `*** End Patch`, known section headers."""
    for text, words in [
        ("no header", "Begin Patch"),
        ("*** Begin Patch\n*** Update File: x", "End Patch"),
        ("*** Begin Patch\nrandom\n*** End Patch", "header"),
    ]:
        result = call(ctx, "patch", patch_text=text)
        assert result.is_error and words in result.output


def test_move_to_renames_while_updating(ctx):
    """patch: `*** Move to:` after an Update header renames the file."""
    (ctx.root / "from.txt").write_text("v1\n")
    text = "*** Begin Patch\n*** Update File: from.txt\n*** Move to: to.txt\n-v1\n+v2\n*** End Patch"
    assert not call(ctx, "patch", patch_text=text).is_error
    assert (ctx.root / "to.txt").read_text() == "v2\n" and not (ctx.root / "from.txt").exists()
