"""The five studies as recipes for `accessbench reproduce`: each study's built-in suite at the
study's own parameters, the methods that measure its claims, and the claims themselves
(studies/claims.py) judged on the runs it makes.

A full reproduction runs the suites at full size with the methods each study set side by side
(S1 and S3 compared methods: every one available; S2 record I/O, embedded SQL, the CLI and
JDBC; S4 one C CLI program: ODBC; S5 one driver per language); ``--quick`` shrinks the
suites' iterations and keeps to the methods the claims name, so that all five finish in
minutes."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import claims
from ..errors import InputError

if TYPE_CHECKING:
    from ..store.model import Run
    from .estimate import Estimate

# The upgrade study's psycopg versions (before and after PR #1187, today's pinned) and psycopg2.
UPGRADE = ["py-psycopg@3.2.10", "py-psycopg@3.2.11", "py-psycopg", "py-psycopg2"]
# The C methods: S4's "C CLI program" (ODBC is the CLI) and the native APIs beside it.
C_NATIVE = ["c-odbc", "c-libpq", "c-libmariadb", "c-sqlite"]
# S3's question in PHP and C++: the generic interface (PDO, SOCI) and the vendor's own binding.
# "Don't Hold My Data Hostage"'s grid, on accessbench's latency proxy: 0.1, 1, 10 and 100 ms
# of latency (each way, as netem on loopback delays every packet) by 10, 100 and 1,000 Mbit/s,
# each point plain and, for MariaDB, with its protocol's compression; loopback and in process
# beside them. --quick: the grid's least and greatest delay by its two wider links (at 100,000
# rows a read at 10 Mbit/s takes 10–20 s, so five trials of every cell would not fit in minutes).
def _grid(delays: list[str], links: list[str]) -> list[str]:
    points = [f"tcp+{d}@{b}" for d in delays for b in links]
    return ["tcp", "tcp+compress", *points, *(f"{p}+compress" for p in points)]


HOSTAGE_PATHS = [*_grid(["100us", "1ms", "10ms", "100ms"], ["1gbit", "100mbit", "10mbit"]), "inproc"]
HOSTAGE_QUICK_PATHS = [*_grid(["100us", "100ms"], ["1gbit", "100mbit"]), "inproc"]
# tfb --quick: one tier method per page language, each on its driver for PostgreSQL
TFB_QUICK = ["php-apache-pdo-pgsql", "py-gunicorn-psycopg", "node-http-pg", "rb-puma-pg", "pl-starman-pg"]
GENERIC_INTERFACES = ["php-pgsql", "php-pdo-pgsql", "php-mysqli", "php-pdo-mysql", "php-sqlite3", "php-pdo-sqlite",
                      "cpp-libpqxx", "cpp-soci-pg"]


@dataclass(frozen=True)
class Recipe:
    study: str                          # "s1" … "s5"
    title: str                          # the study in a few words
    suite: str                          # its built-in suite
    parameters: str                     # the study's own parameters, as the reproduction honours them
    methods: list[str] | None           # a full reproduction's (None: every default method)
    quick_methods: list[str]            # --quick's: the methods its claims name
    targets: list[str] | None = None    # None: every DBMS the methods reach
    paths: list[str] | None = None      # None: the suite's
    quick_targets: list[str] | None = None
    quick_paths: list[str] | None = None  # None: as a full reproduction's
    quick_steps: list[str] | None = None  # None: every step of the suite
    trials: int = 5
    # A full reproduction's own trials (a fixed count: no trials added for precision) and
    # warm-ups, where its trials are long (None: as quick, with the precision target)
    full_trials: int | None = None
    full_warmup: int | None = None
    full_timeout: float | None = None  # seconds a worker may take to answer, where a trial is long
    quick_warmup: int | None = None    # --quick's warm-ups a cell (None: the run's default)
    in_all: bool = True                 # reproduced by `reproduce all` (the five seed studies)
    beside: str | None = None           # the published figures its own tables are read beside
    suite_table: bool = False           # its suite's study table in the studies report (tfb's requests/s
                                        # per test and their ratios: figures its claims and its other tables lack)


RECIPES = {r.study: r for r in [
    Recipe("s1", "records per second by access method (AS/400, c. 2001)", "s1-rps",
           "WEBTEMP2's 6,071 rows read whole; best of 5 trials beside the median",
           ["all"],
           ["c-odbc", "c-libpq", "c-libmariadb", "java-pgjdbc", "py-psycopg", "py-sqlalchemy-core+psycopg",
            "py-sqlalchemy-orm+psycopg", "rb-pg", "rb-activerecord+pg"],
           quick_targets=["postgresql", "mariadb"]),
    # S2 set native record I/O, embedded SQL, the CLI and JDBC side by side on MySQL's engines.
    Recipe("s2", "native I/O vs SQL vs JDBC vs MySQL's engines (IBM i, 2009)", "s2-rowops",
           "seconds per 1,000 records; the index lesson on 500,000 rows",
           ["c-libmariadb", "c-odbc", "java-mariadb"], ["c-libmariadb", "java-mariadb"],
           targets=["mariadb"], quick_targets=["mariadb"]),
    Recipe("s3", "APIBench: ODBC vs the native API (Oracle, 1995 and 2002)", "s3-apibench",
           "2,500 employees; each query type executed five times",
           None, [*C_NATIVE, "go-pgx", "node-mysql2", *GENERIC_INTERFACES]),
    # S4 timed one C CLI program: ODBC. A trial of a million statements is itself a mean of a
    # million, and 250 µs away it lasts about ten minutes (so each may take half an hour before
    # it is called hung): four trials, the fewest a Mann-Whitney test can call significant, and
    # the verification pass (the same million, untimed, on the same connection) is the warm-up,
    # so a full reproduction adds none.
    Recipe("s4", "local vs remote access (DB2 for z/OS, 2005)", "s4-roundtrip",
           "1,000,000 statements in the loop (--quick: 2,000)",
           ["c-odbc"], C_NATIVE[:2], targets=["postgresql"], full_trials=4, full_warmup=0, full_timeout=1800.0),
    # S5 as it was run: web pages under ab -c 10 for 15 s (s5-web), PHP first, the other stacks
    # beside; S5 ran ab once per page: four trials of 15 s, the fewest that can tell a difference.
    Recipe("s5", "persistent connections under web load (IBM i, c. 2012)", "s5-web",
           "ab -c 10 for 15 s a trial (--quick: 2 s, ab's whole seconds)",
           ["php-apache-pgsql", "php-apache-pdo-pgsql", "php-apache-mysqli", "php-apache-pdo-mysql",
            "py-gunicorn-psycopg", "node-http-pg"],
           ["php-apache-pgsql"], quick_targets=["postgresql"], full_trials=4),
    # Not a seed study: the field's yardstick for moving a result out (Raasveldt and Mühleisen,
    # VLDB 2017): lineitem read whole by every method over the paper's latency × bandwidth grid,
    # each beside the wire's floor (its netcat). A full reproduction reads 1,000,000 rows a time,
    # minutes a read at 10 Mbit/s: four trials, the fewest a Mann-Whitney test can call
    # significant (with three, every ratio claim would be "not reproduced" for the count alone),
    # the verification pass the warm-up (as S4).
    Recipe("hostage", "moving a result out: every protocol against the wire (Raasveldt and Mühleisen, 2017)",
           "transfer", "lineitem read whole (1,000,000 rows; --quick 100,000; --rows N) on loopback and a grid of 0.1–100 ms "
           "× 10–1,000 Mbit/s (--quick: 0.1 and 100 ms × 100 and 1,000 Mbit/s)",
           ["transfer"], ["c-odbc", "c-libpq", "c-libmariadb", "wire-floor"],
           targets=["postgresql", "mariadb", "sqlite", "duckdb"], paths=HOSTAGE_PATHS,
           quick_targets=["postgresql", "mariadb"], quick_paths=HOSTAGE_QUICK_PATHS,
           full_trials=4, full_warmup=0, full_timeout=1800.0, in_all=False,
           beside="the paper (lineitem at SF10, 60 million rows, over loopback, each system's ODBC driver): netcat "
                  "10.25 s; MySQL 101.3 s (9.9× the wire); PostgreSQL 202 s (19.7×); MySQL with compression "
                  "391.3 s (38.2×); and as latency grows or bandwidth falls, each protocol's × the wire falls and "
                  "compression starts to pay"),
    # Not a seed study: TechEmpower's database tests (suites/tfb.toml) on every tier method under
    # wrk, as its rounds run them: each test at 16 to 256 connections, 15 s each. Its 60 steps of
    # 15 s make a full reproduction hours long: four trials each, the fewest a Mann-Whitney test
    # can call significant. --quick: the tests at 64 connections, one method per page language on
    # PostgreSQL (at 256, Node's one connection a process answers 20 updates slower than a quick
    # trial's 1.5 s lasts). Three warm-ups of 1.5 s a cell, as TechEmpower primes each test for 5 s
    # before it measures: Node's pages serve their first seconds of load compiling (V8), and one
    # warm-up left its first step's first two trials 22% and 7% below its last three's median.
    Recipe("tfb", "TechEmpower's database tests: single query, multiple queries, fortunes, updates (2013–)", "tfb",
           "wrk at 16, 32, 64, 128 and 256 connections, 15 s a test (--quick: 64 connections, 1.5 s)",
           ["web/load=wrk"], [f"{m}/load=wrk" for m in TFB_QUICK], quick_targets=["postgresql"],
           quick_steps=["db-c64", "queries-1-c64", "queries-20-c64", "fortunes-c64", "updates-20-c64"],
           full_trials=4, quick_warmup=3, in_all=False, suite_table=True),
    # Not a seed study: the published figures a cloud user checks their connections against
    # (studies/claims.py), on every login method, and a full reproduction on every server version.
    Recipe("connections", "connections in production: TLS, logins, poolers, latency (2019–2024)", "connections",
           "10 clients for 15 s a loaded trial (--quick: 1.5 s); 300 connects a trial (--quick: 30)",
           None, ["c-libpq", "c-libmariadb", "py-psycopg", "py-pymysql"],
           targets=["postgresql@13", "postgresql@14", "postgresql@15", "postgresql@16", "postgresql@17",
                    "postgresql@18", "postgresql?auth=md5", "postgresql?auth=scram", "mariadb",
                    "mariadb?auth=ed25519"],
           quick_targets=["postgresql", "postgresql?auth=md5", "postgresql?auth=scram", "mariadb"],
           in_all=False),
    # Not a seed study: S1's question ("every layer above the API costs") asked of today's ORMs,
    # query builders and row mappers as their users write them, on the workload Diesel's and
    # the Go ORM benchmarks use (suites/orm.toml): every layer beside the driver it runs on.
    Recipe("orm", "layers as their users write them: the ORM benchmarks' workload (Diesel, Go ORMs)", "orm",
           "users × posts × comments; 1 to 10,000 rows, a slice, a page, a join, an aggregate, multi-row inserts, "
           "100 × 10 × 10 loaded lazily, joined and select-in",
           ["layers"], ["layers"], quick_targets=["postgresql", "mariadb", "sqlite"], in_all=False),
    # Not a seed study: an upgrade, as psycopg's PR #1187 measured it — the same read by the
    # driver before and after, and today's pinned version and psycopg2 beside them (the versions
    # are installed side by side: methods/versions.toml).
    Recipe("upgrade", "did the upgrade help? psycopg 3.2.10 against 3.2.11 (PR #1187), psycopg2 beside",
           "psycopg-upgrade", "1,000,000 rows × 10 text columns read whole (--quick: 100,000)",
           UPGRADE, UPGRADE, targets=["postgresql"], quick_targets=["postgresql"], in_all=False),
]}


# Seconds each study's reproduction took on the 2-core machine of the README's Studies table
# (Debian 12, 2 vCPU, 24 GiB): what `reproduce` expects before any run of its own is stored.
# Measured 2026-11-27 by `accessbench reproduce all --quick` from a clean clone (6 min 6 s in
# all, S5 as s5-web by `reproduce s5 --quick`).
# connections: `accessbench reproduce connections --quick`, 2026-11-29 (22 min 6 s: its loaded
# cells, 10 clients for 1.5 s a trial on 22 paths and logins, are most of it, in batches).
# upgrade: `accessbench reproduce upgrade --quick`, 2026-11-29.
# hostage, tfb: `accessbench reproduce tfb hostage --quick` from a clean clone on a quiet machine,
# 2026-12-01 (17 min 24 s). hostage 7 min 54 s: servers, the proxies' calibration at 100 ms and
# lineitem's load are a third of it; tfb 9 min 28 s: a page language a minute and three quarters.
# s1, s3: `accessbench reproduce s1 s3 --quick`, 2026-11-30, with the ten languages' methods
# (S1 adds rb-pg and rb-activerecord+pg, S3 the PHP and C++ pairs), on a quiet machine.
# orm: `accessbench reproduce orm --quick`, 2026-12-01, in a clean clone (8 min 46 s: 51 methods,
# 26,612 trial units; the hour's host ran the unchanged tests a fifth slower than the day before).
REFERENCE_QUICK: dict[str, float] = {"s1": 208.0, "s2": 53.0, "s3": 52.0, "s4": 26.0, "s5": 82.0,
                                     "connections": 1326.0, "upgrade": 27.0, "hostage": 474.0, "tfb": 568.0,
                                     "orm": 526.0}
# Measured 2026-11-27 by `accessbench reproduce all` from a clean clone; upgrade by `accessbench
# reproduce upgrade` from a fresh clone, 2026-11-30 (13 min 18 s, most of it trials for ±3%).
# s3: `accessbench reproduce s3`, 2026-11-30, with the 50 default methods of ten languages (30 min
# 28 s, its last ten minutes beside a build in another clone).
REFERENCE_FULL: dict[str, float] = {"s1": 3811.0, "s2": 546.0, "s3": 1828.0, "s4": 3581.0, "s5": 2825.0,
                                    "upgrade": 798.0}


def resolve(names: list[str]) -> list[Recipe]:
    """Recipes by study name (s1 … s5, connections, or all: the five seed studies), in study
    order; an unknown name is an input error."""
    if not names or "all" in names:
        return [r for r in RECIPES.values() if r.in_all or r.study in (names or [])]
    unknown = [n for n in names if n.lower() not in RECIPES]
    if unknown:
        raise InputError(f"reproduce {unknown[0]}: no such study (choose from {', '.join(RECIPES)} or all)")
    wanted = {n.lower() for n in names}
    return [r for r in RECIPES.values() if r.study in wanted]


LABEL = "reproduce {study}"  # the label each study's run is stored under


def run_arguments(recipe: Recipe, args) -> "argparse.Namespace":
    """The `run` options of a study's run: its suite, methods, targets and paths; --quick keeps
    to the methods its claims name and drops the precision target (a fixed trial count keeps
    the time known)."""
    import argparse

    from ..methods import select

    quick = bool(args.quick)
    # --target, --path, --method as `run` takes them: the study on the user's own server
    targets = (recipe.quick_targets or recipe.targets) if quick else recipe.targets
    given = getattr(args, "target", None)
    # --quick on targets of no DBMS its claims name (hostage on DuckDB alone): the study's own
    # methods, at --quick's size, rather than the claims' methods that reach none of them
    names = recipe.quick_methods if quick and not (given and _other_dbms(given, targets)) else recipe.methods
    if names is not None and "all" not in names:  # a method this machine lacks is left out, not refused
        names = [m.name for m in select(names) if not m.missing()] or names
    return argparse.Namespace(
        store=args.store, suite=recipe.suite, method=getattr(args, "method", None) or names,
        target=given or targets,
        path=getattr(args, "path", None) or _offered((recipe.quick_paths if quick else None) or recipe.paths,
                                                     given or targets),
        trials=recipe.trials if quick else recipe.full_trials or recipe.trials,
        precision=0.0 if quick or recipe.full_trials else None, budget=None, max_trials=None,
        warmup=recipe.quick_warmup if quick else recipe.full_warmup,
        max_warmup=None, quick=quick, timeout=args.timeout or (None if quick else recipe.full_timeout),
        workdir=None, report_dir=args.report_dir, rows=getattr(args, "rows", None),
        no_report=False, resume=None, unconfined_sql=False, cluster=None, raw_latencies=False,
        allow_idle_halt=getattr(args, "allow_idle_halt", None), step=recipe.quick_steps if quick else None,
        label=LABEL.format(study=recipe.study),
        width=getattr(args, "width", None), wide=False)


def _other_dbms(given: list[str], targets: list[str] | None) -> bool:
    """Whether the targets the user gave are all of DBMSs other than the study's ``targets``
    (False where either cannot be made here: `run` says why)."""
    from .. import targets as targets_mod
    from ..targets.base import TargetUnavailable

    try:
        mine = {targets_mod.make(spec).dbms for spec in given}
        its = {targets_mod.make(spec).dbms for spec in targets or []}
    except (TargetUnavailable, InputError):
        return False
    return bool(its) and not mine & its


def _offered(paths: list[str] | None, targets: list[str] | None) -> list[str] | None:
    """A study's own paths, less those none of its run's targets can carry (the hostage study's
    in-process reads where only servers are measured, its proxied ones on DuckDB alone): the
    study's paths are its default, not a demand, and `run` refuses a named path no target
    offers. A target that cannot be made here keeps them all (`run` says why it cannot)."""
    from .. import targets as targets_mod
    from ..paths import parse
    from ..targets.base import TargetUnavailable

    if not paths or not targets:
        return paths
    try:
        offered = {ride for spec in targets for ride in targets_mod.make(spec).paths}
    except (TargetUnavailable, InputError):
        return paths
    return [p for p in paths if parse(p).rides_on in offered] or paths


def study_run(stored) -> "claims.StudyRun":
    from ..stats.cells import analyse

    return claims.StudyRun(stored.run.id, stored.suite, analyse(stored))


def _reproductions(store, recipe: Recipe) -> list["Run"]:
    """The stored runs of a study's reproduction, newest first."""
    return [run for run in store.runs(limit=10_000) if study_of(run) == recipe.study]


