"""The analyzers' table and the field's linters (docs/reference-lint.md#analyzers): plain data, no pydantic,
so the command layer builds its per-analyzer flags without the finding models (every command's startup)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Analyzer:
    name: str  # its flag: --<name>
    group: str  # go | sql | proto | config | frontend: the input it reads
    summary: str
    done: bool = True
    go: str = ""  # its go/analysis name when not the flag without hyphens (`tests` is go vet's own pass)

    @property
    def go_name(self) -> str:
        """The go/analysis name (an identifier): `time-bucketing` -> `timebucketing`."""
        return self.go or self.name.replace("-", "")


ANALYZERS: tuple[Analyzer, ...] = (
    Analyzer("contract", "go", "exported methods of internal/<pkg>/service.go are in its contract.go"),
    Analyzer("db", "sql", "every framework:entity message has its table in the migrations"),
    Analyzer("migration-safety", "sql", "`ci migration-safety` over the migrations"),
    Analyzer("conventions", "go", "a file rpc_<name>.go holds that RPC's method and no other"),
    Analyzer("tests", "go", "every handler RPC is named in a test of its package", go="handlertests"),
    Analyzer("config-deps", "config", "framework.yaml services and binaries point at files that exist"),
    Analyzer("column-markers", "sql", "framework: column and table comments are known markers with valid values"),
    Analyzer("fixture-drift", "sql", "db/seeds/vocab.yaml names tables and columns that exist"),
    Analyzer("time-bucketing", "go", "time buckets are computed in UTC"),
    Analyzer("proto-markers", "proto", "framework: comments in protos are known markers on the right element"),
    Analyzer("create-nullability", "sql", "entity columns are NOT NULL unless the proto field is optional"),
    Analyzer("computed-fields", "go", "framework:computed fields are never set from a request"),
    Analyzer("read-only-fields", "go", "framework:read-only fields are never assigned in update handlers"),
    Analyzer("guarded-fields", "go", "fields a framework:guards function guards are set only after it runs"),
    Analyzer("static-export", "proto", "a static_export service has only read-only methods"),
    Analyzer("proto-options", "proto", "(framework.v1.*) options are consistent with the method"),
    Analyzer("vendored-protos", "proto", "framework/v1/options.proto is the framework's copy"),
    Analyzer("config-reach", "go", "environment variables the Go code reads are set by an environment"),
    Analyzer("optional-deps-guard", "go", "framework:optional-dep fields are nil-checked before use"),
    Analyzer("frontend-stores", "frontend", "frontends reach the API only through the generated clients"),
)
BY_NAME = {a.name: a for a in ANALYZERS}
# The field's own tools (docs/reference-lint.md#linters).
LINTERS = ("go vet", "golangci-lint", "buf lint", "eslint", "tsc")
