"""A tier method's settings as its name gives them (``php-apache-pgsql/server=fpm,load=wrk``): the
app server and the load generator, checked against what the method has; and whether they
can run here. Reads no catalog, so the catalog's own availability check can call it."""

from __future__ import annotations

# The load generators: ab for study S5's exact shape (``ab -t 15 -c 10``, requests per
# second), wrk for latency percentiles (its full histogram, to the microsecond).
LOADS = ("ab", "wrk")
# App server worker processes (prefork children, FPM children, gunicorn workers): S5's ten
# clients each find a process free, so no request waits for one to be spawned. Each keeps its
# own connection (or pool) once it has served a request.
PROCESSES = 10


def variants(servers) -> dict[str, tuple[str, ...]]:
    """Each setting a tier method takes and its values, the default first."""
    return {"server": tuple(servers), "load": LOADS}


def choose(name: str, settings: dict[str, tuple[str, ...]], text: str) -> tuple[dict[str, str], str | None]:
    """``server=fpm,load=wrk`` (or ``/``-separated) checked against ``settings``: (every
    setting, defaults filled in; None) or ({}, why not)."""
    chosen = {key: values[0] for key, values in settings.items()}
    for part in filter(None, text.replace(",", "/").split("/")):
        key, _, value = part.partition("=")
        values = settings.get(key)
        if values is None:
            known = ", ".join(f"{k}={'|'.join(v)}" for k, v in settings.items())
            return {}, f"{name} has no setting {key!r} (its settings: {known})"
        if value not in values:
            return {}, f"{name}/{key} takes {' or '.join(values)}, not {value!r}"
        chosen[key] = value
    return chosen, None


def missing(name: str, servers) -> str | None:
    """Why the tier method ``name`` (with its settings) cannot run here — its app server, its
    pages' runtime or its load generator absent — or None. ``servers``: its app servers (None:
    no such tier method)."""
    from .loadgen import GENERATORS
    from .servers import SERVERS

    base, _, text = name.partition("/")
    if servers is None:
        return f"no tier method {base!r}"
    chosen, why = choose(base, variants(servers), text)
    if why:
        return why
    return SERVERS[chosen["server"]].missing() or GENERATORS[chosen["load"]].missing()
