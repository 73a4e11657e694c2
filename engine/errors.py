"""Typed engine errors. Each carries the exit code the spec assigns to it; the app maps them."""

from __future__ import annotations


class EngineError(Exception):
    """A failure the user can act on. `code` is a stable machine-readable name."""

    exit_code: int = 1
    code: str = "error"

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code
        if code is not None:
            self.code = code

    def to_dict(self) -> dict[str, object]:
        doc: dict[str, object] = {"code": self.code, "message": self.message}
        if self.hint:
            doc["hint"] = self.hint
        return doc


class InvalidInput(EngineError):
    """A value the command was given cannot be used (exit 1): a bad file, flag combination or name."""

    code = "invalid_input"


class ArtifactTooLarge(EngineError):
    """A file artifact over the control plane's cap (64 MiB): refused by name at the cut or upload."""

    code = "artifact_too_large"


class NotFound(EngineError):
    """A named thing the request is about does not exist, or not for this caller: an organization,
    user, token, automation or delivery, a hosted environment, a domain (exit 1; the server answers 404)."""

    code = "not_found"


class Conflict(EngineError):
    """The request collides with what exists: a name already taken, a trigger not activated or disabled,
    a delivery that kept no payload (exit 1; the server answers 409)."""

    code = "conflict"


class ReleaseConflict(Conflict):
    """Re-cutting a version over different artifacts (releases are immutable). Cut in this checkout it
    is `release_conflict`; the control plane answers it as its `conflict` (409)."""

    code = "release_conflict"


class UsageError(EngineError):
    """Invalid input on the command line (exit 2, as argument parsers do)."""

    exit_code = 2
    code = "usage"


class ProjectNotFound(EngineError):
    """No `framework.yaml` in the current directory or any parent."""

    code = "project_not_found"


class ConfigError(EngineError):
    """A project file exists but cannot be read or is not valid."""

    code = "invalid_config"


class EnvironmentNotFound(EngineError):
    """`deploy/kcl/<env>/main.k` does not exist."""

    code = "environment_not_found"


class KclError(EngineError):
    """KCL evaluation failed: syntax error, failed `check:`, unknown import ..."""

    code = "kcl_error"

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 column: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.file = file
        self.line = line
        self.column = column

    def to_dict(self) -> dict[str, object]:
        doc = super().to_dict()
        if self.file:
            doc["file"] = self.file
        if self.line is not None:
            doc["line"] = self.line
        if self.column is not None:
            doc["column"] = self.column
        return doc
