"""The credentials file under concurrency (written atomically under a lock, so logins at once
lose no entry: docs/reference-auth.md#the-credentials-file) and the control-plane credential precedence
(docs/reference-auth.md#framework-login-logout-cloud)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.webhooks_fixtures import ROOT

WRITER = """
import sys, time
from engine.auth import credentials
for i in range(int(sys.argv[2])):
    credentials.save(f"http://{sys.argv[1]}-{i}:1", credentials.Entry(access_token="plt_" + sys.argv[1],
                     expires_at=time.time() + 60))
"""


def test_concurrent_writers_lose_no_entry(tmp_path: Path) -> None:
    """docs/reference-auth.md#the-credentials-file: 8 processes x 10 writes at once -> 80 entries, file
    0600, no temp files left."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, f"w{n}", "10"], env=env, cwd=ROOT) for n in range(8)]
    assert [p.wait(120) for p in procs] == [0] * 8
    from engine.auth import credentials

    os.environ["XDG_CONFIG_HOME"] = str(tmp_path / "cfg")
    try:
        loaded = credentials.load()
    finally:
        del os.environ["XDG_CONFIG_HOME"]
    assert len(loaded.entries) == 80
    folder = tmp_path / "cfg" / "framework"
    assert sorted(p.name for p in folder.iterdir()) == ["credentials.json", "credentials.json.lock"]
    assert (folder / "credentials.json").stat().st_mode & 0o777 == 0o600


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    for name in ("FRAMEWORK_CONTROL_PLANE_TOKEN", "FRAMEWORK_CREDENTIAL_HELPER", "DEPLOY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_control_plane_precedence_flag_env_file_helper(cfg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credential precedence (docs/reference-auth.md#framework-login-logout-cloud): 1) --token 2) declared
    token variable 3) credentials entry 4) $FRAMEWORK_CREDENTIAL_HELPER (also when the stored login has expired)."""
    from engine.auth import credentials as c

    endpoint = "http://cp.example:7"
    helper = cfg / "helper.sh"
    helper.write_text("#!/bin/sh\n[ \"$1\" = get ] && [ \"$2\" = http://cp.example:7 ] && echo plt_from_helper\n")
    helper.chmod(0o755)
    monkeypatch.setenv("FRAMEWORK_CREDENTIAL_HELPER", str(helper))
    assert c.resolve_control_plane(endpoint).token_source == "helper"
    assert c.resolve_control_plane(endpoint).token == "plt_from_helper"
    c.save(endpoint, c.Entry(access_token="plt_stored", expires_at=time.time() - 1))  # expired: helper
    assert c.resolve_control_plane(endpoint).token == "plt_from_helper"
    c.save(endpoint, c.Entry(access_token="plt_stored", expires_at=time.time() + 60))
    got = c.resolve_control_plane(endpoint)
    assert (got.token, got.token_source) == ("plt_stored", "credentials")
    monkeypatch.setenv("DEPLOY_TOKEN", "plt_declared_var")
    got = c.resolve_control_plane(endpoint, token_env="DEPLOY_TOKEN")
    assert (got.token, got.token_source) == ("plt_declared_var", "env:DEPLOY_TOKEN")
    monkeypatch.setenv("FRAMEWORK_CONTROL_PLANE_TOKEN", "plt_default_var")
    assert c.resolve_control_plane(endpoint).token_source == "env:FRAMEWORK_CONTROL_PLANE_TOKEN"
    got = c.resolve_control_plane(endpoint, token_flag="plt_flag", token_env="DEPLOY_TOKEN")
    assert (got.token, got.token_source) == ("plt_flag", "flag")
    assert "plt_flag" not in got.model_dump_json() and "token" not in got.model_dump(mode="json")
