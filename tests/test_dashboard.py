"""The dashboard shell driven by keyboard through Textual's Pilot; behaviour asserted on state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from screens.catalog import SCREENS
from tests.waiting import until_app

SIZE = (120, 36)


async def _loaded(app: Dashboard, pilot: object) -> None:
    await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1)


def visible(strips: list[object]) -> list[list[tuple[object, ...]]]:
    """Per cell: the character and what shows of its style (a blank shows only its background)."""
    rows = []
    for strip in strips:
        cells = []
        for seg in strip:  # type: ignore[attr-defined]
            st = seg.style
            for ch in seg.text:
                cells.append((ch, st.bgcolor) if ch == " " else
                             (ch, st.color, st.bgcolor, bool(st.bold), bool(st.dim), bool(st.reverse)))
        rows.append(cells)
    return rows


def _styles(screen: object) -> list[tuple[object, ...]]:
    """Every widget's rules from the stylesheet, its components' with them."""
    return [(node, node.styles.get_rules(), {name: rules.get_rules() for name, rules in node._component_styles.items()})
            for node in screen.walk_children(with_self=True)]  # type: ignore[attr-defined]


def test_visits_every_screen_by_number_key_and_sidebar(demo_project: Path) -> None:
    """README.md#dashboard: navigation between every screen by keyboard (number keys and the sidebar) and
    by mouse (a click on the sidebar); each screen, shown for the first time, is styled as a restyle of
    all of it would style it (screens/base.py skips Textual's restyle on a screen's first resume)."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            for info in SCREENS:
                await pilot.press(info.key)
                await until_app(pilot, lambda info=info: getattr(app.screen, "NAME", None) == info.name)
                assert app.current_mode == info.name
                await pilot.pause()
                styled = _styles(app.screen)
                app.stylesheet.update(app.screen)  # what Textual's restyle on resume does
                assert _styles(app.screen) == styled, info.name
            # Sidebar: focus it, move down, select -> the next screen.
            await pilot.press("1")
            await until_app(pilot, lambda: app.current_mode == "environments")
            app.screen.query_one("#sidebar").focus()
            await pilot.press("down", "enter")
            await until_app(pilot, lambda: app.current_mode == "rollouts")
            # The mouse: a click on a row (below the border, past the padding) -> that screen.
            await pilot.click("#sidebar", offset=(3, 3))  # the third row: "3  Plans"
            await until_app(pilot, lambda: app.current_mode == "plans")

    asyncio.run(scenario())


def test_no_screen_is_a_placeholder(demo_project: Path) -> None:
    """Nothing shown is invented (README.md#dashboard): every screen of the catalog is a real view, none a
    NotBuiltScreen."""
    import importlib

    from screens.base import NotBuiltScreen

    not_built = [s.name for s in SCREENS
                 if issubclass(getattr(importlib.import_module(s.module), s.cls), NotBuiltScreen)]
    assert not_built == []


def test_environments_screen_shows_the_same_list_as_the_command(demo_project: Path) -> None:
    """README.md#dashboard: the Environments screen shows the same list as `framework env list`."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            table = app.screen.query_one("#env-table")
            assert [k.value for k in table.rows] == ["cloud", "cluster", "dev", "prod", "staging"]
            assert table.get_row("cluster")[1:3] == ["self_managed", "k8s"]
            assert table.get_row("staging")[1:3] == ["self_managed", "process"]

    asyncio.run(scenario())


def test_filter_with_slash_and_clear_with_escape(demo_project: Path) -> None:
    """README.md#dashboard: `/` filters the table; esc clears the filter and keeps every row."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            table = app.screen.query_one("#env-table")
            await pilot.press("slash", *"k8s")
            await until_app(pilot, lambda: [k.value for k in table.rows] == ["cluster"])
            await pilot.press("enter")  # back to the table, filter kept
            assert [k.value for k in table.rows] == ["cluster"]
            await pilot.press("escape")
            await until_app(pilot, lambda: len(table.rows) == 5)

    asyncio.run(scenario())


