"""Debug screen: source, stack, variables, threads/goroutines, eval line and output tail of the live
debug session, driven by keys. It is a client of the same session broker as `framework debug ...`
(engine/debug/session.py), so a session started in a shell shows up here and the reverse; each
action shows the equivalent command.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Static, Tree

from screens.base import DashboardScreen
from screens.debug.widgets import PromptScreen, SourcePane, VariablesTree
from screens.widgets.background import read_worker
from screens.widgets.empty_state import EmptyState

ACTIONS = {"continue": "c", "step": "n", "step-in": "s", "step-out": "r"}
KEYS_HINT = ("c continue  n step  s step-in  r step-out  b breakpoint  B conditional  e eval  x stop  "
             ": command (:debug start api)")
NO_SESSION = ("No debug session in this project",
              "Start one from a shell or from here:\n  framework debug start <service or path>\n"
              "  :debug start api      (the : command line)\n\nThe session is .framework/debug-session.json; "
              "this screen and `framework debug ...` drive the same one.")


@dataclass
class SessionLoaded(Message):
    status: dict[str, Any] | None = None
    stack: list[dict[str, Any]] = field(default_factory=list)
    variables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    threads: dict[str, Any] | None = None
    error: str | None = None


@dataclass
class ActionDone(Message):
    command: str
    result: dict[str, Any] | None = None
    error: str | None = None
    op: str = ""


@dataclass
class ChildrenLoaded(Message):
    node: Any
    values: list[dict[str, Any]]


def _rel(root: str, path: str | None) -> str:
    if not path:
        return "?"
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


class DebugScreen(DashboardScreen):
    NAME = "debug"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("c", "resume('continue')", "Continue", id="debug.continue"),
        Binding("n", "resume('step')", "Step", id="debug.step"),
        Binding("s", "resume('step-in')", "Step in", id="debug.step_in"),
        Binding("r", "resume('step-out')", "Step out", id="debug.step_out"),
        Binding("b", "toggle_breakpoint", "Breakpoint", id="debug.toggle_breakpoint"),
        Binding("B", "conditional_breakpoint", "Conditional", id="debug.conditional_breakpoint"),
        Binding("e", "evaluate", "Eval", id="debug.eval"),
        Binding("x", "stop", "Stop", id="debug.stop"),
    ]
    DEFAULT_CSS = """
    #debug-panes { height: 1fr; }
    #debug-side { width: 2fr; height: 1fr; }
    #debug-stack { height: 8; border: round $primary-background; }
    #debug-threads { height: 6; border: round $primary-background; }
    #debug-eval, #debug-command { height: auto; }
    #debug-output { height: 6; border: round $primary-background; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0
        self.status: dict[str, Any] | None = None
        self.last_stop: tuple[Any, ...] | None = None
        self.filled_stop: tuple[Any, ...] | None = None
        self.busy: str | None = None
        self.last_command = ""
        self.eval_text = ""

    def compose_body(self) -> ComposeResult:
        yield Static("reading the debug session ...", id="debug-status", classes="status-line", markup=False)
        yield EmptyState(*NO_SESSION, id="debug-empty")
        with Horizontal(id="debug-panes"):
            yield SourcePane(id="debug-source")
            with Vertical(id="debug-side"):
                stack: DataTable[str] = DataTable(id="debug-stack", cursor_type="row", show_header=False)
                yield stack
                yield VariablesTree(id="debug-vars")
                threads: DataTable[str] = DataTable(id="debug-threads", cursor_type="row", show_header=False)
                yield threads
        yield Static("", id="debug-eval", markup=False)
        yield Static("", id="debug-output", markup=False)
        yield Static(KEYS_HINT, id="debug-command", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#debug-stack", DataTable).add_columns("frame", "where")
        self.query_one("#debug-threads", DataTable).add_columns("", "id", "name")
        self._show_panes(False)
        self.load()
        self.set_interval(min(self.app.settings.refresh_seconds, 1.0), self.load)

    def _project(self) -> Any:
        from engine.project import find_project

        return find_project(self.app.project_dir)

    def _show_panes(self, visible: bool) -> None:
        self.query_one("#debug-empty").display = not visible
        for selector in ("#debug-panes", "#debug-eval", "#debug-output"):
            self.query_one(selector).display = visible

    # -- reading ------------------------------------------------------------------------------------

    @read_worker("debug")
    def load(self) -> SessionLoaded:
        from engine.debug.session import call, live
        from engine.errors import EngineError

        try:
            project = self._project()
            if live(project) is None:
                return SessionLoaded()
            status = call(project, "status", {"tail": 5})
            loaded = SessionLoaded(status=status)
            if status.get("state") == "stopped":
                loaded.stack = call(project, "stack")["frames"]
                loaded.variables = {"locals": call(project, "locals")["locals"],
                                    "args": call(project, "args")["args"]}
                loaded.threads = call(project, "goroutines")
            return loaded
        except EngineError as exc:
            return SessionLoaded(error=exc.message)

    def on_session_loaded(self, message: SessionLoaded) -> None:
        self.loads += 1
        status_line = self.query_one("#debug-status", Static)
        self.status = message.status
        if message.status is None:
            self._show_panes(False)
            status_line.update(message.error or "no session   (same as: framework debug status)")
            return
        self._show_panes(True)
        s = message.status
        root = str(self.app.project_dir)
        stop_key = self._render_status(s)
        if stop_key != self.filled_stop:
            self.filled_stop = stop_key
            self._fill_stopped(message, root)
        self.query_one("#debug-output", Static).update("\n".join(s.get("output") or []) or "(no output yet)")
        self.query_one("#debug-eval", Static).update(self.eval_text)

    def _render_status(self, s: dict[str, Any]) -> tuple[Any, ...]:
        """Status line and source pane from a status (or a resume's answer); returns the stop's key."""
        root = str(self.app.project_dir)
        where = ""
        if s.get("stopped"):
            st = s["stopped"]
            where = f" at {_rel(root, st.get('file'))}:{st.get('line')} in {st.get('function')} ({st.get('reason')})"
        elif s.get("state") == "exited":
            where = f" (exit {s.get('target_exit_code')}): end it with x"
        busy = f"   [{self.busy} ...]" if self.busy else ""
        self.query_one("#debug-status", Static).update(
            f"{s['state']}{where}{busy} - {s['target']} [{s['mode']}]   (same as: framework debug status)")
        stopped = s.get("stopped") or {}
        path = stopped.get("file") or self._source_of(s)
        lines = {b["line"] for b in s.get("breakpoints") or [] if b.get("file") == path and b.get("line")}
        stop_key = (stopped.get("file"), stopped.get("line"), stopped.get("thread_id"), s.get("state"))
        self.query_one(SourcePane).show(path, stopped.get("line"), lines, follow=stop_key != self.last_stop)
        self.last_stop = stop_key
        return stop_key

    @staticmethod
    def _source_of(status: dict[str, Any]) -> str | None:
        for bp in reversed(status.get("breakpoints") or []):
            if bp.get("file"):
                return str(bp["file"])
        return status.get("source")

    def _fill_stopped(self, message: SessionLoaded, root: str) -> None:
        stack = self.query_one("#debug-stack", DataTable)
        stack.clear()
        for f in message.stack:
            stack.add_row(f"#{f['index']} {f['function']}", f"{_rel(root, f['file'])}:{f['line']}")
        self.query_one(VariablesTree).fill(message.variables)
        threads = self.query_one("#debug-threads", DataTable)
        threads.clear()
        for t in (message.threads or {}).get("threads", []):
            threads.add_row("*" if t["current"] else "", str(t["id"]), str(t["name"]))

    @on(Tree.NodeExpanded, "#debug-vars")
    def _expand(self, event: Tree.NodeExpanded[int]) -> None:
        tree = self.query_one(VariablesTree)
        ref = event.node.data or 0
        if ref and ref not in tree.loaded:
            tree.loaded.add(ref)
            self._children(event.node, ref)

    @work(thread=True, group="debug-vars")
    def _children(self, node: Any, ref: int) -> None:
        from engine.debug.session import call
        from engine.errors import EngineError

        try:
            values = call(self._project(), "variables", {"ref": ref})["variables"]
        except EngineError as exc:
            values = [{"name": "(error)", "value": exc.message, "ref": 0}]
        self.post_message(ChildrenLoaded(node, values))

    def on_children_loaded(self, message: ChildrenLoaded) -> None:
        self.query_one(VariablesTree).add_values(message.node, message.values)

    # -- actions ------------------------------------------------------------------------------------

    @work(thread=True, group="debug-action")
    def run_action(self, op: str, args: dict[str, Any], command: str, timeout: float = 30.0) -> None:
        from engine.debug.session import call
        from engine.errors import EngineError

        try:
            self.post_message(ActionDone(command, call(self._project(), op, args, timeout=timeout), op=op))
        except EngineError as exc:
            self.post_message(ActionDone(command, error=exc.message + (f" ({exc.hint})" if exc.hint else ""), op=op))

    def on_action_done(self, message: ActionDone) -> None:
        self.busy = None
        hint = self.query_one("#debug-command", Static)
        if message.error:
            hint.update(f"$ {message.command}  ->  {message.error}")
            self.notify(message.error, severity="error")
        else:
            hint.update(f"$ {message.command}  ->  {self._summary(message)}")
            if message.op == "eval" and message.result is not None:
                self.eval_text = f"{message.result['expression']} = {message.result['result']}"
            elif message.result is not None and "state" in message.result and self.status is not None:
                self._render_status(message.result)  # where it stopped, at once; stack and variables follow
        if message.op == "stop":
            self.eval_text = ""
        self.load()

    @staticmethod
    def _summary(message: ActionDone) -> str:
        r = message.result or {}
        if r.get("stopped"):
            st = r["stopped"]
            return f"stopped at {os.path.basename(st.get('file') or '?')}:{st.get('line')} in {st.get('function')}"
        if r.get("timed_out"):
            return "still running"
        if "result" in r:
            return str(r["result"])
        if "id" in r:
            return f"breakpoint #{r['id']}" + (" verified" if r.get("verified") else " unverified")
        if message.op == "stop":
            return "session ended"
        return "done"

    def _start(self, op: str, args: dict[str, Any], command: str, timeout: float = 30.0) -> None:
        if self.status is None:
            self.notify("no debug session: start one with :debug start <service or path>", severity="warning")
            return
        self.busy = command
        self.query_one("#debug-command", Static).update(f"$ {command}  ...")
        self.run_action(op, args, command, timeout)

    def action_resume(self, op: str) -> None:
        self._start(op, {"timeout": 30.0}, f"framework debug {op}")

    def _cursor_location(self) -> tuple[str, int] | None:
        pane = self.query_one(SourcePane)
        line = pane.cursor_line()
        if pane.path is None or line is None:
            self.notify("no source line under the cursor", severity="warning")
            return None
        return pane.path, line

    def action_toggle_breakpoint(self) -> None:
        where = self._cursor_location()
        if where is None or self.status is None:
            return
        path, line = where
        rel = _rel(str(self.app.project_dir), path)
        existing = next((b for b in self.status.get("breakpoints") or []
                         if b.get("file") == path and b.get("line") == line), None)
        if existing is not None:
            self._start("clear", {"id": existing["id"]}, f"framework debug clear {existing['id']}")
        else:
            self._start("break", {"file": path, "line": line, "function": None, "condition": None},
                        f"framework debug break {rel}:{line}")

    def action_conditional_breakpoint(self) -> None:
        where = self._cursor_location()
        if where is None:
            return
        path, line = where
        rel = _rel(str(self.app.project_dir), path)

        def chosen(condition: str | None) -> None:
            if condition:
                self._start("break", {"file": path, "line": line, "function": None, "condition": condition},
                            f"framework debug break {rel}:{line} --cond {shlex.quote(condition)}")

        self.app.push_screen(PromptScreen(f"Breakpoint at {rel}:{line} when ...", "n > 3",
                                          f"same as: framework debug break {rel}:{line} --cond <expr>"), chosen)

    def action_evaluate(self) -> None:
        def chosen(expression: str | None) -> None:
            if expression:
                self._start("eval", {"expression": expression, "frame": 0},
                            f"framework debug eval {shlex.quote(expression)}")

        self.app.push_screen(PromptScreen("Evaluate in the stopped frame", "n*2",
                                          "same as: framework debug eval <expr>"), chosen)

    def action_stop(self) -> None:
        if self.status is None:
            return
        self.busy = "framework debug stop"
        self.stop_session()

    @work(thread=True, group="debug-action")
    def stop_session(self) -> None:
        from engine.debug.session import stop
        from engine.errors import EngineError

        try:
            self.post_message(ActionDone("framework debug stop", stop(self._project()), op="stop"))
        except EngineError as exc:
            self.post_message(ActionDone("framework debug stop", error=exc.message, op="stop"))
