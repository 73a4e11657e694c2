"""The serving gateway of `platform server` (domain binding; once verified a
certificate is issued and bound targets start serving by themselves:
docs/reference-domains.md#the-serving-gateway): a hosted environment deployed to a real control plane, a
domain verified against a real authoritative DNS server, requests routed by Host header and by SNI over TLS
with a certificate verified against the exported CA."""

from __future__ import annotations

import socket
import ssl
from typing import Any

import httpx

from tests.deploy_fixtures import Demo
from tests.domain_fixtures import (  # noqa: F401
    DOMAIN_SCOPES,
    Zone,
    gateway_plane,
    gateway_ports,
    publish_claim,
    zone,
)
from tests.hosted_fixtures import admin, demo, hosted_env, mint_in_store, run_json, seed_org_in_store, with_token  # noqa: F401
from tests.waiting import until
from tests.webhooks_fixtures import Server, server_factory  # noqa: F401


def _get(port: int, host: str, path: str = "/") -> httpx.Response:
    return httpx.get(f"http://127.0.0.1:{port}{path}", headers={"Host": host}, timeout=10)


def _https_get(port: int, host: str, cafile: str) -> tuple[str, str]:
    """GET / over TLS to 127.0.0.1 with SNI `host`, verifying the certificate chain and the name."""
    ctx = ssl.create_default_context(cafile=cafile)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            ctx.wrap_socket(raw, server_hostname=host) as tls:
        tls.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
        subject = dict(x[0] for x in tls.getpeercert()["subject"])["commonName"]
    return subject, data.decode(errors="replace")


def test_verified_domain_serves_its_bound_workload(gateway_plane: Server, zone: Zone, demo: Demo,  # noqa: F811
                                                   tmp_path: Any) -> None:
    """docs/reference-domains.md#states (domain verifies -> certificate issued; bound targets start serving by
    themselves), `framework domain bind` (`--target`; `--redirect-to` serves a 308; serves only when
    live) and `unbind` (no longer serving): the gateway routes by Host header, answers a clear 404
    page for hosts it does not serve, and serves TLS with a certificate of the control plane's CA that
    the client verifies against the exported CA certificate. `env smoke` (smoke route class) probes
    the environment's routes through the gateway: PASS for the served domain, FAIL for a TLS
    transport error."""
    ports = gateway_ports(gateway_plane)
    seed_org_in_store(gateway_plane, "acme", scopes=DOMAIN_SCOPES)
    env = with_token(demo, mint_in_store(gateway_plane, "acme", DOMAIN_SCOPES))
    hosted_env(demo, gateway_plane.url)
    code, doc = run_json(demo, env, "env", "deploy", "cloud", "--yes", "--timeout", "60")
    assert code == 0, doc

    code, doc = run_json(demo, env, "domain", "add", "shop.test", "--env", "cloud")
    claim = doc["result"]
    run_json(demo, env, "domain", "add", "www.shop.test", "--env", "cloud")
    code, doc = run_json(demo, env, "domain", "bind", "shop.test", "--env", "cloud", "--target", "api")
    assert code == 0
    run_json(demo, env, "domain", "bind", "www.shop.test", "--env", "cloud", "--redirect-to", "shop.test")
    unknown = _get(ports["http"], "shop.test")
    assert unknown.status_code == 404 and "No live domain named shop.test" in unknown.text  # bound, not live

    publish_claim(zone, claim)
    served = until(lambda: (r := _get(ports["http"], "shop.test")).status_code == 200 and r)  # no verify call
    assert served.json() == {"message": "hello from cloud"}
    assert _get(ports["http"], "www.shop.test").status_code == 404  # www is a separate name, not verified

    code, doc = run_json(demo, env, "domain", "bind", "shop.test", "--env", "cloud", "--redirect-to",
                         "www.shop.test")
    moved = _get(ports["http"], "shop.test", "/a/b?c=1")
    assert moved.status_code == 308
    assert moved.headers["location"] == "http://www.shop.test/a/b?c=1"  # same path, the Host had no port
    run_json(demo, env, "domain", "bind", "shop.test", "--env", "cloud", "--target", "api")  # replaces

    ca = tmp_path / "ca.pem"
    ca.write_bytes(httpx.get(gateway_plane.url + "/gateway/ca.pem", timeout=10).content)
    subject, answer = _https_get(ports["https"], "shop.test", str(ca))
    assert subject == "shop.test" and answer.startswith("HTTP/1.1 200") and "hello from cloud" in answer
    try:
        _https_get(ports["https"], "www.shop.test", str(ca))  # not live: no certificate for that name
        raise AssertionError("TLS to a name without a certificate verified")
    except ssl.SSLCertVerificationError:
        pass

    # env smoke through the gateway's external address (TLS, verified against the exported CA): the
    # live domain's route PASSes; a route whose host has no certificate is a TLS transport FAIL.
    path = demo.root / "deploy" / "kcl" / "cloud" / "main.k"
    path.write_text(path.read_text().replace(
        "            health = framework.HealthCheck",
        '            routes = [framework.Route {host = "shop.test", path = "/"}, '
        'framework.Route {host = "nope.test", path = "/"}]\n            health = framework.HealthCheck'))
    code, doc = run_json(demo, env, "env", "smoke", "cloud")
    assert code == 1, doc
    classes = {r["host"]: (r["klass"], r["reason"]) for r in doc["routes"]}
    assert classes["shop.test"][0] == "PASS" and doc["via"].startswith(f"the gateway https://127.0.0.1:{ports['https']}")
    assert classes["nope.test"][0] == "FAIL" and classes["nope.test"][1].startswith("TLS transport error"), classes

    code, doc = run_json(demo, env, "domain", "unbind", "shop.test", "--env", "cloud")
    assert code == 0 and doc["result"]["state"] == "live"
    gone = _get(ports["http"], "shop.test")
    assert gone.status_code == 404 and "<h1>No site here</h1>" in gone.text
    code, doc = run_json(demo, env, "domain", "rm", "shop.test", "--env", "cloud")
    assert code == 0 and doc["result"]["freed"] is True
    try:
        _https_get(ports["https"], "shop.test", str(ca))  # removed: its certificate is no longer presented
        raise AssertionError("TLS to a removed domain verified")
    except ssl.SSLCertVerificationError:
        pass