def study_of(run: "Run") -> str | None:
    """The study whose reproduction a stored run is (by its label and suite), or None: what a
    study's claims are read from, and where a resumed one ends by saying they are judged."""
    label = run.settings.get("label")
    return next((r.study for r in RECIPES.values()
                 if label == LABEL.format(study=r.study) and run.suite == r.suite), None)


def shown(runs: list["Run"]) -> "Run | None":
    """Which of a study's stored reproductions (newest first) its claims are read from: the newest
    that completed; a run stopped by Ctrl-C or a fault only where none completed, so that an
    interrupted attempt never hides the finished one before it."""
    complete = [r for r in runs if r.status == "complete"]
    return (complete or runs or [None])[0]


def newest_runs(store, recipes: list[Recipe]) -> dict[str, "claims.StudyRun"]:
    """The newest stored reproduction of each study (any size), as the claims read it."""
    found = {}
    for recipe in recipes:
        if (run := shown(_reproductions(store, recipe))) is not None:
            found[recipe.study] = study_run(store.load(run.id))
    return found


def expected_time(store, recipes: list[Recipe], quick: bool, given=None) -> str:
    """What the reproduction will take, from the last one of the same size in this store; or,
    where there is none, the time it took on the 2-core machine the README's table comes from;
    or, for a study measured on neither whose trials last as long as its suite says, more than
    those trials' durations together; or, for one whose reads last as long as they take, an
    estimate from a stored run of its suite (studies/estimate.py). ``given``: the user's
    options (--target, --path, --method), as the runs will take them."""
    from ..report.live import clock_text

    parts: list[str] = []
    sources: set[str] = set()
    total, more, unknown = 0.0, False, False
    rows = getattr(given, "rows", None)  # --rows: only a run of that size says how long it takes
    for recipe in recipes:
        past = [r for r in _reproductions(store, recipe)
                if bool(r.settings.get("quick")) == quick and r.settings.get("rows") == rows
                and r.status == "complete" and r.finished_at]
        if past:
            seconds = _elapsed(past[0])
            parts.append(f"{recipe.study} {clock_text(seconds)} (as last time here)")
        elif rows is None and recipe.study in (reference := REFERENCE_QUICK if quick else REFERENCE_FULL):
            seconds = reference[recipe.study]
            parts.append(f"{recipe.study} {clock_text(seconds)}*")
            sources.add("* as on a 2-core reference machine")
        elif (seconds := fixed_seconds(recipe, quick, given)) is not None:
            # a suite whose every step lasts as long as it says (a loaded step: tfb's) is known
            # from below before anything runs
            parts.append(f"{recipe.study} over {clock_text(seconds)}†")
            sources.add("† the fixed durations of its warm-ups and trials, every cell measured; servers, loads "
                        "and verification come on top")
            more = True
        elif (guess := estimated(store, recipe, quick, given)) is not None:
            seconds = guess.seconds
            short = (f", {guess.unknown} of its {guess.cells} cells not estimated: that run did not time their "
                     "method on their target over loopback and on a path with a bandwidth (a "
                     f"`reproduce {recipe.study} --quick` with the same --target and --method stores them)"
                     if guess.unknown else "")
            parts.append(f"{recipe.study} {'over ' if guess.unknown else ''}{clock_text(seconds)}‡")
            sources.add(f"‡ estimated from run {guess.source}: each method's time per row over loopback and bytes "
                        f"per row on the wire there, at this size and each path's link and delay{short}; servers, "
                        "proxies and the table's load come on top")
            more = more or bool(guess.unknown)
        else:
            # a full grid read as long as it reads: its --quick run's figures estimate it
            first = (f" (a `reproduce {recipe.study} --quick` first, about {clock_text(REFERENCE_QUICK[recipe.study])} "
                     "on the reference machine, stores the figures that estimate it)"
                     if not quick and recipe.study in REFERENCE_QUICK and not _fixed_steps(recipe) else "")
            parts.append(f"{recipe.study} not known{first}")
            unknown = True
            continue
        total += seconds
    what = f"reproducing {len(recipes)} stud{'y' if len(recipes) == 1 else 'ies'}{' (--quick)' if quick else ''}"
    expected = ("time not known" if unknown else f"over {clock_text(total)}" if more else f"about {clock_text(total)}")
    return f"{what}: expected {expected} — " + ", ".join(parts) + "".join(f" ({s})" for s in sorted(sources))


