"""A run made ready from what was asked, before anything starts: a resumed run's settings
taken from the store (and what was given held to them), the options' defaults, the suite
loaded, ``--cluster``'s paths and targets, the methods, paths and targets selected, what each
DBMS itself would refuse, and the ``Runner`` built. Every refusal is an ``InputError`` here,
so a mistake is told at once, in one line, before a server starts.

``request`` is the run command's options by name (an ``argparse.Namespace``, or any object
with the same attributes: ``accessbench reproduce`` builds one per study).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import InputError
from ..targets.registry import servers
from .resume import Resume
from .select import Refused, Skipped, select

# The defaults of the options a resumed run keeps, in one place (their arguments default to
# None, so that an option given can be told from one left out).
RUN_DEFAULTS = {"suite": "quick", "trials": 5, "warmup": 1, "max_warmup": 10, "timeout": 300.0, "quick": False,
                "unconfined_sql": False, "precision": 0.03, "budget": 480.0, "max_trials": 80,
                "allow_idle_halt": False, "rows": None}


@dataclass
class Prepared:
    runner: Any                   # run.Runner, ready to run
    resume: Resume | None         # the stored run carried on, or None for a new run
    cells: int = 0                # a resumed run: the cells it measures,
    complete: int = 0             # of them, those complete already,
    to_measure: int = 0           # and the trials still to measure
    target_from: str | None = None  # where the target came from when none was given (DATABASE_URL)


def prepare(request: Any, skipped: Callable[[Skipped], None] = lambda s: None) -> Prepared:
    """The run ``request`` asks for, ready to run; ``skipped`` is told of every target, path
    or method left out (and why) as selection decides."""
    from ..suite.limits import check_for_dbms
    from ..suite.loader import load

    if _asks_adhoc(request) and (request.suite or request.resume):
        raise InputError(f"{'--suite' if request.suite else '--resume'} and --sql/--sql-file: one or the other "
                         f"({'--resume carries on the stored run with its own statements' if request.resume else '--save-suite FILE keeps statements as a suite'})")
    resume, suite = _resume(request) if request.resume else (None, None)
    for key, value in RUN_DEFAULTS.items():  # options not given (nor kept by a resumed run): their defaults
        if getattr(request, key) is None:
            setattr(request, key, value)
    if suite is None:
        suite = _adhoc(request) if _asks_adhoc(request) else load(request.suite, quick=request.quick, rows=request.rows)
    _sizable(suite, request.rows)
    suite = suite.with_steps(getattr(request, "step", None))  # --step: the steps named, as a resumed run kept them
    target_from = _existing_targets(request, suite)
    if request.cluster is not None:
        request.path = _cluster_paths(request)
        request.target = request.target or servers()  # embedded engines have no clients elsewhere
    try:
        selection = select(suite, request.method, request.path, request.target)
    except Refused as e:  # what a resumed run measured can no longer be measured here
        for one in e.skipped:
            skipped(one)
        if resume:
            raise resume.refusal(str(e)) from None
        raise
    for one in selection.skipped:
        skipped(one)
    if suite.existing:  # a managed or embedded target holds the --data file it can load
        from ..targets.datafile import assign

        assign(selection.targets, getattr(request, "data", None) or [])
    if request.cluster is not None:
        _cluster_targets(selection.targets)
    for dbms in dict.fromkeys(t.dbms for t in selection.targets):  # what each DBMS would refuse, before anything runs
        check_for_dbms(suite, dbms)
    # the heavy imports (numpy) after the input is known to be good: a mistake is told at once
    from ..store import Store
    from .plan import variant_plan
    from .run import RunOptions, Runner

    options = RunOptions(
        trials=request.trials, warmup=request.warmup, max_warmup=request.max_warmup, timeout=request.timeout,
        quick=request.quick, workdir=request.workdir, unconfined_sql=request.unconfined_sql,
        cluster=request.cluster, raw_latencies=request.raw_latencies, allow_idle_halt=request.allow_idle_halt,
        precision=request.precision, budget=request.budget, max_trials=request.max_trials,
        label=request.label if request.label is not None or not resume else resume.settings.get("label"),
        steps=getattr(request, "step", None), profile=getattr(request, "profile", 0.0) or 0.0, rows=request.rows,
    )
    store = resume.store if resume else Store(request.store)
    done = resume.done() if resume else None
    runner = Runner(suite, selection.targets, selection.paths, selection.methods, store, options, done=done)
    if not done:
        return Prepared(runner, None, target_from=target_from)
    cells = [c for _, _, groups in variant_plan(suite, selection.targets, selection.paths, selection.methods)
             for g in groups for c in g]
    return Prepared(runner, resume, len(cells), *done.summary(cells, options.trials))


def _sizable(suite, rows: int | None) -> None:
    """``--rows`` only where the suite has a table whose size is the reader's to choose (--sql's
    and a resumed run's suite too: an option never silently does nothing)."""
    if rows is not None and not any(t.quick_rows is not None for v in suite.variants for t in v.tables):
        raise InputError(f"--rows {rows}: suite {suite.name} has no table whose size is the reader's to choose "
                         "(a table with quick_rows, as the transfer suite's lineitem): its sizes are its own")


