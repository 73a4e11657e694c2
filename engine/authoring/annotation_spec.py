"""The one table of the framework's annotations (docs/reference-lint.md#markers): Go source markers, SQL column and
table comment markers, and the `(framework.v1.*)` proto options. `framework lint`'s analyzers read it, `generate`
reads the proto options through it, and `project annotations` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.authoring.markers import MARKER_WORD


@dataclass(frozen=True)
class Annotation:
    name: str  # as written: `framework:computed`, `(framework.v1.method).read_only`
    kind: str  # go | column | table | proto-service | proto-method | proto-message | file | config
    value: str  # the value's shape ("" for a bare marker)
    meaning: str
    analyzers: tuple[str, ...] = ()


MARKERS: tuple[Annotation, ...] = (
    Annotation("framework:entity", "proto-message", "",
               "the message is an entity: a table, CRUD RPCs and entity code are generated for it",
               ("db", "create-nullability", "proto-markers")),
    Annotation("framework:computed", "go", "",
               "a struct field the server computes: a request never sets it", ("computed-fields",)),
    Annotation("framework:read-only", "go", "",
               "a struct field written once at creation: update handlers never assign it", ("read-only-fields",)),
    Annotation("framework:guards", "go", "<field>[,<field>...]",
               "a function that must be called before the named fields are assigned", ("guarded-fields",)),
    Annotation("framework:optional-dep", "go", "",
               "a struct field holding a dependency that may be nil: every use is guarded by a nil check",
               ("optional-deps-guard",)),
    Annotation("framework:constructor", "go", "",
               "the function that builds the type; other code never uses a composite literal of it",
               ("conventions",)),
    Annotation("framework:no-observe", "go", "",
               "a handler method left out of the generated tracing and metrics", ("conventions",)),
    Annotation("framework:exclude-contract", "go", "",
               "an exported method left out of the package's contract interface (also `contracts.exclude`)",
               ("contract",)),
    Annotation("framework:outbound-io", "go", "",
               "a function that performs network I/O: handlers reach it only through a context-taking call"),
    Annotation("framework:immutable", "column", "",
               "the column is never updated after insert", ("column-markers",)),
    Annotation("framework:append-only", "table", "",
               "rows of the table are never updated or deleted", ("column-markers",)),
    Annotation("framework:owner", "table", "<service>",
               "the service that owns the table; only it writes there", ("column-markers",)),
    Annotation("framework:ref", "column", "derived-from=<column> | authoritative | independent",
               "how a reference column relates to the row it points at (seeding follows it)", ("column-markers",)),
    Annotation("(framework.v1.service).exclude_contract", "proto-service", "bool",
               "the service gets no contract interface", ("proto-options",)),
    Annotation("(framework.v1.service).static_export", "proto-service", "bool",
               "the service's read methods are exported as static files for frontends: every method is read-only",
               ("proto-options", "static-export")),
    Annotation("(framework.v1.service).owner", "proto-service", "string",
               "the team or service owning the API", ("proto-options",)),
    Annotation("(framework.v1.method).read_only", "proto-method", "bool",
               "the method changes no state (GET-able, cacheable)", ("proto-options",)),
    Annotation("(framework.v1.method).idempotent", "proto-method", "bool",
               "repeating the call has the effect of one call", ("proto-options",)),
    Annotation("(framework.v1.method).outbound_io", "proto-method", "bool",
               "the method calls other services or the network", ("proto-options",)),
    Annotation(MARKER_WORD, "file", "sha256:<hex of the content without the marker line>",
               "the file is generated: `generate` rewrites it, a mismatch means it was edited by hand "
               "(`ci verify-generated`); on its own line in the file's comment style", ("proto-markers",)),
    Annotation("contracts.exclude", "config", "[<package path under internal/>, ...]",
               "framework.yaml: packages whose exported methods the contract analyzer leaves alone",
               ("contract", "config-deps")),
    Annotation("lint.frontend.typecheck", "config", "error | warn | off",
               "framework.yaml: how tsc's findings gate `framework lint` (default error)"),
)

MARKER_PREFIX = "framework:"
OPTIONS_PROTO = "framework/v1/options.proto"  # where `project new` vendors it, under the proto directory
REF_VALUES = ("authoritative", "independent")


def by_kind(*kinds: str) -> dict[str, Annotation]:
    return {a.name: a for a in MARKERS if a.kind in kinds}


def proto_option_fields(kind: str) -> dict[str, Annotation]:
    """`read_only` -> its annotation, for `proto-service` or `proto-method`."""
    return {a.name.split(").", 1)[1]: a for a in MARKERS if a.kind == kind}


def options_proto(module: str) -> str:
    """The vendored `framework/v1/options.proto`, its Go package under the module's gen/ (what `generate` writes)."""
    from engine.authoring.templates import render

    return render("../proto/framework/v1/options.proto", go_package=f"{module}/gen/framework/v1;frameworkv1")
