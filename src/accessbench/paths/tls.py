"""TLS and compression as attributes of a path, composable with its kind: ``tcp+tls``,
``tcp+250us+tls``, ``tcp+tls:require``, ``tcp+tls1.2``, ``tcp+tls:direct``, ``pooler+tls``,
``tcp+compress``.

``+tls[1.2|1.3][:require|:verify-ca|:verify-full][:direct]`` — the worker connects over TLS
with its own driver's settings, verifying the server's certificate as the mode says
(``verify-full``, the default, checks the chain to the run's authority and the host name;
``verify-ca`` the chain only; ``require`` encrypts without checking). A version pins the
driver to that TLS version; ``:direct`` asks PostgreSQL 17's direct TLS handshake
(``sslnegotiation=direct``) instead of the SSLRequest round trip. A driver that cannot do
what is asked answers ``unsupported`` with its reason; none falls back silently, and the
runner checks on the server that each connection it can see is encrypted as asked.

``+compress`` asks the MariaDB protocol's compression of the driver, where it has it.

The certificate authority and the server's key are made for the run (``Authority``), in its
work directory, and removed with it: RSA 2048 with SHA-256, as most managed services still
issue, valid for a day either side of now.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
import shutil
from dataclasses import dataclass
from typing import Any

VERIFY = ("require", "verify-ca", "verify-full")
VERSIONS = {"1.2": "TLSv1.2", "1.3": "TLSv1.3"}
FORMS = "+tls[1.2|1.3][:require|:verify-ca|:verify-full][:direct], +compress"
_ATTRIBUTE = re.compile(r"\+(tls(1\.[0-9])?((?::[A-Za-z-]+)*)|compress)$", re.IGNORECASE)


@dataclass(frozen=True)
class Tls:
    """What a TLS path asks of the driver."""

    verify: str = "verify-full"
    version: str | None = None   # TLSv1.2 / TLSv1.3: pinned; None: the highest both ends have
    direct: bool = False         # PostgreSQL 17+: TLS from the first byte, no SSLRequest

    def describe(self) -> str:
        return ", ".join(filter(None, [f"TLS ({self.verify})", self.version and f"pinned to {self.version}",
                                       self.direct and "direct handshake (sslnegotiation=direct)"]))

    def endpoint(self, authority: "Authority") -> dict[str, Any]:
        """The endpoint's TLS keys, in libpq's words for both DBMSs: each worker maps them to
        its driver's own settings (docs/writing-a-worker.md, TLS)."""
        # No CA with ``require``: libpq (and drivers after it) verify the chain whenever a root
        # certificate is given, which would make require verify-ca.
        return {"sslmode": self.verify, **({"sslrootcert": authority.ca} if self.verify != "require" else {}),
                **({"tls_version": self.version} if self.version else {}),
                **({"sslnegotiation": "direct"} if self.direct else {})}


def split(name: str) -> tuple[str, Tls | None, bool]:
    """A path's name without its attributes, its TLS (or None) and whether it compresses:
    ``tcp+250us+tls1.2`` → (``tcp+250us``, Tls(version="TLSv1.2"), False). A malformed
    attribute is a ValueError naming it."""
    tls, compress, rest = None, False, name
    while (match := _ATTRIBUTE.search(rest)) is not None:
        attribute, version, options = match.groups()
        rest = rest[:match.start()]
        if attribute.lower() == "compress":
            compress = True
            continue
        if tls is not None:
            raise ValueError(f"{name}: +tls given twice")
        tls = _tls(name, version, options)
    return rest, tls, compress


def _tls(name: str, version: str | None, options: str) -> Tls:
    if version and version not in VERSIONS:
        raise ValueError(f"{name}: TLS version {version}: expected {' or '.join(VERSIONS)}")
    verify, direct = "verify-full", False
    for option in filter(None, options.lower().split(":")):
        if option == "direct":
            direct = True
        elif option in VERIFY:
            verify = option
        else:
            raise ValueError(f"{name}: TLS option {option!r}: expected one of {', '.join(VERIFY)}, direct")
    return Tls(verify, VERSIONS.get(version or ""), direct)


class Authority:
    """A certificate authority made for one run and the server certificate it signs (for
    localhost and 127.0.0.1), as PEM files in ``directory`` (private keys mode 0600)."""

    def __init__(self, directory: str) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import NameOID

        # Others may pass through (an app server's pages read the CA as the web user); the private
        # keys are their owner's alone (0600).
        os.makedirs(directory, mode=0o755, exist_ok=True)
        os.chmod(directory, 0o755)
        self.directory = directory
        self.ca, self.cert, self.key = (os.path.join(directory, f) for f in ("ca.pem", "server.pem", "server.key"))
        now = dt.datetime.now(dt.timezone.utc)
        ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "accessbench run authority")])
        ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
              .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
              .not_valid_after(now + dt.timedelta(days=2))
              .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False, data_encipherment=False,
                                           key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
        server_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        server = (x509.CertificateBuilder()
                  .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
                  .issuer_name(ca_name).public_key(server_key.public_key())
                  .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
                  .not_valid_after(now + dt.timedelta(days=2))
                  .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                              x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                 critical=False)
                  .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                  .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                  .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
                  .sign(ca_key, hashes.SHA256()))
        _write(self.ca, ca.public_bytes(serialization.Encoding.PEM), 0o644)
        _write(self.cert, server.public_bytes(serialization.Encoding.PEM), 0o644)
        _write(self.key, server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()), 0o600)

    def install(self, directory: str, owner: tuple[int, int] | None = None) -> tuple[str, str, str]:
        """Copies of the CA, certificate and key in a server's own directory, owned by the
        user it runs as (a server refuses a key others can read): their paths."""
        copies = []
        for source in (self.ca, self.cert, self.key):
            copy = os.path.join(directory, "tls-" + os.path.basename(source))
            shutil.copyfile(source, copy)
            os.chmod(copy, 0o600 if source == self.key else 0o644)
            if owner is not None:
                os.chown(copy, *owner)
            copies.append(copy)
        return copies[0], copies[1], copies[2]

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def _write(path: str, data: bytes, mode: int) -> None:
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "wb") as f:
        f.write(data)


def transport_differs(path: Any, seen: tuple[bool, str | None] | None) -> str | None:
    """Why a worker's connection, as the server saw it (``Target.transport``), is not what its
    path asks, or None: a driver that falls back to plain TCP on a TLS path, uses TLS on a plain
    one, or another TLS version than pinned is never measured under the path's name."""
    if seen is None:
        return None
    encrypted, version = seen
    if path.tls and not encrypted:
        return f"the server saw this worker's connection without TLS on {path.name}: its driver did not use TLS as asked"
    if not path.tls and encrypted:
        return (f"the server saw this worker's connection over TLS on {path.name}, a plain path: its driver "
                "negotiated TLS unasked")
    if path.tls and path.tls.version and version and version != path.tls.version:
        return f"the server saw {version} on {path.name}: the driver did not keep to {path.tls.version}"
    return None
