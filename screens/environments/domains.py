"""Domains of an environment's control plane (docs/reference-domains.md#dashboard; the
domain states): every domain of the organization with its state, binding, the DNS to publish and
the last verification; add (`a`), bind to a workload or frontend (`b`), bind as a 308 redirect (`t`),
verify, unbind and rm run from here. Add and bind ask for their argument in an input that shows the
equivalent command line as it is typed (enter runs it, escape cancels). Opened with `d` on an
environment's detail (that environment's control plane), or from the screen catalog (number key 9):
then the first environment with a control plane, `e` choosing the next one.

Same engine calls as `framework domain ls|add|verify|bind|unbind|rm --env <env> --json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from screens.base import DashboardScreen
from screens.widgets.background import read_worker
from screens.widgets.table_sync import sync_rows

COLUMNS = (("hostname", "Domain"), ("state", "State"), ("serving", "Serving"), ("binding", "Binding"),
           ("dns", "DNS to publish"), ("checked", "Last verification"))


@dataclass
class DomainsLoaded(Message):
    domains: Any = None
    endpoint: str = ""
    error: Any = None
    env: str | None = None  # the environment whose control plane was read
    choices: tuple[str, ...] = ()  # the environments with a control plane (catalog entry)


def binding_text(d: dict[str, Any]) -> str:
    b = d.get("binding") or {}
    if b.get("redirect_to"):
        return f"308 -> {b['redirect_to']}"
    return f"{b['env']}/{b['target']}" if b.get("target") else "-"


class DomainsScreen(DashboardScreen):
    NAME = "domains"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "back", "Back", id="domains.back"),
        Binding("a", "ask('add')", "Add", id="domains.add"),
        Binding("b", "ask('bind')", "Bind", id="domains.bind"),
        Binding("t", "ask('redirect')", "Redirect", id="domains.redirect"),
        Binding("v", "verify", "Verify", id="domains.verify"),
        Binding("u", "unbind", "Unbind", id="domains.unbind"),
        Binding("x", "remove", "Remove", id="domains.remove"),
        Binding("r", "reload", "Reload", id="domains.reload"),
        Binding("e", "next_env", "Environment", id="domains.next_env"),
    ]

    def __init__(self, env: str | None = None) -> None:
        super().__init__()
        self.env_name = env  # None (the catalog entry): the first environment with a control plane
        self.pinned = env is not None  # opened from an environment's detail: that one only
        self.choices: tuple[str, ...] = ()
        self.domains: list[dict[str, Any]] = []
        self.loads = 0
        self.last_action = ""
        self.asking: str | None = None  # "add", "bind" or "redirect" while the input is open
        self.asked_for = ""  # the hostname a bind applies to

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="domains-body"):
            yield Static(self._where(), id="domains-env", markup=False)
            yield Static("reading domains ...", id="domains-status", markup=False)
            yield DataTable(id="domains-table", cursor_type="row", zebra_stripes=True)
            yield Input(id="domains-input")
            yield Static("", id="domains-preview", markup=False)
            yield Static("", id="domains-commands", markup=False)

    def _where(self) -> str:
        if self.env_name is None:
            return "Domains on the control plane of: (looking for an environment with a control plane)"
        others = [c for c in self.choices if c != self.env_name]
        more = f"   (e: next environment; also {', '.join(others)})" if others and not self.pinned else ""
        return f"Domains on the control plane of {self.env_name}{more}"

    def on_mount(self) -> None:
        table = self.query_one("#domains-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#domains-input", Input).cursor_blink = self.app.settings.cursor_blink
        self._close_input()
        table.focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)

    @read_worker("domains")
    def load(self) -> DomainsLoaded:
        return self.load_now()

    def on_domains_loaded(self, message: DomainsLoaded) -> None:
        self.loads += 1
        if not self.pinned:
            self.env_name, self.choices = message.env, message.choices
        self.query_one("#domains-env", Static).update(self._where())
        status = self.query_one("#domains-status", Static)
        if message.error is None and message.env is None:
            status.update("No environment declares a control plane (kind hosted, or framework.ControlPlane): "
                          "domains are claimed on a control plane.")
            return
        if message.error is not None:
            hint = getattr(message.error, "hint", None)  # e.g. how to start or point to a control plane
            status.update(f"error: {message.error.message}" + (f"\nhint: {hint}" if hint else ""))
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
        e = f"--env {self.env_name or '<env>'}"
        self.query_one("#domains-commands", Static).update("\n".join((
            "Commands (a adds; b, t, v, u, x run on the selected one here):",
            f"  add:    framework domain add <hostname> {e}",
            f"  verify: framework domain verify {host} {e}",
            f"  bind:   framework domain bind {host} {e} --target <workload or frontend>"
            "   (or --redirect-to <hostname>)",
            f"  unbind: framework domain unbind {host} {e}",
            f"  rm:     framework domain rm {host} {e}",
        )))

    PROMPTS: ClassVar[dict[str, str]] = {"add": "hostname to claim (e.g. www.example.com)",
                                         "bind": "workload or frontend of this environment to serve",
                                         "redirect": "hostname to redirect to (308)"}

    def action_ask(self, what: str) -> None:
        """Open the input for add (a hostname) or bind (a target, or a redirect's hostname)."""
        if self.env_name is None:
            return  # no environment with a control plane: nowhere to claim
        if what != "add":
            host = self.selected()
            if host is None:
                return
            self.asked_for = host
        self.asking = what
        field = self.query_one("#domains-input", Input)
        field.value, field.placeholder, field.display = "", self.PROMPTS[what], True
        self.query_one("#domains-preview", Static).display = True
        self._preview()
        field.focus()

    def command_line(self, value: str) -> str:
        """The command the input runs, as typed so far."""
        e = f"--env {self.env_name}"
        arg = value.strip() or "<" + ("hostname" if self.asking != "bind" else "target") + ">"
        if self.asking == "add":
            return f"framework domain add {arg} {e}"
        flag = "--target" if self.asking == "bind" else "--redirect-to"
        return f"framework domain bind {self.asked_for} {e} {flag} {arg}"

    def _preview(self) -> None:
        value = self.query_one("#domains-input", Input).value
        self.query_one("#domains-preview", Static).update(f"runs: {self.command_line(value)}   "
                                                          "(enter runs it, escape cancels)")

    def on_input_changed(self, _event: Input.Changed) -> None:
        if self.asking:
            self._preview()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value, what, host = event.value.strip(), self.asking, self.asked_for
        if not value or what is None:
            return
        self._close_input()
        if what == "add":
            self.run_action("add", value)
        else:
            self.run_action("bind", host, **({"target": value} if what == "bind" else {"redirect_to": value}))

    def _close_input(self) -> None:
        self.asking = None
        self.query_one("#domains-input", Input).display = False
        self.query_one("#domains-preview", Static).display = False
        self.query_one("#domains-table", DataTable).focus()

    def action_back(self) -> None:
        if self.asking:
            self._close_input()
        elif len(self.app.screen_stack) > 1:  # opened from a detail; as the catalog's screen it stays
            self.app.pop_screen()

    def action_next_env(self) -> None:
        """The catalog entry: the next environment with a control plane (wrapping around)."""
        if self.pinned or len(self.choices) < 2 or self.env_name not in self.choices:
            return
        self.env_name = self.choices[(self.choices.index(self.env_name) + 1) % len(self.choices)]
        self.query_one("#domains-env", Static).update(self._where())
        self.query_one("#domains-table", DataTable).clear()
        self.load()

    def _act(self, verb: str) -> None:
        host = self.selected()
        if host is not None and self.env_name is not None:
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
    def run_action(self, verb: str, host: str, **binding: str) -> None:
        """One change on the control plane (a thread worker: it finishes), then the list again."""
        from engine.cloud.domains import domain
        from engine.errors import EngineError

        try:
            result, _ = domain(verb, host, env=self.env_name, project=self._project(),  # type: ignore[arg-type]
                               **binding)
            self.last_action = f"{verb} {host}: {result.result.get('state', 'removed')}"
        except EngineError as exc:
            self.last_action = f"{verb} {host}: {exc.message}"
        self.post_message(self.load_now())

    def _project(self) -> Any:
        from engine.project import find_project

        return find_project(self.app.project_dir)

    def load_now(self) -> DomainsLoaded:
        from engine.cloud.domains import control_plane_envs, domain
        from engine.errors import EngineError

        env, choices = self.env_name, self.choices
        try:
            project = self._project()
            if not self.pinned:
                choices = tuple(control_plane_envs(project))
                env = env if env in choices else (choices[0] if choices else None)
                if env is None:
                    return DomainsLoaded(domains=[], choices=choices)
            result, _ = domain("ls", env=env, project=project)
        except EngineError as exc:
            return DomainsLoaded(error=exc, env=env, choices=choices)
        return DomainsLoaded(domains=result.result.get("domains") or [], endpoint=result.endpoint, env=env,
                             choices=choices)
