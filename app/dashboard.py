"""The Textual dashboard. Imported only when it opens (no arguments on a terminal)."""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from app.settings import DashboardFields, load_settings
from engine.paths import assets_dir
from screens.catalog import BY_NAME, SCREENS


def _screen_factory(name: str) -> Any:
    info = BY_NAME[name]

    def make() -> Screen[Any]:
        screen: Screen[Any] = getattr(importlib.import_module(info.module), info.cls)()
        # Textual (8.2) marks a new screen's CSS stale, so the first switch to each mode reparses the
        # whole stylesheet and restyles the app (~10 ms of the first frame). The screen is about to be
        # registered, which styles it with the current stylesheet: it is current.
        screen._css_update_count = screen.app._css_update_count
        return screen

    return make


class Dashboard(App[int]):
    """Environments, rollouts, plans, dev stacks, daemon, webhooks, runs and debugging, by keyboard."""

    TITLE = "framework"
    CSS_PATH = str(assets_dir() / "app.tcss")  # the first frame's rules; the other screens' are SCREENS_CSS
    SCREENS_CSS = assets_dir() / "screens.tcss"
    MODES: ClassVar[dict[str, Any]] = {s.name: _screen_factory(s.name) for s in SCREENS}
    DEFAULT_MODE = "environments"
    BINDINGS: ClassVar[list[Binding]] = [
        *[Binding(s.key, f"switch_mode('{s.name}')", s.title, id=f"screen.{s.name}", show=False) for s in SCREENS],
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("colon", "command_line", "Command", id="app.command_line"),
        Binding("escape", "back", "Back", id="app.back", show=False),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, project_dir: Path | None = None, settings: DashboardFields | None = None,
                 program: str = "framework") -> None:
        self.settings = settings or load_settings()
        self.project_dir = (project_dir or Path.cwd()).resolve()
        self.program = program
        super().__init__()
        self.animation_level = "full" if self.settings.animations else "none"
        self.last_command: Any = None
        self._first_frame_shown = False
        self._after_first_frame: list[Callable[[], object]] = []
        self._screens_css_read = False
        self._first_screen_styled = False
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)

    def run(self, **options: Any) -> int | None:  # type: ignore[override]  # same keywords as App.run
        # What is alive now (the interpreter, Textual, the engine's modules: ~35k objects) lives as long
        # as the process. Freezing it keeps the collector from rescanning it in every full collection
        # (~20 ms each; one used to land on the first frame, bench/dashboard.py); only the objects the
        # dashboard creates from here on are collected, as usual.
        gc.freeze()
        return super().run(**options)

    def on_mount(self) -> None:
        self.sub_title = self.project_dir.name
        from screens.widgets.signin import show_signin

        self.after_first_frame(self.read_screens_css)
        self.after_first_frame(lambda: show_signin(self))  # who is signed in where (auth status)
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        else:
            self.notify(f"unknown theme {self.settings.theme!r} in settings; using {self.theme}", severity="warning")

    def on_ready(self) -> None:
        # Textual sends Ready once the first frame is on screen; work queued for it starts now.
        self._first_frame_shown = True
        waiting, self._after_first_frame = self._after_first_frame, []
        for callback in waiting:
            self.call_after_refresh(self._unless_quitting, callback)

    def after_first_frame(self, callback: Callable[[], object]) -> None:
        """Run `callback` once the first frame is on screen (after the next refresh if it already is).

        Screens start their engine reads here: a read started earlier competes with the first frame
        for the GIL (bench/dashboard.py); if the app quits on its first frame, nothing is read.
        """
        if self._first_frame_shown:
            self.call_after_refresh(self._unless_quitting, callback)
        else:
            self._after_first_frame.append(callback)

    def _unless_quitting(self, callback: Callable[[], object]) -> None:
        # A quit (App.exit sets _exit) is processed after the refresh that runs these callbacks: a read
        # or the other screens' rules started then would only hold up the exit.
        if not self._exit:
            callback()

    def read_screens_css(self) -> None:
        """Add the other screens' rules (assets/screens.tcss) to the stylesheet, once.

        The first frame needs only app.tcss: parsing every screen's rules before it cost ~6 ms of it
        (bench/dashboard.py). The rules come after app.tcss's, in the order one file had them; only the
        new file is parsed (Textual keeps the parsed rules of the others), and what is mounted is restyled.
        """
        if self._screens_css_read:
            return
        self._screens_css_read = True
        self.stylesheet.read(self.SCREENS_CSS)
        self.stylesheet.parse()  # read() leaves the rules map of before in place: rebuild it
        self.stylesheet.update(self)

    def _load_screen_css(self, screen: Screen[Any]) -> None:
        # Textual calls this before it styles a screen it installs (a mode's first screen, a pushed or a
        # switched screen). The first one is the Environments screen of the first frame; any other
        # reads the other screens' rules first, should it come before the first frame's callbacks ran.
        if self._first_screen_styled:
            self.read_screens_css()
        self._first_screen_styled = True
        super()._load_screen_css(screen)

    # -- actions ---------------------------------------------------------------------------
    def action_help(self) -> None:
        from screens.help import HelpScreen, binding_rows

        rows = binding_rows(self, self.screen, display=self.get_key_display)
        rows.append(("ctrl+p", "Command palette", "app.command_palette"))
        self.push_screen(HelpScreen(rows))

    def action_command_line(self) -> None:
        from screens.command_line import CommandLineScreen

        self.push_screen(CommandLineScreen(), self.run_command_line)

    def run_command_line(self, line: str | None) -> None:
        from screens.command_line import SCREEN_ALIASES, CommandOutputScreen, to_argv

        if not line:
            return
        if line in SCREEN_ALIASES:
            self.switch_mode(SCREEN_ALIASES[line])
            return
        try:
            argv = to_argv(line)
        except ValueError as exc:
            self.notify(f"cannot parse command: {exc}", severity="error")
            return
        screen = CommandOutputScreen(argv, self.project_dir)
        self.last_command = screen
        self.push_screen(screen)

    async def action_back(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for info in SCREENS:
            yield SystemCommand(f"Go to {info.title}", f"Show the {info.title} screen (key {info.key})",
                                lambda name=info.name: self.switch_mode(name))
        yield SystemCommand("Clusters", "Local clusters: provider, nodes, namespaces, URLs, logs (c on Environments)",
                            self.action_clusters)
        yield SystemCommand("Run a command", "Open the : command line", self.action_command_line)

    def action_clusters(self) -> None:
        from screens.clusters import ClustersScreen

        self.push_screen(ClustersScreen())


def run_dashboard(program: str = "framework") -> int:
    result = Dashboard(program=program).run()
    return int(result or 0)
