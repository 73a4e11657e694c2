"""Webhooks screen: automations and their triggers (enabled/disabled, URL) from `platform server`.

Same engine calls as `platform automation list` / `platform trigger ...` (engine/hooks/client.py),
in thread workers. The server is the settings' platform_server_url / platform_token, else
$PLATFORM_SERVER_URL / $PLATFORM_TOKEN, else the stored login for that server (`platform auth
login`; resolved in engine.hooks.client.server_settings). Activation and rotation show the token once, in a modal
(activation displays the URL and token once); this screen never keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from screens.base import DashboardScreen
from screens.webhooks.server import server_of
from screens.widgets.background import read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

COLUMNS = (("automation", "Automation"), ("trigger", "Trigger"), ("state", "State"), ("auth", "Auth"),
           ("filter", "Filter"), ("url", "URL"))
NOT_CONFIGURED = (
    "The Webhooks view reads a running `platform server` through its admin API.\n"
    "Start one with:  platform server --port 8080   (it prints the admin API token once)\n"
    "then set PLATFORM_SERVER_URL (or platform_server_url in the dashboard settings) and sign in with\n"
    "platform auth login --server <url>, or set PLATFORM_TOKEN (or platform_token), and press r.\n"
    "Same list: platform automation list"
)


@dataclass
class TriggersLoaded(Message):
    result: Any = None
    error: Any = None


@dataclass
class TriggerActionDone(Message):
    """An action's answer. `activation` (token inside) goes straight to the modal, never kept."""

    command: str
    activation: Any = None
    error: Any = None


def trigger_state(t: Any) -> str:
    if not t.activated:
        return "not activated"
    return "enabled" if t.enabled else "disabled"


