"""Payload inspector: a recorded delivery's `trigger.payload` as a JSON tree (secrets such as
signature headers and tokens are removed by the server before it records the payload)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode


def add_json(node: TreeNode[Any], value: Any) -> None:
    """Children of `node` for a JSON value: objects and arrays expand, scalars are leaves."""
    import json

    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else None
    if items is None:
        return
    for key, child in items:
        label = f"{key}" if isinstance(value, dict) else f"[{key}]"
        if isinstance(child, dict | list):
            size = f"{{{len(child)}}}" if isinstance(child, dict) else f"[{len(child)}]"
            add_json(node.add(f"{label} {size}", data=child, expand=True), child)
        else:
            node.add_leaf(f"{label}: {json.dumps(child)}", data=child)


class PayloadModal(ModalScreen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "dismiss", "Close", id="payload.close"),
        Binding("q", "dismiss", "Close", id="payload.close_q", show=False),
    ]

    def __init__(self, delivery: Any, command: str) -> None:
        super().__init__()
        self.delivery = delivery
        self.command = command

    def compose(self) -> ComposeResult:
        d = self.delivery
        with Vertical(classes="modal", id="payload-modal"):
            yield Static(f"Payload of delivery {d.id}", classes="title", markup=False)
            tree: Tree[Any] = Tree("trigger.payload", id="payload-tree")
            tree.show_root = True
            if d.payload is None:
                tree.root.add_leaf(f"no payload kept ({d.outcome}: {d.detail or 'refused'})")
            else:
                add_json(tree.root, d.payload)
            tree.root.expand()
            yield tree
            yield Static(f"{d.body_bytes} body bytes; secrets removed by the server. esc close\n"
                         f"(same as: {self.command})", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#payload-tree", Tree).focus()
