"""One environment in detail: per-image verify state, per-workload phase, gates, local sessions,
and the promotion history paged with the ledger's cursor (`env status --history --limit
--before`, docs/reference-deploy.md#commands; `next_before` is the next page's cursor, empty on the last page).

Same engine calls as `framework env status <env> --history --limit N [--before C] --json` and the
KCL evaluation behind `framework env render`; refreshed at the settings' rate, rows diffed by key.
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

PAGE = 10  # promotions per history page (`--limit`)
IMAGE_COLUMNS = (("name", "Image"), ("state", "Verify"), ("expected", "Expected"), ("running", "Running"),
                 ("instances", "Instances"))
WORKLOAD_COLUMNS = (("name", "Workload"), ("phase", "Phase"), ("healthy", "Healthy"), ("checks", "Health probes"))
FRONTEND_COLUMNS = (("name", "Frontend"), ("url", "Dev server"), ("running", "Running"), ("build", "Build"),
                    ("built", "Last build"))
HISTORY_COLUMNS = (("seq", "#"), ("release", "Release"), ("direction", "Direction"), ("who", "Who"),
                   ("when", "When"), ("id", "Promotion"))


@dataclass
class DetailLoaded(Message):
    document: Any = None
    status: Any = None
    error: Any = None
    database: Any = None  # engine.database.devstack.DatabaseState, None without a declared database
    smoke: Any = None  # the last `framework env smoke` run (engine.deploy.smoke.last_smoke), None without one
    frontends: Any = None  # engine.devstack.frontends.FrontendView per declared frontend


def smoke_text(env: str, run: dict[str, Any], clocks: bool = True) -> str:
    """The last smoke run, one line per route (same as `framework env smoke <env>`)."""
    from screens.widgets.status_text import age

    c = run.get("counts") or {}
    tag = f" [{run['tag']}]" if run.get("tag") else ""
    lines = [f"Smoke{tag}: PASS {c.get('PASS', 0)}  WARN {c.get('WARN', 0)}  FAIL {c.get('FAIL', 0)}  "
             f"through {run.get('via')}, {age(run.get('at'), clocks)}  (s runs it again: framework env smoke {env})"]
    lines += [f"  {r['klass']:<4} {r['host']}{r['path']}  {r.get('status') or '-'}  {r['reason']}"
              for r in run.get("routes") or []]
    return "\n".join(lines)


class EnvironmentDetailScreen(Screen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "app.pop_screen", "Back", id="environment_detail.back"),
        Binding("n", "older", "Older promotions", id="environment_detail.older"),
        Binding("p", "newer", "Newer promotions", id="environment_detail.newer"),
        Binding("r", "reload", "Reload", id="environment_detail.reload"),
        Binding("d", "domains", "Domains", id="environment_detail.domains"),
        Binding("s", "smoke", "Smoke", id="environment_detail.smoke"),
        Binding("o", "open_frontend", "Open frontend", id="environment_detail.open_frontend"),
    ]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.env_name = name
        self.document: Any = None  # the typed EnvironmentSpec
        self.status: Any = None
        self.page_size = PAGE
        self.cursors: list[str | None] = [None]  # page stack: the `--before` of each page shown so far
        self.loads = 0
        self.smoking = False  # an `s` run is probing the routes
        self.smoke_error = ""  # why the last `s` run could not probe

    @property
    def before(self) -> str | None:
        return self.cursors[-1]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self.app.settings.show_clock)
        with VerticalScroll(id="body"):
            yield Static(f"Environment {self.env_name}", classes="title", markup=False)
            yield Static("reading status ...", id="detail", markup=False)
            yield Static("Images (verify state per image)", classes="section")
            yield DataTable(id="images-table", cursor_type="row")
            yield Static("Workloads (rollout phase and health)", classes="section")
            yield DataTable(id="workloads-table", cursor_type="row")
            yield Static("", id="gates-sessions", markup=False)
            database = Static("", id="database", markup=False)
            database.display = False  # shown when the environment declares a database
            yield database
            yield Static("Frontends (o opens the selected dev server)", classes="section", id="frontends-title")
            yield DataTable(id="frontends-table", cursor_type="row")
            smoke = Static("", id="smoke", markup=False)
            smoke.display = False  # shown when the environment declares routes, or a run is recorded
            yield smoke
            yield Static("Promotion history", classes="section", id="history-title")
            yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="history-hint", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        for table_id, columns in (("#images-table", IMAGE_COLUMNS), ("#workloads-table", WORKLOAD_COLUMNS),
                                  ("#history-table", HISTORY_COLUMNS), ("#frontends-table", FRONTEND_COLUMNS)):
            table = self.query_one(table_id, DataTable)
            for key, label in columns:
                table.add_column(label, key=key)
        self.query_one("#history-table", DataTable).focus()
        self.evaluate()
        self.set_interval(self.app.settings.refresh_seconds, self.evaluate)

    @read_worker("environment-detail")
    def evaluate(self) -> DetailLoaded:
        from engine.deploy.status import env_status
        from engine.environments.evaluate import evaluate_environment
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            project = find_project(self.app.project_dir)
            doc = evaluate_environment(project, self.env_name)
        except EngineError as exc:
            return DetailLoaded(error=exc)
        from engine.database.devstack import database_state
        from engine.deploy.smoke import last_smoke
        from engine.devstack.frontends import frontend_views

        database = database_state(project, doc)  # migration state and seed counts (docs/reference-db.md)
        frontends = frontend_views(project, doc)  # dev server URL and build state (docs/reference-frontends.md)
        smoke = last_smoke(project, self.env_name)  # the last `env smoke` run per route
        try:
            result, _ = env_status(project, self.env_name, history=True, limit=self.page_size, before=self.before)
        except EngineError as exc:
            return DetailLoaded(document=doc, error=exc, database=database, smoke=smoke, frontends=frontends)
        return DetailLoaded(document=doc, status=result.environments[0], database=database, smoke=smoke,
                            frontends=frontends)

    def on_detail_loaded(self, message: DetailLoaded) -> None:
        self.loads += 1
        self.document = message.document
        database = self.query_one("#database", Static)
        database.display = message.database is not None
        if message.database is not None:
            database.update(message.database.summary())
        self._smoke(message)
        self._frontends(message.frontends or [])
        detail = self.query_one("#detail", Static)
        if message.status is None:
            detail.update(f"error: {message.error.message}" if message.error else "no status")
            return
        self.status = st = message.status
        self._summary(st)
        self._tables(st)

    def _smoke(self, message: DetailLoaded) -> None:
        """The last `env smoke` run per route; before any, how to run one (when there are routes)."""
        smoke = self.query_one("#smoke", Static)
        doc = message.document
        routes = doc is not None and any(r for x in (*doc.workloads, *doc.frontends) for r in x.routes)
        smoke.display = message.smoke is not None or routes or self.smoking
        if self.smoking:
            text = f"Smoke: probing every route now (framework env smoke {self.env_name}) ..."
        elif message.smoke is not None:
            text = smoke_text(self.env_name, message.smoke, self.app.settings.show_volatile)
        else:
            text = f"Smoke: no run recorded yet; s probes every route now (framework env smoke {self.env_name})"
        smoke.update(text + (f"\n  last s: {self.smoke_error}" if self.smoke_error else ""))

    def _frontends(self, views: list[Any]) -> None:
        """Each frontend's dev server URL, whether `env up` runs it, its build state and last build."""
        from screens.widgets.status_text import age

        clocks = self.app.settings.show_volatile
        self.frontend_urls = {v.name: v.url for v in views}
        for widget in ("#frontends-title", "#frontends-table"):
            self.query_one(widget).display = bool(views)
        rows = {v.name: (v.name, v.url or "-", "yes" if v.running else "no", v.build,
                         age(v.built_at, clocks)) for v in views}
        sync_rows(self.query_one("#frontends-table", DataTable), [k for k, _ in FRONTEND_COLUMNS], rows)

    def action_open_frontend(self) -> None:
        """`o`: the selected frontend's dev server URL in the browser (Python's webbrowser: $BROWSER)."""
        table = self.query_one("#frontends-table", DataTable)
        urls = getattr(self, "frontend_urls", {})
        if not urls or table.row_count == 0:
            self.notify("no frontend declared in this environment", severity="warning")
            return
        name = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        url = urls.get(str(name))
        if not url:
            self.notify(f"frontend {name} declares no port: no dev server URL", severity="warning")
            return
        self.open_url(url)
        self.notify(f"opening {url}")

    @work(thread=True, group="environment-open")
    def open_url(self, url: str) -> None:
        import os
        import webbrowser

        # $BROWSER as set now (webbrowser reads it once per process, at its first use).
        command = os.environ.get("BROWSER", "").split(os.pathsep)[0]
        opener = webbrowser.get(f"{command} %s") if command else webbrowser.get()
        opener.open(url)

    def _summary(self, st: Any) -> None:
        from screens.widgets.status_text import age

        clocks = self.app.settings.show_volatile
        lines = [f"kind {st.kind or '-'}   target {st.target or '-'}   release {st.release or '-'}   "
                 f"health {st.health}   convergence {st.convergence}"]
        if st.promotion:
            lines.append(f"promotion {st.promotion['id']}  ({st.promotion['direction']}, "
                         f"by {st.promotion['who']}, {age(st.promotion['created_at'], clocks)})")
        if st.provenance:
            p = st.provenance
            lines.append(f"provenance commit {(p.get('commit') or '-')[:10]} on {p.get('branch') or '-'}"
                         + (" (dirty)" if p.get("dirty") else ""))
        if st.message:
            lines.append(st.message)
        lines.append(f"(same as: framework env status {self.env_name} --history --limit {self.page_size}"
                     + (f" --before {self.before}" if self.before else "") + " --json)")
        self.query_one("#detail", Static).update("\n".join(lines))

    def _tables(self, st: Any) -> None:
        from screens.widgets.status_text import age, short_digest

        clocks = self.app.settings.show_volatile
        images = {i["name"]: (i["name"], i["state"], short_digest(i.get("expected_digest")),
                              short_digest(i.get("running_digest")), str(len(i.get("instances") or [])))
                  for i in st.images}
        sync_rows(self.query_one("#images-table", DataTable), [k for k, _ in IMAGE_COLUMNS], images)
        workloads = {w["name"]: (w["name"], w.get("phase") or "-", "yes" if w.get("healthy") else "no",
                                 "; ".join(w.get("checks") or []) or "-") for w in st.workloads}
        sync_rows(self.query_one("#workloads-table", DataTable), [k for k, _ in WORKLOAD_COLUMNS], workloads)
        gates = [f"  [{g['status']}] {g['name']}: {g.get('summary') or ''} (run {g.get('run_id')})" for g in st.gates]
        sessions = [f"  {s['worktree']} on {s['machine']} ({s['branch']}{', dirty' if s['dirty'] else ''}"
                    f"{', stopped' if s['stopped'] else ''})" for s in st.sessions]
        self.query_one("#gates-sessions", Static).update(
            "Gates\n" + ("\n".join(gates) or f"  none (framework gate list {self.env_name})")
            + "\nLocal sessions\n" + ("\n".join(sessions) or "  none"))
        history = st.history or {"items": [], "next_before": ""}
        rows = {p["id"]: (str(p["seq"]), p["release"], p["direction"], p["who"], age(p["created_at"], clocks),
                          p["id"] if clocks else "hidden") for p in history["items"]}
        sync_rows(self.query_one("#history-table", DataTable), [k for k, _ in HISTORY_COLUMNS], rows)
        self.next_before = history["next_before"]
        page = len(self.cursors)
        self.query_one("#history-title", Static).update(f"Promotion history (page {page})")
        hint = []
        if self.next_before:
            hint.append(f"n: older (--before {self.next_before})")
        elif history["items"]:
            hint.append("last page")
        if page > 1:
            hint.append("p: newer")
        if not history["items"]:
            hint.append("no promotions recorded yet")
        self.query_one("#history-hint", Static).update("   ".join(hint))

    # -- actions ---------------------------------------------------------------------------
    def action_older(self) -> None:
        if getattr(self, "next_before", ""):
            self.cursors.append(self.next_before)
            self._new_page()

    def action_newer(self) -> None:
        if len(self.cursors) > 1:
            self.cursors.pop()
            self._new_page()

    def _new_page(self) -> None:
        self.query_one("#history-table", DataTable).clear()  # a different page, not a refresh of this one
        self.evaluate()

    def action_reload(self) -> None:
        self.evaluate()

    def action_smoke(self) -> None:
        if not self.smoking:
            self.smoking = True
            self.smoke_error = ""
            self.query_one("#smoke", Static).update(
                f"Smoke: probing every route now (framework env smoke {self.env_name}) ...")
            self.query_one("#smoke", Static).display = True
            self.run_smoke()

    @work(thread=True, group="environment-smoke")
    def run_smoke(self) -> None:
        """`framework env smoke <env>` (a thread worker: it records the run), then the detail again."""
        from engine.deploy.smoke import smoke
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            smoke(find_project(self.app.project_dir), self.env_name)
        except EngineError as exc:
            self.smoke_error = exc.message
        finally:
            self.smoking = False
        self.app.call_from_thread(self.evaluate)

    def action_domains(self) -> None:
        """The domains of this environment's control plane (docs/reference-domains.md#dashboard)."""
        from screens.environments.domains import DomainsScreen

        self.app.push_screen(DomainsScreen(self.env_name))
