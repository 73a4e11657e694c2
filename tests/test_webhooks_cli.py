"""The commands that manage automations and triggers over PLATFORM_SERVER_URL / PLATFORM_TOKEN
(docs/reference-webhooks.md#commands: activation displays URL and token once)."""

from __future__ import annotations

from pathlib import Path

import cli_fork
import httpx
import pytest

from tests.webhooks_fixtures import WORKFLOW, Server, module_server_factory, server_factory  # noqa: F401


@pytest.fixture(scope="module")
def server(module_server_factory) -> Server:  # noqa: F811
    """One server for the module's tests that need a running one (each uses its own names)."""
    return module_server_factory()


def test_automation_and_trigger_lifecycle_from_the_cli(server, tmp_path: Path) -> None:
    """create -> add (hmac fields, filter) -> activate (URL and token once, takes the HMAC secret)
    -> deliveries -> history with what each did -> rotate -> list never shows a secret."""
    wf = tmp_path / "wf.yaml"
    wf.write_text(WORKFLOW)
    assert server.cli_json("automation", "create", "triage", "--workflow", str(wf))["workflow_name"] == "echo-trigger"
    again = server.cli_json("automation", "create", "triage", "--workflow", str(wf))
    assert again["exit_code"] == 1 and again["error"]["code"] == "conflict"
    added = server.cli_json(
        "trigger",
        "add",
        "triage",
        "github",
        "--hmac-header",
        "X-Hub-Signature-256",
        "--hmac-prefix",
        "sha256=",
        "--filter",
        "has(trigger.payload.body.ref)",
    )
    assert added["definition"]["webhook"]["hmac"] == {
        "header": "X-Hub-Signature-256",
        "algorithm": "sha256",
        "prefix": "sha256=",
        "encoding": "hex",
    }
    no_secret = server.cli_json("trigger", "activate", "triage", "github")
    assert no_secret["exit_code"] == 2 and "secret" in no_secret["error"]["message"]
    human = server.cli(
        "trigger", "activate", "triage", "github", "--hmac-secret-env", "GH_SECRET", env={"GH_SECRET": "shh"}
    )
    assert human.returncode == 0 and "whk_" in human.stdout and "shown only now" in human.stdout
    token = next(line.split()[-1] for line in human.stdout.splitlines() if line.startswith("token:"))
    url = next(line.split()[-1] for line in human.stdout.splitlines() if line.startswith("URL ("))
    assert server.cli_json("trigger", "activate", "triage", "github")["error"]["code"] == "conflict"
    assert httpx.post(url, json={"ref": "main"}, headers={"Authorization": f"Bearer {token}"}).status_code == 202
    assert httpx.post(url, json={"nothing": 1}, headers={"Authorization": f"Bearer {token}"}).status_code == 202
    hist = server.cli_json("trigger", "history", "triage", "github")
    assert hist["ok"] and len(hist["deliveries"]) == 2
    table = server.cli("automation", "history", "triage")
    assert table.returncode == 0 and "OUTCOME" in table.stdout
    rotated = server.cli_json("trigger", "rotate", "triage", "github")
    assert rotated["token"] != token
    listing = server.cli("automation", "list").stdout + server.cli("automation", "list", "--json").stdout
    for secret in (token, rotated["token"], "shh"):
        assert secret not in listing + table.stdout + str(hist)


def test_cli_errors_have_exit_codes_not_tracebacks(server, tmp_path: Path) -> None:
    """Bad input: clear error + exit code; no server configured (2), wrong API token (1),
    unknown automation (1), invalid definition (2), unreadable workflow (2)."""
    unset = server.cli("automation", "list", "--json", env={"PLATFORM_SERVER_URL": ""})
    assert unset.returncode == 2 and "PLATFORM_SERVER_URL" in unset.stderr and "Traceback" not in unset.stderr
    wrong = server.cli_json("automation", "list", env={"PLATFORM_TOKEN": "plt_wrong"})
    assert wrong["exit_code"] == 1 and wrong["error"]["code"] == "unauthorized"
    missing = server.cli_json("trigger", "add", "nope", "ci")
    assert missing["exit_code"] == 1 and missing["error"]["code"] == "not_found"
    bad = server.cli_json("trigger", "add", "nope", "ci", "--hmac-algorithm", "md5")
    assert bad["exit_code"] == 2 and "algorithm" in bad["error"]["message"]
    nofile = server.cli_json("automation", "create", "x", "--workflow", str(tmp_path / "absent.yaml"))
    assert nofile["exit_code"] == 2
    badwf = tmp_path / "bad.yaml"
    badwf.write_text("name: x\nmodel: {provider: nope}\n")
    assert server.cli_json("automation", "create", "x", "--workflow", str(badwf))["exit_code"] == 2
    down = server.cli_json("automation", "list", env={"PLATFORM_SERVER_URL": "http://127.0.0.1:1"})
    assert down["exit_code"] == 2 and down["error"]["code"] == "server_unreachable"


def test_admin_token_printed_once_and_stored_hashed(server_factory, tmp_path: Path) -> None:
    """`platform server` creates an admin API token on first start, prints it once, stores only
    its hash; a restart prints no token and the first one keeps working."""
    first = server_factory()
    first.stop()
    second = server_factory(token=first.token)
    assert not any(line.startswith("admin API token") for line in second.lines)
    assert first.token.encode() not in b"".join(p.read_bytes() for p in first.data_dir.glob("platform.db*"))
    assert second.cli_json("automation", "list")["ok"]


def test_server_refuses_a_port_in_use_with_a_clear_error(server, tmp_path: Path) -> None:
    """Bad input: a clear error and exit 1, never a traceback (here: the port is taken)."""
    import sys

    from tests.webhooks_fixtures import ROOT

    port = server.url.rsplit(":", 1)[1]
    done = cli_fork.run(
        [sys.executable, "-m", "app.main", "platform", "server", "--port", port, "--data-dir", str(tmp_path / "other")],
        cwd=ROOT,
        env=server.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "other" / "platform.db").exists()  # no admin token created unseen


def test_server_refuses_a_taken_gateway_port_before_announcing(server, tmp_path: Path) -> None:
    """Bad input (house rule: a clear error and exit 1, never a traceback): a daemon gateway or
    serving gateway port another process holds is refused by its flag before the server says it
    listens, and before any store or admin token is created."""
    import socket
    import sys

    from tests.webhooks_fixtures import ROOT

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    taken = holder.getsockname()[1]
    try:
        for flag in ("--gateway-port", "--gateway-http-port", "--gateway-https-port"):
            done = cli_fork.run(
                [sys.executable, "-m", "app.main", "platform", "server", "--port", "0", flag, str(taken),
                 "--data-dir", str(tmp_path / "other")],
                cwd=ROOT, env=server.env, capture_output=True, text=True, timeout=60,
            )
            assert done.returncode == 1, (flag, done.stdout, done.stderr)
            assert f"cannot listen on 127.0.0.1:{taken} ({flag})" in done.stderr, done.stderr
            assert "listening" not in done.stdout and "Traceback" not in done.stderr + done.stdout
            assert not (tmp_path / "other" / "platform.db").exists()
    finally:
        holder.close()
