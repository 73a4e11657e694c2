"""`framework project annotations` (docs/reference-project.md#project-annotations): the authoritative marker and
proto-option specification, printed from the one table the lint analyzers read (`annotation_spec.MARKERS`, the same
object, never a copy)."""

from __future__ import annotations

from pydantic import BaseModel

from engine.authoring.annotation_spec import MARKERS, Annotation
from engine.errors import UsageError

# Where each kind of the table is written (the words of docs/reference-lint.md#markers).
WHERE = {
    "proto-message": "proto message comment",
    "proto-service": "proto service option",
    "proto-method": "proto method option",
    "go": "Go declaration comment",
    "column": "SQL column comment (COMMENT ON COLUMN)",
    "table": "SQL table comment (COMMENT ON TABLE)",
    "file": "generated file, its own line",
    "config": "framework.yaml key",
}
# `--kind` words beyond the table's own kinds: each names several of them.
GROUPS = {
    "entity": ("proto-message", "column", "table"),  # an entity's message and its table
    "proto": ("proto-message", "proto-service", "proto-method"),
    "sql": ("column", "table"),
}


class AnnotationRow(BaseModel):
    name: str
    kind: str
    where: str
    value: str
    meaning: str
    analyzers: list[str]


class AnnotationsResult(BaseModel):
    source: str = "engine/authoring/annotation_spec.py"
    kinds: list[str]  # the kinds asked for (all when no --kind)
    annotations: list[AnnotationRow]


def kinds() -> list[str]:
    """Every `--kind` word: the table's kinds (in table order), then the groups."""
    own = list(dict.fromkeys(a.kind for a in MARKERS))
    return own + [g for g in GROUPS if g not in own]


def selected(words: list[str]) -> list[Annotation]:
    """The table's rows of the given kinds, in table order; unknown kind: UsageError (exit 2) listing them."""
    if not words:
        return list(MARKERS)
    wanted: set[str] = set()
    known = kinds()
    for value in words:
        if not value.strip(", "):
            raise UsageError("--kind needs a value", hint=f"kinds: {', '.join(known)}")
        for word in (w.strip() for w in value.split(",")):
            if not word:
                continue
            if word not in known:
                raise UsageError(f"--kind {word!r}: not a kind of annotation", hint=f"kinds: {', '.join(known)}")
            wanted.update(GROUPS.get(word, (word,)))
    return [a for a in MARKERS if a.kind in wanted]


def list_annotations(words: list[str] | None = None) -> AnnotationsResult:
    rows = selected(words or [])
    return AnnotationsResult(
        kinds=sorted({a.kind for a in rows}) if words else sorted({a.kind for a in MARKERS}),
        annotations=[AnnotationRow(name=a.name, kind=a.kind, where=WHERE.get(a.kind, a.kind), value=a.value,
                                   meaning=a.meaning, analyzers=list(a.analyzers)) for a in rows])
