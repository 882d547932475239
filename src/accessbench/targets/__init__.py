"""Targets: which database instance a run measures, by name (managed) or URL (external).

Each DBMS is one module here — its Target classes and its description (``registry.DBMS``),
registered as the module is imported — and the workers' drivers for it. Importing this package
imports every DBMS module, so the registry is full wherever it is read.
"""

from __future__ import annotations

import urllib.parse

from ..errors import InputError
from . import postgresql, sqlite, mariadb, duckdb  # noqa: F401 — each registers its DBMS, in this order
from .base import Target, TargetUnavailable
from .environment import url_from_environment
from .registry import DBMS, REGISTRY, Login, Names, by_default
from .url import masked

EMBEDDED = Names(lambda dbms: dbms.embedded)  # in the worker's own process: no server, no server CPU


def make(spec: str) -> Target:
    """The target ``spec`` names: a registered DBMS by its name or an alias (its managed target:
    a throwaway server, or a file in the run's work directory), ``NAME@VERSION`` (the managed
    server of that version, one installed here), or an external server's URL."""
    if spec == "env":
        url, _ = url_from_environment()
        return make(url)
    named = _named(spec)
    if named is not None:
        dbms, version, query = named
        options = {"login": login} if (login := _login(spec, dbms, query)) else {}
        return dbms.managed(**options) if version is None else dbms.managed(_installed(spec, dbms, version), **options)
    for dbms in REGISTRY.values():
        if dbms.external and _is_url_of(spec, dbms):
            return dbms.external(spec)
    urls = [f"{REGISTRY[name].schemes[0]}://" for name in by_default() if REGISTRY[name].external]
    raise InputError(f"--target {masked(spec)}: expected {', '.join(by_default())}, a {' or '.join(urls)} URL, "
                     "or env (DATABASE_URL, libpq's PG* variables, MariaDB's option files)")


def dbms_of(spec: str) -> str | None:
    """The registered DBMS a --target spec names (by name, alias, NAME@VERSION or URL scheme),
    None for anything else: what a check of raw specs compares, never the spec itself."""
    named = _named(spec)
    if named is not None:
        return named[0].name
    return next((dbms.name for dbms in REGISTRY.values() if dbms.external and _is_url_of(spec, dbms)), None)


def _named(spec: str) -> tuple[DBMS, str | None, str | None] | None:
    """The DBMS a bare name names (its name or an alias), the version after its last '@' (None:
    no '@') and the options after '?' (None: no '?'), or None. Only a registered name before
    them makes them a version and options: a URL may hold '@' and '?'
    (``postgresql://me:pw@db/app?sslmode=require``) and is never split."""
    spec, mark, query = spec.partition("?")
    name, at, version = spec.rpartition("@")
    if not at:
        name, version = spec, None
    return next(((dbms, version, query if mark else None) for dbms in REGISTRY.values()
                 if name == dbms.name or name in dbms.aliases), None)


def _login(spec: str, dbms: DBMS, query: str | None) -> Login | None:
    """The login ``?auth=METHOD[&iterations=N]`` asks of a managed server, or None; one line
    naming what it takes where it is not that."""
    if query is None:
        return None
    title, methods = dbms.title or dbms.name, sorted(set(dbms.logins.values()))
    takes = "auth=METHOD" + ("[&iterations=N]" if dbms.login_iterations else "")
    if not methods:
        raise InputError(f"--target {spec}: {title} has no login to choose (it is embedded), so it takes no ?{takes}")
    try:
        options = dict(urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=True))
    except ValueError:
        options = {}
    unknown = set(options) - {"auth", *(["iterations"] if dbms.login_iterations else [])}
    if not options or unknown or "auth" not in options:
        raise InputError(f"--target {spec}: a managed {title} takes ?{takes}, METHOD one of {', '.join(methods)}")
    method = dbms.logins.get(options["auth"])
    if method is None:
        raise InputError(f"--target {spec}: {options['auth']!r} is no login method of {title}'s; "
                         f"one of {', '.join(methods)}")
    iterations = options.get("iterations")
    if iterations is not None and (not iterations.isdigit() or int(iterations) < 1 or method != "scram"):
        raise InputError(f"--target {spec}: iterations=N (a whole number, 1 or more) goes with auth=scram")
    return Login(method, int(iterations) if iterations else None)


def _is_url_of(spec: str, dbms: DBMS) -> bool:
    return spec.startswith(tuple(f"{scheme}://" for scheme in dbms.schemes))


def _installed(spec: str, dbms: DBMS, version: str) -> str:
    """``version`` of ``dbms``'s managed server, if it is installed here; else one line saying
    which are (an embedded DBMS has no server version to choose)."""
    title = dbms.title or dbms.name
    if dbms.embedded:
        raise InputError(f"--target {spec}: {title}'s version is each worker's library's, not a server's, "
                         f"so it takes no @VERSION; write {dbms.name}")
    if dbms.versions is None:
        raise InputError(f"--target {spec}: {title} names no server versions, so it takes no @VERSION; "
                         f"write {dbms.name}")
    installed = dbms.versions()
    if version not in installed:
        listed = ", ".join(f"{v} ({dbms.name}@{v})" for v in installed) or "none"
        asked = f"{title} {version} is not installed here" if version else "a version is missing after '@'"
        raise InputError(f"--target {spec}: {asked}; installed: {listed}")
    return version


__all__ = ["EMBEDDED", "Target", "TargetUnavailable", "dbms_of", "make"]
