"""`platform daemon register | start | status | stop | logs` (docs/reference-daemon.md#platform-daemon:
`daemon stop`, `daemon logs` 50 lines, the credential order of `daemon start`)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import cli_fork
import pytest

from tests.auth_fixtures import browser_script
from tests.gateway_fixtures import ROOT, Stack, doc_of, make_stack, platform, registered
from tests.waiting import until


def until_connected(env: dict[str, str], name: str, what: str) -> None:
    """Until `platform daemon status --name <name>` exits 0 (running and connected): first wait, in this
    process, for the instance's record to say its stream is connected (what that command reads), so the
    command is asked once rather than polled (each call a Python start)."""
    from engine.daemon.control import record_of

    path = Path(env["HOME"]) / ".platform" / "instances" / name
    until(lambda: ((record_of(path) or {}).get("stream") or {}).get("connected"), what=f"{what}: the record")
    until(lambda: platform(env, "daemon", "status", "--name", name).returncode == 0, what=what)


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server and a logged-in user; no daemon registered yet."""
    tmp = tmp_path_factory.mktemp("daemon-cli")
    stack = make_stack(tmp)
    yield stack
    for name in ("dev", "auto", "waiting"):
        platform(stack.env, "daemon", "stop", "--name", name, "--force")
    stack.stop_all()
    stack.srv.stop()


def test_register_stores_the_token_0600_and_never_prints_it(bare: Stack) -> None:
    """daemon register: creates a long-lived daemon token and stores it locally (0600); the token
    is in neither the output nor --json."""
    done = platform(bare.env, "daemon", "register", "--name", "dev", "--server", bare.srv.url, "--json")
    doc = doc_of(done)
    creds = bare.instance / "credentials.json"
    token = json.loads(creds.read_text())["token"]
    assert doc["ok"] and doc["name"] == "dev" and doc["credentials_file"] == str(creds)
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600 and stat.S_IMODE(bare.instance.stat().st_mode) == 0o700
    assert token.startswith("plt_") and token not in done.stdout + done.stderr
    refused = platform({**bare.env, "PLATFORM_TOKEN": bare.srv.token}, "daemon", "register", "--name", "x",
                       "--server", bare.srv.url, "--json")  # a token never mints a token
    assert refused.returncode == 1 and json.loads(refused.stdout)["error"]["code"] == "forbidden"
    human = platform(bare.env, "daemon", "register", "--name", "dev", "--server", bare.srv.url)
    assert human.returncode == 0 and "credentials" in human.stdout
    assert json.loads(creds.read_text())["token"] != token  # registering again replaces the token


