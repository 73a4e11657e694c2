"""One environment's evaluated declaration (same engine call as the KCL evaluation behind env list)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class EnvironmentDetailScreen(Screen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "app.pop_screen", "Back", id="environment_detail.back"),
    ]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.env_name = name
        self.document: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self.app.settings.show_clock)
        with VerticalScroll(id="body"):
            yield Static(f"Environment {self.env_name}", classes="title", markup=False)
            yield Static("evaluating ...", id="detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.evaluate()

    @work(thread=True, exclusive=True, group="environment-detail")
    def evaluate(self) -> None:
        from engine.environments import evaluate_environment
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            doc = evaluate_environment(find_project(self.app.project_dir), self.env_name)
        except EngineError as exc:
            self.app.call_from_thread(self._show, None, exc.message)
            return
        self.app.call_from_thread(self._show, doc, None)

    def _show(self, doc: dict[str, Any] | None, error: str | None) -> None:
        self.document = doc
        text = json.dumps(doc, indent=2) if doc is not None else f"error: {error}"
        self.query_one("#detail", Static).update(text)
