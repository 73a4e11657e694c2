"""Progress of a hosted deploy's release artifact uploads (README.md#progress-and-shell-completion), on a
real terminal against a real control plane (`platform server`)."""

from __future__ import annotations

import re

from tests.deploy_fixtures import Demo
from tests.hosted_fixtures import Server, demo, hosted_env, mint_in_store, plane, seed_org_in_store, server_factory  # noqa: F401
from tests.test_progress import ANSI, BAR, on_pty


def test_hosted_deploy_shows_an_upload_bar_on_a_terminal_and_none_with_json(plane: Server, demo: Demo) -> None:  # noqa: F811
    """README.md#progress-and-shell-completion: a deploy to a hosted environment uploads the release's file
    artifacts the control plane lacks (docs/reference-hosted.md#commands-on-hosted-environments); on a
    terminal an `upload` bar counts them, with --json nothing does."""
    seed_org_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "acme")
    hosted_env(demo, plane.url)
    code, screen = on_pty(["env", "deploy", "cloud", "--yes", "--timeout", "60"], demo.root, demo.env)
    text = ANSI.sub("", screen)
    assert code == 0, text
    assert BAR in text and re.search(r"upload .*(\d+)/\1", text), text

    hosted_env(demo, plane.url, greeting="hello again")  # a new release: its artifacts are new uploads too
    demo.edit_api("changed")
    code, screen = on_pty(["env", "deploy", "cloud", "--yes", "--timeout", "60", "--json"], demo.root, demo.env)
    assert code == 0 and '"ok": true' in screen, screen
    assert BAR not in screen and "\x1b[?25l" not in screen
