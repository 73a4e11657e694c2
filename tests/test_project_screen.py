"""The Project screen (docs/reference-project.md#project-screen): `project map` as a tree coloured by ownership with
drift marked, `project audit`'s categories, `project upgrade --check`'s per-file summary, the command line of each
action; and its snapshot. On one project made by `project new` at the previous shipped release (0.0.9, so the
upgrade check has files to list), with a hand-edited generated file and a disowned one; the lint summary is skipped
(golangci-lint pointed at a path that does not exist), so no linter runs here."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from engine.authoring.records import disown
from engine.project import Project
from tests.waiting import until_app

SIZE = (150, 48)
OLD = "0.0.9"
DRIFTED = "internal/bootstrap/bootstrap.go"
DISOWNED = "internal/bootstrap/observability.go"


@pytest.fixture(scope="module")
def drifted_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from engine.authoring.new import new_project

    parent = tmp_path_factory.mktemp("pscreen")
    new_project("shop", parent=parent, module="example.com/shop", service="order", version=OLD)
    root = parent / "shop"
    with (root / DRIFTED).open("a") as f:
        f.write("// a hand edit\n")
    disown(Project(root), [DISOWNED], "custom middleware")
    return root


@pytest.fixture(autouse=True)
def no_golangci(drifted_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRAMEWORK_GOLANGCI_LINT", str(drifted_project / "no-such-golangci-lint"))


def _app(root: Path) -> Dashboard:
    return Dashboard(project_dir=root, settings=deterministic_settings(refresh_seconds=3600))


async def _open(pilot: Any) -> Any:
    await pilot.press("P")
    screen = await until_app(pilot, lambda: pilot.app.screen if pilot.app.current_mode == "project"
                             and pilot.app.screen.loads >= 1 else None, timeout=60, what="the first map and audit")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


def _labels(node: Any) -> list[tuple[str, Any]]:
    out = [(str(node.label), node.data)]
    for child in node.children:
        out += _labels(child)
    return out


def test_project_screen_shows_map_audit_and_commands(drifted_project: Path) -> None:
    """docs/reference-project.md#project-screen: P opens the screen; the tree holds every mapped file, the drifted
    one tagged DRIFTED (red) in an expanded branch, the disowned one tagged; the audit panel lists every category
    with drift as ERROR naming the file; the upgrade panel lists `project upgrade --check`'s files with their
    status (the hand edit merged); the cursor on a file shows its commands (generate, disown, upgrade --check)."""
    asyncio.run(_scenario(drifted_project))


async def _scenario(root: Path) -> None:
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        tree = screen.query_one("#project-map")
        labels = _labels(tree.root)
        files = {data[0]: (label, data[1]) for label, data in labels if data}
        assert len(files) == screen.project_map.files
        assert files[DRIFTED] == ("bootstrap.go  [DRIFTED]", "drifted")
        assert files[DISOWNED][1] == "disowned" and files[DISOWNED][0].endswith("[disowned]")
        drifted_node = next(n for n in _nodes(tree.root) if n.data and n.data[0] == DRIFTED)
        assert drifted_node.parent.is_expanded and drifted_node.parent.parent.is_expanded
        assert "red" in str(drifted_node.label.style)
        audit = str(screen.query_one("#project-audit").render())
        for name in ("drift", "orphaned-handlers", "migrations-entities", "disowned", "version-pin", "lint"):
            assert f" {name}: " in audit
        assert "ERROR    drift" in audit and DRIFTED in audit and "SKIPPED  lint" in audit
        upgrade = str(screen.query_one("#project-upgrade").render())
        assert upgrade.startswith(f"upgrade check {OLD} -> 0.1.0: 1 changed, 1 merged, 2 new, 1 removed")
        for status, path in (("merged", DRIFTED), ("new", "internal/bootstrap/bootstrap_test.go"),
                             ("removed", "internal/bootstrap/version.go"),
                             ("changed", "internal/handlers/order/handler_test.go"),
                             ("new", "internal/handlers/order/harness_test.go")):
            assert f"  {status:22} {path}" in upgrade
        assert "framework project upgrade list" in upgrade  # the range has pending playbooks
        tree.move_cursor(drifted_node)
        await pilot.pause()
        commands = str(screen.query_one("#project-commands").render())
        assert f"{DRIFTED} [drifted]" in commands and "framework generate" in commands
        assert f"framework project disown {DRIFTED} --reason" in commands
        assert f"framework project upgrade --check {DRIFTED}" in commands
        with (root / "internal/handlers/order/pricing.go").open("w") as f:
            f.write("package order\n")
        try:
            await pilot.press("r")
            await until_app(pilot, lambda: screen.loads >= 2, timeout=60, what="the reload")
            assert "internal/handlers/order/pricing.go" in {d[0] for _, d in _labels(tree.root) if d}
        finally:
            (root / "internal/handlers/order/pricing.go").unlink()


def _nodes(node: Any) -> list[Any]:
    out = [node]
    for child in node.children:
        out += _nodes(child)
    return out


def test_project_screen_snapshot(snap_compare: Any, drifted_project: Path) -> None:
    """docs/reference-project.md#project-screen: the layout of the Project screen on a project with drift."""

    async def run_before(pilot: Any) -> None:
        await _open(pilot)

    assert snap_compare(_app(drifted_project), terminal_size=SIZE, run_before=run_before)
