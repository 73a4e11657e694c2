"""`framework project features` (docs/reference-project.md#project-features): the resolved feature graph of a
project from the one feature table `project new --disable` validates against (engine/authoring/features.py): which
features framework.yaml enables, what each needs and makes, and a warning for a disabled feature an enabled one
requires."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from engine.authoring.config import load
from engine.authoring.features import FEATURE_TABLE, unmet, unmet_message
from engine.project import Project

_PRUNE = {".git", "node_modules", ".framework", "bin", ".next", "dist"}


class FeatureNode(BaseModel):
    name: str
    enabled: bool
    summary: str
    requires: list[str]
    required_by: list[str]
    makes: list[str]  # the table's file patterns, resolved against framework.yaml
    commands: list[str]
    present: list[str]  # files of the project the patterns match


class FeatureEdge(BaseModel):
    source: str  # the feature that needs ...
    target: str  # ... this one


class FeaturesResult(BaseModel):
    root: str
    features: list[FeatureNode]
    edges: list[FeatureEdge]
    warnings: list[str]


def _patterns(patterns: tuple[str, ...], proto_dir: str, frontends: list[str]) -> list[str]:
    out: list[str] = []
    for pattern in patterns:
        if "{frontend}" in pattern:
            out += [pattern.replace("{frontend}", d) for d in frontends]
        else:
            out.append(pattern.replace("{proto_dir}", proto_dir))
    return out


def _matches(root: Path, patterns: list[str]) -> list[str]:
    found: set[str] = set()
    for pattern in patterns:
        for path in root.glob(pattern):
            rel = path.relative_to(root)
            if path.is_file() and not _PRUNE.intersection(rel.parts):
                found.add(rel.as_posix())
    return sorted(found)


def features(project: Project) -> FeaturesResult:
    cfg = load(project)  # an unknown feature in framework.yaml is a ConfigError naming the known ones
    from engine.authoring.frontends import entries

    frontends = [e.dir for e in entries(project.config, project.config_path)]
    required_by: dict[str, list[str]] = {f.name: [] for f in FEATURE_TABLE}
    edges = []
    for feature in FEATURE_TABLE:
        for need in feature.requires:
            required_by[need].append(feature.name)
            edges.append(FeatureEdge(source=feature.name, target=need))
    nodes = []
    for feature in FEATURE_TABLE:
        makes = _patterns(feature.files, cfg.proto_dir, frontends)
        on = cfg.enabled(feature.name)
        nodes.append(FeatureNode(name=feature.name, enabled=on, summary=feature.summary,
                                 requires=list(feature.requires), required_by=required_by[feature.name],
                                 makes=makes, commands=list(feature.commands),
                                 present=_matches(project.root, makes)))
    warnings = [unmet_message(feature, need) for feature, need in unmet(cfg.enabled)]
    return FeaturesResult(root=str(project.root), features=nodes, edges=edges, warnings=warnings)
