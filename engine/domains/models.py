"""The domain noun (docs/reference-domains.md#states) as the control plane answers it.

`Domain.model_dump(mode="json")` is the /v1 document `framework domain ... --json` prints and the
Domains screen shows, field for field and in this order; a binding carries only its own keys
(`env` and `target`, or `redirect_to`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_serializer

DomainState = Literal["pending_dns", "conflict", "live"]


class Binding(BaseModel):
    """Where a live domain serves: an environment's workload or frontend, or a redirect."""

    env: str | None = None
    target: str | None = None
    redirect_to: str | None = None


class DnsRecord(BaseModel):
    """A record to publish: ownership (TXT) or routing (A or CNAME)."""

    type: str
    name: str
    value: str
    purpose: str


class LastCheck(BaseModel):
    at: int
    result: str | None


class Domain(BaseModel):
    """A hostname claimed by one organization."""

    hostname: str
    state: DomainState
    serving: bool
    binding: Binding | None
    dns: list[DnsRecord]
    created_at: int
    verified_at: int | None
    last_check: LastCheck | None

    @field_serializer("binding")
    def _binding(self, binding: Binding | None) -> dict[str, Any] | None:
        return None if binding is None else binding.model_dump(exclude_none=True)


class DomainRemoved(BaseModel):
    """`domain rm`: the claim is gone; `freed` when this organization owned the name."""

    hostname: str
    removed: bool = True
    freed: bool


class LiveBinding(BaseModel):
    """The serving gateway's lookup: the owning organization's binding of a live hostname."""

    org_id: str
    env: str | None
    target: str | None
    redirect_to: str | None
