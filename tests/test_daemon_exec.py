"""The daemon executes what the server asks over its one stream (shell, file,
tool-server and terminal execution: docs/reference-daemon.md#execution-on-the-daemon-with-its-limits)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.gateway_fixtures import Stack, stack  # noqa: F401
from tests.waiting import until


def test_shell_streams_output_exit_code_env_stdin_and_cwd(stack: Stack) -> None:
    """Shell: cwd inside the allowed roots, env, stdin, stdout/stderr and the exit code come back."""
    (stack.work / "sub").mkdir(exist_ok=True)
    r = stack.api("POST", "/dev/shell", json={"command": "pwd; echo $GREETING; cat; echo oops >&2; exit 3",
                                              "cwd": "sub", "env": {"GREETING": "hi"}, "stdin": "from-stdin"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["stdout"].splitlines() == [str((stack.work / "sub").resolve()), "hi", "from-stdin"]
    assert doc["stderr"] == "oops\n" and doc["exit_code"] == 3 and not doc["timed_out"]


def test_shell_output_streams_and_cancel_kills_the_process_group(stack: Stack) -> None:
    """Shell: stdout streams while the command runs (NDJSON lines), and a caller that goes away
    kills the command (its whole process group) on the daemon."""
    import httpx

    marker = stack.work / "still-running"
    command = f"sleep 30 & echo $! > {stack.work}/bg.pid; echo started; wait; touch {marker}"
    with httpx.stream("POST", stack.srv.url + "/api/daemons/dev/shell", timeout=30,
                      json={"command": command, "stream": True},
                      headers={"Authorization": f"Bearer {stack.token}"}) as r:
        lines = r.iter_lines()
        first = json.loads(next(lines))
        assert first == {"stream": "stdout", "data": "started\n"}
    pid = int((stack.work / "bg.pid").read_text())
    until(lambda: not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z",
          what="the cancelled command's process group to be killed")
    assert not marker.exists()


def test_shell_timeout_and_bad_cwd(stack: Stack) -> None:
    """Shell limits: a timeout kills the command (timed_out, exit 137); a cwd outside the roots is
    refused with outside_roots (403) and nothing runs."""
    r = stack.api("POST", "/dev/shell", json={"command": "sleep 20", "timeout_ms": 300})
    assert r.status_code == 200 and r.json()["timed_out"] is True and r.json()["exit_code"] == 137
    r = stack.api("POST", "/dev/shell", json={"command": "touch /tmp/never", "cwd": "/"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "outside_roots"
    r = stack.api("POST", "/dev/shell", json={"command": 42})
    assert r.status_code == 400 and r.json()["error"]["code"] == "usage"


def test_files_write_read_list_stat(stack: Stack) -> None:
    """Files: an atomic write, a read with offset and limit, a listing and a stat."""
    body = b"0123456789" * 1000
    r = stack.api("POST", "/dev/files/write", params={"path": "data/blob.bin"}, content=body)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"  # no parent: nothing written
    (stack.work / "data").mkdir(exist_ok=True)
    r = stack.api("POST", "/dev/files/write", params={"path": "data/blob.bin", "mode": "600"}, content=body)
    assert r.status_code == 200, r.text
    assert r.json()["size"] == 10_000 and r.json()["mode"] == "0600"
    assert (stack.work / "data" / "blob.bin").read_bytes() == body
    assert [p.name for p in (stack.work / "data").iterdir()] == ["blob.bin"]  # no temp file left
    r = stack.api("POST", "/dev/files/read", json={"path": "data/blob.bin", "offset": 5, "limit": 12})
    assert r.status_code == 200 and r.content == b"567890123456" and r.headers["x-file-size"] == "10000"
    r = stack.api("POST", "/dev/files/read", json={"path": "data/blob.bin", "chunk_bytes": 777})
    assert r.content == body
    r = stack.api("POST", "/dev/files/write", params={"path": "data/blob.bin", "mode": "rwx"}, content=b"x")
    assert r.status_code == 400 and r.json()["error"]["code"] == "usage"
    assert (stack.work / "data" / "blob.bin").read_bytes() == body
    listing = stack.api("POST", "/dev/files/list", json={"path": "data"}).json()
    assert [(e["path"], e["kind"], e["size"]) for e in listing["entries"]] == [("blob.bin", "file", 10_000)]
    big = os.urandom(20 << 20)  # an upload larger than the write window (64 chunks in flight)
    r = stack.api("POST", "/dev/files/write", params={"path": "data/big.bin"}, content=big)
    assert r.status_code == 200 and (stack.work / "data" / "big.bin").read_bytes() == big
    (stack.work / "data" / "big.bin").unlink()
    info = stack.api("POST", "/dev/files/stat", json={"path": "data"}).json()
    assert info["kind"] == "dir"
    assert stack.api("POST", "/dev/files/stat", json={"path": "nope"}).json()["error"]["code"] == "not_found"


def test_paths_outside_the_roots_and_symlink_escapes_are_refused(stack: Stack, tmp_path: Path) -> None:
    """Allowed roots (docs/reference-daemon.md#execution-on-the-daemon-with-its-limits): a request for a
    path outside the roots, directly, by `..` or through a symlink inside the root, is refused
    (outside_roots) and nothing is read or written."""
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    link = stack.work / "escape"
    link.unlink(missing_ok=True)
    link.symlink_to(tmp_path)
    for path in (str(secret), "../" * 10 + str(secret).lstrip("/"), "escape/secret.txt"):
        r = stack.api("POST", "/dev/files/read", json={"path": path})
        assert r.status_code == 403 and r.json()["error"]["code"] == "outside_roots", (path, r.text)
        assert "top secret" not in r.text
    r = stack.api("POST", "/dev/files/write", params={"path": "escape/secret.txt"}, content=b"overwritten")
    assert r.status_code == 403 and secret.read_text() == "top secret"
    assert stack.api("POST", "/dev/files/list", json={"path": "escape"}).status_code == 403
    assert stack.api("POST", "/dev/tools/view", json={"params": {"file_path": "x"}, "root": "/"}).status_code == 403


def test_tools_run_there_with_the_same_params_and_results_as_tools_call(stack: Stack) -> None:
    """Tool-server: a built-in agent tool by name gives exactly what `platform tools call` gives on
    the same root; bad params are the same error; an MCP server configured on the daemon's machine
    (PLATFORM_SETTINGS there) is callable as mcp_<server>_<tool>."""
    from tests.gateway_fixtures import platform

    (stack.work / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    params = {"file_path": "notes.txt", "offset": 2, "limit": 1}
    there = stack.api("POST", "/dev/tools/view", json={"params": params}).json()
    here = json.loads(platform(stack.env, "tools", "call", "view", "--params", json.dumps(params), "--root",
                               str(stack.work), "--json").stdout)
    assert (there["output"], there["is_error"], there["data"]) == (here["output"], here["is_error"], here["data"])
    assert "gamma" in there["output"]
    assert there["ran_on"] == "daemon:dev"
    bad = stack.api("POST", "/dev/tools/view", json={"params": {"limit": "x"}}).json()
    assert bad["error"]["code"] == "invalid_params"
    unknown = stack.api("POST", "/dev/tools/no_such_tool", json={"params": {}}).json()
    assert unknown["error"]["code"] == "unknown_tool"
    mcp = stack.api("POST", "/dev/tools/mcp_local_echo", json={"params": {"text": "hi"}}).json()
    assert mcp["output"] == "echo: hi\n" and mcp["is_error"] is False


def test_pty_open_input_resize_output_close(stack: Stack) -> None:
    """PTY: a real terminal (isatty, its size from open, then resize), keystrokes in, output out,
    close ends it."""
    opened = stack.api("POST", "/dev/pty", json={"rows": 30, "cols": 100, "command": "/bin/sh"}).json()
    pty = opened["pty_id"]

    def output_until(needle: str, offset: int = 0) -> tuple[str, int]:
        seen, at = "", offset

        def read() -> bool:
            nonlocal seen, at
            doc = stack.api("GET", f"/dev/pty/{pty}/output", params={"offset": at, "wait_ms": 500}).json()
            seen, at = seen + doc["text"], doc["offset"]
            return needle in seen

        until(read, 20, what=lambda: f"{needle!r} in the PTY's output: {seen!r}")
        return seen, at

    stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "stty size; test -t 0 && echo IS-A-$((1+1))TTY\n"})
    seen, offset = output_until("IS-A-2TTY")  # not in the echoed input: the command's own output
    assert "30 100" in seen
    assert stack.api("POST", f"/dev/pty/{pty}/resize", json={"rows": 40, "cols": 120}).status_code == 200
    stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "stty size\n"})
    assert "40 120" in output_until("40 120", offset)[0]
    closed = stack.api("POST", f"/dev/pty/{pty}/close").json()
    assert closed["closed"] is True
    assert stack.api("POST", f"/dev/pty/{pty}/input", json={"data": "x"}).status_code == 404


def test_fifty_concurrent_shells_on_one_stream(stack: Stack) -> None:
    """Many requests multiplexed on one stream (docs/reference-daemon.md#process-model): 50 concurrent
    shells on one stream each get their own output and exit."""
    import asyncio

    import httpx

    async def one(client: httpx.AsyncClient, i: int) -> dict:
        r = await client.post(f"{stack.srv.url}/api/daemons/dev/shell",
                              json={"command": f"sleep 0.2; echo shell-{i}; exit {i % 7}"})
        return dict(r.json())

    async def all_of() -> list[dict]:
        async with httpx.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {stack.token}"},
                                     limits=httpx.Limits(max_connections=60)) as client:
            return await asyncio.gather(*(one(client, i) for i in range(50)))

    results = asyncio.run(all_of())
    assert [(r["stdout"], r["exit_code"]) for r in results] == [(f"shell-{i}\n", i % 7) for i in range(50)]


def test_one_gib_read_streams_in_chunks_without_holding_it(stack: Stack) -> None:
    """Files (docs/reference-daemon.md#execution-on-the-daemon-with-its-limits): a 1 GiB file (sparse) read
    through the stream arrives whole, while the daemon's and the server's peak memory stay far below the
    file's size (credit flow control)."""
    import httpx

    big, needle_at, needle = stack.work / "big.bin", 123_456_789, b"needle"
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)
        fh.seek(needle_at)
        fh.write(needle)
    daemon_pid = stack.record()["pid"]
    total, wrong = 0, []
    with httpx.stream("POST", stack.srv.url + "/api/daemons/dev/files/read", timeout=120,
                      json={"path": "big.bin", "chunk_bytes": 1 << 20},
                      headers={"Authorization": f"Bearer {stack.token}"}) as r:
        assert r.status_code == 200
        for chunk in r.iter_raw(1 << 20):
            # each chunk compared byte for byte with what the file holds there (zeros, and the needle)
            expected = bytearray(len(chunk))
            lo, hi = max(needle_at, total), min(needle_at + len(needle), total + len(chunk))
            if lo < hi:
                expected[lo - total:hi - total] = needle[lo - needle_at:hi - needle_at]
            if chunk != expected:
                wrong.append(total)
            total += len(chunk)
    big.unlink()
    assert total == 1 << 30 and not wrong, (total, wrong[:3])
    for pid in (daemon_pid, stack.srv.proc.pid):
        peak_kib = int(next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                            if x.startswith("VmHWM")).split()[1])
        assert peak_kib < 400 * 1024, (pid, peak_kib)


def test_workflow_run_with_a_daemon_target_runs_its_tools_there(stack: Stack, tmp_path: Path) -> None:
    """A workflow with `target: daemon:dev` runs its tools on the daemon (its allowed root, not
    the local --root), and `platform runs show` says where each tool call ran."""
    import yaml

    from tests.gateway_fixtures import doc_of, platform

    (stack.work / "only-there.txt").write_text("on the daemon's machine\n")
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"steps": [
        {"tool": "view", "params": {"file_path": "only-there.txt"}},
        {"tool": "bash", "params": {"command": "pwd"}}]}))
    (tmp_path / "wf.yaml").write_text(yaml.safe_dump({
        "name": "remote", "model": {"provider": "scripted", "script": "script.yaml"}, "instructions": "x",
        "tool_filter": ["view", "bash"], "target": "daemon:dev"}))
    env = {**stack.env, "PLATFORM_SERVER_URL": stack.srv.url}
    local = tmp_path / "elsewhere"
    local.mkdir()
    run = doc_of(platform(env, "run", str(tmp_path / "wf.yaml"), "--root", str(local), "--json"))["run"]
    assert run["status"] == "succeeded", run["error"]
    results = [s for s in run["steps"] if s["kind"] == "tool_result"]
    assert "on the daemon's machine" in results[0]["data"]["output"]
    assert results[1]["data"]["output"].strip().endswith(str(stack.work.resolve()))
    shown = platform(env, "runs", "show", run["id"])
    assert shown.stdout.count("@daemon:dev") == 2, shown.stdout
    doc = doc_of(platform(env, "runs", "show", run["id"], "--json"))
    assert [s["data"]["ran_on"] for s in doc["run"]["steps"] if s["kind"] == "tool_call"] == ["daemon:dev"] * 2
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"name": "b", "model": {"provider": "scripted", "steps": []}, "target": "moon"}))
    done = platform(env, "run", str(bad), "--json")
    assert done.returncode == 2 and "target must be" in done.stdout


