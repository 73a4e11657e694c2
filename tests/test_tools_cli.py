"""`platform tools list` and `platform tools call` (docs/reference-tools.md#commands, output conventions)."""

from __future__ import annotations

import json
import subprocess
import sys

import cli_fork

from tests.tools_fixtures import ROOT, isolated_home, subprocess_env  # noqa: F401 - fixtures


def _platform(args, home, cwd):
    return cli_fork.run(
        [sys.executable, "-m", "app.main", "platform", *args],
        capture_output=True,
        text=True,
        env={**subprocess_env(home), "PYTHONPATH": str(ROOT)},
        cwd=cwd,
    )


def test_tools_call_prints_exactly_what_the_agent_sees(tmp_path, isolated_home):
    """tools call: the exact result text on stdout; an error result exits 1; --json is one document."""
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    ok = _platform(
        ["tools", "call", "view", "--params", '{"file_path": "a.txt", "offset": 1}'], isolated_home, tmp_path
    )
    assert ok.returncode == 0 and ok.stdout == "     2\tbeta\n"
    (tmp_path / "p.json").write_text(json.dumps({"pattern": "-x b", "output_mode": "content"}))
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "b.txt").write_text("a -x b\n")
    grep = _platform(
        ["tools", "call", "grep", "--params", "@p.json", "--root", "proj", "--json"], isolated_home, tmp_path
    )
    doc = json.loads(grep.stdout)
    assert grep.returncode == 0 and doc["ok"] and doc["output"] == "b.txt:1:a -x b\n"
    missing = _platform(
        ["tools", "call", "view", "--params", '{"file_path": "zzz.txt"}', "--json"], isolated_home, tmp_path
    )
    doc = json.loads(missing.stdout)
    assert missing.returncode == 1 and doc["ok"] is False and doc["is_error"] is True
    assert doc["error"]["code"] == "not_found"


def test_tools_call_bad_input_exit_2(tmp_path, isolated_home):
    """tools call: unknown tool, invalid JSON or parameters: clear error, exit 2, no traceback."""
    for args, words in [
        (["nope"], "unknown tool"),
        (["view", "--params", "{bad"], "not valid JSON"),
        (["view", "--params", '{"limit": 3}'], "file_path"),
        (["view", "--params", "@missing.json"], "cannot read parameters file"),
    ]:
        result = _platform(["tools", "call", *args], isolated_home, tmp_path)
        assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr


def test_background_process_survives_between_cli_calls(tmp_path, isolated_home):
    """bash run_in_background through `tools call`: later calls in the same session list and kill it."""
    started = _platform(
        ["tools", "call", "bash", "--json", "--params", '{"command": "sleep 30", "run_in_background": true}'],
        isolated_home,
        tmp_path,
    )
    pid_id = json.loads(started.stdout)["data"]["process_id"]
    listed = _platform(["tools", "call", "bash_list", "--json"], isolated_home, tmp_path)
    assert [p["id"] for p in json.loads(listed.stdout)["data"]["processes"]] == [pid_id]
    killed = _platform(
        ["tools", "call", "bash_kill", "--params", json.dumps({"process_id": pid_id}), "--json"],
        isolated_home,
        tmp_path,
    )
    assert json.loads(killed.stdout)["data"]["killed"] is True


def test_tools_list_with_filter(tmp_path, isolated_home):
    """tools list --filter applies a tool_filter; malformed entries exit 2."""
    listed = _platform(
        ["tools", "list", "--filter", "tag:execution", "--filter", "!bash_kill", "--json"],
        isolated_home,
        tmp_path,
    )
    doc = json.loads(listed.stdout)
    assert [t["name"] for t in doc["tools"]] == ["bash", "bash_list", "bash_output"]
    assert doc["tools"][0]["input_schema"]["properties"]["timeout"]["type"] == "integer"
    everything = json.loads(_platform(["tools", "list", "--json"], isolated_home, tmp_path).stdout)
    assert len(everything["tools"]) == 28
    bad = _platform(["tools", "list", "--filter", "spawn:broken"], isolated_home, tmp_path)
    assert bad.returncode == 2 and "spawn" in bad.stderr


def test_write_refuses_external_change_between_cli_calls(tmp_path, isolated_home):
    """write checks for external modification also when view and write are separate `tools call`s."""
    target = tmp_path / "f.txt"
    target.write_text("v1\n")
    assert _platform(["tools", "call", "view", "--params", '{"file_path": "f.txt"}'], isolated_home,
                     tmp_path).returncode == 0
    target.write_text("changed elsewhere\n")
    refused = _platform(["tools", "call", "write", "--params", '{"file_path": "f.txt", "content": "v2"}'],
                        isolated_home, tmp_path)
    assert refused.returncode == 1 and "modified on disk" in refused.stdout
    assert target.read_text() == "changed elsewhere\n"
