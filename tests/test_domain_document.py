"""The domain document the control plane answers (docs/reference-domains.md#http-interface), field for
field and in order, through the domain service on a real SQLite server store: `framework domain ...
--json` and the Domains screen print this document, so its bytes are its contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from engine.auth.accounts import add_org
from engine.domains import service
from engine.domains.dnscheck import Check
from engine.errors import EngineError, NotFound
from engine.serverstore.migrations import up
from engine.serverstore.store import open_engine


def _bytes(doc: object) -> str:
    """As the control plane's JSONResponse writes it."""
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Engine, str]:
    """A migrated server store holding one organization; its id."""
    monkeypatch.delenv("PLATFORM_GATEWAY_HOSTNAME", raising=False)
    monkeypatch.setenv("PLATFORM_GATEWAY_ADDRESS", "192.0.2.7")
    engine = open_engine(f"sqlite:///{tmp_path / 'server.db'}")
    up(engine)
    return engine, add_org(engine, "acme").id


def test_domain_document_keeps_its_fields_their_order_and_binding_shapes(store: tuple[Engine, str]) -> None:
    """docs/reference-domains.md#http-interface and #states: a claim is `pending_dns` with the TXT and
    A records to publish; a binding carries only its own keys (`env`+`target`, or `redirect_to`);
    once live only the routing record is left; `rm` answers hostname, removed, freed."""
    db, org = store
    claimed = service.add(db, org, "Example.test").model_dump(mode="json")
    token = claimed["dns"][0]["value"]
    assert _bytes(claimed) == (
        '{"hostname":"example.test","state":"pending_dns","serving":false,"binding":null,"dns":['
        '{"type":"TXT","name":"_platform-challenge.example.test","value":"' + token + '","purpose":"ownership"},'
        '{"type":"A","name":"example.test","value":"192.0.2.7","purpose":"routing"}],'
        f'"created_at":{claimed["created_at"]},"verified_at":null,"last_check":null}}')

    bound = service.bind(db, org, "example.test", env="cloud", target="api", redirect_to=None)
    assert _bytes(bound.model_dump(mode="json")["binding"]) == '{"env":"cloud","target":"api"}'

    live = service.record_check(db, org, "example.test", Check(True, "TXT found")).model_dump(mode="json")
    assert _bytes(live) == (
        '{"hostname":"example.test","state":"live","serving":true,"binding":{"env":"cloud","target":"api"},'
        '"dns":[{"type":"A","name":"example.test","value":"192.0.2.7","purpose":"routing"}],'
        f'"created_at":{claimed["created_at"]},"verified_at":{live["verified_at"]},'
        f'"last_check":{{"at":{live["last_check"]["at"]},"result":"TXT found"}}}}')

    redirected = service.bind(db, org, "example.test", env=None, target=None, redirect_to="www.example.test")
    assert _bytes(redirected.model_dump(mode="json")["binding"]) == '{"redirect_to":"www.example.test"}'
    binding = service.live_binding(db, "example.test")
    assert binding is not None and (binding.org_id, binding.redirect_to) == (org, "www.example.test")

    listed = [d.model_dump(mode="json") for d in service.list_domains(db, org)]
    assert [d["hostname"] for d in listed] == ["example.test"] and listed[0]["binding"] == {
        "redirect_to": "www.example.test"}

    assert _bytes(service.remove(db, org, "example.test").model_dump(mode="json")) == (
        '{"hostname":"example.test","removed":true,"freed":true}')
    with pytest.raises(NotFound) as refused:
        service.show(db, org, "example.test")
    assert isinstance(refused.value, EngineError) and refused.value.code == "not_found"
    assert refused.value.exit_code == 1
