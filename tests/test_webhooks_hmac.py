"""Signed deliveries (docs/reference-webhooks.md#webhook-ingestion: `webhook.hmac.*`, a signature is a way in)
against a real server, in the formats real senders use."""

from __future__ import annotations

import base64
import hashlib
import hmac
from pathlib import Path

import httpx
import pytest

from engine.hooks.models import HmacConfig
from engine.hooks.signature import sign, verify
from tests.webhooks_fixtures import Server, history, make_trigger, module_server_factory  # noqa: F401

GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


@pytest.fixture(scope="module")
def server(module_server_factory) -> Server:  # noqa: F811
    """One server for the module's tests; each test has its own automation, so its history is its own."""
    return module_server_factory()


def test_github_published_vector_signs_and_verifies() -> None:
    """GitHub's published vector: X-Hub-Signature-256, prefix sha256=, hex."""
    config = HmacConfig(header="X-Hub-Signature-256", prefix="sha256=")
    assert sign(GITHUB_SECRET.encode(), GITHUB_BODY, config) == GITHUB_SIGNATURE
    assert verify(GITHUB_SECRET.encode(), GITHUB_BODY, GITHUB_SIGNATURE, config)
    assert not verify(GITHUB_SECRET.encode(), GITHUB_BODY + b" ", GITHUB_SIGNATURE, config)


def test_real_sender_formats_accepted_by_the_server(server, tmp_path: Path) -> None:
    """HMAC of the raw body under the configured header, algorithm, prefix and encoding: GitHub
    (sha256= hex, and the vector), Shopify (base64, no prefix), sha1, sha512, uppercase hex."""
    github = make_trigger(
        server,
        tmp_path,
        "formats",
        "github",
        {"hmac": {"header": "X-Hub-Signature-256", "prefix": "sha256="}},
        secret=GITHUB_SECRET,
    )
    r = httpx.post(github["url"], content=GITHUB_BODY, headers={"X-Hub-Signature-256": GITHUB_SIGNATURE})
    assert r.status_code == 202
    upper = "sha256=" + GITHUB_SIGNATURE.removeprefix("sha256=").upper()
    assert (
        httpx.post(
            github["url"],
            content=GITHUB_BODY + b"!",
            headers={
                "X-Hub-Signature-256": "sha256="
                + hmac.new(GITHUB_SECRET.encode(), GITHUB_BODY + b"!", hashlib.sha256).hexdigest().upper()
            },
        ).status_code
        == 202
    )
    assert upper != GITHUB_SIGNATURE

    shop_secret = "shpss_0123456789abcdef"
    shopify = make_trigger(
        server,
        tmp_path,
        "formats",
        "shopify",
        {"hmac": {"header": "X-Shopify-Hmac-Sha256", "encoding": "base64"}},
        secret=shop_secret,
    )
    body = b'{"id": 820982911946154500, "email": "jon@example.com"}'
    digest = base64.b64encode(hmac.new(shop_secret.encode(), body, hashlib.sha256).digest()).decode()
    assert (
        httpx.post(
            shopify["url"],
            content=body,
            headers={"X-Shopify-Hmac-Sha256": digest, "Content-Type": "application/json"},
        ).status_code
        == 202
    )

    sha1 = make_trigger(
        server,
        tmp_path,
        "formats",
        "legacy",
        {"hmac": {"header": "X-Hub-Signature", "algorithm": "sha1", "prefix": "sha1="}},
        secret="k1",
    )
    sig1 = "sha1=" + hmac.new(b"k1", b"one", hashlib.sha1).hexdigest()
    assert httpx.post(sha1["url"], content=b"one", headers={"X-Hub-Signature": sig1}).status_code == 202

    sha512 = make_trigger(
        server, tmp_path, "formats", "strong", {"hmac": {"algorithm": "sha512"}}, secret="k5"
    )
    sig5 = hmac.new(b"k5", b"five", hashlib.sha512).hexdigest()
    assert httpx.post(sha512["url"], content=b"five", headers={"X-Signature-256": sig5}).status_code == 202
    assert {d["auth_method"] for d in history(server, "formats")} == {"hmac"}


def test_bad_signatures_are_the_404_and_token_keeps_working(server, tmp_path: Path) -> None:
    """A missing prefix, a wrong secret, the wrong algorithm, a signature of another body or an
    undecodable value -> the one 404; configuring HMAC adds a way in, the token keeps working."""
    act = make_trigger(
        server,
        tmp_path,
        "bad-sigs",
        "github",
        {"hmac": {"header": "X-Hub-Signature-256", "prefix": "sha256="}},
        secret=GITHUB_SECRET,
    )
    bare = GITHUB_SIGNATURE.removeprefix("sha256=")
    bad = [
        bare,
        "sha256=" + hmac.new(b"wrong", GITHUB_BODY, hashlib.sha256).hexdigest(),
        "sha256=" + hmac.new(GITHUB_SECRET.encode(), GITHUB_BODY, hashlib.sha1).hexdigest(),
        "sha256=" + hmac.new(GITHUB_SECRET.encode(), b"other", hashlib.sha256).hexdigest(),
        "sha256=zz",
        "sha256=",
        "\u00e9t\u00e9",
    ]
    for value in bad:
        r = httpx.post(
            act["url"], content=GITHUB_BODY, headers={"X-Hub-Signature-256": value.encode("utf-8")}
        )
        assert (r.status_code, r.text) == (404, "Not Found"), value
    assert httpx.post(act["url_with_token"], content=b"token path").status_code == 202
    assert (
        httpx.post(
            act["url"], content=b"bearer", headers={"Authorization": f"Bearer {act['token']}"}
        ).status_code
        == 202
    )


def test_secrets_never_stored_or_shown_after_activation(server, tmp_path: Path) -> None:
    """Authentication: the token is stored hashed and displayed once; the HMAC secret is sealed
    (never in the database in clear, never in history or listings); signature headers are
    removed from the stored payload."""
    act = make_trigger(
        server,
        tmp_path,
        "sealed",
        "github",
        {"hmac": {"header": "X-Hub-Signature-256", "prefix": "sha256="}},
        secret=GITHUB_SECRET,
    )
    assert (
        httpx.post(
            act["url"],
            content=GITHUB_BODY,
            headers={"X-Hub-Signature-256": GITHUB_SIGNATURE, "Cookie": "session=abc"},
        ).status_code
        == 202
    )
    listing = server.cli("automation", "list", "--json").stdout
    shown = listing + server.cli("trigger", "history", "sealed", "github", "--json").stdout
    raw = b"".join(p.read_bytes() for p in server.data_dir.glob("platform.db*"))
    for secret in (
        act["token"],
        GITHUB_SECRET,
        GITHUB_SIGNATURE.removeprefix("sha256="),
        server.token,
        "session=abc",
    ):
        assert secret not in shown
        assert secret.encode() not in raw
    assert '"activated": true' in listing and '"hmac_secret_set": true' in listing
    assert oct((server.data_dir / "secret.key").stat().st_mode & 0o777) == "0o600"