def _leaf_serial(port: int, host: str, cafile: str) -> int:
    """The serial of the certificate the gateway presents for `host`, verified against the CA."""
    from cryptography import x509

    ctx = ssl.create_default_context(cafile=cafile)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            ctx.wrap_socket(raw, server_hostname=host) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return int(x509.load_der_x509_certificate(der).serial_number)


def _domain(srv: Server, token: str, hostname: str) -> dict[str, Any]:
    """The domain as the control plane's HTTP interface shows it (what `domain show` prints as its result)."""
    r = httpx.get(f"{srv.url}/v1/domains/{hostname}", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_live_domain_is_reverified_and_its_certificate_renewed(server_factory: Any, zone: Zone,  # noqa: F811
                                                               demo: Demo, tmp_path: Any) -> None:  # noqa: F811
    """docs/reference-domains.md#states (domain: DNS verifies -> serving, certificate issued; a live domain
    leaves only by `domain rm`): the server's poller re-verifies live domains; a withdrawn ownership record is reported
    as the last verification while the domain stays live and keeps serving. Certificates are renewed
    before they expire: with a 3 s lifetime the leaf is issued again once less than a third remains,
    and the gateway presents the new one (still verified against the exported CA)."""
    from tests.hosted_fixtures import stop_hosted

    srv = server_factory(extra_env={"PLATFORM_DOMAIN_POLL_S": "0.3", "PLATFORM_DOMAIN_RECHECK_S": "0.3",
                                    "PLATFORM_CERT_LIFETIME_S": "3"},
                         args=("--dns-resolver", zone.address, "--gateway-http-port", "0",
                               "--gateway-https-port", "0"))
    try:
        port = gateway_ports(srv)["https"]
        seed_org_in_store(srv, "acme", scopes=DOMAIN_SCOPES)
        env = with_token(demo, mint_in_store(srv, "acme", DOMAIN_SCOPES))
        hosted_env(demo, srv.url)
        code, doc = run_json(demo, env, "domain", "add", "shop.test", "--env", "cloud")
        run_json(demo, env, "domain", "bind", "shop.test", "--env", "cloud", "--redirect-to", "www.shop.test")
        publish_claim(zone, doc["result"])
        token = env["FRAMEWORK_CONTROL_PLANE_TOKEN"]
        until(lambda: _domain(srv, token, "shop.test")["state"] == "live")  # the poller (HTTP), then the CLI:
        code, doc = run_json(demo, env, "domain", "show", "shop.test", "--env", "cloud")
        assert code == 0 and doc["result"]["state"] == "live"
        ca = tmp_path / "ca.pem"
        ca.write_bytes(httpx.get(srv.url + "/gateway/ca.pem", timeout=10).content)
        first = _leaf_serial(port, "shop.test", str(ca))
        renewed = until(lambda: (s := _leaf_serial(port, "shop.test", str(ca))) != first and s)
        assert renewed != first  # a new leaf, issued before the old one expired, verifying against the CA

        zone.withdraw("_platform-challenge.shop.test", "TXT")
        until(lambda: "no longer published" in str(_domain(srv, token, "shop.test")["last_check"]))
        code, doc = run_json(demo, env, "domain", "show", "shop.test", "--env", "cloud")
        shown = doc["result"]
        assert code == 0 and "no longer published" in str(shown["last_check"])
        assert shown["state"] == "live" and shown["serving"] is True
        assert "NXDOMAIN" in shown["last_check"]["result"]
        assert httpx.get(f"http://127.0.0.1:{gateway_ports(srv)['http']}/", headers={"Host": "shop.test"},
                         timeout=10).status_code == 308  # still serving
    finally:
        srv.stop()
        stop_hosted(srv)
