"""`ci summarize <files...>` (docs/reference-ci.md#commands): our real `--json` documents rendered as
GitHub-flavoured Markdown, appended to $GITHUB_STEP_SUMMARY; exit 0 whatever they say, 1 only when
an input is unreadable (naming it). The Markdown is parsed by markdown-it's GFM table rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from markdown_it import MarkdownIt

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from ci_fixtures import project_fixture  # noqa: E402,F401
from deploy_fixtures import FRAMEWORK_BIN, demo_fixture  # noqa: E402,F401


def html(markdown: str) -> str:
    return MarkdownIt("gfm-like").render(markdown)


def save(demo, name: str, *args: str) -> Path:
    proc = demo.run(*args, "--json")
    path = demo.root.parent / f"{name}.json"
    path.write_text(proc.stdout)
    return path


def test_deploy_gate_and_verify_documents_render_as_gfm_tables(demo):
    """Deploy, gate list, release verify and ci run documents each render with their table; a failing
    document still exits 0; a `|` inside a cell does not break its table."""
    deploy = save(demo, "deploy", "env", "deploy", "dev", "--yes", "--stability-window", "0.3")
    demo.run("gate", "record", "dev", "--name", "smoke", "--status", "failed", "--summary", "a|b broke",
             check=True)
    gates = save(demo, "gates", "gate", "list", "dev")
    release = json.loads(deploy.read_text())["target"]["release"]
    verify = save(demo, "verify", "release", "verify", release, "--strict")  # file: UNVERIFIABLE, exit 1
    run = save(demo, "run", "ci", "run", "none-such")  # exit 5, empty
    summary = demo.root.parent / "step-summary.md"
    summary.write_text("## earlier step\n")
    proc = cli_fork.run([FRAMEWORK_BIN, "ci", "summarize", str(deploy), str(gates), str(verify), str(run)],
                          cwd=demo.root, env={**demo.env, "GITHUB_STEP_SUMMARY": str(summary)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    md = proc.stdout
    assert "### ✅ deploy — `deploy.json`" in md and f"release **{release}**" in md
    assert "### ❌ release-verify — `verify.json` (exit 1)" in md and "UNVERIFIABLE" in md
    assert "### ❌ ci-run — `run.json` (exit 5)" in md and "timeline_empty" in md
    page = html(md)
    assert page.count("<table>") == 3  # rollout, gates, checks; the empty timeline says (none)
    assert "<td>a|b broke</td>" in page  # escaped pipe stays inside its cell
    assert "<td>api</td>" in page and "<td>ready</td>" in page  # the rollout table
    # appended to the step summary, after what earlier steps wrote
    text = summary.read_text()
    assert text.startswith("## earlier step\n") and md in text


def test_test_run_document_and_the_json_form(project, go_streams):
    """A verify-test-run document renders its violations and packages; --json carries the Markdown and
    each input's kind, ok and exit code."""
    src = go_streams.write("fail-sum", "fail", "skip")
    tr = project.root / "tr.json"
    tr.write_text(project.run("ci", "verify-test-run", "--from", str(src), "--json").stdout)
    code, doc = project.json("ci", "summarize", str(tr))
    assert code == 0 and doc["step_summary"] is None
    assert doc["inputs"] == [{"path": str(tr), "kind": "test-run", "ok": False, "exit_code": 1, "error": None}]
    page = html(doc["markdown"])
    assert "<td>zero-evidence</td>" in page and "<td>example.test/m/fail</td>" in page


def test_unreadable_inputs_exit_1_naming_each(project, go_streams):
    """Exit 1 only when an input is unreadable: a missing file, not JSON, not one object; each named,
    and the readable ones still rendered."""
    good = project.root / "good.json"
    good.write_text(project.run("ci", "summarize", "--json", str(project.root / "absent.json")).stdout)
    bad_json = project.root / "bad.json"
    bad_json.write_text("{not json")
    array = project.root / "array.json"
    array.write_text("[]")
    code, doc = project.json("ci", "summarize", str(good), str(bad_json), str(array),
                             str(project.root / "missing.json"))
    assert code == 1 and doc["error"]["code"] == "input_unreadable"
    for name in ("bad.json", "array.json", "missing.json"):
        assert name in doc["error"]["message"]
    assert "good.json" not in doc["error"]["message"]
    assert [i["kind"] for i in doc["inputs"]] == ["document", "unreadable", "unreadable", "unreadable"]
    assert "### ❌ document — `good.json` (exit 1)" in doc["markdown"]
