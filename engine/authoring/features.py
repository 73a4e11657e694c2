"""The one table of a project's features (docs/reference-authoring.md#features---disable): what each one makes
(files, commands) and which other features it needs. `project new --disable` validates against it
(`engine.authoring.config.FEATURES` is its names) and `project features` resolves a project's graph from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Feature:
    name: str
    summary: str
    files: tuple[str, ...] = ()  # globs from the project root; {proto_dir}, {frontend}: framework.yaml's
    commands: tuple[str, ...] = ()  # the commands (or parts of them) that need it
    requires: tuple[str, ...] = ()  # features whose output this one reads: disabling them leaves it nothing


FEATURE_TABLE: tuple[Feature, ...] = (
    Feature("orm", "entity code for framework:entity messages that have a table",
            ("internal/entities/*.go",), ("framework generate",), requires=("codegen", "migrations")),
    Feature("codegen", "protos, buf and the generated Go, handlers and descriptor cache",
            ("buf.yaml", "buf.gen.yaml", "{proto_dir}/**/*.proto", "gen/**/*", "internal/handlers/**/*"),
            ("framework generate", "framework scaffold rpc", "framework scaffold service",
             "framework project introspect handlers")),
    Feature("migrations", "db/migrations/ and the owned create-table migrations of scaffolds",
            ("db/migrations/*",),
            ("framework db migration new", "framework db migrate up", "framework scaffold entity")),
    Feature("ci", "the CI workflow", (".github/workflows/ci.yml",), ("framework ci verify-generated",)),
    Feature("build", "`binaries` entries in framework.yaml", (), ("framework build",)),
    Feature("deploy", "the local development environment", ("deploy/kcl/dev/main.k",), ("framework env up dev",)),
    Feature("contracts", "internal package contracts and their generated mocks",
            ("internal/*/contract.go", "internal/*/*mock/mock.go"), ("framework package new", "framework generate")),
    Feature("docs", "the project's README", ("README.md",)),
    Feature("frontend", "the frontends' generated clients and their builds",
            ("{frontend}/src/gen/**/*",), ("framework generate", "framework build", "framework scaffold frontend"),
            requires=("codegen",)),
    Feature("observability", "request logging and tracing in the service bootstrap",
            ("internal/bootstrap/observability.go",), ("framework generate",)),
    Feature("hot_reload", "air's configuration (rebuild and restart on change)", (".air.toml",)),
)
BY_NAME = {f.name: f for f in FEATURE_TABLE}


def unmet(enabled: Callable[[str], bool]) -> list[tuple[str, str]]:
    """(feature, requirement) for each enabled feature whose requirement is disabled (a warning, never an error)."""
    return [(f.name, need) for f in FEATURE_TABLE if enabled(f.name) for need in f.requires if not enabled(need)]


def unmet_message(feature: str, need: str) -> str:
    return f"{feature} is enabled but requires {need}, which is disabled (features.{need}: false): {feature} " \
           f"has nothing to work from"
