"""The tier methods: a driver as a web page uses it, the app servers it can run under, and the
settings a method is named with (``php-pgsql/server=fpm,load=wrk``)."""

from __future__ import annotations

from dataclasses import dataclass

# The load generators: ab for study S5's exact shape (``ab -t 15 -c 10``, requests per
# second), wrk for latency percentiles (its full histogram, to the microsecond).
LOADS = ("ab", "wrk")


@dataclass(frozen=True)
class TierMethod:
    name: str                   # php-pgsql
    language: str               # php | python | node: the pages' language
    driver: str                 # the driver as packaged (a PHP extension, a pip or npm package)
    dbms: tuple[str, ...]
    modes: tuple[str, ...]      # what its pages do as PROTOCOL.md defines the modes
    policies: tuple[str, ...]   # per-request, persistent, pooled
    servers: tuple[str, ...]    # its app servers, the default first
    page_driver: str = ""       # the worker driver the pages reuse (Python, Node)
    unsupported: tuple[tuple[str, str], ...] = ()  # (mode, why) of modes it lacks, for settings

    @property
    def variants(self) -> dict[str, tuple[str, ...]]:
        return {"server": self.servers, "load": LOADS}


PHP_SERVERS = ("mod_php", "fpm")  # Apache prefork with mod_php (the study's), Apache event + PHP-FPM
PHP_POLICIES = ("per-request", "persistent")  # PHP has no pool: a persistent connection is its reuse
NO_PREPARED = ("prepared", "a prepared statement does not outlive its request in PHP: the page would prepare "
               "every time (that is extended)")

METHODS = {m.name: m for m in [
    TierMethod("php-pgsql", "php", "pgsql", ("postgresql",), ("literal", "extended", "prepared"), PHP_POLICIES,
               PHP_SERVERS),
    TierMethod("php-pdo-pgsql", "php", "pdo_pgsql", ("postgresql",), ("literal", "extended"), PHP_POLICIES,
               PHP_SERVERS, unsupported=(NO_PREPARED,)),
    TierMethod("php-pdo-mysql", "php", "pdo_mysql", ("mariadb",), ("literal", "extended"), PHP_POLICIES,
               PHP_SERVERS, unsupported=(NO_PREPARED,)),
    TierMethod("php-mysqli", "php", "mysqli", ("mariadb",), ("literal", "extended"), PHP_POLICIES,
               PHP_SERVERS, unsupported=(NO_PREPARED,)),
    TierMethod("py-gunicorn-psycopg", "python", "psycopg", ("postgresql",), ("literal", "extended", "prepared"),
               ("per-request", "persistent", "pooled"), ("gunicorn",), page_driver="py-psycopg"),
    TierMethod("py-gunicorn-mysqlclient", "python", "mysqlclient", ("mariadb",), ("literal",),
               ("per-request", "persistent"), ("gunicorn",), page_driver="py-mysqlclient",
               unsupported=(("extended", "MySQLdb interpolates parameters on the client"),
                            ("prepared", "MySQLdb interpolates parameters on the client"))),
    TierMethod("node-http-pg", "node", "pg", ("postgresql",), ("literal", "extended", "prepared"),
               ("per-request", "persistent", "pooled"), ("node-http",), page_driver="node-pg"),
    TierMethod("node-http-mysql2", "node", "mysql2", ("mariadb",), ("literal", "extended", "prepared"),
               ("per-request", "persistent", "pooled"), ("node-http",), page_driver="node-mysql2"),
]}


def settings_of(method: TierMethod, text: str) -> tuple[dict[str, str], str | None]:
    """``server=fpm,load=wrk`` (or ``/``-separated) checked against the method's settings:
    (every setting, defaults filled in; None) or ({}, why not)."""
    chosen = {name: values[0] for name, values in method.variants.items()}
    for part in filter(None, text.replace(",", "/").split("/")):
        name, _, value = part.partition("=")
        values = method.variants.get(name)
        if values is None:
            known = ", ".join(f"{k}={'|'.join(v)}" for k, v in method.variants.items())
            return {}, f"{method.name} has no setting {name!r} (its settings: {known})"
        if value not in values:
            return {}, f"{method.name}/{name} takes {' or '.join(values)}, not {value!r}"
        chosen[name] = value
    return chosen, None


def missing(name: str) -> str | None:
    """Why a tier method cannot run here (its app server, its pages' runtime or its load
    generator absent), or None."""
    from .loadgen import GENERATORS
    from .servers import SERVERS

    method = METHODS.get(name.partition("/")[0])
    if method is None:
        return f"no tier method {name.partition('/')[0]!r}"
    chosen, why = settings_of(method, name.partition("/")[2])
    if why:
        return why
    return SERVERS[chosen["server"]].missing() or GENERATORS[chosen["load"]].missing()