def test_background_start_status_logs_and_graceful_stop(bare: Stack) -> None:
    """start --background returns once the daemon published its record; status reports process,
    stream and binary and exits 0 only when connected; logs prints the last lines (-n) without
    following (--no-follow); stop sends the graceful signal, waits, and the record is gone."""
    registered(bare)
    started = doc_of(platform(bare.env, "daemon", "start", "--name", "dev", "--root", str(bare.work),
                              "--background", "--json"))
    assert started["background"] is True and started["pid"] > 0
    until_connected(bare.env, "dev", "connected")
    status = doc_of(platform(bare.env, "daemon", "status", "--name", "dev", "--json"))
    assert status["running"] and status["connected"] and status["pid"] == started["pid"]
    assert status["stream"]["server"] and status["binary"] and status["roots"] == [str(bare.work.resolve())]
    import httpx

    serve = json.loads((bare.instance / "runtime.json").read_text())["auth_serve"]  # the daemon serves `auth serve`
    health = httpx.get(serve + "/health", timeout=10).json()
    assert health["service"] == "platform-auth-serve" and health["pid"] == started["pid"]
    again = platform(bare.env, "daemon", "start", "--name", "dev", "--root", str(bare.work), "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["error"]["code"] == "already_running"
    logs = doc_of(platform(bare.env, "daemon", "logs", "--name", "dev", "-n", "2", "--json"))
    assert len(logs["lines"]) == 2 and "connected to" in "\n".join(
        doc_of(platform(bare.env, "daemon", "logs", "--name", "dev", "--json"))["lines"])
    human = platform(bare.env, "daemon", "logs", "--name", "dev", "--no-follow")
    assert human.returncode == 0 and "starting" in human.stdout
    stopped = doc_of(platform(bare.env, "daemon", "stop", "--name", "dev", "--json"))
    assert stopped["stopped"] and stopped["signals"] == ["SIGTERM"] and not stopped["record_kept"]
    assert not (bare.instance / "runtime.json").exists()
    down = platform(bare.env, "daemon", "status", "--name", "dev", "--json")
    assert down.returncode == 1 and json.loads(down.stdout)["error"]["code"] == "not_connected"


def test_logs_follow_prints_new_lines(bare: Stack) -> None:
    """daemon logs: the last lines, then live follow of what the daemon logs next."""
    registered(bare)
    platform(bare.env, "daemon", "start", "--name", "dev", "--root", str(bare.work), "--background")
    until_connected(bare.env, "dev", "connected")
    follower = cli_fork.popen([sys.executable, "-m", "app.main", "platform", "daemon", "logs", "--name", "dev",
                                 "-n", "1"], cwd=ROOT, env=bare.env, stdout=subprocess.PIPE, text=True)
    try:
        assert follower.stdout is not None
        follower.stdout.readline()  # the one last line
        r = bare.api("POST", "/dev/shell", json={"command": "true"})
        assert r.status_code == 200
        assert "shell started" in follower.stdout.readline()
    finally:
        follower.terminate()
        follower.wait(10)
        platform(bare.env, "daemon", "stop", "--name", "dev")


def test_logs_follow_starts_where_the_printed_lines_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-daemon.md (`daemon logs`): the live follow starts at the end of the last lines it printed,
    so a line the daemon logs between the two reads is printed, not lost (the follow used to open the log
    afterwards and start at its end then)."""
    import itertools

    from engine.daemon.control import follow, log_path, tail_at

    monkeypatch.setenv("PLATFORM_INSTANCES_DIR", str(tmp_path))
    log = log_path("dev")
    log.parent.mkdir(parents=True)
    log.write_text("one\ntwo\n")
    last, end = tail_at("dev", 1)
    assert last == ["two"]
    with log.open("a") as fh:  # the daemon logs a line between the tail and the follow
        fh.write("shell started\n")
    assert list(itertools.islice(follow("dev", start=end), 1)) == ["shell started"]


def test_logged_in_but_unregistered_start_registers_itself(bare: Stack) -> None:
    """Credential order 2: logged in but not registered: start registers automatically (even
    non-interactive: no browser is needed) and connects."""
    env = {**bare.env, "PLATFORM_SERVER_URL": bare.srv.url}
    platform(env, "daemon", "start", "--name", "auto", "--root", str(bare.work), "--background", "--non-interactive")
    until_connected(env, "auto", "auto-registered")
    assert (bare.instance.with_name("auto") / "credentials.json").exists()
    platform(env, "daemon", "stop", "--name", "auto")


def test_non_interactive_without_login_awaits_credentials(bare: Stack, tmp_path: Path) -> None:
    """Credential order 3 with --non-interactive / PLATFORM_DAEMON_NON_INTERACTIVE: never opens a
    browser, publishes awaiting_credentials and polls; a credentials file that appears is used."""
    script, urls = browser_script(tmp_path)
    home = tmp_path / "nobody"
    env = {**bare.env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "BROWSER": str(script),
           "PLATFORM_SERVER_URL": bare.srv.url, "PLATFORM_DAEMON_NON_INTERACTIVE": "1"}
    done = platform(env, "daemon", "start", "--name", "waiting", "--root", str(bare.work), "--background", "--json")
    assert done.returncode == 0, done.stderr
    instance = home / ".platform" / "instances" / "waiting"
    until(lambda: json.loads((instance / "runtime.json").read_text()).get("state") == "awaiting_credentials",
          what="awaiting_credentials")
    listed = doc_of(platform(env, "daemon", "ls", "--json"))["instances"]
    assert [(i["name"], i["running"], i["state"]) for i in listed] == [("waiting", True, "awaiting_credentials")]
    assert not urls.exists()  # no browser was opened
    registered(bare)  # a registration elsewhere; its file is copied in as an operator would
    creds = (bare.instance / "credentials.json").read_bytes()
    tmp = instance / ".incoming"
    tmp.write_bytes(creds)
    os.replace(tmp, instance / "credentials.json")
    until_connected(env, "waiting", "connected")
    platform(env, "daemon", "stop", "--name", "waiting")


HOLDER = """
import fcntl, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
child = os.fork() if sys.argv[2] == "fork" else -1
if child == 0:  # a forked child shares the lock (same open file description): it outlives SIGKILL of the parent
    os.setsid()
    time.sleep(60)
    os._exit(0)
print("locked", child, flush=True)
time.sleep(60)
"""


def _holder(instance: Path, mode: str) -> tuple[subprocess.Popen[str], int]:
    instance.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(instance / "instance.lock"), mode],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    word, child = proc.stdout.readline().split()
    assert word == "locked"
    (instance / "runtime.json").write_text(json.dumps({"state": "connected", "pid": proc.pid}))
    return proc, int(child)


def test_stop_kills_after_the_grace_and_keeps_the_record_when_it_survives(bare: Stack, tmp_path: Path) -> None:
    """daemon stop (docs/reference-daemon.md#platform-daemon): a process that ignores the graceful signal is
    killed after the grace; when the instance still runs after SIGKILL (here: a forked child holds its lock), stop
    exits non-zero and keeps the runtime record. --force kills at once."""
    instance = bare.instance.with_name("stubborn")
    holder, _ = _holder(instance, "plain")
    doc = doc_of(platform(bare.env, "daemon", "stop", "--name", "stubborn", "--grace", "0.5", "--json"))
    assert doc["signals"] == ["SIGTERM", "SIGKILL"] and doc["stopped"] and not doc["record_kept"]
    assert holder.wait(10) == -9 and not (instance / "runtime.json").exists()

    holder, _ = _holder(instance, "plain")
    doc = doc_of(platform(bare.env, "daemon", "stop", "--name", "stubborn", "--force", "--json"))
    assert doc["signals"] == ["SIGKILL"] and doc["stopped"]
    holder.wait(10)

    holder, child = _holder(instance, "fork")
    done = platform(bare.env, "daemon", "stop", "--name", "stubborn", "--grace", "0.2", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == 1 and doc["record_kept"] is True and not doc["stopped"]
    assert doc["error"]["code"] == "stop_failed" and (instance / "runtime.json").exists()
    holder.wait(10)
    os.kill(child, signal.SIGKILL)  # the forked child (ours, by its pid)


def test_bad_names_and_roots_are_usage_errors(bare: Stack) -> None:
    """Bad input: an invalid daemon name or a root that is no directory: exit 2, nothing started."""
    bad = platform(bare.env, "daemon", "start", "--name", "../evil", "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["code"] == "usage"
    bad = platform(bare.env, "daemon", "start", "--name", "x", "--root", "/nonexistent/dir", "--json")
    assert bad.returncode == 2
    assert not bare.instance.with_name("x").exists()


def test_register_and_start_sign_in_through_the_browser_when_not_logged_in(bare: Stack, tmp_path: Path) -> None:
    """register logs in through the browser if needed; start without any login (credential order 3)
    prompts the browser login, then registers itself and connects."""
    from tests.auth_fixtures import ConsentAgent, start_login

    home = tmp_path / "fresh"
    env = {**bare.env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "PLATFORM_SERVER_URL": bare.srv.url}
    agent = ConsentAgent()
    try:
        run = start_login(env, tmp_path / "b1", "daemon", "register", "--name", "fresh", "--json")
        answer = agent.consent(run.url())
        agent.follow(answer.location or "")
        code, out, err = run.finish()
        assert code == 0, err
        assert json.loads(out)["logged_in_now"] is True
        assert (home / ".platform" / "instances" / "fresh" / "credentials.json").exists()

        other = tmp_path / "other"
        env2 = {**env, "HOME": str(other), "XDG_CONFIG_HOME": str(other / "config")}
        start = start_login(env2, tmp_path / "b2", "daemon", "start", "--name", "late", "--root", str(bare.work))
        answer = agent.consent(start.url())
        agent.follow(answer.location or "")
        instance = other / ".platform" / "instances" / "late"
        until_connected(env2, "late", "connected")
        assert (instance / "credentials.json").exists()
        platform(env2, "daemon", "stop", "--name", "late")
        assert start.proc.wait(15) == 0
    finally:
        agent.close()


def test_backoff_is_capped_exponential_with_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reconnect delays: min(cap, base * 2^n), then uniformly in [delay/2, delay] (jitter)."""
    from engine.daemon.agent import backoff

    monkeypatch.setenv("PLATFORM_DAEMON_BACKOFF_MS", "500")
    monkeypatch.setenv("PLATFORM_DAEMON_BACKOFF_CAP_MS", "30000")
    for attempt, ceiling in ((0, 0.5), (1, 1.0), (3, 4.0), (6, 30.0), (20, 30.0)):
        seen = [backoff(attempt) for _ in range(200)]
        assert min(seen) >= ceiling / 2 and max(seen) <= ceiling
        assert len({round(x, 6) for x in seen}) > 100  # jittered, not one fixed value
