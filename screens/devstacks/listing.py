"""Dev stacks screen: every stack on this machine across projects, its services, ports and
worktree; up/down; logs per service; the port-block holders with release
(docs/reference-devstack.md#in-the-dashboard-screen-4-dev-stacks).

Same engine calls as `framework env ps`, `framework env devstack list`, `framework env up <env>
--background` (never the foreground hold: the dashboard keeps its terminal), `framework env down
<env>` and `framework env devstack release <key>`, each in a thread worker. Live: polled at the
settings' refresh rate and on changes under the stacks directory (watchdog); rows diff by key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Input, Log, Static

from screens.base import DashboardScreen
from screens.widgets.background import read_worker
from screens.widgets.empty_state import EmptyState
from screens.widgets.table_keys import TableKeys, table_bindings
from screens.widgets.table_sync import sync_rows

STACK_COLUMNS = (("project", "Project"), ("env", "Env"), ("key", "Worktree key"), ("branch", "Branch"),
                 ("status", "Status"), ("block", "Block"), ("ports", "Ports"), ("started", "Started"),
                 ("worktree", "Worktree"))
SERVICE_COLUMNS = (("name", "Service"), ("kind", "Kind"), ("pid", "PID"), ("ports", "Ports"), ("state", "State"),
                   ("log", "Log"))
BLOCK_COLUMNS = (("project", "Project"), ("key", "Key"), ("block", "Block"), ("offset", "Ports"),
                 ("holder", "Holder"), ("exists", "Worktree exists"), ("stacks", "Stacks"),
                 ("origin", "Origin worktree"))


@dataclass
class StacksLoaded(Message):
    """One refresh: `env ps` plus `env devstack list` of each project in view."""

    ps: Any = None
    blocks: list[tuple[str, str, Any]] = field(default_factory=list)  # (project root, project key, BlockList)
    notes: list[str] = field(default_factory=list)
    error: Any = None


@dataclass
class ActionProgress(Message):
    line: str


@dataclass
class ActionDone(Message):
    what: str
    ok: bool
    summary: str


@dataclass
class ReleasePlanned(Message):
    root: str
    key: str
    change: Any = None
    error: Any = None


class StacksDirChanged(Message):
    """Something changed under the stacks directory. High-rate: consecutive ones coalesce."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StacksDirChanged)


def _ports(ports: list[int]) -> str:
    return ", ".join(str(p) for p in ports) or "-"


def _key(key: str) -> str:
    return key or "(primary)"


def _error_text(exc: Any) -> str:
    return exc.message + (f" ({exc.hint})" if getattr(exc, "hint", None) else "")