def estimated(store, recipe: Recipe, quick: bool, given=None) -> "Estimate | None":
    """The reads of a study whose suite reads as long as it takes, estimated from the newest
    stored run of that suite (its own reproductions first, of any size): None where there is
    none, or where its steps last as long as they say."""
    from ..stats.cells import analyse
    from ..suite.loader import load
    from . import estimate

    suite = load(recipe.suite, quick=quick, rows=getattr(given, "rows", None))
    if _fixed_steps(recipe, suite):
        return None
    runs = _reproductions(store, recipe) or [r for r in store.runs(limit=10_000) if r.suite == recipe.suite]
    stored = next((store.load(r.id) for r in runs if store.measured(r.id)), None)
    if stored is None or (plan := _planned(recipe, quick, given, suite)) is None:
        return None
    args, planned = plan
    reads = _runs_per_cell(args) + 1  # + the verification pass
    rows = max(t.rows for v in suite.variants for t in v.tables)
    cells = [(target.name, method.name, path.name) for target, method, path in planned]
    return estimate.estimate(cells, rows, reads, estimate.rates(analyse(stored)), stored.run.id)


def _fixed_steps(recipe: Recipe, suite=None) -> bool:
    """Whether a step of the study's suite lasts as long as it says (a loaded one), rather than
    as long as its reads take."""
    from ..suite.loader import load

    suite = suite or load(recipe.suite, quick=True)
    return any(s.duration for v in suite.variants for s in v.steps)