def test_server_run_of_an_automation_runs_its_tools_on_the_daemon(stack: Stack) -> None:
    """The point of the daemon: a run the server executes (a webhook's automation) with
    `target: daemon:dev` runs its tools in the daemon's checkout, and its record says so; the
    run's short-lived credential is revoked when it ends."""
    import httpx

    from tests.webhooks_fixtures import history, make_trigger

    (stack.work / "checkout.txt").write_text("the user's checkout\n")
    workflow = ("name: remote\nmodel:\n  provider: scripted\n  steps:\n"
                "    - tool: view\n      params: {file_path: checkout.txt}\n"
                "    - tool: bash\n      params: {command: pwd}\n"
                "instructions: x\ntool_filter: [view, bash]\ntarget: daemon:dev\n")
    act = make_trigger(stack.srv, stack.work, automation="remote", trigger="hook", workflow=workflow)
    assert httpx.post(act["url_with_token"], json={"ref": "main"}).status_code == 202
    done = until(lambda: [d for d in history(stack.srv, "remote") if d["run"] and d["run"]["status"] in
                          ("succeeded", "failed")], timeout=60, what="the run")
    assert done[0]["run"]["status"] == "succeeded", done[0]["run"]
    record = json.loads((stack.srv.data_dir / "runs" / done[0]["run"]["id"] / "run.json").read_text())
    calls = [s for s in record["steps"] if s["kind"] == "tool_call"]
    results = [s for s in record["steps"] if s["kind"] == "tool_result"]
    assert [c["data"]["ran_on"] for c in calls] == ["daemon:dev", "daemon:dev"]
    assert "the user's checkout" in results[0]["data"]["output"]
    assert results[1]["data"]["output"].strip().endswith(str(stack.work.resolve()))
    import sqlite3

    with sqlite3.connect(stack.srv.data_dir / "platform.db") as db:
        rows = db.execute("SELECT kind, revoked_at FROM auth_tokens WHERE name = ?",
                          (f"run@{done[0]['run']['id']}",)).fetchall()
    assert len(rows) == 1 and rows[0][0] == "run" and rows[0][1] is not None


def test_shell_output_is_flow_controlled_and_a_collected_answer_is_capped(stack: Stack) -> None:
    """Shell output is credit flow controlled: 20 MiB of output (more than a collected answer keeps)
    arrive whole when streamed; a collected answer keeps 16 MiB per stream and says `truncated`, and
    the exit code still comes."""
    import httpx

    command = "head -c 20971520 /dev/zero | tr '\\0' 'a'; echo done >&2; exit 4"
    total = 0
    with httpx.stream("POST", stack.srv.url + "/api/daemons/dev/shell", timeout=60,
                      json={"command": command, "stream": True},
                      headers={"Authorization": f"Bearer {stack.token}"}) as r:
        for line in r.iter_lines():
            doc = json.loads(line)
            total += len(doc.get("data", "")) if doc.get("stream") == "stdout" else 0
            last = doc
    assert total == 20 << 20 and last == {"exit_code": 4, "timed_out": False, "killed": False}
    doc = stack.api("POST", "/dev/shell", json={"command": command}).json()
    assert len(doc["stdout"]) == 16 << 20 and doc["truncated"] is True and doc["exit_code"] == 4
    assert doc["stderr"] == "done\n"
