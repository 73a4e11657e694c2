"""`env up` / `env down` / `env ps` with real git worktrees and real processes (docs/reference-devstack.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
import devstack_fixtures as fx  # noqa: E402
from devstack_fixtures import BIN, add_worktree, framework, framework_json, get, healthz, pid_alive  # noqa: E402

from tests.waiting import until

demo_repo, stacks_cleanup = fx.demo_repo, fx.stacks_cleanup  # fixtures


def _pids(doc: dict) -> dict[str, int]:
    return {p["name"]: p["pid"] for p in doc["processes"]}


def test_two_worktrees_run_dev_at_once_on_disjoint_ports_and_down_stops_only_one(demo_repo, stacks_cleanup):
    """`env up` and the port-block registry (docs/reference-devstack.md#limits,
    docs/reference-devstack.md#files): host port = base + block*100 per worktree key, two stacks of one
    project run at once; `env down` in one leaves the other running."""
    repo, base = demo_repo
    wt = add_worktree(repo, "feature-a")
    procs = [cli_fork.popen([str(BIN / "framework"), "env", "up", "dev", "--json"], cwd=cwd,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for cwd in (repo, wt)]
    stacks_cleanup.extend(procs)
    docs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        docs.append(json.loads(out))  # one JSON document on stdout
    primary, feature = docs
    assert (primary["key"], primary["block"]) == ("", 0)
    assert (feature["key"], feature["block"]) == ("feature-a", 1)
    assert [p["name"] for p in primary["phases"]] == ["build", "deploy", "host", "frontend"]
    assert primary["phases"][0]["status"] == "done" and primary["phases"][2]["status"] == "done"
    assert {p["name"]: p["ports"] for p in primary["processes"]} == {"api": [base], "web": [base + 1]}
    assert {p["name"]: p["ports"] for p in feature["processes"]} == {"api": [base + 100], "web": [base + 101]}
    for port in (base, base + 1, base + 100, base + 101):
        assert healthz(port), port

    ps = framework_json("env", "ps", cwd=Path("/"))
    assert sorted((s["key"], s["status"]) for s in ps["stacks"]) == [("", "running"), ("feature-a", "running")]

    down = framework_json("env", "down", "dev", cwd=wt)
    assert down["ok"] and [s["key"] for s in down["stacks"]] == ["feature-a"]
    assert {p["outcome"] for p in down["stacks"][0]["processes"]} == {"stopped"}
    for pid in _pids(feature).values():
        until(lambda pid=pid: not pid_alive(pid), what=f"pid {pid} to exit")
    assert not healthz(base + 100) and not healthz(base + 101)
    assert healthz(base) and healthz(base + 1)  # the other worktree's stack is untouched
    assert all(pid_alive(pid) for pid in _pids(primary).values())
    ps = framework_json("env", "ps", cwd=Path("/"))
    assert [s["key"] for s in ps["stacks"]] == [""]

    # local sessions: one per worktree, the stopped one marked so (docs/reference-devstack.md#files)
    from engine.ledger.store import Ledger

    with Ledger.open("demo") as ledger:
        sessions = {s.worktree: s for s in ledger.list_sessions("dev")}
    assert sessions["feature-a"].stopped and sessions["feature-a"].branch == "feature-a"
    assert not sessions[""].stopped and sessions[""].branch == "main" and not sessions[""].dirty


def test_foreign_listener_in_the_block_is_never_signalled(demo_repo, stacks_cleanup):
    """`env down` (docs/reference-devstack.md#ownership-what-env-down-signals): only processes carrying our
    ownership markers are signalled. A process we did not start listening on a block port survives
    `env down`; one holding a service port makes `env up` fail clearly and is left alone."""
    repo, base = demo_repo
    foreign, port = _foreign_listener(repo, base)
    try:
        assert framework("env", "devstack", "key", cwd=repo).returncode == 0
        up = framework_json("env", "up", "dev", "--no-build", cwd=repo)
        assert up["ok"], up
        down = framework_json("env", "down", "--all", cwd=repo)
        assert down["ok"]
        assert foreign.poll() is None and _listening(port)

        blocker = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(base)],
                                   cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            until(lambda: _listening(base), what="blocker")
            out = framework("env", "up", "dev", "--no-build", cwd=repo)
            assert out.returncode == 1
            assert f"port {base}" in out.stderr and "left alone" in out.stderr
            assert blocker.poll() is None
            assert framework_json("env", "ps", cwd=repo)["stacks"] == []
        finally:
            blocker.terminate()
            blocker.wait(timeout=10)
    finally:
        foreign.terminate()
        foreign.wait(timeout=10)


def _foreign_listener(repo: Path, base: int) -> tuple[subprocess.Popen[bytes], int]:
    """A process of ours listening on a port of the block past its service ports (base + 50 ..): free_base
    checks only base + 0..19 of each block, and a port above them can be some connection's local port (the
    system's ephemeral range overlaps the blocks): http.server then exits at once. The next port then."""
    for port in range(base + 50, base + 100):
        if not fx._free(port):
            continue
        proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                                cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until(lambda p=proc, n=port: p.poll() is not None or _listening(n), what=f"a listener on {port}")
        if proc.poll() is None:
            return proc, port
    raise AssertionError(f"no port of {base + 50}..{base + 99} would take a listener")


def _listening(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_a_recorded_pid_without_our_markers_is_left_alone(demo_repo, stacks_cleanup):
    """`env down` (docs/reference-devstack.md#ownership-what-env-down-signals): markers AND the record must
    match; a recorded pid now held by another process (pid reuse, or a tampered record) is never signalled."""
    repo, _ = demo_repo
    up = framework_json("env", "up", "dev", "--no-build", cwd=repo)
    assert up["ok"]
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        record = Path(up["stack_dir"]) / "stack.json"
        doc = json.loads(record.read_text())
        doc["processes"][0]["pid"] = stranger.pid
        record.write_text(json.dumps(doc))
        down = framework_json("env", "down", "dev", cwd=repo)
        outcomes = {p["name"]: p["outcome"] for p in down["stacks"][0]["processes"]}
        assert outcomes == {"api": "left_alone", "web": "stopped", "keeper": "stopped"}
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()
    # the real api process still carries our markers: the safety net in teardown reaps it


def test_env_down_never_signals_the_running_command_or_its_ancestors(demo_repo, stacks_cleanup, tmp_path):
    """`env down` (docs/reference-devstack.md#ownership-what-env-down-signals): never the running command or
    its ancestors. `env down --all` run from inside a process recorded (with genuine markers) in a stack
    leaves that process alone."""
    from engine.devstack import stacks as registry

    repo, _ = demo_repo
    token = "t" * 32
    marker_env = {**os.environ, registry.MARK_STACK: "demo/dev/", registry.MARK_STACK_ID: token,
                  "FRAMEWORK_OWNED_BY": "framework", "FRAMEWORK_INSTANCE": "i1"}
    ready = tmp_path / "go"
    script = (f"import pathlib, subprocess, sys, time\n"
              f"while not pathlib.Path({str(ready)!r}).exists(): time.sleep(0.02)\n"
              f"out = subprocess.run([{str(BIN / 'framework')!r}, 'env', 'down', '--all', '--json'],"
              f" capture_output=True, text=True)\n"
              f"print(out.stdout)\n")
    child = subprocess.Popen([sys.executable, "-c", script], env=marker_env, cwd=repo, stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    stack = registry.Stack(id=registry.stack_id("demo", "dev", ""), token=token, project="demo",
                           project_root=str(repo), env="dev", key="", block=0, port_offset=0, started_at=0,
                           processes=[registry.StackProcess(name="self", kind="workload", pid=child.pid,
                                                            start_time=until(lambda: registry.start_time(child.pid)),
                                                            instance="i1")])
    registry.save(stack)
    ready.touch()
    out, _ = child.communicate(timeout=60)
    doc = json.loads(out)
    assert doc["stacks"][0]["processes"][0]["outcome"] == "left_alone"
    assert child.returncode == 0  # it lived to print the answer


def test_up_replaces_an_existing_stack_and_json_is_one_document(demo_repo, stacks_cleanup):
    """`env up` (docs/reference-devstack.md#commands): one stack per (project, env): an existing stack is
    stopped first."""
    repo, base = demo_repo
    first = framework_json("env", "up", "dev", "--no-build", "-D", "greeting=first", cwd=repo)
    assert json.loads(get(base))["message"] == "first"
    second = framework_json("env", "up", "dev", "--no-build", "-D", "greeting=second", cwd=repo)
    assert second["ok"] and second["replaced"]
    for pid in _pids(first).values():
        assert not pid_alive(pid)
    assert json.loads(get(base))["message"] == "second"
    assert [s["env"] for s in framework_json("env", "ps", cwd=repo)["stacks"]] == ["dev"]


def test_up_refuses_non_local_and_bad_render_options(demo_repo, stacks_cleanup):
    """`env up` (docs/reference-devstack.md#exit-codes, docs/reference-devstack.md#env-up-flags): local only
    (pointing to env deploy); -D names must be declared; derived options are rejected; --target must name a workload."""
    repo, _ = demo_repo
    out = framework("env", "up", "staging", "--no-build", cwd=repo)
    assert out.returncode == 1 and "env deploy staging" in out.stderr
    doc = framework_json("env", "up", "dev", "-D", "worktree=x", cwd=repo)
    assert doc["exit_code"] == 2 and "derived" in doc["error"]["message"]
    doc = framework_json("env", "up", "dev", "-D", "nope=1", cwd=repo)
    assert doc["exit_code"] == 2 and "not declared" in doc["error"]["message"]
    doc = framework_json("env", "up", "dev", "--no-build", "--target", "ghost", cwd=repo)
    assert doc["exit_code"] == 2 and "ghost" in doc["error"]["message"]
    assert framework_json("env", "ps", cwd=repo)["stacks"] == []


def test_target_runs_one_workload_and_no_seed_is_accepted(demo_repo, stacks_cleanup):
    """`env up` (docs/reference-devstack.md#env-up-flags): --target scopes the stack; --no-seed is accepted
    (no seed hook exists yet)."""
    repo, base = demo_repo
    doc = framework_json("env", "up", "dev", "--target", "api", "--no-seed", "--no-deploy", cwd=repo)
    assert doc["ok"] and [p["name"] for p in doc["processes"]] == ["api"]
    assert doc["seed"].startswith("disabled")
    assert {p["name"]: p["status"] for p in doc["phases"]}["deploy"] == "skipped"
    assert healthz(base) and not healthz(base + 1)


def test_background_beats_watch_and_returns(demo_repo, stacks_cleanup):
    """`env up` (docs/reference-devstack.md#env-up-flags): --background beats --watch: the command returns,
    processes keep running."""
    repo, base = demo_repo
    doc = framework_json("env", "up", "dev", "--no-build", "--watch", "--background", cwd=repo)
    assert doc["ok"] and not doc["held"] and not doc["watch"]
    assert healthz(base)


def test_watch_restarts_a_service_after_its_file_changes(demo_repo, stacks_cleanup):
    """`env up --watch` (docs/reference-devstack.md#env-up-flags): rebuild and restart what changed
    (watchdog); only that service."""
    repo, base = demo_repo
    proc = cli_fork.popen([str(BIN / "framework"), "env", "up", "dev", "--watch"], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stacks_cleanup.append(proc)

    def running() -> dict[str, int] | None:
        stacks = framework_json("env", "ps", cwd=repo)["stacks"]
        if stacks and stacks[0]["status"] == "running" and healthz(base) and healthz(base + 1):
            return {p["name"]: p["pid"] for p in stacks[0]["processes"]}
        return None

    before = until(running, timeout=60, what="the watched stack")
    main = repo / "services" / "api" / "main.py"
    main.write_text(main.read_text().replace('"hello"', '"changed"').replace("# noqa", "#  noqa"))
    try:
        after = until(lambda: (p := running()) and p["api"] != before["api"] and p, timeout=60, what="api restart")
    except AssertionError:
        proc.send_signal(signal.SIGINT)
        raise AssertionError(f"no restart; env up said: {proc.communicate(timeout=30)[1]}") from None
    assert after["web"] == before["web"]  # web's files did not change
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=90)  # a ceiling: the stack's teardown stops each service in turn (slow on a loaded machine)
    assert proc.returncode == 130
    assert "restarted api" in proc.stderr.read()
    for pid in after.values():
        until(lambda pid=pid: not pid_alive(pid), what="teardown")
    assert framework_json("env", "ps", cwd=repo)["stacks"] == []


def test_background_stack_keeps_its_local_session_fresh(demo_repo, stacks_cleanup, monkeypatch):
    """Local session (docs/reference-devstack.md#files) refreshed while a stack runs (a background stack's keeper
    refreshes it); `env down` marks it stopped and stops the keeper too."""
    from engine.devstack.keeper import REFRESH_ENV
    from engine.ledger.store import Ledger

    repo, _ = demo_repo
    monkeypatch.setenv(REFRESH_ENV, "0.1")
    up = framework_json("env", "up", "dev", "--no-build", cwd=repo)
    assert up["ok"]

    def refreshed_at() -> float:
        with Ledger.open("demo") as ledger:
            return ledger.list_sessions("dev")[0].refreshed_at

    first = refreshed_at()
    until(lambda: refreshed_at() > first, what="the keeper to refresh the session")
    stack = framework_json("env", "ps", cwd=repo)["stacks"][0]
    keeper = next(p for p in stack["processes"] if p["kind"] == "keeper")
    down = framework_json("env", "down", "dev", cwd=repo)
    assert {p["name"]: p["outcome"] for p in down["stacks"][0]["processes"]}["keeper"] == "stopped"
    assert not pid_alive(keeper["pid"])
    with Ledger.open("demo") as ledger:
        assert ledger.list_sessions("dev")[0].stopped
