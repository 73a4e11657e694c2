"""Port blocks `.framework/blocks.json` and `env devstack ...` (docs/reference-devstack.md#commands,
docs/reference-devstack.md#limits)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from devstack_fixtures import BIN, add_worktree, framework, framework_json, make_demo_repo  # noqa: E402

from tests.waiting import until


def _repo(tmp_path: Path, max_stacks: int = 8) -> Path:
    return make_demo_repo(tmp_path, 30000, max_stacks=max_stacks)  # no process listens here: ports are only numbers


def _registry(repo: Path) -> dict:
    return json.loads((repo / ".framework" / "blocks.json").read_text())["blocks"]


def test_key_and_port_on_primary_and_worktree(tmp_path):
    """docs/reference-devstack.md#limits: the primary checkout's key is "" (block 0); port = base + block*100."""
    repo = _repo(tmp_path)
    wt = add_worktree(repo, "feature-x")
    assert framework("env", "devstack", "key", cwd=repo).stdout == "\n"
    assert framework("env", "devstack", "key", cwd=wt).stdout == "feature-x\n"
    assert framework("env", "devstack", "port", "8080", cwd=repo).stdout == "8080\n"
    assert framework("env", "devstack", "port", "8080", cwd=wt).stdout == "8180\n"
    assert framework("env", "devstack", "port", "5432", cwd=wt).stdout == "5532\n"  # same block, any base
    doc = framework_json("env", "devstack", "port", "3000", cwd=wt / "services")  # from a subdirectory too
    assert (doc["key"], doc["block"], doc["port"]) == ("feature-x", 1, 3100)
    assert (wt / ".framework").exists() is False  # one table, in the primary checkout
    assert _registry(repo)["feature-x"]["origin"] == str(wt)


