"""The Debug screen driven by keyboard through Textual's Pilot (docs/reference-debug.md#the-debug-screen), over a real
debugpy session of the demo's api: a session started in a shell shows up on the screen, the
screen's keys drive the same broker, and a session the screen ends is gone for the CLI."""

from __future__ import annotations

import asyncio

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.debug_fixtures import Debug, Request, debug  # noqa: F401
from tests.test_dashboard import SIZE
from tests.waiting import until_app

API = "services/api/main.py"


def _status(app: Dashboard) -> dict:
    return app.screen.status or {}


def test_debug_screen_drives_the_shell_session_by_keys(debug: Debug) -> None:
    """Keys c/n/s/r/b/B/e/x act on the session `framework debug start api` made; breakpoints
    toggled with b are the CLI's breakpoints; stepping moves the current line; x ends the session."""
    debug.ok("start", "api")
    line = debug.line_of(API, 'body = json.dumps({"message"')

    async def scenario() -> None:
        app = Dashboard(project_dir=debug.root, settings=deterministic_settings(refresh_seconds=60))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await until_app(pilot, lambda: app.current_mode == "debug" and _status(app).get("state") == "running")
            screen = app.screen
            source = screen.query_one("#debug-source")
            assert source.path.endswith(API)  # the program, before any stop
            source.focus()
            source.move_cursor(row=line - 1)
            await pilot.press("b")
            await until_app(pilot, lambda: len(_status(app).get("breakpoints") or []) == 1)
            assert [(b["line"], b["verified"]) for b in debug.ok("breakpoints")["breakpoints"]] == [(line, True)]
            assert f"framework debug break {API}:{line}" in str(screen.query_one("#debug-command").render())
            request = Request(debug.base, "/from-the-screen")
            screen.load()
            await until_app(pilot, lambda: _status(app).get("state") == "stopped", timeout=30)
            assert source.current == line and source.cursor_line() == line
            assert "●▶" in str(source.get_cell(str(line), "mark"))
            assert screen.query_one("#debug-stack").row_count >= 1
            assert "do_GET" in str(screen.query_one("#debug-stack").get_row_at(0)[0])
            tree = screen.query_one("#debug-vars")
            local_self = tree.root.children[0].children[0]  # locals -> self (a structured value)
            assert str(local_self.label).startswith("self = ") and local_self.allow_expand
            tree.focus()
            tree.move_cursor(local_self)
            await pilot.press("space")  # expand: its attributes are fetched from the adapter on demand
            await until_app(pilot, lambda: any(str(c.label).startswith("path = ") for c in local_self.children))
            await pilot.press("e")
            await pilot.press(*"self.path")
            await pilot.press("enter")
            await until_app(pilot, lambda: "'/from-the-screen'" in str(screen.query_one("#debug-eval").render()))
            await pilot.press("n")
            await until_app(pilot, lambda: (_status(app).get("stopped") or {}).get("line") == line + 1)
            assert debug.ok("status")["stopped"]["line"] == line + 1  # the CLI sees the screen's step
            await until_app(pilot, lambda: source.current == line + 1)
            source.move_cursor(row=line - 1)
            await pilot.press("b")  # toggles the breakpoint off again
            await until_app(pilot, lambda: not _status(app).get("breakpoints"))
            await pilot.press("c")
            assert request.done.wait(30) and "hello" in request.result()
            await pilot.press("x")  # while `continue` waits for a next stop: stop ends it
            await until_app(pilot, lambda: screen.status is None and screen.query_one("#debug-empty").display)
        assert debug.session() is None

    asyncio.run(scenario())


def test_debug_screen_conditional_breakpoint_and_shell_started_session_shows_up(debug: Debug) -> None:
    """B sets a conditional breakpoint from the cursor line; the screen first shows the honest empty
    state, then picks up a session started later from a shell."""

    async def scenario() -> None:
        app = Dashboard(project_dir=debug.root, settings=deterministic_settings(refresh_seconds=60))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await until_app(pilot, lambda: app.current_mode == "debug" and app.screen.loads >= 1)
            screen = app.screen
            assert screen.query_one("#debug-empty").display and screen.status is None
            debug.ok("start", "api")
            screen.load()
            await until_app(pilot, lambda: _status(app).get("state") == "running")
            line = debug.line_of(API, 'body = json.dumps({"message"')
            source = screen.query_one("#debug-source")
            source.focus()
            source.move_cursor(row=line - 1)
            await pilot.press("B")
            await pilot.press(*'self.path == "/b"')
            await pilot.press("enter")
            await until_app(pilot, lambda: len(_status(app).get("breakpoints") or []) == 1)
            listed = debug.ok("breakpoints")["breakpoints"]
            assert [(b["line"], b["condition"]) for b in listed] == [(line, 'self.path == "/b"')]
            assert "--cond" in str(screen.query_one("#debug-command").render())

    asyncio.run(scenario())
