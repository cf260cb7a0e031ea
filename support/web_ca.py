"""A certificate authority made for one test, and a server certificate it signs for named hosts.

The stand-in web (``support.real_web``) serves TLS with ``leaf_pem``/``key_pem``; whatever must
trust it (a client container, Chromium's NSS database, a run's egress proxy through
``TEST_CA_ENV``) is given ``cert_pem``. Elliptic-curve keys (P-256): made in milliseconds.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID = datetime.timedelta(days=7)
"""A week: longer than any session, far below the 398 days Chromium accepts for a leaf."""


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


class TestCA:
    """A fresh CA (``cert_pem``), and a leaf for ``hosts`` it signed (``leaf_pem``, ``key_pem``)."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, hosts: Sequence[str] = ("web.example",)) -> None:
        """Make the CA and the leaf for ``hosts`` (the leaf's names; the first is its CN)."""
        now = datetime.datetime.now(datetime.UTC)
        start, end = now - datetime.timedelta(hours=1), now + VALID
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = _name("inspect-gaia stand-in web test CA")
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
            .sign(ca_key, hashes.SHA256())
        )
        key = ec.generate_private_key(ec.SECP256R1())
        leaf = (
            x509.CertificateBuilder()
            .subject_name(_name(hosts[0]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.SubjectAlternativeName([x509.DNSName(host) for host in hosts]), False
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
            )
            .sign(ca_key, hashes.SHA256())
        )
        self.cert_pem = ca.public_bytes(serialization.Encoding.PEM)
        """The CA's certificate: what a client trusts."""
        self.leaf_pem = leaf.public_bytes(serialization.Encoding.PEM)
        """The server's certificate (names: ``hosts``)."""
        self.key_pem = _pem(key)
        """The server's private key."""