class DevStacksScreen(TableKeys, DashboardScreen):
    NAME = "devstacks"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("u", "up", "Up", id="devstacks.up"),
        Binding("d", "down", "Down", id="devstacks.down"),
        Binding("l", "logs", "Logs", id="devstacks.logs"),
        Binding("x", "release", "Release block", id="devstacks.release"),
        Binding("r", "reload", "Reload", id="devstacks.reload"),
        *table_bindings("devstacks"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.ps: Any = None
        self.blocks: list[tuple[str, str, Any]] = []
        self.loads = 0
        self.busy = ""  # the action a worker is running ("" when idle)
        self._observer: Any = None

    def compose_body(self) -> ComposeResult:
        yield Static("loading dev stacks ...", id="stacks-status", classes="status-line")
        yield Input(placeholder="filter: project, env, key, branch or status (esc clears)", id="filter")
        yield DataTable(id="stacks-table", cursor_type="row", zebra_stripes=True)
        yield EmptyState("", "", id="stacks-empty")
        yield Static("Services of the selected stack   (enter or l: its log)", classes="section")
        yield DataTable(id="services-table", cursor_type="row", zebra_stripes=True)
        yield Static("Port-block holders   (same as: framework env devstack list)", classes="section")
        yield DataTable(id="blocks-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="stacks-commands", classes="hint", markup=False)
        yield Log(id="stacks-progress", max_lines=400)

    def on_mount(self) -> None:
        for table_id, columns in (("#stacks-table", STACK_COLUMNS), ("#services-table", SERVICE_COLUMNS),
                                  ("#blocks-table", BLOCK_COLUMNS)):
            table = self.query_one(table_id, DataTable)
            for key, label in columns:
                table.add_column(label, key=key)
        self.query_one("#stacks-empty").display = False
        self.query_one("#stacks-progress").display = False
        self.query_one("#filter", Input).cursor_blink = self.app.settings.cursor_blink
        self.query_one("#stacks-table").focus()
        self.load()
        self.set_interval(self.app.settings.refresh_seconds, self.load)
        self._start_watching()

    def on_unmount(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None

    # -- loading ---------------------------------------------------------------------------
    @read_worker("devstacks")
    def load(self) -> StacksLoaded:
        from engine.devstack.blocks import list_blocks
        from engine.devstack.stacks import ps
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            result = ps()
        except EngineError as exc:
            return StacksLoaded(error=exc)
        roots = [str(self.app.project_dir), *[s.project_root for s in result.stacks]]
        blocks, notes, seen = [], [], set()
        for root in roots:
            try:
                project = find_project(Path(root))
                listing = list_blocks(project)
            except EngineError as exc:
                if root == str(self.app.project_dir):
                    notes.append(f"no port blocks for {root}: {exc.message}")
                continue
            if listing.registry not in seen:
                seen.add(listing.registry)
                blocks.append((str(project.root), project.key, listing))
        return StacksLoaded(ps=result, blocks=blocks, notes=notes)

    def on_stacks_loaded(self, message: StacksLoaded) -> None:
        self.loads += 1
        if message.error is not None:
            self._stacks_table().display = False
            empty = self.query_one("#stacks-empty", EmptyState)
            empty.display = True
            empty.update("Cannot list dev stacks", _error_text(message.error) + "\n\nSame as: framework env ps")
            return
        self.ps, self.blocks = message.ps, message.blocks
        self._render_rows()
        for note in message.notes:
            self.query_one("#stacks-status", Static).update(note)

    def _visible(self) -> list[Any]:
        needle = self.query_one("#filter", Input).value.strip().lower()
        stacks = self.ps.stacks if self.ps else []
        return [s for s in stacks
                if not needle or needle in f"{s.project} {s.env} {_key(s.key)} {s.branch} {s.status}".lower()]

    def _render_rows(self) -> None:
        if self.ps is None:
            return
        stacks = self._visible()
        rows = {s.id: (s.project, s.env, _key(s.key), s.branch or "-", s.status, str(s.block),
                       _ports(sorted({p for proc in s.processes for p in proc.ports})),
                       time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.started_at)), s.project_root)
                for s in stacks}
        table = self._stacks_table()
        sync_rows(table, [k for k, _ in STACK_COLUMNS], rows)
        empty = self.query_one("#stacks-empty", EmptyState)
        table.display, empty.display = bool(self.ps.stacks), not self.ps.stacks
        if not self.ps.stacks:
            empty.update("No dev stack runs on this machine",
                         "Bring one up with u (same as: framework env up <env> --background).\n"
                         "Same list: framework env ps")
        shown = f"{len(rows)} of {len(self.ps.stacks)}" if len(rows) != len(self.ps.stacks) else str(len(rows))
        self.query_one("#stacks-status", Static).update(
            f"dev stacks on this machine: {shown}   (same as: framework env ps)"
            + (f"   - {self.busy} ..." if self.busy else ""))
        self._render_services()
        self._render_blocks()
        self._render_commands()

    def _render_services(self) -> None:
        stack = self.selected_stack()
        procs = stack.processes if stack is not None else []
        rows = {p.name: (p.name, p.kind, str(p.pid), _ports(p.ports), "up" if p.alive else "down",
                         Path(p.log).name if p.log else "-") for p in procs}
        sync_rows(self.query_one("#services-table", DataTable), [k for k, _ in SERVICE_COLUMNS], rows)

    def _render_blocks(self) -> None:
        rows = {}
        for _root, project_key, listing in self.blocks:
            for b in listing.blocks:
                exists = "-" if b.origin_exists is None else ("yes" if b.origin_exists else "no")
                rows[f"{listing.registry}\0{b.key}"] = (project_key, _key(b.key), str(b.block), f"+{b.block * 100}",
                                                        b.label, exists, ", ".join(b.stacks) or "-", b.origin or "-")
        sync_rows(self.query_one("#blocks-table", DataTable), [k for k, _ in BLOCK_COLUMNS], rows)

    def _render_commands(self) -> None:
        stack = self.selected_stack()
        lines = []
        if stack is not None:
            lines.append(f"in {stack.project_root}:")
            lines.append(f"  u up: framework env up {stack.env} --background    d down: framework env down {stack.env}")
            service = self.selected_service()
            if service is not None and service.log:
                lines.append(f"  l logs: tail -f {service.log}")
        else:
            lines.append(f"u up: framework env up <env> --background   (in {self.app.project_dir})")
        block = self.selected_block()
        if block is not None and not block[1].key:
            lines.append("x release: not offered: the default key (primary checkout, block 0) is never released")
        elif block is not None:
            lines.append(f"x release: framework env devstack release {block[1].key} --apply   (in {block[0]})")
        self.query_one("#stacks-commands", Static).update("\n".join(lines))

    # -- selection -------------------------------------------------------------------------
    def _stacks_table(self) -> DataTable[str]:
        return self.query_one("#stacks-table", DataTable)

    def _main_table(self) -> DataTable[str]:
        focused = self.focused
        return focused if isinstance(focused, DataTable) else self._stacks_table()

    @staticmethod
    def _cursor_key(table: DataTable[str]) -> str | None:
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def selected_stack(self) -> Any:
        key = self._cursor_key(self._stacks_table())
        return next((s for s in (self.ps.stacks if self.ps else []) if s.id == key), None)

    def selected_service(self) -> Any:
        stack = self.selected_stack()
        key = self._cursor_key(self.query_one("#services-table", DataTable))
        return next((p for p in (stack.processes if stack else []) if p.name == key), None)

    def selected_block(self) -> tuple[str, Any] | None:
        """(project root, BlockRow) under the blocks table's cursor."""
        key = self._cursor_key(self.query_one("#blocks-table", DataTable))
        for root, _project, listing in self.blocks:
            for b in listing.blocks:
                if f"{listing.registry}\0{b.key}" == key:
                    return root, b
        return None

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.ps is not None:
            if event.data_table.id == "stacks-table":
                self._render_services()
            self._render_commands()

    @on(DataTable.RowSelected, "#stacks-table")
    def _stack_selected(self) -> None:
        self.query_one("#services-table").focus()

    @on(DataTable.RowSelected, "#services-table")
    def _service_selected(self) -> None:
        self.action_logs()

    # -- live refresh ----------------------------------------------------------------------
    def _start_watching(self) -> None:
        if not self.app.settings.watch:
            return
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        from engine.devstack.stacks import stacks_root

        root = stacks_root()
        root.mkdir(parents=True, exist_ok=True)  # the engine's own directory: watchable before the first stack
        screen = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                # stack.json records only: log appends are not a change of the stack list
                if event.event_type not in ("opened", "closed_no_write") and "/logs/" not in event.src_path:
                    screen.post_message(StacksDirChanged())

        observer = Observer()
        observer.schedule(Handler(), str(root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer

    def on_stacks_dir_changed(self, _: StacksDirChanged) -> None:
        self.reload_soon()

    # -- actions ---------------------------------------------------------------------------
    def _say(self, line: str) -> None:
        log = self.query_one("#stacks-progress", Log)
        log.display = True
        log.write_line(line)

    def on_action_progress(self, message: ActionProgress) -> None:
        self._say(message.line)

    def on_action_done(self, message: ActionDone) -> None:
        self.busy = ""
        self._say(message.summary)
        self.notify(message.summary, severity="information" if message.ok else "error")
        self.load()

    def _refuse_if_busy(self) -> bool:
        if self.busy:
            self.notify(f"{self.busy} is still running", severity="warning")
            return True
        return False

    def action_up(self) -> None:
        from screens.devstacks.up import DevStackUpScreen

        if self._refuse_if_busy():
            return
        stack = self.selected_stack()
        root = Path(stack.project_root) if stack is not None else self.app.project_dir
        self.app.push_screen(DevStackUpScreen(root, stack.env if stack is not None else None),
                             lambda env: self._start_up(root, env))

    def _start_up(self, root: Path, env: str | None) -> None:
        if not env:
            return
        self.busy = f"env up {env}"
        self._say(f"$ framework env up {env} --background   (in {root})")
        self.bring_up(root, env)

    @work(thread=True, exclusive=True, group="devstacks-action")
    def bring_up(self, root: Path, env: str) -> None:
        from engine.devstack.up import UpOptions, env_up
        from engine.errors import EngineError
        from engine.project import find_project

        def progress(line: str) -> None:
            self.post_message(ActionProgress(f"  {line}"))

        try:
            # background, no hold: returns once healthy and leaves the stack running (`env up --background`)
            result = env_up(find_project(root), env, UpOptions(background=True, hold=False), progress=progress)
        except EngineError as exc:
            self.post_message(ActionDone("up", False, f"env up {env} failed: {_error_text(exc)}"))
            return
        for phase in result.phases:
            progress(f"{phase.name:<9} {phase.status:<8} {phase.detail}")
        self.post_message(ActionDone("up", True, f"stack {env} running (block {result.block}); "
                                                 f"stop it with: framework env down {env}"))

    def action_down(self) -> None:
        from screens.devstacks.confirm import ConfirmScreen

        stack = self.selected_stack()
        if stack is None or self._refuse_if_busy():
            return
        command = f"framework env down {stack.env}"
        body = (f"Stop the {stack.env} stack of {stack.project} (worktree key {_key(stack.key)}): "
                f"{len(stack.processes)} processes. Only processes carrying this stack's markers are signalled.")
        confirm = ConfirmScreen(f"Stop dev stack {stack.env}?", body, f"{command}   (in {stack.project_root})")
        self.app.push_screen(confirm, lambda ok: self._start_down(stack) if ok else None)

    def _start_down(self, stack: Any) -> None:
        self.busy = f"env down {stack.env}"
        self._say(f"$ framework env down {stack.env}   (in {stack.project_root})")
        self.bring_down(stack.project, stack.env, stack.key)

    @work(thread=True, exclusive=True, group="devstacks-action")
    def bring_down(self, project_key: str, env: str, key: str) -> None:
        from engine.devstack.stacks import down
        from engine.errors import EngineError

        try:
            result = down(project_key, env, key)
        except EngineError as exc:
            self.post_message(ActionDone("down", False, f"env down {env} failed: {_error_text(exc)}"))
            return
        for stack in result.stacks:
            for p in stack.processes:
                self.post_message(ActionProgress(f"  {p.name:<12} pid {p.pid:<8} {p.outcome}"))
        survivors = len(result.survivors)
        self.post_message(ActionDone("down", not survivors, f"{survivors} process(es) survived SIGKILL" if survivors
                                     else f"stack {env} stopped"))

    def action_logs(self) -> None:
        from screens.devstacks.logs import ServiceLogScreen

        stack = self.selected_stack()
        service = self.selected_service()
        if service is None and stack is not None:  # from the stacks table: its first service
            service = next((p for p in stack.processes if p.kind != "keeper"), None)
        if service is None or not service.log:
            self.notify("select a stack's service to see its log", severity="warning")
            return
        where = f"{stack.project}/{stack.env}/{_key(stack.key)}" if stack is not None else ""
        self.app.push_screen(ServiceLogScreen(f"{service.name} ({where})" if where else service.name,
                                              Path(service.log)))

    def action_release(self) -> None:
        selected = self.selected_block()
        if selected is None or self._refuse_if_busy():
            return
        root, block = selected
        self.busy = f"release {_key(block.key)} (dry run)"
        self._say(f"$ framework env devstack release {block.key}   (dry run, in {root})")
        self.plan_release(root, block.key)

    @work(thread=True, exclusive=True, group="devstacks-action")
    def plan_release(self, root: str, key: str) -> None:
        from engine.devstack.blocks import release
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            self.post_message(ReleasePlanned(root, key, change=release(find_project(Path(root)), key, apply=False)))
        except EngineError as exc:
            self.post_message(ReleasePlanned(root, key, error=exc))

    def on_release_planned(self, message: ReleasePlanned) -> None:
        from screens.devstacks.confirm import ConfirmScreen

        self.busy = ""
        if message.error is not None:
            self._say(f"  refused: {_error_text(message.error)}")
            self.notify(f"cannot release {_key(message.key)}: {message.error.message}", severity="error")
            return
        entries = ", ".join(f"block {e.block} ({e.label}, origin {e.origin or '-'})" for e in message.change.reclaimed)
        self._say(f"  would release {entries}")
        command = f"framework env devstack release {message.key} --apply"
        self.app.push_screen(
            ConfirmScreen(f"Release the port block of {_key(message.key)}?",
                          f"Dry run: would release {entries} from {message.change.registry}.",
                          f"{command}   (in {message.root})"),
            lambda ok: self._start_release(message.root, message.key) if ok else self._say("  release cancelled"))

    def _start_release(self, root: str, key: str) -> None:
        self.busy = f"release {_key(key)}"
        self._say(f"$ framework env devstack release {key} --apply")
        self.apply_release(root, key)

    @work(thread=True, exclusive=True, group="devstacks-action")
    def apply_release(self, root: str, key: str) -> None:
        from engine.devstack.blocks import release
        from engine.errors import EngineError
        from engine.project import find_project

        try:
            change = release(find_project(Path(root)), key, apply=True)
        except EngineError as exc:
            self.post_message(ActionDone("release", False, f"release {_key(key)} failed: {_error_text(exc)}"))
            return
        blocks = ", ".join(str(e.block) for e in change.reclaimed)
        self.post_message(ActionDone("release", True, f"released block {blocks} of key {_key(key)}"))