def test_parallel_port_calls_never_hand_out_one_block_twice(tmp_path):
    """docs/reference-devstack.md#files: allocation is race-free across processes (file lock + atomic write)."""
    repo = _repo(tmp_path)
    trees = [add_worktree(repo, f"wt{i}") for i in range(7)]
    procs = [cli_fork.popen([str(BIN / "framework"), "env", "devstack", "port", "4000"], cwd=wt,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for wt in trees]
    ports = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        ports.append(int(out))
    assert sorted(ports) == [4100 + 100 * i for i in range(7)]
    blocks = _registry(repo)
    assert sorted(e["block"] for e in blocks.values()) == list(range(1, 8))


def test_ceiling_is_dev_stack_max_stacks(tmp_path):
    """docs/reference-devstack.md#limits: dev_stack.max_stacks blocks at most; exceeding it is a clear error
    (exit 1)."""
    repo = _repo(tmp_path, max_stacks=3)
    a, b, c = (add_worktree(repo, n) for n in ("a", "b", "c"))
    assert framework("env", "devstack", "port", "9000", cwd=a).stdout == "9100\n"
    assert framework("env", "devstack", "port", "9000", cwd=b).stdout == "9200\n"
    out = framework("env", "devstack", "port", "9000", cwd=c)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "all 3 blocks (dev_stack.max_stacks)" in out.stderr and "prune" in out.stderr
    assert framework("env", "devstack", "port", "9000", cwd=repo).stdout == "9000\n"  # block 0 is never short
    doc = framework_json("env", "devstack", "port", "65500", cwd=a)
    assert doc["exit_code"] == 2 and "not a valid port" in doc["error"]["message"]


def test_list_labels_and_stacks_only(tmp_path):
    """`env devstack list` (docs/reference-devstack.md#commands): holders labelled dev stack, derived
    port-block or standalone."""
    from engine.devstack.blocks import allocate
    from engine.project import find_project

    repo = _repo(tmp_path)
    wt = add_worktree(repo, "feat")
    other = add_worktree(repo, "other")
    framework("env", "devstack", "port", "8000", cwd=wt)
    framework("env", "devstack", "port", "8000", "--key", "tools", cwd=repo)
    allocate(find_project(other), kind="dev_stack")
    rows = {r["key"]: r for r in framework_json("env", "devstack", "list", cwd=repo)["blocks"]}
    assert {k: r["label"] for k, r in rows.items()} == {
        "feat": "derived port-block", "tools": "standalone", "other": "dev stack"}
    assert rows["tools"]["origin"] is None
    assert framework("env", "devstack", "list", "--stacks-only", cwd=repo).stdout == "other\n"
    doc = framework_json("env", "devstack", "list", "--stacks-only", cwd=repo)  # group-level --json works too
    assert [r["key"] for r in doc["blocks"]] == ["other"]
    assert json.loads(framework("env", "devstack", "--json", "key", cwd=wt).stdout)["key"] == "feat"


def test_prune_reclaims_only_blocks_of_vanished_worktrees(tmp_path):
    """`env devstack prune` (docs/reference-devstack.md#commands): reclaims blocks of worktrees that no
    longer exist; never standalone keys, the default key or entries without a recorded origin."""
    repo = _repo(tmp_path)
    gone, kept = add_worktree(repo, "gone"), add_worktree(repo, "kept")
    for cwd in (repo, gone, kept):
        framework("env", "devstack", "port", "8000", cwd=cwd)
    framework("env", "devstack", "port", "8000", "--key", "solo", cwd=repo)
    path = repo / ".framework" / "blocks.json"
    doc = json.loads(path.read_text())
    doc["blocks"]["legacy"] = {"block": 6, "kind": "derived", "origin": None}
    path.write_text(json.dumps(doc))
    shutil.rmtree(gone)

    dry = framework_json("env", "devstack", "prune", "--dry-run", cwd=repo)
    assert [e["key"] for e in dry["reclaimed"]] == ["gone"] and not dry["applied"]
    assert "gone" in _registry(repo)
    done = framework_json("env", "devstack", "prune", cwd=repo)
    assert [e["key"] for e in done["reclaimed"]] == ["gone"] and done["applied"]
    assert sorted(_registry(repo)) == ["", "kept", "legacy", "solo"]
    reasons = {k["key"]: k["reason"] for k in done["kept"]}
    assert reasons == {"": "default key", "kept": "worktree exists", "legacy": "no recorded origin",
                       "solo": "standalone key"}


def test_release_is_a_dry_run_unless_apply(tmp_path):
    """`env devstack release <key>` (docs/reference-devstack.md#commands): dry run unless --apply; the freed
    block is reused."""
    repo = _repo(tmp_path)
    a = add_worktree(repo, "a")
    framework("env", "devstack", "port", "8000", cwd=a)
    dry = framework("env", "devstack", "release", "a", cwd=repo)
    assert dry.returncode == 0 and "would release key 'a'" in dry.stdout and "a" in _registry(repo)
    done = framework_json("env", "devstack", "release", "a", "--apply", cwd=repo)
    assert done["applied"] and "a" not in _registry(repo)
    assert framework_json("env", "devstack", "release", "a", cwd=repo)["exit_code"] == 1
    assert framework_json("env", "devstack", "release", "", cwd=repo)["exit_code"] == 2
    b = add_worktree(repo, "b")
    assert framework("env", "devstack", "port", "8000", cwd=b).stdout == "8100\n"


def test_a_crash_mid_write_leaves_the_registry_whole(tmp_path):
    """docs/reference-devstack.md#files: allocation survives a crash mid-write: the lock dies with its holder and the
    table is the old one, never half a file."""
    repo = _repo(tmp_path)
    a, b = add_worktree(repo, "a"), add_worktree(repo, "b")
    framework("env", "devstack", "port", "8000", cwd=a)
    before = (repo / ".framework" / "blocks.json").read_bytes()
    ready = tmp_path / "ready"
    script = f"""
import os, time
from pathlib import Path
from engine.devstack.blocks import _locked
path = Path({str(repo / '.framework' / 'blocks.json')!r})
with _locked(path):
    tmp = path.with_name(f".{{path.name}}.{{os.getpid()}}.tmp")
    tmp.write_bytes(b'{{"version": 1, "blocks": {{"half')
    Path({str(ready)!r}).touch()
    time.sleep(120)
"""
    writer = subprocess.Popen([sys.executable, "-c", script])
    try:
        until(ready.exists, what="the writer to hold the lock mid-write")
        blocked = cli_fork.popen([str(BIN / "framework"), "env", "devstack", "port", "8000"], cwd=b,
                                   stdout=subprocess.PIPE, text=True)
        # the second allocation waits on the lock (the kernel lists it as a blocked flock waiter)
        until(lambda: any(line.split()[1:2] == ["->"] and f" {blocked.pid} " in line
                         for line in Path("/proc/locks").read_text().splitlines()), what="a blocked flock waiter")
        assert blocked.poll() is None
        assert (repo / ".framework" / "blocks.json").read_bytes() == before
        writer.send_signal(signal.SIGKILL)  # the crash
        out, _ = blocked.communicate(timeout=60)
    finally:
        writer.kill()
        writer.wait()
    assert blocked.returncode == 0 and out == "8200\n"
    assert sorted(_registry(repo)) == ["a", "b"]


def test_unreadable_registry_and_bad_config_are_clear_errors(tmp_path):
    """Bad input: a clear error and exit 1, never a traceback."""
    repo = _repo(tmp_path)
    (repo / ".framework").mkdir()
    (repo / ".framework" / "blocks.json").write_text("{not json")
    out = framework("env", "devstack", "port", "8000", cwd=repo)
    assert out.returncode == 1 and "not a valid port-block registry" in out.stderr and "Traceback" not in out.stderr
    cfg = repo / "framework.yaml"
    cfg.write_text(re.sub(r"max_stacks: \d+", "max_stacks: lots", cfg.read_text()))
    (repo / ".framework" / "blocks.json").unlink()
    out = framework("env", "devstack", "port", "8000", cwd=repo)
    assert out.returncode == 1 and "dev_stack.max_stacks" in out.stderr
