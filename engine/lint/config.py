"""`--config-deps` (docs/reference-lint.md#config-deps): what framework.yaml points at exists."""

from __future__ import annotations

from engine.lint.model import ERROR, Finding
from engine.project import CONFIG_FILE, Project


def _line_of(text: str, value: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if value in line:
            return i
    return 1


def config_deps(project: Project) -> list[Finding]:
    root = project.root
    text = (root / CONFIG_FILE).read_text(encoding="utf-8")
    data = project.config
    out: list[Finding] = []

    def missing(kind: str, value: str, hint: str) -> None:
        out.append(Finding(analyzer="config-deps", rule="config-deps", severity=ERROR, file=CONFIG_FILE,
                           line=_line_of(text, value), message=f"{kind} {value!r} does not exist", hint=hint))

    for svc in data.get("services") or []:
        proto = svc.get("proto") if isinstance(svc, dict) else None
        if isinstance(proto, str) and not (root / proto).is_file():
            missing(f"service {svc.get('name')!r}: proto", proto, "fix the path, or remove the service entry")
    for binary in data.get("binaries") or []:
        main = binary.get("main") if isinstance(binary, dict) else None
        if isinstance(main, str) and not (root / main).is_dir() and not (root / main).is_file():
            missing(f"binary {binary.get('name')!r}: main", main, "fix the path, or `framework scaffold binary`")
    contracts = data.get("contracts") or {}
    for item in (contracts.get("exclude") or []) if isinstance(contracts, dict) else []:
        if isinstance(item, str) and not (root / item.split(".")[0]).exists():
            missing("contracts.exclude entry", item, "name a package path under internal/")
    return out
