"""``--target env``: the server a user's own client would reach, from its environment.

In this order, the first that is set: ``DATABASE_URL`` (a postgresql://, postgres://,
mariadb:// or mysql:// URL); libpq's variables (``PGHOST``, ``PGPORT``, ``PGDATABASE``,
``PGUSER``, ``PGSERVICE`` …) with ``pg_service.conf`` and ``PGPASSWORD`` as libpq itself
applies them (``PQconndefaults``; a password in ``~/.pgpass`` is found when connecting, as
libpq does); MariaDB's option files (``[client]`` and ``[mysql]`` groups, as
``my_print_defaults`` reads them: /etc/mysql/my.cnf, ~/.my.cnf and what they include) where they
name a user, host, port or socket. A password found on the way is used to connect and never
shown or stored: the target's name is its URL without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from urllib.parse import quote

from ..errors import InputError

LIBPQ_VARIABLES = ("PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE")
# libpq's options the run's URL carries on (beside user, password, host, port and dbname)
# where the environment or a service file set them: libpq's own default for each
LIBPQ_CARRIED = {"sslmode": "prefer", "sslrootcert": None, "sslnegotiation": "postgres"}
MARIADB_GROUPS = ("client", "mysql")
NOTHING = ("--target env: nothing is set: DATABASE_URL, libpq's PG* variables (PGHOST, PGDATABASE, PGUSER, "
           "PGSERVICE …) or a MariaDB option file's [client] user or host")


def url_from_environment() -> tuple[str, str]:
    """(the URL of the server the environment names, where it was found); may hold a password:
    for ``targets.make`` only, never shown."""
    if url := os.environ.get("DATABASE_URL", "").strip():
        return url, "DATABASE_URL"
    if any(os.environ.get(name) for name in LIBPQ_VARIABLES):
        return _libpq_url(), "libpq's environment (" + ", ".join(n for n in LIBPQ_VARIABLES if os.environ.get(n)) + ")"
    if url := _mariadb_url():
        return url, "MariaDB's option files ([client])"
    raise InputError(NOTHING)


def _libpq_url() -> str:
    import psycopg

    found = {o.keyword.decode(): o.val.decode() for o in psycopg.pq.Conninfo.get_defaults() if o.val is not None}
    host = found.get("host") or found.get("hostaddr") or ""
    if "," in host:
        raise InputError(f"--target env: PGHOST names several hosts ({host}); accessbench measures one server")
    query = "&".join(f"{key}={quote(found[key], safe='')}" for key, default in LIBPQ_CARRIED.items()
                     if found.get(key) and found[key] != default)
    return _url("postgresql", found.get("user"), found.get("password"), host, found.get("port"), found.get("dbname"), query)


def _mariadb_url() -> str | None:
    """The [client] options of MariaDB's option files, as a mariadb:// URL; None when they name
    no user, host, port or socket."""
    tool = shutil.which("my_print_defaults") or shutil.which("mariadb-print-defaults")
    if tool is None:
        return None
    out = subprocess.run([tool, *MARIADB_GROUPS], capture_output=True, text=True, timeout=10).stdout
    options: dict[str, str] = {}
    for line in out.splitlines():
        key, _, value = line.removeprefix("--").partition("=")
        options[key.replace("_", "-")] = value  # later files and groups override earlier ones, as the client reads them
    if not any(options.get(k) for k in ("user", "host", "port", "socket")):
        return None
    query = f"socket={quote(options['socket'], safe='/')}" if options.get("socket") else ""
    return _url("mariadb", options.get("user"), options.get("password"), options.get("host", ""), options.get("port"),
                options.get("database"), query)


def _url(scheme: str, user: str | None, password: str | None, host: str, port: str | None, database: str | None,
         query: str) -> str:
    login = (quote(user, safe="") if user else "") + (f":{quote(password, safe='')}" if password else "")
    return (f"{scheme}://{login + '@' if login else ''}{quote(host, safe='')}{':' + port if port else ''}"
            f"/{quote(database or '', safe='')}{'?' + query if query else ''}")
