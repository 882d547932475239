"""A step as the ``step`` message carries it to a worker (protocol/PROTOCOL.md): the one
place that turns a suite's step into what every worker reads, for the runner and for
``conformance`` alike, so that a worker is held to exactly what a run sends it.

Every step with a statement also carries the statement's ``shape`` (suite/shape.py): a layer
builds its operations from it with its own API, and a driver's batch variants that write
another way than the statement (COPY, a multi-row VALUES) take the table and columns from it.
No worker parses SQL.
"""

from __future__ import annotations

from ..protocol.prng import derive_seed
from . import association
from .shape import of_step


def step_message(step, dbms: str, seed: int, tables: list) -> dict:
    """The ``step`` message of ``step`` on ``dbms``: its generated parameters (seeded by the
    suite's ``seed`` and the statement, so every method and every trial gets the same), its
    statement on that DBMS and its shape against the suite's ``tables``, and whichever of the
    step's optional fields it has."""
    params = [g.wire(derive_seed(seed, "params", step.sql or "", str(i))) for i, g in enumerate(step.params)]
    message = {
        "op": "step", "kind": step.kind, "iterations": step.iterations, "fetch": step.reads_rows,
        "params": params, "commit_every": step.commit_every,
    }
    if step.kind == "page":
        message["page"] = step.page
        if step.sql:  # TechEmpower's tests: statements the page runs, its key drawn by the page
            message["sql"] = step.sql_on(dbms)
            message.update({key: value for key, value in (("queries", step.queries), ("write", step.write)) if value})
    elif step.sql:
        message["sql"] = step.sql_on(dbms)
        message["shape"] = of_step(message["sql"], tables)
    if step.kind == "load":
        message["load"] = association.message(step, message["sql"], dbms, tables)
    if step.mode:
        message["mode"] = step.mode
    if step.mode == "record":
        message["record"] = step.record.model_dump(exclude_none=True)
    if step.batch:
        message["batch"] = step.batch
    if step.policy != "persistent":
        message["policy"] = step.policy
    if step.policy == "pooled":
        message["pool_size"] = step.pool_size or step.clients
    return message