class WebhooksScreen(TableKeys, DashboardScreen):
    NAME = "webhooks"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "reload", "Reload", id="webhooks.reload"),
        Binding("a", "activate", "Activate", id="webhooks.activate"),
        Binding("o", "rotate", "Rotate token", id="webhooks.rotate"),
        Binding("e", "toggle", "Enable/disable", id="webhooks.toggle"),
        Binding("s", "stats", "Stats", id="webhooks.stats"),
        Binding("enter", "history", "History", id="webhooks.history", show=False),
        *table_bindings("webhooks"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.result: Any = None
        self.loads = 0
        self.actions = 0

    def compose_body(self) -> ComposeResult:
        yield Static("loading automations ...", id="hooks-status", classes="status-line", markup=False)
        yield Input(placeholder="filter: automation, trigger or state (esc clears)", id="filter")
        yield DataTable(id="hooks-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="hooks-commands", classes="hint", markup=False)
        yield EmptyState("", "", id="hooks-empty")

    def on_mount(self) -> None:
        table = self.query_one("#hooks-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#hooks-empty").display = False
        self.query_one("#filter", Input).cursor_blink = self.app.settings.cursor_blink
        table.focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)

    def _main_table(self) -> DataTable[str]:
        return self.query_one("#hooks-table", DataTable)

    @read_worker("webhooks")
    def load(self) -> TriggersLoaded:
        from engine.errors import EngineError
        from engine.hooks.client import list_automations

        try:
            return TriggersLoaded(result=list_automations(server=server_of(self.app)))
        except EngineError as exc:
            return TriggersLoaded(error=exc)

    def on_triggers_loaded(self, message: TriggersLoaded) -> None:
        self.loads += 1
        empty = self.query_one("#hooks-empty", EmptyState)
        table = self._main_table()
        if message.error is not None:
            self.result = None
            table.display, empty.display = False, True
            self.query_one("#hooks-commands", Static).update("")
            self.query_one("#hooks-status", Static).update(
                f"no platform server: {message.error.message}")
            empty.update("No platform server configured or reachable", NOT_CONFIGURED)
            return
        self.result = message.result
        if not any(a.triggers for a in self.result.automations):
            table.display, empty.display = False, True
            names = ", ".join(a.name for a in self.result.automations) or "none"
            empty.update("No webhook triggers yet",
                         f"Automations: {names}.\nCreate one with: platform automation create <name> "
                         "--workflow <file.yaml>\nthen: platform trigger add <automation> <trigger>")
            self.query_one("#hooks-status", Static).update("0 triggers   (same as: platform automation list)")
            return
        table.display, empty.display = True, False
        self._render_rows()

    def _triggers(self) -> list[Any]:
        return [t for a in (self.result.automations if self.result else []) for t in a.triggers]

    def _render_rows(self) -> None:
        needle = self.query_one("#filter", Input).value.strip().lower()
        rows = {}
        for t in self._triggers():
            state = trigger_state(t)
            if needle and needle not in f"{t.automation} {t.name} {state}".lower():
                continue
            auth = "token + HMAC" if t.definition.webhook.hmac else "token"
            rows[f"{t.automation}/{t.name}"] = (t.automation, t.name, state, auth,
                                                t.definition.filter or "-", t.url or "-")
        sync_rows(self._main_table(), [k for k, _ in COLUMNS], rows)
        self.query_one("#hooks-status", Static).update(
            f"{len(rows)} of {len(self._triggers())} triggers   (same as: platform automation list)")
        self._show_commands()

    def _selected(self) -> Any:
        table = self._main_table()
        if not table.display or table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((t for t in self._triggers() if f"{t.automation}/{t.name}" == key), None)

    @on(DataTable.RowHighlighted, "#hooks-table")
    def _show_commands(self) -> None:
        t = self._selected()
        if t is None:
            return
        a, n = t.automation, t.name
        toggle = "disable" if t.enabled else "enable"
        self.query_one("#hooks-commands", Static).update(
            f"a activate   platform trigger activate {a} {n}\n"
            f"o rotate     platform trigger rotate {a} {n}\n"
            f"e {toggle:<9}  platform trigger {toggle} {a} {n}\n"
            f"enter        platform trigger history {a} {n}\n"
            f"s stats      platform trigger stats {a} {n}")

    def _rows_ready(self) -> bool:
        return self.result is not None

    def action_history(self) -> None:
        from screens.webhooks.history import WebhookHistoryScreen

        t = self._selected()
        if t is not None:
            self.app.push_screen(WebhookHistoryScreen(t.automation, t.name, t.definition.filter))

    def action_stats(self) -> None:
        from functools import partial

        from screens.webhooks.stats import COLUMNS, stats_chart
        from screens.widgets.chart_modal import ChartModal

        t = self._selected()
        if t is not None:
            self.app.push_screen(ChartModal(
                f"Stats of {t.automation}/{t.name}", COLUMNS,
                partial(stats_chart, server_of(self.app), t.automation, t.name),
                f"platform trigger stats {t.automation} {t.name} --json"))

    @on(DataTable.RowSelected, "#hooks-table")
    def _open(self) -> None:
        self.action_history()

    def action_activate(self) -> None:
        t = self._selected()
        if t is None:
            return
        if t.definition.webhook.hmac is not None and not t.activated:
            # The shared secret is typed into a command, never into the dashboard.
            self.notify(f"this trigger verifies HMAC signatures; activate it with: platform trigger activate "
                        f"{t.automation} {t.name} --hmac-secret-stdin", severity="warning")
            return
        self._act(t.automation, t.name, "activate")

    def action_rotate(self) -> None:
        t = self._selected()
        if t is not None:
            self._act(t.automation, t.name, "rotate")

    def action_toggle(self) -> None:
        t = self._selected()
        if t is not None:
            self._act(t.automation, t.name, "disable" if t.enabled else "enable")

    @work(thread=True, exclusive=True, group="webhooks-action")
    def _act(self, automation: str, trigger: str, verb: str) -> None:
        from engine.errors import EngineError
        from engine.hooks import client

        command = f"platform trigger {verb} {automation} {trigger}"
        server = server_of(self.app)
        try:
            if verb in ("activate", "rotate"):
                activation = client.activate(automation, trigger, None, rotate=verb == "rotate", server=server)
                self.post_message(TriggerActionDone(command, activation=activation))
            else:
                client.set_enabled(automation, trigger, verb == "enable", server=server)
                self.post_message(TriggerActionDone(command))
        except EngineError as exc:
            self.post_message(TriggerActionDone(command, error=exc))

    def on_trigger_action_done(self, message: TriggerActionDone) -> None:
        self.actions += 1
        if message.error is not None:
            hint = f"\n{message.error.hint}" if message.error.hint else ""
            self.notify(f"{message.command}: {message.error.message}{hint}", severity="error")
        elif message.activation is not None:
            from screens.webhooks.token import TokenModal

            self.app.push_screen(TokenModal(message.activation, message.command))
            message.activation = None
        else:
            self.notify(f"done: {message.command}")
        self.load()
