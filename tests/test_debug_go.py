"""`framework debug` on the demo's Go worker with the real delve adapter (`dlv dap`;
docs/reference-debug.md#commands, docs/reference-debug.md#how-it-works). The worker is debugged by path: it
is not a workload of the dev environment (declaring it there would change every dev-environment test and snapshot)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.authoring_fixtures import _GO_ENV
from tests.debug_fixtures import (  # noqa: F401
    Debug,
    Request,
    debug,
    get,
    marked_pids,
    needs_dlv,
    serves,
    stopped_line,
    wait_state,
)
from tests.devstack_fixtures import pid_alive
from tests.waiting import until

WORKER = "services/worker"
MAIN = f"{WORKER}/main.go"


def test_go_breakpoint_condition_steps_eval_and_stop(debug: Debug) -> None:
    """A conditional breakpoint skips requests with n <= 3 and stops the first with n > 3; step-in
    enters add, step-out returns to handle, step goes to the next line; args, locals, eval and
    goroutines answer; stop kills delve and the compiled program."""
    needs_dlv()
    port = debug.base + 10
    started = debug.ok("start", WORKER, timeout=180)  # delve compiles the package first
    assert started["adapter"] == "delve" and started["mode"] == "launched"
    until(lambda: "worker listening" in "\n".join(debug.ok("status")["output"]), timeout=60, what="worker up")
    call = debug.line_of(MAIN, "sum := add(n)")
    inside = debug.line_of(MAIN, "func add(n int) int")  # Go stops on the function entry line
    bp = debug.ok("break", f"{MAIN}:{call}", "--cond", "n > 3")
    assert bp["verified"] is True and bp["line"] == call
    assert '"total": 2' in get(port, "/work?n=2")  # skipped: the condition is false
    request = Request(port, "/work?n=5")
    hit = wait_state(debug, "stopped")
    assert stopped_line(hit) == ("main.go", call, "main.handle")
    assert debug.ok("eval", "n*2")["result"] == "10"
    assert [v["name"] for v in debug.ok("args")["args"]] == ["w", "r"]
    assert ("n", "5") in [(v["name"], v["value"]) for v in debug.ok("locals")["locals"]]
    frames = debug.ok("stack")["frames"]
    assert frames[0]["function"] == "main.handle" and frames[0]["line"] == call
    routines = debug.ok("goroutines")
    assert routines["kind"] == "goroutines" and any(t["current"] for t in routines["threads"])
    assert stopped_line(debug.ok("step-in")) == ("main.go", inside, "main.add")
    assert [(v["name"], v["value"]) for v in debug.ok("args")["args"]] == [("n", "5")]
    out = debug.ok("step-out")
    assert stopped_line(out)[1:] == (call, "main.handle")
    assert stopped_line(debug.ok("step"))[1] == call + 1
    bad = debug.json("eval", "nosuch")
    assert bad["exit_code"] == 1 and "nosuch" in bad["error"]["message"]
    debug.ok("clear", "1")
    debug.json("continue", "--timeout", "0.5")
    assert '"total": 7' in request.result()
    token = debug.session()["token"]
    pids = marked_pids(token)
    assert len(pids) >= 2  # delve and the program it built
    debug.ok("stop")
    assert not marked_pids(token) and not any(pid_alive(p) for p in pids)
    assert debug.session() is None


def test_go_function_breakpoint(debug: Debug) -> None:
    """`break --func main.add` stops in add when a request calls it."""
    needs_dlv()
    debug.ok("start", WORKER, timeout=180)
    bp = debug.ok("break", "main.add", "--func")
    assert bp["function"] == "main.add" and bp["verified"] is True
    blank = debug.line_of(MAIN, "func handle(") - 1  # the empty line between add and handle
    unverified = debug.ok("break", f"{MAIN}:{blank}")  # kept, and reported as not verified
    assert unverified["verified"] is False and unverified["message"]
    listed = debug.ok("breakpoints")["breakpoints"]
    assert [(b["id"], b["verified"]) for b in listed] == [(1, True), (2, False)]
    debug.ok("clear", "2")
    request = Request(debug.base + 10, "/work?n=3")
    hit = wait_state(debug, "stopped", timeout=60)
    assert hit["stopped"]["function"] == "main.add" and hit["stopped"]["reason"] == "function breakpoint"
    debug.ok("clear", "1")
    debug.json("continue", "--timeout", "0.5")
    assert '"total": 3' in request.result()
    debug.ok("stop")


def test_go_attach_and_detach_leaves_the_process_serving(debug: Debug, tmp_path: Path) -> None:
    """`--attach <pid>` with delve: a breakpoint stops a real request; `stop` detaches (never kills)
    and the process goes on serving."""
    needs_dlv()
    binary = tmp_path / "worker"
    subprocess.run(["go", "build", "-o", str(binary), "."], cwd=debug.root / WORKER, check=True,
                   capture_output=True, timeout=300, env={**os.environ, **_GO_ENV})  # the machine's Go caches
    port = debug.base + 30
    service = subprocess.Popen([str(binary)], env={**os.environ, "PORT": str(port)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until(lambda: serves(port), what="worker serving")
        started = debug.ok("start", "--attach", str(service.pid), timeout=120)
        assert started["mode"] == "attached" and started["adapter"] == "delve"
        line = debug.line_of(MAIN, "sum := add(n)")
        debug.ok("break", f"{MAIN}:{line}")
        request = Request(port, "/work?n=4")
        assert stopped_line(wait_state(debug, "stopped"))[1] == line
        assert debug.ok("eval", "n")["result"] == "4"
        stopped = debug.ok("stop")
        assert stopped["detached"] == service.pid and stopped["left_running"] is True
        assert '"total": 4' in request.result()
        assert service.poll() is None and '"total": 5' in get(port, "/work?n=1")
    finally:
        service.kill()
        service.wait()
