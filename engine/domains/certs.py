"""Certificates for live domains, issued by the control plane's own certificate authority.

The issuer sits behind an interface (`Issuer`): `LocalCA` is the one this build has. An ACME client
against a public CA (Let's Encrypt) is out of reach here: it needs the public internet to reach this
host on the claimed name. A deployment with that reach would plug one in as another `Issuer`.

Files under `<data dir>/gateway/`: `ca.pem` (the CA certificate: export it to clients; also served
at GET /gateway/ca.pem), `ca.key` (0600), and `certs/<hostname>.pem` / `.key` (0600) per domain.

Renewal: a leaf is issued again once less than a third of its lifetime remains (`issue` checks; the
server's poller calls it for every live domain each round, and the gateway at handshakes). The
lifetime is 90 days, or `PLATFORM_CERT_LIFETIME_S` seconds.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from pathlib import Path
from typing import Protocol


class Issuer(Protocol):
    def issue(self, hostname: str) -> tuple[Path, Path]:
        """(certificate chain file, key file) for `hostname`, issued now or already on file."""

    def ca_pem(self) -> bytes:
        """What a client trusts to verify the certificates this issuer gives."""


def _write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


class LocalCA:
    """A certificate authority of this control plane (ECDSA P-256; leaves valid 90 days)."""

    def __init__(self, root: Path, lifetime_s: float = 90 * 86400) -> None:
        self.root = root
        self.lifetime_s = lifetime_s
        self.renew_at: dict[str, float] = {}  # hostname -> when its leaf is issued again (epoch seconds)
        self.lock = threading.Lock()
        (root / "certs").mkdir(parents=True, exist_ok=True)
        os.chmod(root / "certs", 0o700)
        if not (root / "ca.pem").exists():
            self._create_ca()

    def _create_ca(self) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "platform control plane CA")])
        now = dt.datetime.now(dt.UTC)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(days=3650))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .sign(key, hashes.SHA256()))
        _write_private(self.root / "ca.key", key.private_bytes(serialization.Encoding.PEM,
                                                              serialization.PrivateFormat.PKCS8,
                                                              serialization.NoEncryption()))
        _write_private(self.root / "ca.pem", cert.public_bytes(serialization.Encoding.PEM), 0o644)

    def ca_pem(self) -> bytes:
        return (self.root / "ca.pem").read_bytes()

    def issue(self, hostname: str) -> tuple[Path, Path]:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        cert_path, key_path = self.root / "certs" / f"{hostname}.pem", self.root / "certs" / f"{hostname}.key"
        with self.lock:
            if cert_path.exists() and key_path.exists() and time.time() < self._renew_at(hostname, cert_path):
                return cert_path, key_path
            ca_key = serialization.load_pem_private_key((self.root / "ca.key").read_bytes(), None)
            ca = x509.load_pem_x509_certificate(self.ca_pem())
            key = ec.generate_private_key(ec.SECP256R1())
            now = dt.datetime.now(dt.UTC)
            cert = (x509.CertificateBuilder()
                    .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)]))
                    .issuer_name(ca.subject).public_key(key.public_key())
                    .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                    .not_valid_after(now + dt.timedelta(seconds=self.lifetime_s))
                    .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
                    .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                    .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                    .sign(ca_key, hashes.SHA256()))  # type: ignore[arg-type]
            _write_private(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
            chain = cert.public_bytes(serialization.Encoding.PEM) + self.ca_pem()
            _write_private(cert_path, chain, 0o644)
            self.renew_at[hostname] = time.time() + self.lifetime_s * 2 / 3
        return cert_path, key_path

    def _renew_at(self, hostname: str, cert_path: Path) -> float:
        """When the leaf on file is due: a third of the lifetime before it expires (read once per leaf)."""
        if hostname not in self.renew_at:
            from cryptography import x509

            leaf = x509.load_pem_x509_certificate(cert_path.read_bytes())
            self.renew_at[hostname] = leaf.not_valid_after_utc.timestamp() - self.lifetime_s / 3
        return self.renew_at[hostname]

    def forget(self, hostname: str) -> None:
        for suffix in (".pem", ".key"):
            (self.root / "certs" / f"{hostname}{suffix}").unlink(missing_ok=True)
