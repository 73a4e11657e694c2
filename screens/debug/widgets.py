"""Pieces of the Debug screen: the source pane, the variables tree and the one-line prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static, Tree

CURRENT = "▶"
BREAK = "●"


class SourcePane(DataTable[Any]):
    """The file where the target stopped: one row per line, the current line and breakpoints marked."""

    DEFAULT_CSS = """
    SourcePane { width: 3fr; height: 1fr; border: round $primary-background; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, show_header=False, **kwargs)
        self.path: str | None = None
        self.marks: dict[int, str] = {}
        self.current: int | None = None

    def on_mount(self) -> None:
        self.add_column("mark", key="mark", width=2)
        self.add_column("no", key="no", width=5)
        self.add_column("code", key="code")

    def show(self, path: str | None, current: int | None, breakpoints: set[int], follow: bool) -> None:
        if path != self.path:
            self.clear()
            self.path = path
            self.marks = {}
            try:
                lines = Path(path).read_text(errors="replace").splitlines() if path else []
            except OSError:
                lines = [f"(cannot read {path})"]
            for number, text in enumerate(lines, 1):
                self.add_row("", Text(str(number), style="dim"), Text(text.expandtabs(4)), key=str(number))
        self.current = current
        for number in range(1, self.row_count + 1):
            mark = (BREAK if number in breakpoints else "") + (CURRENT if number == current else "")
            if self.marks.get(number, "") != mark:
                self.update_cell(str(number), "mark", Text(mark, style="bold red" if BREAK in mark else "bold"))
                self.marks[number] = mark
        if follow and current is not None and 1 <= current <= self.row_count:
            self.move_cursor(row=current - 1)

    def cursor_line(self) -> int | None:
        return self.cursor_row + 1 if self.row_count else None


class VariablesTree(Tree[int]):
    """Locals and args of the stopped frame; a structured value expands on demand (its DAP reference)."""

    DEFAULT_CSS = """
    VariablesTree { height: 1fr; border: round $primary-background; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("variables", **kwargs)
        self.show_root = False
        self.loaded: set[int] = set()

    def fill(self, groups: dict[str, list[dict[str, Any]]]) -> None:
        self.clear()
        self.loaded = set()
        for name, values in groups.items():
            group = self.root.add(f"{name} ({len(values)})", data=0, expand=True)
            self.add_values(group, values)

    def add_values(self, node: Any, values: list[dict[str, Any]]) -> None:
        for v in values:
            label = Text.assemble((str(v["name"]), "bold"), " = ", str(v["value"])[:200],
                                  (f"  {v['type']}" if v.get("type") else "", "dim"))
            ref = int(v.get("ref") or 0)
            if ref:
                node.add(label, data=ref)
            else:
                node.add_leaf(label, data=0)


class PromptScreen(ModalScreen[str | None]):
    """One line of input (a breakpoint condition, an expression); esc cancels."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "dismiss", "Cancel", id="debug_prompt.cancel")]

    def __init__(self, title: str, placeholder: str, hint: str) -> None:
        super().__init__()
        self.prompt_title = title
        self.placeholder = placeholder
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal"):
            yield Static(self.prompt_title, classes="title", markup=False)
            box = Input(placeholder=self.placeholder, id="debug-prompt-input")
            box.cursor_blink = False
            yield box
            yield Static(self.hint, classes="hint", markup=False)

    @on(Input.Submitted, "#debug-prompt-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)
