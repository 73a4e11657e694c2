"""Shared helpers of the Environments / Plans / Rollouts dashboard tests (README.md, Dashboard: keys 1-3).

Real copies of examples/demo in tmp git repos (tests/deploy_fixtures.py), real releases cut by
the real `framework` CLI, real processes (stopped in the `demo` fixture's teardown), and Pilot
polling with a deadline (never sleeps as synchronisation).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deploy_fixtures import DEMO, Demo, add_gated_env, dev_database_off, make_demo  # noqa: F401

SIZE = (130, 40)
FIXED_DATE = "2026-01-01T00:00:00+00:00"
COMMAND_HEALTH = 'health = framework.HealthCheck {type = "command", command = "true"}'


def cut(demo: Demo, env: str, version: str) -> None:
    demo.run("env", "build", env, "--release", version, check=True)


def two_releases(demo: Demo) -> None:
    """v1 from the demo as copied, v2 after one commit that changes the api service."""
    cut(demo, "dev", "v1")
    demo.edit_api("hi there")
    demo.commit("api: new greeting")
    cut(demo, "dev", "v2")


def current(demo: Demo, env: str) -> dict[str, Any] | None:
    """The environment's current promotion, read through the CLI (`env status <env> --json`)."""
    code, doc = demo.json("env", "status", env)
    return doc["environments"][0]["promotion"]


def plain_demo(tmp_path: Path, env: dict[str, str]) -> Path:
    """examples/demo as shipped (no port rewriting), committed with pinned dates: stable commit ids."""
    root = tmp_path / "plain"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".framework"))
    dev_database_off(root)
    (root / ".gitignore").write_text("__pycache__/\n.framework/cache/\n")
    pinned = {**env, "GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "demo"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=pinned, capture_output=True)
    return root


@contextlib.contextmanager
def environ(overlay: dict[str, str]) -> Iterator[None]:
    """The process environment with `overlay` applied (a dashboard reads credentials from it), restored after."""
    saved = dict(os.environ)
    os.environ.update(overlay)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