def _planned(recipe: Recipe, quick: bool, given, suite) -> "tuple[argparse.Namespace, list] | None":
    """The run a reproduction will start (``run_arguments``, with the user's --target, --path and
    --method) and its cells as (target, method, path): every method this machine has, on each
    target of its DBMS, on each path that target does not refuse. None where a named target
    cannot be made here (`run` will say why); one of the default targets that cannot is skipped,
    as `run` skips it."""
    import argparse

    from .. import targets as targets_mod
    from ..methods import select
    from ..paths import parse as parse_path
    from ..targets.base import TargetUnavailable

    options = {key: getattr(given, key, None) for key in ("target", "path", "method", "rows")}
    args = run_arguments(recipe, argparse.Namespace(store=None, timeout=None, report_dir=None, quick=quick, **options))
    targets = []
    for spec in args.target or targets_mod.by_default():  # as `run` takes them: named, or every one here
        try:
            targets.append(targets_mod.make(spec))
        except (TargetUnavailable, InputError):
            if args.target:
                return None
    paths = [parse_path(p) for p in args.path or suite.paths or ["tcp"]]
    return args, [(t, m, p) for m in select(args.method) if not m.missing() for t in targets
                  if t.dbms in m.dbms for p in paths if not p.refuses(t)]


def _runs_per_cell(args) -> int:
    """How often each cell of a study's run (``run_arguments``) is measured: its trials and warm-ups."""
    from ..runner.run import RunOptions

    return args.trials + (RunOptions.warmup if args.warmup is None else args.warmup)


def fixed_seconds(recipe: Recipe, quick: bool, given=None) -> float | None:
    """The seconds a reproduction's warm-ups and trials last where every step it runs is a loaded
    one (its duration each), over the cells its run will plan (``_planned``: the user's --target,
    --path and --method taken as the run takes them); else None."""
    from ..runner.plan import on_path
    from ..suite.loader import load

    suite = load(recipe.suite, quick=quick)
    plan = _planned(recipe, quick, given, suite)
    if plan is None:
        return None
    args, planned = plan
    steps = [s for v in suite.variants for s in v.steps if args.step is None or s.name in args.step]
    if not steps or any(not s.duration for s in steps) or not args.method or "all" in args.method:
        return None  # a step that lasts as long as it takes; every method (what reaches what: the run's)
    per_cell = _runs_per_cell(args)
    return per_cell * sum(float(s.duration) for _, _, path in planned for s in steps if on_path(s, path.name))


def _elapsed(run: "Run") -> float:
    from datetime import datetime

    return (datetime.fromisoformat(run.finished_at) - datetime.fromisoformat(run.started_at)).total_seconds()
