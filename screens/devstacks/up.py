"""Pick a local environment to bring up as a dev stack (same as `framework env up <env> --background`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


@dataclass
class LocalEnvironments(Message):
    names: list[str]
    error: str = ""


class DevStackUpScreen(ModalScreen[str | None]):
    """Lists the project's `kind = "local"` environments; enter brings the highlighted one up."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "cancel", "Cancel", id="devstack_up.cancel"),
    ]

    def __init__(self, root: Path, preselect: str | None = None) -> None:
        super().__init__()
        self.root = root
        self.preselect = preselect
        self.names: list[str] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal", id="devstack-up"):
            yield Static("Bring up a dev stack", classes="title")
            yield Static(f"project {self.root}", classes="hint", markup=False)
            yield OptionList(id="up-envs")
            yield Static("", id="up-command", classes="hint", markup=False)
            yield Static("enter bring up   esc cancel", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#up-envs").focus()
        self.load()

    @work(thread=True, exclusive=True, group="devstack-up")
    def load(self) -> None:
        from engine.environments.listing import list_environments
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            listing = list_environments(find_project(self.root))
        except EngineError as exc:
            self.post_message(LocalEnvironments([], exc.message))
            return
        self.post_message(LocalEnvironments([e.name for e in listing.environments if e.kind == "local"]))

    def on_local_environments(self, message: LocalEnvironments) -> None:
        self.names = message.names
        options = self.query_one("#up-envs", OptionList)
        options.add_options([Option(name, id=name) for name in message.names])
        if message.error or not message.names:
            self.query_one("#up-command", Static).update(
                message.error or "No local environment (kind = \"local\") is declared under deploy/kcl.")
            return
        if self.preselect in message.names:
            options.highlighted = message.names.index(self.preselect)
        else:
            options.highlighted = 0
        self._show_command()

    @on(OptionList.OptionHighlighted)
    def _show_command(self) -> None:
        env = self._highlighted()
        if env:
            self.query_one("#up-command", Static).update(f"Same as: framework env up {env} --background")

    def _highlighted(self) -> str | None:
        options = self.query_one("#up-envs", OptionList)
        if options.highlighted is None or not self.names:
            return None
        return str(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(str(event.option.id))

    def action_cancel(self) -> None:
        self.dismiss(None)
