"""The tier methods as the tier worker uses them: a driver as a web page uses it, the app
servers it can run under, and the settings a method is named with
(``php-apache-pgsql/server=fpm,load=wrk``). Each is declared once, in catalog-web.toml (its
``[methods.web]``); this module reads it from there."""

from __future__ import annotations

from dataclasses import dataclass

from ..methods import Method, catalog
from .settings import choose, variants


@dataclass(frozen=True)
class TierMethod:
    name: str                   # php-apache-pgsql
    language: str               # php | python | node | ruby | perl: the pages' language
    driver: str                 # the driver as packaged (a PHP extension, a pip or npm package)
    dbms: tuple[str, ...]
    modes: tuple[str, ...]      # what its pages do as PROTOCOL.md defines the modes
    policies: tuple[str, ...]   # per-request, persistent, pooled
    servers: tuple[str, ...]    # its app servers, the default first
    page_driver: str = ""       # the worker driver the pages reuse (php-pgsql, py-psycopg, node-pg …)
    unsupported: tuple[tuple[str, str], ...] = ()  # (mode, why) of modes it lacks, for settings

    @property
    def variants(self) -> dict[str, tuple[str, ...]]:
        return variants(self.servers)


def _of(method: Method) -> TierMethod:
    web = method.web
    return TierMethod(method.name, method.language, web.package, tuple(method.dbms), tuple(web.modes),
                      tuple(web.policies), tuple(web.servers), web.page_driver, tuple(web.unsupported.items()))


METHODS = {m.name: _of(m) for m in catalog() if m.web}


def settings_of(method: TierMethod, text: str) -> tuple[dict[str, str], str | None]:
    """``server=fpm,load=wrk`` (or ``/``-separated) checked against the method's settings:
    (every setting, defaults filled in; None) or ({}, why not)."""
    return choose(method.name, method.variants, text)
