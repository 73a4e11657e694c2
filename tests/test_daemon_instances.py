"""`platform daemon ls` and its engine reader (a daemon instance = directory under
~/.platform/instances with an advisory lock and a runtime record; `daemon ls` reports RUNNING from the
lock and the record separately: docs/reference-webhooks.md#daemon-instances-platform-daemon-ls-daemon-screen-key-5)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.daemon.instances import list_instances
from tests.conftest import run_cli
from tests.daemon_fixtures import instances  # noqa: F401


def test_running_comes_from_the_lock_and_the_record_is_reported_separately(instances) -> None:  # noqa: F811
    """`daemon ls` (docs/reference-daemon.md#platform-daemon): running from the lock held by a live process;
    running without record = died before publishing or still starting; record without running = leftover."""
    root, holder = instances
    got = {i.name: i for i in list_instances().instances}
    assert list(got) == ["main", "old", "starting"]
    assert got["main"].running and got["main"].state == "awaiting_credentials" and got["main"].note == "running"
    assert not got["old"].running and got["old"].state == "connected" and "leftover" in got["old"].note
    assert got["starting"].running and got["starting"].record is None and "still starting" in got["starting"].note
    # The kernel drops the lock with its holder: nothing is RUNNING any more.
    holder.stdin.close()
    holder.wait(10)
    after = {i.name: i for i in list_instances().instances}
    assert not any(i.running for i in after.values())
    assert "leftover" in after["main"].note and after["starting"].note == "not running, no record"


def test_daemon_ls_command_human_and_json(instances, tmp_path: Path) -> None:  # noqa: F811
    """`platform daemon ls [--json]` over the same reader; an unreadable record is reported, not fatal."""
    root, _holder = instances
    (root / "broken").mkdir()
    (root / "broken" / "runtime.json").write_text("{not json")
    done = run_cli("platform", "daemon", "ls", "--json", cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ok"] and doc["home"] == str(root)
    rows = {i["name"]: i for i in doc["instances"]}
    assert rows["main"]["running"] and rows["main"]["state"] == "awaiting_credentials"
    assert "unreadable runtime record" in rows["broken"]["note"] and not rows["broken"]["running"]
    human = run_cli("platform", "daemon", "ls", cwd=tmp_path)
    assert human.exit_code == 0 and "RUNNING" in human.stdout and "awaiting_credentials" in human.stdout


def test_no_instances_directory_is_an_empty_list(tmp_path: Path) -> None:
    """No ~/.platform/instances yet: an empty list and exit 0, never an error."""
    done = run_cli("platform", "daemon", "ls", cwd=tmp_path)
    assert done.exit_code == 0 and "no daemon instances" in done.stdout
