"""Domains on the control plane (domain record and binding, states and `framework domain`:
docs/reference-domains.md): a real `platform server` verifying against a real authoritative DNS server on 127.0.0.1
whose zone each test edits, driven through `framework domain` and the /v1 API."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cli_fork
import httpx

from tests.deploy_fixtures import FRAMEWORK_BIN, Demo
from tests.domain_fixtures import (  # noqa: F401
    Zone,
    domain_org_in_store,
    domain_plane,
    publish_claim,
    quiet_plane,
    zone,
)
from tests.hosted_fixtures import demo, hosted_env, run_json, with_token  # noqa: F401
from tests.pg_fixtures import pg_url  # noqa: F401
from tests.waiting import until
from tests.webhooks_fixtures import Server, server_factory, start_server  # noqa: F401


def _api(srv: Server, token: str, method: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.request(method, srv.url + path, json=body, timeout=30,
                         headers={"Authorization": f"Bearer {token}"})


def test_domain_commands_walk_the_state_machine(domain_plane: Server, zone: Zone, demo: Demo) -> None:  # noqa: F811
    """`framework domain` (docs/reference-domains.md#commands) and docs/reference-domains.md#states: `add`
    claims and prints the DNS to publish (apex and www are separate names, each with its own records);
    `verify` before DNS is published exits 0 with the claim still `pending_dns`; once the zone carries the
    records the server's poller makes it live by itself; `bind --target` then `--redirect-to` replaces the
    binding; `unbind` keeps the domain and its verification; `ls` lists every domain; `rm` removes it."""
    token = domain_org_in_store(domain_plane, "acme")
    hosted_env(demo, domain_plane.url)
    env = with_token(demo, token)

    code, doc = run_json(demo, env, "domain", "add", "Example.test", "--env", "cloud")
    assert code == 0, doc
    apex = doc["result"]
    assert apex["hostname"] == "example.test" and apex["state"] == "pending_dns" and not apex["serving"]
    kinds = {(r["type"], r["name"]) for r in apex["dns"]}
    assert kinds == {("TXT", "_platform-challenge.example.test"), ("A", "example.test")}
    code, doc = run_json(demo, env, "domain", "add", "www.example.test", "--env", "cloud")
    www = doc["result"]
    assert code == 0 and www["state"] == "pending_dns"
    assert {r["name"] for r in www["dns"]} == {"_platform-challenge.www.example.test", "www.example.test"}
    assert www["dns"][0]["value"] != apex["dns"][0]["value"]  # its own token: a separate claim

    code, doc = run_json(demo, env, "domain", "verify", "example.test", "--env", "cloud")
    assert code == 0, doc  # not yet verified is not a failure
    assert doc["result"]["state"] == "pending_dns"
    assert "NXDOMAIN" in doc["result"]["last_check"]["result"]

    code, doc = run_json(demo, env, "domain", "bind", "example.test", "--env", "cloud", "--target", "api")
    assert code == 0 and doc["result"]["binding"] == {"env": "cloud", "target": "api"}
    assert not doc["result"]["serving"]  # bound in any state, serving only when live

    publish_claim(zone, apex)

    # the poller, no verify call: waited for on the HTTP interface, then shown by the CLI
    until(lambda: _api(domain_plane, token, "GET", "/v1/domains/example.test").json()["state"] == "live")
    code, doc = run_json(demo, env, "domain", "show", "example.test", "--env", "cloud")
    shown = doc["result"]
    assert code == 0 and shown["state"] == "live"
    assert shown["serving"] and shown["verified_at"]
    assert [r["type"] for r in shown["dns"]] == ["A"]  # once verified only routing is left to keep

    code, doc = run_json(demo, env, "domain", "bind", "example.test", "--env", "cloud", "--redirect-to",
                         "www.example.test")
    assert doc["result"]["binding"] == {"redirect_to": "www.example.test"}
    code, doc = run_json(demo, env, "domain", "unbind", "example.test", "--env", "cloud")
    result = doc["result"]
    assert code == 0 and result["binding"] is None and result["state"] == "live" and not result["serving"]

    code, doc = run_json(demo, env, "domain", "ls", "--env", "cloud")
    listed = {d["hostname"]: d["state"] for d in doc["result"]["domains"]}
    assert listed == {"example.test": "live", "www.example.test": "pending_dns"}

    code, doc = run_json(demo, env, "domain", "rm", "example.test", "--env", "cloud")
    assert code == 0 and doc["result"] == {"hostname": "example.test", "removed": True, "freed": True}
    code, doc = run_json(demo, env, "domain", "show", "example.test", "--env", "cloud")
    assert code == 1 and doc["error"]["code"] == "not_found"


def test_verify_checks_dns_now_in_every_state(quiet_plane: Server, zone: Zone, demo: Demo) -> None:  # noqa: F811
    """`domain verify` checks DNS now (docs/reference-domains.md#dns-to-publish) and a live domain leaves
    only by `domain rm` (docs/reference-domains.md#states): with the poller idle, `verify` asks the DNS
    server at each call, also once the domain is live: a withdrawn ownership record is reported as this
    verification's result (exit 0; the state stays `live`, serving, and the ownership record to publish is
    listed again), and publishing it again is reported at the next `verify`."""
    token = domain_org_in_store(quiet_plane, "acme")
    hosted_env(demo, quiet_plane.url)
    env = with_token(demo, token)
    code, doc = run_json(demo, env, "domain", "add", "shop.test", "--env", "cloud")
    claim = doc["result"]
    run_json(demo, env, "domain", "bind", "shop.test", "--env", "cloud", "--redirect-to", "www.shop.test")
    publish_claim(zone, claim)
    code, doc = run_json(demo, env, "domain", "verify", "shop.test", "--env", "cloud")
    assert code == 0 and doc["result"]["state"] == "live", doc
    first = doc["result"]["last_check"]
    assert "carries this organization's token" in first["result"]

    zone.withdraw("_platform-challenge.shop.test", "TXT")
    code, doc = run_json(demo, env, "domain", "verify", "shop.test", "--env", "cloud")
    withdrawn = doc["result"]
    assert code == 0 and withdrawn["state"] == "live" and withdrawn["serving"], doc
    assert withdrawn["last_check"]["at"] > first["at"]  # asked now, not the earlier answer
    assert "NXDOMAIN" in withdrawn["last_check"]["result"]
    assert "no longer published" in withdrawn["last_check"]["result"]
    assert {r["purpose"] for r in withdrawn["dns"]} == {"ownership", "routing"}  # what to publish again
    done = cli_fork.run([FRAMEWORK_BIN, "domain", "verify", "shop.test", "--env", "cloud"], cwd=demo.root,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "no longer published" in done.stdout and "DNS to publish" in done.stdout

    publish_claim(zone, claim)
    code, doc = run_json(demo, env, "domain", "verify", "shop.test", "--env", "cloud")
    assert "carries this organization's token" in doc["result"]["last_check"]["result"]
    assert [r["purpose"] for r in doc["result"]["dns"]] == ["routing"]


def _race(red: Server, blue: Server, zone: Zone) -> None:  # noqa: F811
    """Two organizations (red through one server, blue through `blue`) claim and verify one name."""
    tokens = {org: domain_org_in_store(red, org) for org in ("red", "blue", "green")}
    planes = {"red": red, "blue": blue, "green": red}
    claims = {}
    for org in ("red", "blue"):
        r = _api(planes[org], tokens[org], "POST", "/v1/domains", {"hostname": "shop.test"})
        assert r.status_code == 200 and r.json()["state"] == "pending_dns"
        claims[org] = r.json()
        publish_claim(zone, claims[org])  # both publish: only the server's transaction decides

    barrier = threading.Barrier(2)
    answers: dict[str, str] = {}

    def race(org: str) -> None:
        barrier.wait()
        answers[org] = _api(planes[org], tokens[org], "POST", "/v1/domains/shop.test/verify").json()["state"]

    threads = [threading.Thread(target=race, args=(org,)) for org in ("red", "blue")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    states = {org: _api(planes[org], tokens[org], "GET", "/v1/domains/shop.test").json()["state"]
              for org in ("red", "blue")}
    assert sorted(states.values()) == ["conflict", "live"], states
    assert states == answers  # each organization's own verify answered its final state
    owner = next(o for o, s in states.items() if s == "live")
    other = "blue" if owner == "red" else "red"
    # The other organization's view never names the owner.
    assert owner not in _api(planes[other], tokens[other], "GET", "/v1/domains/shop.test").text

    late = _api(red, tokens["green"], "POST", "/v1/domains", {"hostname": "shop.test"}).json()
    assert late["state"] == "conflict"

    assert _api(planes[owner], tokens[owner], "DELETE", "/v1/domains/shop.test").json()["freed"] is True
    assert _api(planes[other], tokens[other], "GET", "/v1/domains/shop.test").json()["state"] == "pending_dns"
    assert _api(red, tokens["green"], "GET", "/v1/domains/shop.test").json()["state"] == "pending_dns"
    assert _api(planes[other], tokens[other], "POST", "/v1/domains/shop.test/verify").json()["state"] == "live"
    assert _api(red, tokens["green"], "GET", "/v1/domains/shop.test").json()["state"] == "conflict"


def test_first_organization_to_prove_ownership_takes_the_name(quiet_plane: Server, zone: Zone) -> None:  # noqa: F811
    """docs/reference-domains.md#states: claiming does not lock the name (two organizations both hold `pending_dns`
    claims); when both verify at once exactly one takes it and the other moves to `conflict`; a later
    claim of an owned name starts in `conflict`; `rm` by the owner frees the name, the others return to
    `pending_dns` and the next to verify takes it."""
    _race(quiet_plane, quiet_plane, zone)


def test_ownership_race_across_two_servers_on_postgresql(server_factory: Callable[..., Server],  # noqa: F811
                                                         zone: Zone, tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    """docs/reference-domains.md#states (the first to prove ownership takes the name) where it is hardest:
    two control-plane processes on one PostgreSQL, each organization verifying through a different one at the same
    moment: exactly one owner (the primary key of the ownership row decides), the other `conflict`."""
    args = ("--dns-resolver", zone.address)
    data = tmp_path / "shared-data"
    one = server_factory(data_dir=data, extra_env={"DATABASE_URL": pg_url, "PLATFORM_DOMAIN_POLL_S": "3600"},
                         args=args)
    two = start_server(data, one.env, one.token, *args)
    try:
        _race(one, two, zone)
    finally:
        two.stop()


def test_domain_endpoints_check_who_asks_and_what(domain_plane: Server, zone: Zone) -> None:  # noqa: F811
    """Domain authority (docs/reference-domains.md#http-interface) and bad input: no token 401; a token without the
    domain scope 403; another organization's domain is not found; a bad hostname and a binding naming
    both or neither of target and redirect are refused (400, exit 1) and change nothing."""
    token = domain_org_in_store(domain_plane, "acme")
    deploy_only = domain_org_in_store(domain_plane, "other", ("deploy:read",))
    assert httpx.get(domain_plane.url + "/v1/domains", timeout=10).status_code == 401
    assert _api(domain_plane, deploy_only, "GET", "/v1/domains").status_code == 403
    assert _api(domain_plane, token, "POST", "/v1/domains", {"hostname": "a.test"}).status_code == 200
    assert _api(domain_plane, deploy_only, "GET", "/v1/domains/a.test").status_code == 403
    r = _api(domain_plane, token, "POST", "/v1/domains", {"hostname": "not a host"})
    assert r.status_code == 400 and r.json()["exit_code"] == 1
    for body in ({}, {"env": "cloud", "target": "api", "redirect_to": "b.test"}, {"target": "api"}):
        r = _api(domain_plane, token, "POST", "/v1/domains/a.test/binding", body)
        assert r.status_code == 400, body
    assert _api(domain_plane, token, "GET", "/v1/domains/a.test").json()["binding"] is None
    assert _api(domain_plane, token, "GET", "/v1/domains/absent.test").status_code == 404


def test_hosted_spec_carrying_domains_is_refused_at_render(demo: Demo) -> None:  # noqa: F811
    """docs/reference-domains.md#kcl: "Domains are not declared in KCL; a hosted spec carrying a `domains`
    field is refused at render" -- with a message that says where domains are claimed instead."""
    hosted_env(demo, "http://127.0.0.1:9")
    path = demo.root / "deploy" / "kcl" / "cloud" / "main.k"
    text = path.read_text()
    code, doc = run_json(demo, demo.env, "env", "render", "cloud")
    assert "domains" not in str(doc["error"])  # without domains the render gets past evaluation
    path.write_text(text.replace('    kind = "hosted"\n', '    kind = "hosted"\n    domains = ["shop.test"]\n'))
    code, doc = run_json(demo, demo.env, "env", "render", "cloud")
    assert code == 1 and "domains are not declared in KCL" in doc["error"]["message"], doc
    assert "framework domain add" in doc["error"]["message"]


def test_server_refuses_a_bad_dns_resolver(tmp_path: Path) -> None:
    """Bad input (house rule): `platform server --dns-resolver` that is not host:port is refused with a
    clear message and exit 1 before the server starts, never a traceback."""
    import sys

    from tests.webhooks_fixtures import ROOT, isolated_env

    done = cli_fork.run([sys.executable, "-m", "app.main", "platform", "server", "--port", "0", "--data-dir",
                           str(tmp_path / "data"), "--dns-resolver", "127.0.0.1:notaport"], cwd=ROOT,
                          env=isolated_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "is not host:port" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "data").exists()
