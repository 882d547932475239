"""The endpoint's TLS keys as the drivers read them (protocol ``open``: libpq's words for both
DBMSs — ``sslmode``, ``sslrootcert``, ``tls_version``, ``sslnegotiation`` — and MariaDB's
``compress``), and the one Python ``ssl.SSLContext`` of the drivers that take one (asyncpg,
pg8000, PyMySQL). Each DBMS's own mapping onto its drivers' settings is in ``pg.py`` and
``mysql.py`` (``odbc.py``, ``uri.py`` for connection strings and URIs)."""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass

from ..base import Unsupported

ENCRYPTED = ("require", "verify-ca", "verify-full")


@dataclass(frozen=True)
class Ask:
    """What an endpoint asks of the driver's TLS and compression."""

    mode: str | None = None      # sslmode; None: absent (the driver's own default, as prefer)
    ca: str | None = None        # sslrootcert: the authority's PEM file
    version: str | None = None   # tls_version: TLSv1.2 / TLSv1.3, pinned as minimum and maximum
    direct: bool = False         # sslnegotiation=direct (PostgreSQL 17+)
    compress: bool = False       # MariaDB's protocol compression

    @classmethod
    def of(cls, endpoint: dict) -> "Ask":
        mode = endpoint.get("sslmode") or None
        if mode not in (None, "disable", "prefer", *ENCRYPTED):
            raise Unsupported(f"sslmode={mode}: expected disable, prefer, require, verify-ca or verify-full")
        negotiation = endpoint.get("sslnegotiation") or "postgres"
        if negotiation not in ("postgres", "direct"):
            raise Unsupported(f"sslnegotiation={negotiation}: expected postgres or direct")
        version = endpoint.get("tls_version") or None
        if version not in (None, "TLSv1.2", "TLSv1.3"):
            raise Unsupported(f"tls_version={version}: expected TLSv1.2 or TLSv1.3")
        return cls(mode, endpoint.get("sslrootcert") or None, version, negotiation == "direct",
                   bool(endpoint.get("compress")))

    @property
    def default(self) -> bool:
        """Absent or prefer: the driver's own default is left as it is."""
        return self.mode in (None, "prefer")

    @property
    def encrypted(self) -> bool:
        return self.mode in ENCRYPTED

    @property
    def verifies(self) -> bool:
        """The chain is checked against ``ca`` (verify-ca, verify-full)."""
        return self.mode in ("verify-ca", "verify-full")

    @property
    def pinned(self) -> bool:
        """Anything beyond the driver's default that only an encrypted mode can carry."""
        return bool(self.version or self.direct)

    def check(self) -> "Ask":
        """A version or direct negotiation asked without TLS (disable, prefer, absent): refused
        rather than silently left to the driver's default."""
        if self.pinned and not self.encrypted:
            raise Unsupported(f"{'tls_version' if self.version else 'sslnegotiation=direct'} needs sslmode require, "
                              f"verify-ca or verify-full, not {self.mode or 'none'}")
        return self


def ssl_context(ask: Ask, alpn: tuple[str, ...] = ()) -> ssl.SSLContext:
    """The Python ``SSLContext`` for an encrypted mode, made once per process for the same ask
    (the CA file read once) and shared by every connection after: verify-full checks the chain
    and the host name, verify-ca the chain only, require neither (encrypted, unchecked). Without
    ``sslrootcert`` a verifying mode trusts the system's authorities, as Python's default does."""
    return _context(ask.mode, ask.ca if ask.verifies else None, ask.version, alpn)


@functools.lru_cache(maxsize=None)
def _context(mode: str, ca: str | None, version: str | None, alpn: tuple[str, ...]) -> ssl.SSLContext:
    if mode not in ENCRYPTED:
        raise ValueError(f"no SSL context for sslmode={mode}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if mode == "require":
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        if ca:
            context.load_verify_locations(cafile=ca)
        else:
            context.load_default_certs()
        context.check_hostname = mode == "verify-full"
        context.verify_mode = ssl.CERT_REQUIRED
    if version:
        context.minimum_version = context.maximum_version = ssl.TLSVersion[version.replace(".", "_")]
    if alpn:
        context.set_alpn_protocols(list(alpn))
    return context


CONTEXT_SETTING = ("an ssl.SSLContext made once per process when the endpoint arrives (the CA file read once) and "
                   "reused by every connection: require = CERT_NONE, no host name check; verify-ca = the chain to "
                   "sslrootcert (CERT_REQUIRED), no host name check; verify-full = the chain and the host name; "
                   "tls_version = its minimum_version and maximum_version")
