"""`framework debug` on Python targets with the real debugpy adapter (docs/reference-debug.md#commands,
docs/reference-debug.md#how-it-works): every command a separate process reaching the session broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.debug_fixtures import (  # noqa: F401
    CALC,
    Debug,
    Request,
    debug,
    get,
    marked_pids,
    serves,
    stopped_line,
    wait_state,
)
from tests.devstack_fixtures import pid_alive
from tests.waiting import until

API = "services/api/main.py"


def test_breakpoint_hit_by_a_real_http_request_then_inspect_step_and_stop(debug: Debug) -> None:
    """`debug start api` starts the dev workload under debugpy with its resolved config (PORT from
    the env's port); a real request stops at the breakpoint; stack/locals/args/eval/step report
    it; `stop` kills everything the session launched and removes .framework/debug-session.json."""
    started = debug.ok("start", "api")
    assert started["adapter"] == "debugpy" and started["mode"] == "launched"
    assert started["listening"] is True  # a service: start returns once it listens on its env port
    session = debug.session()
    assert session is not None and session["pid"] == started["pid"]
    assert (debug.root / ".framework" / "debug-session.json").stat().st_mode & 0o777 == 0o600
    port = debug.base
    assert get(port, "/healthz") == "ok"  # serving with the env's port before any breakpoint
    line = debug.line_of(API, 'body = json.dumps({"message"')
    bp = debug.ok("break", f"{API}:{line}")
    assert bp["verified"] is True and bp["line"] == line and bp["id"] == 1
    request = Request(port, "/hello")
    hit = wait_state(debug, "stopped")  # the request reached the breakpoint (no `continue` needed)
    assert stopped_line(hit) == ("main.py", line, "do_GET")
    assert hit["stopped"]["reason"] == "breakpoint"
    stack = debug.ok("stack")
    assert stack["frames"][0]["function"] == "do_GET" and stack["frames"][0]["line"] == line
    names = [v["name"] for v in debug.ok("locals")["locals"]]
    assert names == ["self"]
    assert [v["name"] for v in debug.ok("args")["args"]] == ["self"]
    assert debug.ok("eval", "self.path * 2")["result"] == "'/hello/hello'"
    step = debug.ok("step")
    assert stopped_line(step) == ("main.py", line + 1, "do_GET")
    assert debug.ok("goroutines")["kind"] == "threads"
    assert not request.done.is_set()  # still held at the breakpoint
    debug.ok("clear", "1")
    debug.json("continue", "--timeout", "1")  # runs on: nothing stops it now
    assert "hello from dev" in request.result()
    target_pid = debug.ok("status")["target_pid"]
    token = session["token"]
    assert marked_pids(token), "the launched adapter and target carry the session marker"
    stopped = debug.ok("stop")
    assert stopped["mode"] == "launched"
    assert not marked_pids(token)
    assert not pid_alive(target_pid) and not pid_alive(session["pid"])
    assert debug.session() is None


def test_conditional_breakpoint_skips_the_first_hits(debug: Debug) -> None:
    """`break --cond`: requests that do not satisfy the condition are served; the first that does stops."""
    debug.ok("start", "api")
    line = debug.line_of(API, 'body = json.dumps({"message"')
    bp = debug.ok("break", f"{API}:{line}", "--cond", 'self.path == "/third"')
    assert bp["condition"] == 'self.path == "/third"' and bp["verified"]
    assert "hello" in get(debug.base, "/first")
    assert "hello" in get(debug.base, "/second")
    request = Request(debug.base, "/third")
    hit = wait_state(debug, "stopped")
    assert stopped_line(hit)[1] == line
    assert debug.ok("eval", "self.path")["result"] == "'/third'"
    listed = debug.ok("breakpoints")["breakpoints"]
    assert [(b["id"], b["line"], b["condition"]) for b in listed] == [(1, line, 'self.path == "/third"')]
    debug.ok("clear", "1")
    debug.json("continue", "--timeout", "0.5")
    assert "hello" in request.result()


def test_step_over_in_and_out_land_on_the_right_lines(debug: Debug) -> None:
    """A program path (`debug start services/calc.py`): step-in enters the callee, step-out
    returns to the call line, step goes to the next line; args/locals follow the frame."""
    (debug.root / "services" / "calc.py").write_text(CALC)
    rel = "services/calc.py"
    debug.ok("start", rel)
    call, inner, after = (debug.line_of(rel, m) for m in ("# CALL", "# INNER", "# AFTER"))
    debug.ok("break", f"{rel}:{call}")
    assert stopped_line(wait_state(debug, "stopped"))[1:] == (call, "outer")
    assert [(v["name"], v["value"]) for v in debug.ok("args")["args"]] == [("n", "4")]
    assert stopped_line(debug.ok("step-in"))[1:] == (inner, "inner")
    assert [(v["name"], v["value"]) for v in debug.ok("args")["args"]] == [("x", "4")]
    assert len(debug.ok("stack")["frames"]) >= 3  # inner, outer, <module>
    out = debug.ok("step-out")
    assert stopped_line(out)[1:] == (call, "outer")
    debug.ok("clear", "1")
    assert stopped_line(debug.ok("step"))[1:] == (after, "outer")
    assert ("a", "10") in [(v["name"], v["value"]) for v in debug.ok("locals")["locals"]]
    debug.ok("stop")


def test_eval_that_raises_and_bad_input_exit_1_without_a_traceback(debug: Debug) -> None:
    """Point 3: no session names `debug start`; unknown service; unreadable file:line; an eval that
    raises gives the adapter's message; a second start is refused naming the live one."""
    none = debug.run("stack", "--json")
    assert none.returncode == 1 and "debug start" in none.stderr and "Traceback" not in none.stderr
    unknown = debug.json("start", "nosuch")
    assert unknown["exit_code"] == 1 and "nosuch" in unknown["error"]["message"]
    debug.ok("start", "api")
    again = debug.json("start", "web")
    assert again["exit_code"] == 1 and again["error"]["code"] == "debug_session_live"
    assert "api" in again["error"]["message"]
    for where, text in ((f"{API}:9999", "lines"), ("services/api/nosuch.py:3", "no such file")):
        bad = debug.json("break", where)
        assert bad["exit_code"] == 1 and text in bad["error"]["message"]
    running = debug.json("locals")
    assert running["exit_code"] == 1 and "running" in running["error"]["message"]
    line = debug.line_of(API, 'body = json.dumps({"message"')
    debug.ok("break", f"{API}:{line}")
    request = Request(debug.base, "/x")
    wait_state(debug, "stopped")
    raised = debug.run("eval", "1/0")
    assert raised.returncode == 1 and "ZeroDivisionError: division by zero" in raised.stderr
    assert "Traceback" not in raised.stderr
    replaced = debug.ok("start", "web", "--replace")
    assert replaced["name"] == "web" and replaced["replaced"]["mode"] == "launched"
    assert request.done.wait(30)  # the api was stopped with the old session: its request ended
    debug.ok("stop")


def test_target_crash_mid_session_is_reported_and_stop_cleans_up(debug: Debug) -> None:
    """Point 3: the target dies while debugged: status reports the exit and the last output; later
    commands say it exited (exit 1); stop leaves no process behind."""
    debug.ok("start", "api")
    until(lambda: (doc := debug.ok("status"))["target_pid"] and "api listening" in "\n".join(doc["output"]),
         what="target pid and its first output")  # one `debug status` per poll
    target = debug.ok("status")["target_pid"]
    os.kill(target, signal.SIGKILL)
    gone = wait_state(debug, "exited")
    assert gone["target_exit_code"] is not None and gone["target_exit_code"] != 0
    assert any("api listening" in line for line in gone["output"])  # the last output, kept
    later = debug.json("stack")
    assert later["exit_code"] == 1 and later["error"]["code"] == "target_exited"
    assert "exited" in later["error"]["message"]
    token = debug.session()["token"]
    debug.ok("stop")
    assert not marked_pids(token) and debug.session() is None


def test_dead_broker_leaves_a_stale_file_that_the_next_command_cleans(debug: Debug) -> None:
    """Point 3: the broker dies: the next command detects the stale session file, stops what the
    session had launched, removes the file and says so (exit 1)."""
    debug.ok("start", "api")
    session = debug.session()
    os.kill(session["pid"], signal.SIGKILL)
    until(lambda: not pid_alive(session["pid"]), what="broker gone")
    stale = debug.json("breakpoints")
    assert stale["exit_code"] == 1 and stale["error"]["code"] == "stale_debug_session"
    assert "stale" in stale["error"]["message"]
    assert debug.session() is None
    assert not marked_pids(session["token"])
    assert debug.json("stop")["error"]["code"] == "no_debug_session"


def _injection_allowed() -> bool:
    """Whether gdb can make an inferior call here (debugpy's attach-by-pid needs it)."""
    probe = subprocess.Popen(["sleep", "30"])
    try:
        out = subprocess.run(["gdb", "--nx", "--batch", "-p", str(probe.pid), "-ex", "call (int)getpid()"],
                             capture_output=True, text=True, timeout=30, check=False)
        return f"= {probe.pid}" in out.stdout and probe.poll() is None
    finally:
        probe.kill()
        probe.wait()


def test_attach_to_a_running_python_process_and_detach_leaves_it_serving(debug: Debug) -> None:
    """`--attach <pid>` on Python: debugpy injects itself through gdb. Where the machine allows it,
    a breakpoint stops a real request and `stop` detaches, leaving the process serving. Where it
    refuses ptrace register writes (this project's VMs do; see docs/reference-debug.md), the attach
    is refused with that reason (exit 1) and the process is left untouched and serving."""
    port = debug.base + 20
    service = subprocess.Popen([sys.executable, str(debug.root / API)], env={**os.environ, "PORT": str(port)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until(lambda: serves(port), what="api serving")
        if not _injection_allowed():
            refused = debug.json("start", "--attach", str(service.pid))
            assert refused["exit_code"] == 1 and refused["error"]["code"] == "attach_unsupported"
            assert "left untouched" in refused["error"]["message"]
            assert debug.session() is None
            assert service.poll() is None and "hello" in get(port, "/after")
            return
        started = debug.ok("start", "--attach", str(service.pid), timeout=120)
        assert started["mode"] == "attached" and started["adapter"] == "debugpy"
        line = debug.line_of(API, 'body = json.dumps({"message"')
        debug.ok("break", f"{API}:{line}")
        request = Request(port, "/attached")
        assert stopped_line(wait_state(debug, "stopped"))[1] == line
        assert debug.ok("eval", "self.path")["result"] == "'/attached'"
        stopped = debug.ok("stop")
        assert stopped["detached"] == service.pid and stopped["left_running"] is True
        assert "hello" in request.result()
        assert service.poll() is None and "hello" in get(port, "/after")
    finally:
        service.kill()
        service.wait()


def test_debug_session_file_lives_under_dot_framework(debug: Debug) -> None:
    """The session is `.framework/debug-session.json` with address, pid, mode and adapter
    (docs/reference-debug.md#how-it-works)."""
    debug.ok("start", "api")
    doc = debug.session()
    assert doc is not None
    assert set(doc) >= {"address", "pid", "mode", "adapter", "target", "token"}
    assert Path(debug.root / ".framework" / "debug-session.json").is_file()
    debug.ok("stop")


def test_port_sets_the_adapters_listen_port(debug: Debug) -> None:
    """`debug start --port N`: the adapter listens on N (default: a port the OS chose)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (debug.root / "services" / "calc.py").write_text(CALC)
    started = debug.ok("start", "services/calc.py", "--port", str(port))
    assert started["adapter_port"] == port and debug.session()["adapter_port"] == port
    debug.ok("stop")
    chosen = debug.ok("start", "services/calc.py")
    assert chosen["adapter_port"] not in (0, port)
    debug.ok("stop")
