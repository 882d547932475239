"""Connection settings shared by the PostgreSQL drivers."""

from __future__ import annotations

from ..base import Unsupported
from .tls import Ask


def connect_kwargs(endpoint: dict, libpq: int | None = None) -> dict:
    """libpq-style keywords: ``host`` is a socket directory for the unix path. The search
    path goes in the startup packet so no extra round trip sets it. ``libpq``: the version of
    the libpq the driver runs on (PQlibVersion), where it is known, for what it lacks."""
    kwargs = {
        "host": endpoint["host"],
        "port": endpoint["port"],
        "dbname": endpoint["database"],
        "user": endpoint["user"],
    }
    if endpoint.get("password"):
        kwargs["password"] = endpoint["password"]
    kwargs.update(libpq_tls(endpoint, libpq))
    kwargs.update(startup_options(endpoint))
    return kwargs


def startup_parameters(endpoint: dict) -> dict[str, str]:
    """The session's run-time parameters, sent in the startup packet so that no statement
    sets them: the schema's search_path, and for a read_only endpoint
    default_transaction_read_only=on (every transaction READ ONLY: the server refuses each
    write, SQLSTATE 25006). Neither asked: none."""
    parameters = {}
    if endpoint.get("schema"):
        parameters["search_path"] = endpoint["schema"]
    if endpoint.get("read_only"):
        parameters["default_transaction_read_only"] = "on"
    return parameters


def startup_options(endpoint: dict) -> dict[str, str]:
    """libpq's ``options`` keyword carrying ``startup_parameters`` (-c name=value, space
    separated), or nothing when there are none."""
    parameters = startup_parameters(endpoint)
    return {"options": " ".join(f"-c {k}={v}" for k, v in parameters.items())} if parameters else {}


def read_only_setting(how: str) -> str:
    """``hello``'s ``read_only`` for a PostgreSQL driver that sends it as ``how``."""
    return (f"endpoint read_only: {how}, in the startup packet beside search_path: every connection (open's, a "
            "connect step's, each client's, a pool's) starts with every transaction READ ONLY, so the server "
            "refuses writes (SQLSTATE 25006); absent or false: not sent")


LIBPQ_READ_ONLY = read_only_setting("libpq's options='-c default_transaction_read_only=on'")


def libpq_tls(endpoint: dict, libpq: int | None = None, who: str = "libpq") -> dict:
    """The endpoint's TLS in libpq's own keywords (they are libpq's words already). sslmode
    absent: none given, libpq's default (prefer). sslrootcert only with verify-ca/verify-full:
    with require libpq would check the chain against it (as verify-ca). A pinned version is
    both ssl_min_protocol_version and ssl_max_protocol_version (libpq 13+); sslnegotiation=direct
    needs libpq 17: an older one is answered unsupported, naming its version, before libpq
    would refuse the keyword."""
    ask = Ask.of(endpoint).check()
    kwargs: dict = {}
    if ask.mode:
        kwargs["sslmode"] = ask.mode
    if ask.verifies and ask.ca:
        kwargs["sslrootcert"] = ask.ca
    if ask.version:
        if libpq is not None and libpq < 130000:
            raise Unsupported(f"{who}'s libpq {libpq_version(libpq)} has no ssl_max_protocol_version (libpq 13 and later)")
        kwargs["ssl_min_protocol_version"] = kwargs["ssl_max_protocol_version"] = ask.version
    if ask.direct:
        if libpq is not None and libpq < 170000:
            raise Unsupported(f"{who}'s libpq {libpq_version(libpq)} has no sslnegotiation=direct (libpq 17 and later)")
        kwargs["sslnegotiation"] = "direct"
    return kwargs


def tls_setting(libpq: int | None = None) -> str:
    """``hello``'s ``tls`` for a driver on libpq, of ``libpq`` (its version) where known."""
    direct = ("libpq 17 and later" if libpq is None
              else f"this libpq {libpq_version(libpq)} {'has' if libpq >= 170000 else 'lacks'} it, "
                   f"{'so it is passed' if libpq >= 170000 else 'so it is answered unsupported'}")
    return ("libpq's own keywords: sslmode as given (absent: none passed, libpq's default prefer); sslrootcert with "
            "verify-ca/verify-full only (with require libpq would check the chain against it); "
            "ssl_min_protocol_version = ssl_max_protocol_version = the pinned tls_version; sslnegotiation=direct ("
            f"{direct}). libpq reads the CA file and makes its SSL context inside every connect (it keeps no TLS "
            "object to reuse), so that cost is in each connect step, as for any libpq application")


def libpq_version(number: int) -> str:
    """libpq's integer version (180006) as people write it (18.6)."""
    return f"{number // 10000}.{number % 10000}" if number >= 100000 else str(number)


class GetconnPool:
    """A pool with getconn/putconn (psycopg_pool's, psycopg2.pool's) in the shape the host
    borrows from: borrow, give_back, close."""

    def __init__(self, pool, close: str = "close") -> None:
        self.borrow, self.give_back, self.close = pool.getconn, pool.putconn, getattr(pool, close)