def test_details_and_escape_back(demo_project: Path) -> None:
    """README.md#dashboard: enter opens an environment's evaluated declaration; esc goes back."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            await pilot.press("j", "enter")  # second row: cluster
            await until_app(pilot, lambda: getattr(app.screen, "document", None) is not None)
            assert app.screen.env_name == "cluster" and app.screen.document.kind == "self_managed"  # type: ignore[attr-defined]
            await pilot.press("escape")
            await until_app(pilot, lambda: app.current_mode == "environments" and len(app.screen_stack) == 1)

    asyncio.run(scenario())


def test_help_lists_every_binding(demo_project: Path) -> None:
    """README.md#dashboard: `?` lists every binding (app and screen), each with an id and a description."""
    from screens.environments.listing import EnvironmentsScreen
    from screens.help import HelpScreen

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            await pilot.press("question_mark")
            await until_app(pilot, lambda: isinstance(app.screen, HelpScreen))
            ids = {row[2] for row in app.screen.rows}  # type: ignore[attr-defined]
            declared = {b.id for b in Dashboard.BINDINGS} | {b.id for b in EnvironmentsScreen.BINDINGS}
            assert declared <= ids and "app.command_palette" in ids
            assert all(row[1] for row in app.screen.rows)  # type: ignore[attr-defined]
            await pilot.press("escape")
            await until_app(pilot, lambda: not isinstance(app.screen, HelpScreen))

    asyncio.run(scenario())


def test_command_line_runs_the_cli_and_jumps_to_screens(demo_project: Path) -> None:
    """README.md#dashboard: `:` runs the same commands as the CLI (exit code and output) and screen names switch."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            await pilot.press("colon", *"env list --json", "enter")
            await until_app(pilot, lambda: app.last_command is not None and app.last_command.result is not None)
            result = app.last_command.result
            assert result.argv == ["framework", "env", "list", "--json"] and result.exit_code == 0
            assert '"name": "staging"' in result.stdout
            await pilot.press("escape")
            await pilot.press("colon", *"env list --bogus", "enter")
            await until_app(pilot, lambda: app.last_command.result is not None and "bogus" in app.last_command.argv[-1])
            assert app.last_command.result.exit_code == 2
            await pilot.press("escape", "colon", *"webhooks", "enter")
            await until_app(pilot, lambda: app.current_mode == "webhooks")

    asyncio.run(scenario())


def test_command_palette_opens_and_q_quits(demo_project: Path) -> None:
    """README.md#dashboard: ctrl+p opens the command palette; q quits."""
    from textual.command import CommandPalette

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            await pilot.press("ctrl+p")
            await until_app(pilot, lambda: isinstance(app.screen, CommandPalette))
            await pilot.press(*"Go to Runs")
            await pilot.press("enter")
            await until_app(pilot, lambda: app.current_mode == "runs")
            await pilot.press("q")
            await until_app(pilot, lambda: not app.is_running)

    asyncio.run(scenario())


def test_environments_refresh_when_a_kcl_file_changes(demo_project: Path) -> None:
    """README.md#dashboard: the Environments screen refreshes when a file under deploy/kcl changes (watchdog)."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(watch=True, debounce_seconds=0.05))
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            table = app.screen.query_one("#env-table")
            table.move_cursor(row=2)
            new = demo_project / "deploy" / "kcl" / "qa"
            new.mkdir()
            (new / "main.k").write_text((demo_project / "deploy/kcl/dev/main.k").read_text()
                                        .replace('name = "dev"', 'name = "qa"'))
            await until_app(pilot, lambda: "qa" in {k.value for k in table.rows})
            assert table.cursor_row == 2  # the cursor stayed put
            (new / "main.k").unlink()
            await until_app(pilot, lambda: "qa" not in {k.value for k in table.rows})

    asyncio.run(scenario())


def test_outside_a_project_the_screen_says_so(tmp_path: Path) -> None:
    """Outside a project, a clear error (README.md#output-and-exit-codes, `project_not_found`; here: in the
    Environments empty state)."""
    from screens.widgets.empty_state import EmptyState

    async def scenario() -> None:
        app = Dashboard(project_dir=tmp_path, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            empty = app.screen.query_one("#env-empty", EmptyState)
            assert empty.display and "not inside a framework project" in str(empty.query("Static").last().render())

    asyncio.run(scenario())


@pytest.mark.parametrize("value", ["1", "0"])
def test_settings_come_from_env_prefix(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """STYLE settings: one pydantic-settings class with the FRAMEWORK_UI_ env prefix."""
    from app.settings import DashboardSettings

    monkeypatch.setenv("FRAMEWORK_UI_WATCH", value)
    assert DashboardSettings().watch is (value == "1")


def test_settings_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """STYLE settings: a TOML file source, overridden by the environment."""
    from app.settings import DashboardSettings

    path = tmp_path / "dashboard.toml"
    path.write_text("watch = false\ndebounce_seconds = 1.5\n")
    monkeypatch.setenv("FRAMEWORK_UI_CONFIG", str(path))
    settings = DashboardSettings()
    assert settings.watch is False and settings.debounce_seconds == 1.5
    monkeypatch.setenv("FRAMEWORK_UI_DEBOUNCE_SECONDS", "0.5")
    assert DashboardSettings().debounce_seconds == 0.5


def test_keymap_in_settings_remaps_a_binding_by_id(demo_project: Path) -> None:
    """README.md#dashboard / STYLE: every binding has an id, so settings can remap it (here: Runs on F7)."""
    async def scenario() -> None:
        settings = deterministic_settings(keymap={"screen.runs": "f7"})
        app = Dashboard(project_dir=demo_project, settings=settings)
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            await pilot.press("f7")
            await until_app(pilot, lambda: app.current_mode == "runs")

    asyncio.run(scenario())


