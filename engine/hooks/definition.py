"""A trigger definition from a YAML file and/or command-line fields
(`platform trigger add`, docs/reference-webhooks.md#commands)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.errors import EngineError
from engine.hooks.filters import compile_filter
from engine.hooks.models import TriggerDefinition


def definition_from(
    file: Path | None, name: str | None, filter_: str | None, hmac: bool, hmac_fields: dict[str, str | None]
) -> TriggerDefinition:
    import yaml

    doc: dict[str, Any] = {}
    if file is not None:
        try:
            loaded = yaml.safe_load(file.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise EngineError(
                f"cannot read trigger definition {file}: {exc}", code="usage", exit_code=2
            ) from None
        if not isinstance(loaded, dict):
            raise EngineError(
                f"{file}: a trigger definition is a mapping (name, webhook, filter)",
                code="usage",
                exit_code=2,
            )
        doc = loaded
    if name:
        doc["name"] = name
    if filter_ is not None:
        doc["filter"] = filter_
    given = {k: v for k, v in hmac_fields.items() if v is not None}
    if hmac or given:
        webhook = doc.setdefault("webhook", {}) or {}
        doc["webhook"] = webhook
        webhook["hmac"] = {**(webhook.get("hmac") or {}), **given}
    doc.setdefault("webhook", {})
    try:
        definition = TriggerDefinition.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "definition"
        raise EngineError(
            f"invalid trigger definition: {where}: {first['msg']}", code="usage", exit_code=2
        ) from None
    if definition.filter is not None:
        compile_filter(definition.filter)  # refused here too, before anything is sent
    return definition
