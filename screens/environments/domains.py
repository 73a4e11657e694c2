"""Domains of an environment's control plane (issue 20 item 5; spec 2: domain record and binding,
Domain states): every domain of the organization with its state, binding, the DNS to publish and
the last verification; verify, unbind and rm run from here, add and bind are shown as the command
lines to run (they take a hostname or a target). Opened with `d` on an environment's detail.

Same engine calls as `framework domain ls|verify|unbind|rm --env <env> --json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from screens.widgets.background import read_worker
from screens.widgets.table_sync import sync_rows

COLUMNS = (("hostname", "Domain"), ("state", "State"), ("serving", "Serving"), ("binding", "Binding"),
           ("dns", "DNS to publish"), ("checked", "Last verification"))


@dataclass
class DomainsLoaded(Message):
    domains: Any = None
    endpoint: str = ""
    error: Any = None


def binding_text(d: dict[str, Any]) -> str:
    b = d.get("binding") or {}
    if b.get("redirect_to"):
        return f"308 -> {b['redirect_to']}"
    return f"{b['env']}/{b['target']}" if b.get("target") else "-"


class DomainsScreen(Screen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "app.pop_screen", "Back", id="domains.back"),
        Binding("v", "verify", "Verify", id="domains.verify"),
        Binding("u", "unbind", "Unbind", id="domains.unbind"),
        Binding("x", "remove", "Remove", id="domains.remove"),
        Binding("r", "reload", "Reload", id="domains.reload"),
    ]

    def __init__(self, env: str) -> None:
        super().__init__()
        self.env_name = env
        self.domains: list[dict[str, Any]] = []
        self.loads = 0
        self.last_action = ""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self.app.settings.show_clock)
        with VerticalScroll(id="body"):
            yield Static(f"Domains on the control plane of {self.env_name}", classes="title", markup=False)
            yield Static("reading domains ...", id="domains-status", markup=False)
            yield DataTable(id="domains-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="domains-commands", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#domains-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        table.focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)

    @read_worker("domains")
    def load(self) -> DomainsLoaded:
        return self.load_now()

    def on_domains_loaded(self, message: DomainsLoaded) -> None:
        self.loads += 1
        status = self.query_one("#domains-status", Static)
        if message.error is not None:
            status.update(f"error: {message.error.message}")
            return
        self.domains = message.domains
        status.update(f"{len(self.domains)} domain(s) of your organization on {message.endpoint}"
                      + (f"   last action: {self.last_action}" if self.last_action else ""))
        rows = {}
        for d in self.domains:
            dns = "; ".join(f"{r['type']} {r['name']} {r['value']}" for r in d.get("dns") or []) or "-"
            check = (d.get("last_check") or {}).get("result") or "-"
            rows[d["hostname"]] = (d["hostname"], d["state"], "yes" if d["serving"] else "no", binding_text(d),
                                   dns, check)
        sync_rows(self.query_one("#domains-table", DataTable), [k for k, _ in COLUMNS], rows)
        self._commands()

    def selected(self) -> str | None:
        table = self.query_one("#domains-table", DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def on_data_table_row_highlighted(self, _event: Any) -> None:
        self._commands()

    def _commands(self) -> None:
        host = self.selected() or "<hostname>"
        e = f"--env {self.env_name}"
        self.query_one("#domains-commands", Static).update("\n".join((
            "Commands (v, u, x run the selected one here):",
            f"  add:    framework domain add <hostname> {e}",
            f"  verify: framework domain verify {host} {e}",
            f"  bind:   framework domain bind {host} {e} --target <workload>   (or --redirect-to <hostname>)",
            f"  unbind: framework domain unbind {host} {e}",
            f"  rm:     framework domain rm {host} {e}",
        )))

    def _act(self, verb: str) -> None:
        host = self.selected()
        if host is not None:
            self.run_action(verb, host)

    def action_verify(self) -> None:
        self._act("verify")

    def action_unbind(self) -> None:
        self._act("unbind")

    def action_remove(self) -> None:
        self._act("rm")

    def action_reload(self) -> None:
        self.load()

    @work(thread=True, group="domains-action")
    def run_action(self, verb: str, host: str) -> None:
        """One change on the control plane (a thread worker: it finishes), then the list again."""
        from engine.deploy.domains import domain
        from engine.errors import EngineError

        try:
            result, _ = domain(verb, host, env=self.env_name, project=self._project())  # type: ignore[arg-type]
            self.last_action = f"{verb} {host}: {result.result.get('state', 'removed')}"
        except EngineError as exc:
            self.last_action = f"{verb} {host}: {exc.message}"
        self.post_message(self.load_now())

    def _project(self) -> Any:
        from engine.project import find_project

        return find_project(self.app.project_dir)

    def load_now(self) -> DomainsLoaded:
        from engine.deploy.domains import domain
        from engine.errors import EngineError

        try:
            result, _ = domain("ls", env=self.env_name, project=self._project())
        except EngineError as exc:
            return DomainsLoaded(error=exc)
        return DomainsLoaded(domains=result.result.get("domains") or [], endpoint=result.endpoint)
