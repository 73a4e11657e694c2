"""The authoring keys of `framework.yaml` (docs/reference-authoring.md#commands, `project new`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.authoring.features import FEATURE_TABLE
from engine.authoring.template_versions import pinned
from engine.errors import ConfigError
from engine.project import Project

FEATURES = tuple(f.name for f in FEATURE_TABLE)  # one table: engine/authoring/features.py
KINDS = ("service", "cli", "library")
DEFAULT_PORT = 8080


@dataclass
class AuthoringConfig:
    name: str
    module: str
    kind: str = "service"
    port: Any = DEFAULT_PORT
    features: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(FEATURES, True))
    commit_generated: bool = True
    services: list[dict[str, Any]] = field(default_factory=list)
    binaries: list[dict[str, Any]] = field(default_factory=list)
    operators: list[dict[str, Any]] = field(default_factory=list)  # `scaffold operator` (engine/authoring/operator.py)
    proto_dir: str = "proto"
    workers: list[dict[str, Any]] = field(default_factory=list)  # scaffold worker: {name, main}
    webhooks: list[dict[str, Any]] = field(default_factory=list)  # scaffold webhook: {name, service, sender}
    template_version: str = ""  # the templates generation renders: the pin when shipped (template_versions.pinned)

    def enabled(self, feature: str) -> bool:
        return self.features.get(feature, True)


def _module(root: Path) -> str | None:
    gomod = root / "go.mod"
    if gomod.is_file():
        for line in gomod.read_text(encoding="utf-8").splitlines():
            if line.startswith("module "):
                return line.split(None, 1)[1].strip()
    return None


def load(project: Project) -> AuthoringConfig:
    data = project.config
    features = dict.fromkeys(FEATURES, True)
    raw = data.get("features") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{project.config_path}: `features` must be a mapping of feature: true|false")
    for key, value in raw.items():
        if key not in FEATURES:
            raise ConfigError(f"{project.config_path}: unknown feature {key!r}",
                              hint=f"features: {', '.join(FEATURES)}")
        features[key] = bool(value)
    kind = str(data.get("kind") or "service")
    if kind not in KINDS:
        raise ConfigError(f"{project.config_path}: kind {kind!r} is not one of {', '.join(KINDS)}")
    generate = data.get("generate") or {}
    module = data.get("module") or _module(project.root) or project.name
    return AuthoringConfig(
        name=project.name, module=str(module), kind=kind, port=data.get("port", DEFAULT_PORT), features=features,
        commit_generated=bool(generate.get("commit", True)) if isinstance(generate, dict) else True,
        services=[s for s in data.get("services") or [] if isinstance(s, dict)],
        binaries=[b for b in data.get("binaries") or [] if isinstance(b, dict)],
        operators=[o for o in data.get("operators") or [] if isinstance(o, dict)],
        proto_dir=str(data.get("proto_dir") or "proto"),
        workers=[w for w in data.get("workers") or [] if isinstance(w, dict) and w.get("name")],
        webhooks=[w for w in data.get("webhooks") or [] if isinstance(w, dict) and w.get("name")],
        template_version=pinned(data))


def append_list_item(config_path: Path, key: str, item: dict[str, str]) -> None:
    """Append one mapping to a top-level list of framework.yaml, keeping the rest of the text
    (comments and order) as the user wrote it."""
    import yaml

    from engine.paths import atomic_write_bytes

    text = config_path.read_text(encoding="utf-8")
    lines = text.splitlines()
    entry = [f"  - {k}: {v}" if i == 0 else f"    {k}: {v}" for i, (k, v) in enumerate(item.items())]
    start = next((i for i, line in enumerate(lines) if line.rstrip() in (f"{key}:", f"{key}: []")), None)
    if start is None:
        lines += [f"{key}:", *entry]
    else:
        lines[start] = f"{key}:"
        end = start + 1
        while end < len(lines) and (lines[end].startswith((" ", "-")) or not lines[end].strip()):
            end += 1
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = entry
    new_text = "\n".join(lines) + "\n"
    yaml.load(new_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # never leave a file that does not parse
    atomic_write_bytes(config_path, new_text.encode("utf-8"))