def test_unknown_theme_falls_back_with_a_warning(demo_project: Path) -> None:
    """Settings: a bad theme name is reported, not a crash."""
    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(theme="no-such-theme"))
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            assert app.theme != "no-such-theme"
            assert any("unknown theme" in str(n.message) for n in app._notifications)

    asyncio.run(scenario())


def test_load_settings_reads_file_and_env_only_when_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """STYLE settings: defaults without a file or FRAMEWORK_UI_* variable (no pydantic-settings import, which
    costs a fifth of first paint); the file and the env prefix apply when present."""
    import subprocess
    import sys

    from app.settings import DashboardFields, load_settings

    assert type(load_settings()) is DashboardFields and load_settings().watch is True
    probe = ("import sys; from app.settings import load_settings; load_settings(); "
             "print('pydantic_settings' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("FRAMEWORK_UI_")}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    path = tmp_path / "dashboard.toml"
    path.write_text('theme = "nord"\n')
    monkeypatch.setenv("FRAMEWORK_UI_CONFIG", str(path))
    assert load_settings().theme == "nord"
    monkeypatch.delenv("FRAMEWORK_UI_CONFIG")
    monkeypatch.setenv("FRAMEWORK_UI_REFRESH_SECONDS", "2.5")
    assert load_settings().refresh_seconds == 2.5


def test_first_frame_is_the_real_screen_and_the_engine_read_follows_it(demo_project: Path) -> None:
    """First paint: the first frame is the Environments screen the user gets (header, sidebar,
    table, footer, "loading"); its engine read starts only after that frame, then fills the table."""
    from textual.widgets import DataTable, Footer

    from screens.widgets.title_bar import TitleBar

    seen: dict[str, object] = {}

    class Probe(Dashboard):
        def on_ready(self) -> None:  # runs before Dashboard.on_ready (Textual dispatches along the MRO)
            screen = self.screen
            seen.update(name=getattr(screen, "NAME", None), loads=getattr(screen, "loads", None),
                        workers=len(self.workers), status=str(screen.query_one("#env-status").render()),
                        frame=all(screen.query(w) for w in (TitleBar, "#sidebar", DataTable, Footer)))

    async def scenario() -> None:
        app = Probe(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            assert seen == {"name": "environments", "loads": 0, "workers": 0, "status": "loading environments ...",
                            "frame": True}
            assert app.screen.query_one("#env-table", DataTable).row_count == 5

    asyncio.run(scenario())


def test_the_first_frame_styles_only_what_it_shows(demo_project: Path) -> None:
    """First paint (README.md#dashboard): the first frame has the table focused, the footer's keys (shown in
    it) in their final style and only app.tcss's rules; a screen shown before the first frame's callbacks ran
    still gets its rules from screens.tcss (read before it is styled), as later ones do."""
    from textual.events import Ready
    from textual.widgets._footer import FooterKey

    seen: dict[str, object] = {}

    class Early(Dashboard):
        def on_ready(self, event: Ready) -> None:
            event.prevent_default()  # Dashboard.on_ready does not run: nor do the first frame's callbacks
            sources = {Path(path).name for path, _ in self.stylesheet.source}
            keys = self.screen.query(FooterKey)
            seen.update(focused=getattr(self.focused, "id", None), screens_css="screens.tcss" in sources,
                        compact=[k.has_class("-compact") for k in keys if not k.has_class("-command-palette")],
                        shown=[(k.key, k.size.width > 0) for k in keys])

    async def scenario() -> None:
        app = Early(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: bool(seen), what="the first frame")
            assert seen["focused"] == "env-table" and seen["screens_css"] is False
            assert seen["compact"] and not any(seen["compact"])  # type: ignore[arg-type]
            assert seen["shown"] == [("r", True), ("slash", True), ("question_mark", True), ("colon", True),
                                     ("q", True), ("ctrl+p", True)]  # drawn in the first frame
            # The footer composes its keys again only when what they show changes.
            footer_keys = list(app.screen.query(FooterKey))
            app.screen.refresh_bindings()
            await pilot.pause()
            await pilot.pause()
            assert list(app.screen.query(FooterKey)) == footer_keys
            app.bind("x", "bell", description="Bell")
            app.screen.refresh_bindings()
            await until_app(pilot, lambda: [k.key for k in app.screen.query(FooterKey)][-2:] == ["x", "ctrl+p"],
                            what="the new key in the footer")
            await pilot.press("4")
            await until_app(pilot, lambda: getattr(app.screen, "NAME", "") == "devstacks", what="Dev stacks")
            stacks = app.screen.query_one("#stacks-table")
            assert (str(stacks.styles.max_height), str(stacks.styles.height)) == ("12", "auto")  # screens.tcss

    asyncio.run(scenario())


def test_an_engine_read_runs_on_a_daemon_thread_that_quit_does_not_wait_for() -> None:
    """First paint / STYLE (engine calls off the UI thread): a screen's read runs on a daemon
    thread, so quitting mid-read never waits for it; its result or error reaches the awaiting worker."""
    import threading

    from screens.widgets.background import in_daemon_thread

    async def scenario() -> None:
        assert await in_daemon_thread(lambda: threading.current_thread().daemon) is True
        with pytest.raises(ValueError, match="bad project"):
            await in_daemon_thread(lambda: (_ for _ in ()).throw(ValueError("bad project")))
        release = threading.Event()
        started = threading.Event()

        def stuck() -> None:
            started.set()
            release.wait()

        task = asyncio.ensure_future(in_daemon_thread(stuck, "stuck-read"))
        await asyncio.get_running_loop().run_in_executor(None, started.wait)
        task.cancel()  # what a quit does to the awaiting worker
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [t.daemon for t in threading.enumerate() if t.name == "stuck-read"] == [True]
        release.set()

    asyncio.run(scenario())


def test_quitting_while_a_screen_reads_does_not_wait_for_the_read(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`q` quits (README.md#dashboard) / STYLE (engine calls off the UI thread): every screen's read
    (here the Rollouts screen's) runs on a daemon thread; q quits at once although the read is
    still stuck, and a later load supersedes an older one."""
    import threading
    import time

    import engine.deploy.rollouts as rollouts_module

    release, started = threading.Event(), threading.Event()
    real = rollouts_module.rollouts

    def stuck(project):  # the engine read hangs (a slow KCL evaluation, a stuck disk)
        started.set()
        release.wait(60)
        return real(project)

    monkeypatch.setattr(rollouts_module, "rollouts", stuck)

    began: list[float] = []

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            await pilot.press("2")
            await until_app(pilot, lambda: app.current_mode == "rollouts" and started.is_set())
            assert any(t.daemon and t.name == "rollouts-read" for t in threading.enumerate())
            began.append(time.monotonic())
            await pilot.press("q")
            await until_app(pilot, lambda: not app.is_running, timeout=10)

    try:
        asyncio.run(scenario())  # returns once the loop and its executor threads are shut down
        assert time.monotonic() - began[0] < 5  # a thread worker would have held it for 60 s
    finally:
        release.set()


def test_the_title_bar_draws_the_cells_of_textuals_header(monkeypatch: pytest.MonkeyPatch) -> None:
    """README.md#dashboard (the frame every screen shares; "the mouse works too"): the screens' one-widget
    title bar shows what Textual's Header shows, cell for cell (icon, `title — sub-title` centred,
    the clock), plain, hovered, tall (a click on it) and narrower than its icon and clock; a click on
    the icon opens the command palette."""
    import datetime as dt

    import textual.widgets._header as textual_header
    from textual.app import App, ComposeResult
    from textual.command import CommandPalette
    from textual.containers import Vertical
    from textual.widgets import Header

    import screens.widgets.title_bar as title_bar

    class Fixed(dt.datetime):
        @classmethod
        def now(cls, tz: object = None) -> Fixed:  # type: ignore[override]
            return cls(2026, 1, 2, 3, 4, 5)

    monkeypatch.setattr(textual_header, "datetime", Fixed)
    monkeypatch.setattr(title_bar, "datetime", Fixed)

    class Both(App[None]):
        TITLE = "framework"
        CSS = "Vertical { height: 3; }"

        def compose(self) -> ComposeResult:
            with Vertical(id="theirs"):
                yield Header(show_clock=True)
            with Vertical(id="ours"):
                yield title_bar.TitleBar(show_clock=True)

    async def scenario() -> None:
        app = Both()
        async with app.run_test(size=(60, 6)) as pilot:
            app.sub_title = "demo"
            theirs, ours = app.query_one(Header), app.query_one(title_bar.TitleBar)

            async def same(what: str) -> None:
                await pilot.pause()
                lines = visible(app.screen._compositor.render_strips())
                assert lines[3:6] == lines[0:3], what

            await same("plain")
            for widget in (theirs, ours):
                widget.toggle_class("-tall")
            await same("tall")
            await pilot.hover(theirs, offset=(2, 1))
            await pilot.pause()
            hovered = visible(app.screen._compositor.render_strips())[0:3]
            await pilot.hover(ours, offset=(2, 1))
            await pilot.pause()
            assert visible(app.screen._compositor.render_strips())[3:6] == hovered, "icon hovered"
            assert ours.tooltip == "Open the command palette"
            for widget in (theirs, ours):
                widget.toggle_class("-tall")
            await pilot.resize_terminal(15, 6)
            await same("narrower than icon and clock")
            await pilot.resize_terminal(60, 6)
            await pilot.click(ours, offset=(20, 0))
            await pilot.pause()
            assert ours.has_class("-tall")
            await pilot.click(ours, offset=(2, 1))
            await until_app(pilot, lambda: isinstance(app.screen, CommandPalette), what="the command palette")

    asyncio.run(scenario())


def test_the_sidebar_draws_the_cells_of_textuals_option_list() -> None:
    """README.md#dashboard (the frame every screen shares; "the mouse works too"): the one-widget sidebar
    shows what the OptionList it replaced showed, cell for cell (rows, highlighted row, border, scroll bar),
    blurred, focused, hovered, in the light theme and scrolled in a short terminal, and its keys (up, down,
    home, end, page up/down) move the highlight as the OptionList's did."""
    from textual.app import App, ComposeResult
    from textual.containers import Horizontal
    from textual.widgets import OptionList
    from textual.widgets.option_list import Option

    from engine.paths import assets_dir
    from screens.widgets.sidebar import Sidebar

    class Theirs(OptionList):  # the sidebar as it was: Textual's OptionList with one option a screen
        def __init__(self, current: str) -> None:
            super().__init__(*[Option(f"{s.key}  {s.title}", id=s.name) for s in SCREENS], id="sidebar")
            self.current = current

        def on_mount(self) -> None:
            self.highlighted = next(i for i, s in enumerate(SCREENS) if s.name == self.current)

    class Both(App[None]):
        CSS_PATH = str(assets_dir() / "app.tcss")  # the app's #sidebar rules; the old one's bold row below
        CSS = "#sidebar > .option-list--option-highlighted { text-style: bold; } Horizontal { width: 22; }"
        AUTO_FOCUS = None

        def compose(self) -> ComposeResult:
            with Horizontal():
                yield Theirs("metrics")
            with Horizontal():
                yield Sidebar("metrics")

    async def scenario() -> None:
        app = Both()
        async with app.run_test(size=(44, 8)) as pilot:
            theirs, ours = app.query_one(Theirs), app.query_one(Sidebar)

            def halves() -> tuple[list[object], list[object]]:
                lines = visible(app.screen._compositor.render_strips())
                return [line[:22] for line in lines], [line[22:44] for line in lines]

            async def same(what: str) -> None:
                await pilot.pause()
                left, right = halves()
                assert left == right, what

            await same("short terminal: scrolled to the highlighted row, scroll bar")
            assert ours.scroll_offset.y > 0 and ours.highlighted == theirs.highlighted == 9
            for key in ("down", "down", "down", "up", "pageup", "pageup", "pagedown", "end", "home", "up", "pagedown"):
                pictures = []
                for widget in (theirs, ours):
                    widget.focus()
                    await pilot.press(key)
                    await pilot.pause()
                    pictures.append(halves()[widget is ours])
                assert ours.highlighted == theirs.highlighted, key
                assert pictures[0] == pictures[1], f"focused, after {key}"
            await pilot.resize_terminal(44, 16)
            app.set_focus(None)
            await same("blurred, every row and blank lines below")
            for theme in ("textual-light", "textual-dark"):
                app.theme = theme
                await same(theme)
            pictures = []
            for widget in (theirs, ours):
                await pilot.hover(widget, offset=(4, 3))
                await pilot.pause()
                pictures.append(halves()[widget is ours])
            assert pictures[0] == pictures[1], "row hovered"
            assert ours.hovered == 2
            await pilot.hover(ours, offset=(4, 14))
            assert ours.hovered is None  # the border: no row

    asyncio.run(scenario())