def _existing_targets(request: Any, suite) -> str | None:
    """A run over existing data measures a server someone runs (a URL, or env) — with no
    --target, the one DATABASE_URL names — or a managed target given its data (--data). Returns
    where the target came from, when it was not given."""
    if not suite.existing:
        if getattr(request, "data", None):
            raise InputError("--data goes with --sql, --sql-file or a suite with data = \"existing\"")
        return None
    what = "--sql" if _asks_adhoc(request) else f"suite {suite.name} (data = \"existing\")"
    found = None
    if request.target is None and getattr(request, "data", None):
        from ..targets.datafile import targets_for

        request.target = targets_for(request.data)
    if request.target is None:
        if not os.environ.get("DATABASE_URL", "").strip():
            raise InputError(f"{what} reads the data already on a server: give --target URL (postgresql://user@host/db, "
                             "mariadb://…) or --target env (DATABASE_URL, libpq's PG* variables, MariaDB's option files)")
        request.target, found = ["env"], "DATABASE_URL"
    return found


ADHOC_ONLY = ("param", "mode", "iterations", "save_suite")  # options that shape --sql's suite


def _asks_adhoc(request: Any) -> bool:
    asked = bool(getattr(request, "sql", None) or getattr(request, "sql_file", None))
    for name in ADHOC_ONLY:
        if not asked and getattr(request, name, None):
            raise InputError(f"--{name.replace('_', '-')} goes with --sql or --sql-file")
    return asked


def _adhoc(request: Any):
    """The suite --sql and --sql-file make (suite/adhoc.py), read as any suite is."""
    from ..suite.adhoc import from_request
    from ..suite.loader import parse

    text, source = from_request(request)
    return parse(text, source, quick=request.quick, rows=request.rows)


def _resume(request: Any):
    """The stored run ``--resume`` names and its suite. Options given must agree with the run;
    the others take its values (in ``request``). Refused with one line before anything runs."""
    from .. import targets as targets_mod
    from ..paths import parse as parse_path
    from ..store import Store
    from ..store.backend import must_exist
    from .resume import KEPT

    def target_name(spec: str) -> str:
        try:
            return targets_mod.make(spec).name
        except targets_mod.TargetUnavailable as e:
            raise InputError(f"--target {spec}: {e}") from None

    must_exist(request.store)
    resume = Resume(Store(request.store), request.resume)
    resume.check(getattr(request, "trials", None))
    dest = lambda option: option[2:].replace("-", "_")  # noqa: E731
    for option, value in resume.settings_for({option: getattr(request, dest(option)) for option, _ in KEPT}).items():
        setattr(request, dest(option), value)
    stored_cluster = resume.settings.get("cluster")  # the run's clients stay where they were
    if request.cluster is not None and request.cluster.text != stored_cluster:
        raise resume.refusal(f"--cluster {request.cluster.text} differs from the run's {stored_cluster or '(none)'} "
                             "(a resumed run keeps its settings; start a new run for other ones)")
    if stored_cluster:
        from ..cluster import parse as parse_cluster

        request.cluster = parse_cluster(stored_cluster)
    suite = resume.suite(request.suite)
    request.target = resume.target_specs(request.target, target_name)
    request.path = resume.paths(request.path, lambda name: parse_path(name).name)
    request.method = resume.methods(request.method)
    return resume, suite


def _cluster_paths(request: Any) -> list[str]:
    """--cluster's hosts reach the targets over the network: tcp, whatever --path said."""
    from ..cluster.local import local_missing
    from ..targets import EMBEDDED, dbms_of

    if request.cluster.local and (why := local_missing()):
        raise InputError(f"--cluster {request.cluster.text}: {why}")
    embedded = [t for t in request.target or [] if dbms_of(t) in EMBEDDED]  # sqlite@3.40 too (refused later)
    if embedded:
        raise InputError(f"--target {','.join(embedded)}: embedded, so no client of it can run on another host; "
                         f"--cluster measures servers ({', '.join(servers())}, or a server's URL)")
    other = [p for p in request.path or [] if p != "tcp"]
    if other:
        raise InputError(f"--path {','.join(other)}: with --cluster the clients on the cluster's hosts reach the "
                         "targets over tcp only; measure other paths in a run of their own")
    return ["tcp"]


def _cluster_targets(targets) -> None:
    """Every target reachable from the cluster's hosts: a managed server listens on their
    network (it must be able to), an external one is reached at its own address."""
    for target in targets:
        if target.managed and "netem" not in target.helps:
            raise InputError(f"--cluster: {target.name} cannot serve another host's clients (it is embedded, or "
                             "cannot listen on another network); leave it out with --target")
