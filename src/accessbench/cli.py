"""accessbench's command line: parse, call, print. Everything else lives in the modules."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys

from rich import box
from rich.console import Console
from rich.table import Table

from . import __version__
from . import formatting as fmt
from . import paths
from .errors import Fault, InputError, first_line
from .runner.cleanup import end_like_ctrl_c
from .store.backend import is_server, must_exist, shown
from .targets.url import redact
from .export.formats import FORMATS
from .stats.views import VIEWS

DEFAULT_STORE = "accessbench.db"
EXAMPLES = """\
examples:
  accessbench run                                  the quick suite on managed PostgreSQL and MariaDB (unix, tcp), SQLite and DuckDB
  accessbench run --quick --budget 3min            the same at --quick sizes: make quickstart's run
  accessbench run --quick --target sqlite          a smoke run under a minute, no server needed
  accessbench run --method py-psycopg,py-asyncpg --path tcp --trials 10
  accessbench run --target postgresql://me@db:5432/app   an external server: the run works in a schema and role of its own
  accessbench run --target mariadb://me:pw@db:3306/      likewise, in a database and user of its own
  accessbench clean --target postgresql://me@db/app      what runs killed outright left there; --yes removes it
  accessbench run --quick --target postgresql@13,postgresql,postgresql@18   PostgreSQL 13, 15 and 18 side by side
  accessbench run --suite s5-connections --target 'postgresql?auth=md5,postgresql?auth=scram'   what each login costs
  accessbench run --suite my-suite.toml            your own suite (see docs/suites.md)
  accessbench run --target env --sql 'SELECT name FROM visitors WHERE id = ?' --param 'uniform(1, 5000)'
                                                   your query on your data (DATABASE_URL, PG*, ~/.my.cnf), read-only
  accessbench run --sql-file queries.sql --data app.db   statements over a copy of an SQLite file (or a dump)
  accessbench show last --full                     every table of a run, not just its verdicts and ranking
  accessbench methods                              what can be measured here, and why not
  accessbench runs ; accessbench show last         stored runs, and one run's report again
  accessbench show last --view best                the same trials by study S1's rule (also: mean, per1000)
  accessbench compare last --base c-libpq          every method against one, step by step (S3's table)
  accessbench compare RUN_A RUN_B                  two runs of a suite: what changed, and is it significant
  accessbench report last                          the HTML report again (reports/accessbench-RUN.html)
  accessbench export last --format csv             one row per cell; --format json for the whole run
  accessbench --store postgresql://me@db/team runs       a team's shared store (schema accessbench_results)
  accessbench copy last --to postgresql://me@db/team     a run of this file copied to the team's store
"""

VIEW_HELP = ("how each step's figure is taken from the trials: median (default: median with a 95%% bootstrap CI), "
             "best (best of N, study S1), mean (mean, min and max time per unit, study S3), per1000 (seconds per "
             "1,000 units, study S2)")
DEFAULT_REPORTS = "reports"
STORE_HELP = (f"where runs are kept: a SQLite file (default ./{DEFAULT_STORE}), or postgresql://[user@]host[:port]/db, "
              "a store a team shares in that database's schema accessbench_results (made and migrated by "
              "accessbench, nothing else touched; a password in the URL is used, never kept: PGPASSWORD and "
              "~/.pgpass work too)")
RUN_HELP = "run id, a unique prefix of one, 'last', or FILE.db:RUN for a run in another results file"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2, named once: "accessbench:
    run: …" for a subcommand's, "accessbench: …" for the command's own."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.removeprefix("accessbench").strip()
        raise InputError(f"{command + ': ' if command else ''}{message} (see {self.prog} --help)")


def _latency(text: str) -> float:
    from .paths import parse as parse_path

    try:
        return parse_path(f"tcp+{text}").delay_us
    except InputError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a delay like 250us or 1ms") from None


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _rules(text: str):
    from .stats.gate import parse_rule

    try:
        return [parse_rule(part) for part in _csv(text)]
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _cluster(text: str):
    from .cluster import parse

    try:
        return parse(text)
    except InputError as e:  # argparse would say "invalid value": say what is wrong with it
        raise argparse.ArgumentTypeError(str(e).removeprefix(f"--cluster {text}: ")) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number like 0.05") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _percent(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share like 3% or 0.03") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0% and 100%")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _at_least_one(text: str) -> int:
    value = _positive(text)
    if value < 1:
        raise argparse.ArgumentTypeError("a cell needs at least 1 trial (4 or more for a significance verdict)")
    return value


def _duration(text: str) -> float:
    """'5min', '90s', '300' (seconds) → seconds."""
    t = text.strip()
    for suffix, scale in (("min", 60.0), ("m", 60.0), ("s", 1.0), ("h", 3600.0)):
        if t.endswith(suffix):
            t, unit = t[: -len(suffix)], scale
            break
    else:
        unit = 1.0
    try:
        value = float(t) * unit
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 5min or 90s") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _columns(text: str) -> int:
    value = _positive(text)
    if value < 60:
        raise argparse.ArgumentTypeError(f"{value} is too narrow (60 columns at least)")
    return value


def _add_width_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--width", type=_columns, default=None, metavar="N",
                        help="the report's width in columns (default: the terminal's, or 120 in a pipe or file)")
    parser.add_argument("--wide", action="store_true",
                        help="every column of the step tables, however wide (default: the essential ones and "
                        "what else fits); implies --full")
    parser.add_argument("--full", action="store_true",
                        help="the whole report: every step's table (percentiles, CPU, round trips …), the "
                        "studies' and comparisons' tables, the warnings and what was not measured (default: "
                        "the verdict per step and a ranking, about two screens)")


IDLE_HELP = ("do not hold idle CPUs awake while measuring. By default a run asks the kernel (PM QoS, "
             "/dev/cpu_dma_latency; root) to keep idle CPUs out of deep idle until it ends: on a VM a halted CPU's "
             "wake-up costs tens of µs, more or less with what the host did before, so one-row steps would measure "
             "the VM as much as the method. The run stores which it was")


def build_parser() -> Parser:
    parser = Parser(
        prog="accessbench",
        description="Measure what a database access method really costs: the same data and queries "
        "for every driver, protocol mode and path; verified results; interleaved trials; confidence "
        "intervals; every run kept.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"accessbench {__version__}")
    parser.add_argument("--store", default=DEFAULT_STORE, metavar="STORE", help=STORE_HELP)
    # --store is accepted after the subcommand too (accessbench show --store X last); there it
    # sets nothing unless given, so the command's own default stands.
    store = Parser(add_help=False)
    store.add_argument("--store", default=argparse.SUPPRESS, metavar="STORE", help=STORE_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    add_parser = sub.add_parser
    sub.add_parser = lambda *a, **k: add_parser(*a, parents=[store], **k)  # type: ignore[method-assign]
    for add in (_add_run, _add_stored_runs, _add_compare, _add_outputs, _add_checks):
        add(sub)
    return parser


def _add_run(sub) -> None:
    """`run`: what to measure, where, and what to keep."""
    run = sub.add_parser("run", help="measure a suite and print the comparison",
                         description="Start the targets, load the suite's data, verify every cell, run "
                         "warmups and interleaved trials, store each trial as it ends, print the report.",
                         epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Options a resumed run keeps default to None, so that a given value can be told from a
    # default (filled in by runner.prepare's RUN_DEFAULTS).
    run.add_argument("--suite", default=None, help="built-in suite name or a suite TOML file (default quick)")
    _add_adhoc_options(run)
    run.add_argument("--target", type=_csv, default=None, metavar="T[,T…]",
                     help="postgresql[@VERSION][?auth=METHOD], mariadb[@VERSION][?auth=METHOD] (managed servers; VERSION "
                     "one installed here: postgresql@13 to @18, as make setup installs them, mariadb@10.11; without "
                     "it Debian's PostgreSQL 15 and MariaDB; METHOD how the workers log in: trust, md5, scram "
                     "[&iterations=N, 16 and later] on PostgreSQL, native or ed25519 on MariaDB; without it trust on "
                     "PostgreSQL's socket and SCRAM over TCP, mysql_native_password on MariaDB), sqlite, duckdb "
                     "(embedded), or a "
                     "postgresql:// or mariadb:// URL (default postgresql,mariadb,sqlite,duckdb)")
    run.add_argument("--path", type=_csv, default=None, metavar="P[,P…]",
                     help=f"{paths.HELP} (default: every path each target has)")
    run.add_argument("--step", type=_csv, default=None, metavar="S[,S…]",
                     help="steps of the suite to measure, by name (default: all; `accessbench suites` lists each "
                          "suite's steps, a varied one by each of its names: sel1-extended, sel1-prepared)")
    run.add_argument("--method", type=_csv, default=None, metavar="M[,M…]",
                     help="methods to measure (default: every available one but setting variants and layers; "
                          "`all`: every one, `layers`: every layer and the driver it runs on; see `accessbench methods`)")
    _add_measuring_options(run)
    run.add_argument("--workdir", default=None, metavar="DIR",
                     help="where managed servers and files live during the run (default: a new temp dir)")
    run.add_argument("--report-dir", default=DEFAULT_REPORTS, metavar="DIR",
                     help=f"where the run's HTML report is written at the end (default ./{DEFAULT_REPORTS})")
    run.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    run.add_argument("--resume", default=None, metavar="RUN",
                     help="carry on a stopped run (interrupted, failed or crashed) under its own id: only its missing "
                     "trials are measured, with its settings; RUN is an id, a unique prefix or 'last'. Other options "
                     "given must agree with the run's; give an external --target URL again (passwords are never "
                     "stored)")
    run.add_argument("--unconfined-sql", action="store_true", default=None,
                     help="external servers: let your suite's SQL (setup, reset, check, steps) reach beyond the run's "
                     "own schema or database. Without it that SQL runs as a role (user) made for the run with rights "
                     "there only, and a server where none can be made refuses your suite; built-in suites need no flag")
    run.add_argument("--cluster", default=None, metavar="CLUSTER", type=_cluster,
                     help="run the clients of steps under load (clients, duration, rate) on a Dask cluster's hosts, "
                     "started at one barrier, their latency histograms merged: dask://HOST:PORT (a running scheduler; "
                     "every worker must be built on every host), or local:N[@Xcpu] (N hosts made here, each in its "
                     "own network namespace, optionally held to X CPUs; root). Paths: tcp only. A plain step runs "
                     "on this host")
    run.add_argument("--allow-idle-halt", action="store_true", default=None, help=IDLE_HELP)
    run.add_argument("--raw-latencies", action="store_true",
                     help="steps under load also keep every operation's latency, where the worker can write them "
                     "(Python's), beside the histogram they are summarised in: to check it (large)")
    run.add_argument("--label", default=None, metavar="TEXT",
                     help="a name for the run, shown by `accessbench runs` and in its reports (a resumed run keeps "
                     "its own unless given)")
    _add_width_options(run)
    run.set_defaults(func=cmd_run)


def _add_adhoc_options(run) -> None:
    """`run`'s options for the user's own statements over the data that is there."""
    adhoc = run.add_argument_group(
        "your own statements, over the data that is there",
        "Instead of --suite: each statement becomes a step measured in every protocol mode by every available "
        "method, verified and stored like any run, over the tables already on the target — created nothing, "
        "read-only sessions (the server refuses a write). Give an external --target (a URL, or env).")
    adhoc.add_argument("--sql", action="append", default=None, metavar="STATEMENT",
                       help="a query with ? markers (repeat for several steps)")
    adhoc.add_argument("--param", action="append", default=None, metavar="GENERATOR",
                       help="a ? marker's values, as a generator call: uniform(1, 1000), choice('r', 'i'), "
                            "text('user-####'), const(42), decimal('0.00', '99.99', 2) — one per marker, in order "
                            "(several --sql: each takes as many as it has markers)")
    adhoc.add_argument("--sql-file", default=None, metavar="FILE",
                       help="statements each ended by ; at a line's end, each declared by comment lines before "
                            "it: -- step: NAME, -- param: GENERATOR (docs/suites.md, Ad-hoc statements)")
    adhoc.add_argument("--data", action="append", default=None, metavar="FILE",
                       help="or measure a managed or embedded target holding your data: an SQLite or DuckDB "
                            "database file (copied, opened read-only), a pg_dump archive, or a SQL dump "
                            "(pg_dump, mariadb-dump) loaded into the run's own server (--target postgresql, "
                            "sqlite …; one file per target)")
    adhoc.add_argument("--mode", type=_csv, default=None, metavar="M[,M…]",
                       help="protocol modes to measure: literal, extended, prepared (default: all three)")
    adhoc.add_argument("--iterations", type=_at_least_one, default=None, metavar="N",
                       help="statements a trial runs (default 200; --quick a tenth)")
    adhoc.add_argument("--save-suite", default=None, metavar="FILE",
                       help="also write the statements as a suite TOML file, to keep and run with --suite FILE")


def _add_measuring_options(run) -> None:
    """`run`'s options of how much to measure: trials, precision, warmups, timeouts."""
    run.add_argument("--trials", type=_at_least_one, default=None, metavar="N",
                     help="timed trials per cell before the precision target adds any (default 5, also with "
                          "--quick: a significance test needs at least 4)")
    run.add_argument("--precision", type=_percent, default=None, metavar="PCT",
                     help="add interleaved trials to cells whose median's 95%% CI is wider than ±PCT (3%% or "
                          "0.03), within --budget (default 3%%; 0 turns it off)")
    run.add_argument("--budget", type=_duration, default=None, metavar="TIME",
                     help="time the run may spend on trials added for --precision, shared among its steps "
                          "(default 8min; e.g. 90s, 20min)")
    run.add_argument("--max-trials", type=_at_least_one, default=None, metavar="N",
                     help="timed trials a cell may reach for --precision (default 80)")
    run.add_argument("--warmup", type=_positive, default=None, metavar="N",
                     help="untimed warmup trials per cell (default 1)")
    run.add_argument("--max-warmup", type=_positive, default=None, metavar="N",
                     help="JIT runtimes (Java) warm up until two warmups agree within 5%%, up to N (default 10)")
    run.add_argument("--quick", action="store_true", default=None,
                     help="shrink iterations (suite's quick_scale) for a smoke run")
    run.add_argument("--timeout", type=_seconds, default=None, metavar="S",
                     help="seconds a worker may take to answer before it is killed (default 300)")


def _add_stored_runs(sub) -> None:
    """`clean`, `methods`, `runs`, `copy`, `show`: what is there, and the stored runs."""
    clean = sub.add_parser(
        "clean", help="list, and with --yes remove, what crashed runs left on an external server",
        description="On an external server each run creates its own schema and role (PostgreSQL) or database and "
        "user (MariaDB), named accessbench_<run>_<hex> and marked by a comment naming the run, and drops them at "
        "its end. A run killed outright (SIGKILL, power loss) cannot: `clean` lists what such runs left — objects "
        "with that name AND mark only, never anything else — and removes them with --yes. Objects of a run that is "
        "still going are shown and left alone.",
        epilog="examples:\n  accessbench clean --target postgresql://me@db:5432/app\n"
        "  accessbench clean --target mariadb://me@db:3306/ --yes\n", formatter_class=argparse.RawDescriptionHelpFormatter)
    clean.add_argument("--target", required=True, metavar="URL", help="a postgresql:// or mariadb:// URL")
    clean.add_argument("--yes", action="store_true", help="remove what is listed (default: only list it)")
    clean.set_defaults(func=cmd_clean)

    methods = sub.add_parser("methods", help="list every method, its driver version, and whether it runs here")
    methods.add_argument("--long", action="store_true",
                         help="also every setting each method pins (what its worker's hello reports)")
    methods.add_argument("--probe", action="store_true",
                         help="ask every worker again (by default a worker is asked only when its build changed; "
                              "what each said is kept in ~/.cache/accessbench)")
    methods.set_defaults(func=cmd_methods)
    runs = sub.add_parser("runs", help="list stored runs")
    runs.add_argument("--limit", type=_positive, default=30, metavar="N", help="show the newest N (default 30)")
    runs.set_defaults(func=cmd_runs)
    copy = sub.add_parser("copy", help="copy runs into another store (a team's PostgreSQL store, say)",
                          description="Copy stored runs whole — settings, environment, cells, every trial — from "
                          "--store into --to, under the same run ids, each in one transaction. A run already in "
                          "--to is refused; nothing else there is changed.")
    copy.add_argument("runs", nargs="+", metavar="RUN", help="run ids, unique prefixes of them, or 'last'")
    copy.add_argument("--to", required=True, metavar="STORE",
                      help="the store to copy into: a SQLite file (made if missing) or postgresql://…")
    copy.set_defaults(func=cmd_copy)
    history = sub.add_parser(
        "history", help="a cell's figure over every stored run, with the runs where it changed",
        description="Each cell — the same suite, step, method, target and path — followed over every run in the store, "
        "oldest first: its median figure with the 95% CI, and against the run before it that measured the same cell "
        "a verdict as `compare` gives one ('1.30× slower [1.25–1.35]'), marked where it is significant: a "
        "Mann-Whitney U p under --alpha and the ratio's CI outside the larger of --noise and the host's calibrated "
        "drift (compare --calibrate). Only verified cells are followed.",
        epilog="examples:\n  accessbench history --method py-psycopg --step sel1-prepared\n"
        "  accessbench --store postgresql://team@db/bench history --target postgresql --changes\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for option, what in (("--method", "methods"), ("--step", "steps"), ("--target", "targets"), ("--path", "paths")):
        history.add_argument(option, type=_csv, default=None, metavar=f"{option[2:].upper()}[,…]",
                             help=f"only these {what}, by name as runs store them (default: all)")
    history.add_argument("--changes", action="store_true", help="only the cells that changed significantly")
    history.add_argument("--alpha", type=_fraction, default=0.05, metavar="P",
                         help="significance level of the Mann-Whitney U test (default 0.05)")
    history.add_argument("--noise", type=_percent, default=0.03, metavar="PCT",
                         help="changes whose CI reaches within this are not called significant (default 3%%)")
    history.add_argument("--width", type=_columns, default=None, metavar="N",
                         help="the output's width in columns (default: the terminal's, or 120 in a pipe or file)")
    history.set_defaults(func=cmd_history)
    show = sub.add_parser("show", help="print a stored run's report again, without rerunning")
    show.add_argument("run", metavar="RUN", help=RUN_HELP)
    show.add_argument("--view", choices=VIEWS, default="median", help=VIEW_HELP)
    _add_width_options(show)
    show.set_defaults(func=cmd_show)


def _add_compare(sub) -> None:
    """`compare`: two runs, or methods inside one run, with verdicts."""
    compare = sub.add_parser(
        "compare", help="compare two runs, or every method in a run against one, with significance verdicts",
        description="Study S3's table per step: the mean time per unit of both sides, Diff, R% and Diff%, and a "
        "verdict such as '1.84× faster [1.79–1.90]' or 'no significant difference'. A difference is significant "
        "only when a Mann-Whitney U test on the trials rejects equality at --alpha and the 95% bootstrap CI of the "
        "ratio of medians lies outside ±--noise. Between two runs the floor is the larger of --noise and the "
        "drift between runs (the cells' own scatter, and this host's calibration from two identical runs: "
        "--calibrate); the comparison says how large a change it could have detected. Cells match by step, "
        "method, target and path; two runs of one path (or one target) each, different ones, match across it "
        "(it is the change: tcp against tcp+250us, postgresql@16 against postgresql@17). What differs between two runs (host, server and driver versions, settings) is listed "
        "above the tables.",
        epilog="examples:\n  accessbench compare last --base py-psycopg\n"
        "  accessbench compare 20261121-0551 20261122-0930\n"
        "  accessbench compare last other-machine.db:last     a run from another results file\n"
        "  accessbench compare RUN_TCP RUN_TCP_250US          one path each: the path's cost, cell by cell\n"
        "  accessbench compare RUN_1 RUN_2 --calibrate        two runs of identical settings: this host's drift\n"
        "  accessbench compare main.db:last last --fail-on 'slower>5%,mismatch' --summary gate.md\n"
        "                                                     a CI job's gate: exit 1 on a regression (docs/ci.md)\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("run", metavar="RUN_A", help="the reference run: id, unique prefix, 'last', or FILE.db:RUN")
    compare.add_argument("other", nargs="?", metavar="RUN_B", help="the run compared with RUN_A (same forms)")
    compare.add_argument("--base", type=_csv, metavar="METHOD[,METHOD…]",
                         help="inside RUN_A: every method against this one; name one per target to cover "
                         "several, e.g. c-libpq,c-sqlite (the first with a verified cell is used)")
    compare.add_argument("--alpha", type=_fraction, default=0.05, metavar="P",
                         help="significance level of the Mann-Whitney U test (default 0.05)")
    compare.add_argument("--noise", type=_percent, default=0.03, metavar="PCT",
                         help="differences whose CI reaches within this are not called significant (default 3%%)")
    compare.add_argument("--all", action="store_true", dest="show_all",
                         help="list every cell not compared (default: the first few and how many)")
    compare.add_argument("--calibrate", action="store_true",
                         help="RUN_A and RUN_B were made with identical settings on this host: store how far "
                              "their cells drifted apart, the floor later run-to-run comparisons on this host "
                              "call differences above")
    gate = compare.add_argument_group(
        "a regression gate (for a CI job)",
        "With --fail-on, compare exits 1 when a cell trips a rule, 0 when none does (2 on bad input), and "
        "says which cells tripped it and why. A speed rule is tripped only by a difference the comparison calls "
        "significant — beyond the host's measured drift — and larger than its limit.")
    gate.add_argument("--fail-on", type=_rules, action="append", default=None, metavar="RULE[,RULE…]",
                      help="slower>PCT: a cell significantly slower than RUN_A's by more than PCT; faster>PCT: "
                           "faster by more (a figure to re-base); width>PCT: a cell of RUN_B whose median's 95%% CI "
                           "half-width is wider (too loose to judge); mismatch: a cell of RUN_B that is a mismatch "
                           "or reads other rows, checksum or table check than RUN_A's (repeat or comma-separate)")
    gate.add_argument("--summary", default=None, metavar="FILE",
                      help="also write the gate's verdict as Markdown, for a CI job's page "
                           "(e.g. $GITHUB_STEP_SUMMARY)")
    compare.set_defaults(func=cmd_compare)


def _add_outputs(sub) -> None:
    """`report`, `export`: a stored run as a file."""
    report = sub.add_parser(
        "report", help="write a stored run's self-contained HTML report",
        description="One HTML file that works offline (styles, scripts and SVG charts inline): the verdict per "
        "step, bar charts with CI whiskers, latency percentiles, the time breakdown, every method's settings, "
        "verification per cell, the environment and the suite. Filter and sort in the page.")
    report.add_argument("run", metavar="RUN", help=RUN_HELP)
    report.add_argument("--out", default=DEFAULT_REPORTS, metavar="DIR",
                        help=f"directory for accessbench-RUN.html (default ./{DEFAULT_REPORTS})")
    report.add_argument("--view", choices=VIEWS, default="median", help=VIEW_HELP)
    report.add_argument("--history", action="store_true",
                        help="also write accessbench-RUN-history.html: each cell of the run over every run in the "
                             "store that measured it, a chart and a table with its significant changes marked "
                             "(as `accessbench history`); the report's cells link to it")
    report.set_defaults(func=cmd_report)

    export = sub.add_parser(
        "export", help="export a stored run as JSON, CSV, Markdown or HTML (schema: docs/export.md)",
        description="JSON: the whole run (settings, environment, methods, targets, every cell's summary and "
        "trials), schema 'accessbench-export' version 1. CSV: one row per cell with its summary, or one row per "
        "trial with --trials. Markdown: the report's step tables and summary, as hyperfine exports them. HTML: "
        "the self-contained report. Numbers carry six significant digits, what was measured.")
    export.add_argument("run", metavar="RUN", help=RUN_HELP)
    export.add_argument("--format", choices=FORMATS, default="json",
                        help="; ".join(f"{name}: {f.help}" for name, f in FORMATS.items()) + " (default json)")
    export.add_argument("--view", choices=VIEWS, default="median", help=f"md, html: {VIEW_HELP}")
    export.add_argument("--trials", action="store_true", help="CSV: one row per timed trial instead of per cell")
    export.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    export.set_defaults(func=cmd_export)


def _add_checks(sub) -> None:
    """`conformance`, `predict`, `reproduce`, `suites`."""
    conformance = sub.add_parser(
        "conformance", help="check workers against the protocol's vectors and a reference script",
        description="Run each method's worker through protocol/vectors (PRNG, generators, checksum) and a "
        "reference script against managed servers (hello, open, every step kind and mode, an error, bye). "
        "Prints pass or the first difference; exit status 1 when a method fails.")
    conformance.add_argument("method", nargs="*", metavar="METHOD", help="methods or groups to check, separated by spaces or commas (default: every one in the catalog)")
    conformance.set_defaults(func=cmd_conformance)
    predict = sub.add_parser(
        "predict", help="predict a stored run's per-op times at another network latency",
        description="Per-op time at one-way delay L' = per-op time on the base path + round trips per op × "
        "2 × (L' − L). Round trips come from the run's tcp+DELAY cells (the latency proxy counts them).")
    predict.add_argument("run", metavar="RUN", help=RUN_HELP)
    predict.add_argument("--latency", required=True, type=_latency, metavar="DELAY",
                         help="one-way delay to predict for, e.g. 250us or 1ms")
    predict.add_argument("--from", dest="base", default="tcp", metavar="PATH", help="base path (default tcp)")
    predict.set_defaults(func=cmd_predict)
    reproduce = sub.add_parser(
        "reproduce", help="run the five studies' suites at their own parameters and judge each claim",
        description="Run each study's built-in suite at the study's own parameters on every target and method "
        "that speaks to its claims, store the runs like any other, and print the studies report: each claim "
        "of the five studies in one line, the published figure, today's figure with its CI, and a "
        "verdict (reproduced, not reproduced, reversed) by the rule beside it; a claim this machine cannot test "
        "says why. The HTML studies report goes to --report-dir.",
        epilog="examples:\n  accessbench reproduce all --quick     every study, shrunk, in minutes\n"
        "  accessbench reproduce s3 s4           two studies at full size\n"
        "  accessbench reproduce all --show      the studies report again from the newest stored runs",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    reproduce.add_argument("studies", nargs="*", metavar="STUDY",
                           help="s1 s2 s3 s4 s5 (the five seed studies), connections (TLS, logins and poolers "
                                "against published figures), or all: the five (default)")
    reproduce.add_argument("--quick", action="store_true",
                           help="shrink the suites (their quick_scale) and keep to the methods the claims name")
    reproduce.add_argument("--target", type=_csv, default=None, metavar="T[,T…]",
                           help="the targets each study runs on, as `run` takes them (default: the study's own): "
                                "a server of yours by URL or env — a claim about PostgreSQL is judged on the run's "
                                "postgresql target, else on any PostgreSQL it has; S4's remote call is tcp to a "
                                "server you name (a real network) where there is one, else the latency proxy's "
                                "tcp+250us. Each verdict names the target and path it was judged on")
    reproduce.add_argument("--path", type=_csv, default=None, metavar="P[,P…]",
                           help="the paths measured, as `run` takes them (default: each study's own)")
    reproduce.add_argument("--method", type=_csv, default=None, metavar="M[,M…]",
                           help="the methods measured, as `run` takes them (default: each study's own)")
    reproduce.add_argument("--show", action="store_true",
                           help="measure nothing: judge the claims on the newest stored run of each study")
    reproduce.add_argument("--markdown", action="store_true",
                           help="print the claims table as Markdown (for a README) instead of the terminal table")
    reproduce.add_argument("--report-dir", default="reports", metavar="DIR",
                           help="where the HTML studies report (and each run's report) is written (default ./reports)")
    reproduce.add_argument("--timeout", type=_seconds, default=None, metavar="S",
                           help="seconds a worker may take to answer before it is killed (default 300)")
    reproduce.add_argument("--allow-idle-halt", action="store_true", default=None, help=IDLE_HELP)
    reproduce.add_argument("--width", type=_columns, default=None, metavar="N",
                           help="the report's width in columns (default: the terminal's, or 120 in a pipe or file)")
    reproduce.set_defaults(func=cmd_reproduce)
    suites = sub.add_parser("suites", help="list the built-in suites")
    suites.set_defaults(func=cmd_suites)

def _console() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:  # files and pipes get wide plain text, not 80 columns, unless COLUMNS says
        console = Console(highlight=False, width=_columns_set() or fmt.PIPE_WIDTH)
    return console


def _columns_set() -> int | None:
    """COLUMNS as terminal tools honour it in a pipe (ls, git): a positive whole number, else None."""
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def _width(args: argparse.Namespace, console: Console) -> int | None:
    """--width, else the terminal's; in a pipe COLUMNS, else None (the report's own default)."""
    return args.width or (console.width if console.is_terminal else _columns_set())


def _color(console: Console) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (rich reads it into ``no_color``)."""
    return console.is_terminal and not console.no_color


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def cmd_run(args: argparse.Namespace) -> int:
    return _run(args, _console())[0]


def _run(args: argparse.Namespace, console: Console, report: bool = True):
    """A run as `run` makes it: (exit status, the stored run or None when interrupted).
    ``report``: print the run's report (`reproduce` prints its own table instead)."""
    from .runner.prepare import prepare

    prepared = prepare(args, skipped=lambda s: console.print(s.text, style=s.style))
    # the heavy imports (numpy, scipy) after the input is known to be good: a mistake is told at once
    from .report.live import LiveProgress, PlainProgress

    runner = prepared.runner
    runner.report_to(LiveProgress(console) if console.is_terminal else PlainProgress(console))  # a log sees lines
    options, store = runner.options, runner.store
    if prepared.resume:
        console.print(f"resuming run {runner.run_id}: {prepared.complete} of {prepared.cells} cells complete, "
                      f"{prepared.to_measure} trials to measure")
    else:
        precision = (f", more (up to {options.max_trials}) where the CI is wider than "
                     f"±{fmt.share(options.precision)} within {_minutes(options.budget)}"
                     if options.precision and options.budget else "")
        console.print(f"run {runner.run_id}: suite {runner.suite.name}, targets "
                      f"{', '.join(t.name for t in runner.targets)}"
                      f"{f' (from {prepared.target_from})' if prepared.target_from else ''}"
                      f"{' over its existing data, read-only' if runner.suite.existing else ''}, "
                      f"{len(runner.methods)} methods, {options.trials} "
                      f"trials + {options.warmup} warmup per cell{precision} → {store.path}")
    if options.trials < 4:
        console.print(f"warning: with {options.trials} trial{'s' if options.trials != 1 else ''} per cell no "
                      "difference can be called significant (a Mann-Whitney test needs 4 against 4 to reach "
                      "p < 0.05): the verdicts will say so", style="yellow")
    try:
        run_id = runner.run()
    except KeyboardInterrupt:
        console.print(f"interrupted: run {runner.run_id} is stored with the trials that finished "
                      f"(accessbench show {runner.run_id}; carry on with accessbench run --resume {runner.run_id})",
                      style="yellow")
        for what in runner.left_behind:
            console.print(f"left behind: {what}", style="bold yellow", markup=False, soft_wrap=True)
        return 130, None
    except Fault as e:
        raise Fault(f"run {runner.run_id} stopped: {e}") from None
    stored = store.load(run_id)
    if report:
        _print(_report_text(stored, args, console))
    console.print(f"stored as run {run_id} in {store.path} · accessbench show {run_id}")
    if not args.no_report:
        console.print(f"HTML report: {_write_report(stored, args.report_dir, option='--report-dir')}")
    for what in runner.left_behind:  # a clean-up that could not finish: say what stays where
        console.print(f"left behind: {what}", style="bold yellow", markup=False, soft_wrap=True)
    if stored.run.status != "complete":
        print(f"accessbench: run {run_id} {stored.run.status}: {stored.run.message}", file=sys.stderr)
        return 1, stored
    return 0, stored


def cmd_clean(args: argparse.Namespace) -> int:
    from . import targets as targets_mod

    target = targets_mod.make(args.target)
    if target.managed:
        raise InputError(f"--target {args.target}: clean is for external servers (a managed one is removed whole "
                         "at the end of its run)")
    try:
        found = target.leftovers()
    except targets_mod.TargetUnavailable as e:
        raise InputError(str(e)) from None
    if not found:
        _print(f"{target.name}: nothing left by accessbench runs\n")
        return 0
    lines, failed = [], 0
    for leftover in found:
        state = "in use by a running run: left alone" if leftover.in_use else ("removing" if args.yes else "left over")
        lines.append(f"  {leftover.kind} {leftover.name} — {leftover.mark} — {state}")
    _print(f"{target.name}: {len(found)} object(s) made by accessbench runs\n" + "\n".join(lines) + "\n")
    if not args.yes:
        _print("remove them with: accessbench clean --target URL --yes\n")
        return 0
    for leftover in found:
        if leftover.in_use:
            continue
        try:
            target.remove(leftover)
            _print(f"removed {leftover.kind} {leftover.name}\n")
        except targets_mod.TargetUnavailable as e:
            failed += 1
            print(f"accessbench: {e}", file=sys.stderr)
    target.stop()
    return 1 if failed else 0


def cmd_methods(args: argparse.Namespace) -> int:
    from .methods import catalog
    from .methods.probe import probe_all

    methods = list(catalog())
    probes = list(zip(methods, probe_all(methods, again=args.probe)))
    if not args.long:  # one line per method: its name whole, so it can be copied into --method
        rows = [(m.name, info.status, ",".join(m.dbms), m.language, info.version or "—") for m, info in probes]
        _print(_one_line_rows(("method", "available here", "DBMS", "language", "driver version"), rows,
                              right=set(), squeeze=(1, 4), width=_console().width))
        _print("every pinned setting of each method: accessbench methods --long\n")
        return 0
    console = _console()
    table = Table(box=box.SIMPLE_HEAD)
    for name in ("method", "language", "driver", "version", "DBMS", "available here"):
        table.add_column(name, overflow="fold", no_wrap=name == "method")
    for method, info in probes:
        table.add_row(method.name, info.runtime or method.language, method.driver, info.version or "—",
                      ", ".join(method.dbms), info.status)
    console.print(table)
    for method, info in probes:
        console.print(f"[bold]{method.name}[/bold] — {method.summary}")
        for key, value in info.settings.items():
            console.print(f"    {key}: {value}", highlight=False, markup=False)
        if method.layer:
            console.print(shapes_text(method.layer, info.shapes), highlight=False, markup=False, end="")
    return 0


def shapes_text(layer: str, shapes: dict | None) -> str:
    """A layer's shapes as `methods --long` lists them: those it builds through its own API,
    then each it answers unsupported, with why (protocol/PROTOCOL.md, Shapes)."""
    if shapes is None:
        return f"    shapes: none — {layer}'s API is SQL text: every statement runs through its raw-SQL API, and " \
               "every report says so\n"
    lines = [f"    shapes through {layer}'s own API: {', '.join(shapes.get('maps', [])) or 'none'}"]
    lines += [f"    unsupported: {feature} — {why}" for feature, why in shapes.get("unsupported", {}).items()]
    return "\n".join(lines) + "\n"


def cmd_history(args: argparse.Namespace) -> int:
    from .report.history import render_history
    from .stats.history import series
    from .store import Store

    must_exist(args.store)
    with Store(args.store) as store:
        runs, cells, trials = store.history(method=args.method, step=args.step, target=args.target, path=args.path)
        lines = series(runs, cells, trials, lambda host: store.drift(host)[0], args.alpha, args.noise)
    if args.changes:
        lines = [s for s in lines if s.changes]
    if not lines:
        asked = ", ".join(f"--{k} {','.join(v)}" for k, v in (("method", args.method), ("step", args.step),
                                                             ("target", args.target), ("path", args.path)) if v)
        raise InputError(f"history: no verified cell in {shown(args.store)}"
                         + (f" matches {asked}" if asked else "") + (" changed significantly" if args.changes else ""))
    console = _console()
    _print(render_history(lines, color=_color(console), width=args.width or console.width))
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from .runner.resume import orphaned
    from .store import Store

    if not is_server(args.store) and not os.path.exists(args.store):
        _print(f"no runs in {args.store} yet: try `accessbench run --quick`\n")
        return 0
    store = Store(args.store)
    rows = store.runs(args.limit)
    if not rows:
        _print(f"no runs in {store.path} yet: try `accessbench run --quick`\n")
        return 0
    # One line per run, never wrapped: what a reader scans for (which run, when, what was
    # measured, whether it finished); only the targets and a failed run's reason are cut to the
    # width left.
    lines = []
    contents = store.contents(rows)
    for r in rows:
        settings, env, (targets, methods) = r.settings, r.environment, contents[r.id]
        status = r.status if r.status == "complete" or not r.message else f"{r.status}: {r.message}"
        if orphaned(r):
            status = "stopped: process gone (--resume)"  # killed: nothing could store why
        lines.append((r.id, r.started_at.replace("T", " ")[:16], f"{env.get('user') or '—'}@{env.get('hostname')}",
                      r.suite, ",".join(targets),
                      str(methods), f"{settings.get('trials', '?')}{' quick' if settings.get('quick') else ''}",
                      status, settings.get("label") or ""))
    # who ran it where: in a team's store, or once a file holds runs of more than one user or host
    shared = store.server or len({line[2] for line in lines}) > 1
    labelled = any(line[-1] for line in lines)  # a label column only where some run has one
    names = ("run", "started (UTC)", "user@host", "suite", "targets", "methods", "trials", "status", "label")
    keep = [i for i in range(len(names)) if (i != 2 or shared) and (i != 8 or labelled)]
    squeeze = tuple(keep.index(i) for i in (4, 8, 7, 2) if i in keep)
    _print(_one_line_rows(tuple(names[i] for i in keep), [tuple(line[i] for i in keep) for line in lines],
                          right={keep.index(5), keep.index(6)}, squeeze=squeeze, width=_console().width))
    return 0


def cmd_copy(args: argparse.Namespace) -> int:
    from .store import Store

    must_exist(args.store)
    with Store(args.store) as source:
        ids = list(dict.fromkeys(source.resolve(ref) for ref in args.runs))
        if not is_server(args.to) and os.path.abspath(args.to) == os.path.abspath(args.store):
            raise InputError(f"--to {args.to}: the store the runs are in")
        with Store(args.to) as destination:
            for run_id in ids:
                status = source.run(run_id).status
                trials = destination.copy_run(source, run_id)
                note = "" if status != "running" else " (still running there: trials stored later are not copied)"
                _print(f"copied run {run_id} ({trials:,} trials) to {destination.path}{note}\n")
    return 0


def _one_line_rows(names: tuple[str, ...], rows: list[tuple[str, ...]], right: set[int], squeeze: tuple[int, ...],
                   width: int) -> str:
    """Rows of plain columns, one line each, whatever the width: every column whole but those
    in ``squeeze``, which share what the terminal leaves, in that order, cut with "…"."""
    widths = [max(len(name), *(len(row[i]) for row in rows)) for i, name in enumerate(names)]
    left = width - sum(w for i, w in enumerate(widths) if i not in squeeze) - 2 * (len(names) - 1)
    for k, i in enumerate(squeeze):
        later = sum(len(names[j]) for j in squeeze[k + 1:])
        widths[i] = max(len(names[i]), min(widths[i], left - later))
        left -= widths[i]

    def line(cells) -> str:
        return "  ".join(f"{_cut(c, w):>{w}}" if i in right else f"{_cut(c, w):<{w}}"
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(names), *(line(row) for row in rows)]) + "\n"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _load(store_path: str, ref: str, option: str = "--store"):
    """A stored run from a reference: an id, a unique prefix, 'last', or FILE:RUN for a run
    kept in another results file (another machine's, say)."""
    from .store import Store

    if ":" in ref:  # FILE:RUN, the file named as the user named it when it is missing (or STORE-URL:RUN)
        file, run = ref.rsplit(":", 1)
        if is_server(file) and "/" not in run or not is_server(ref) and (
                os.path.exists(file) or file.endswith(".db") or os.sep in file):
            store_path, ref, option = file, run, f"RUN {shown(ref)}:"
    must_exist(store_path, option)
    store = Store(store_path)
    return store.load(store.resolve(ref))


def _write_report(stored, directory: str, view: str = "median", option: str = "--out") -> str:
    return _write_file(directory, f"accessbench-{stored.run.id}.html", FORMATS["html"].write(stored, view=view), option)


def _write_file(directory: str, name: str, text: str, option: str = "--out") -> str:
    path = os.path.join(directory, name)
    try:
        os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"{option} {directory}: cannot write the report ({e.strerror or e})") from None
    return path


def cmd_show(args: argparse.Namespace) -> int:
    console = _console()
    _print(_report_text(_load(args.store, args.run), args, console))
    return 0


def _report_text(stored, args: argparse.Namespace, console: Console) -> str:
    """A run's report as `run` and `show` print it: the brief one (two screens), or with
    --full, --wide or another --view than the median the whole of it."""
    from .report.terminal import render, render_brief

    view = getattr(args, "view", "median")
    if args.full or args.wide or view != "median":
        return render(stored, color=_color(console), width=_width(args, console), view=view, wide=args.wide)
    return render_brief(stored, color=_color(console), width=_width(args, console))


def cmd_compare(args: argparse.Namespace) -> int:
    from .report.compare import drift_lines, render_comparison, step_shift_lines
    from .stats.cells import analyse
    from .stats.compare import axis_change, pair_runs, pair_with_base
    from .stats.drift import between_runs
    from .store import Store
    from .store.differences import differences

    if (args.other is None) == (args.base is None):
        raise InputError("compare: give either RUN_B (run against run) or --base METHOD (methods inside RUN_A)")
    if args.summary and not args.fail_on:
        raise InputError("compare --summary: it writes the gate's verdict; give the rules with --fail-on")
    console = _console()
    width = console.width if console.is_terminal else None
    reference = _load(args.store, args.run)
    if args.base:
        results = analyse(reference)
        known = sorted({r.cell.method for r in results})
        for base in args.base:
            if base not in known:
                raise InputError(f"--base {base}: not in run {reference.run.id} (it has {', '.join(known)})")
        pairs, without = pair_with_base(results, args.base, args.alpha, args.noise)
        unmatched = [f"{target}/{path} (no verified {' or '.join(args.base)} cell; add one to --base)"
                     for target, path in without]
        _print(render_comparison(pairs, "base", "method", [], unmatched, color=_color(console),
                                 width=width, by_method=True, show_all=args.show_all))
        return _gate(args, pairs, results, [f"run {reference.run.id}: every method against {', '.join(args.base)}"],
                     f"a difference is called only beyond ±{args.noise:.1%}")
    candidate = _load(args.store, args.other)
    a, b = analyse(reference), analyse(candidate)
    across = axis_change(a, b)  # the path or target that changed between the runs, if that is what did
    axis = across.axis if across else None
    pairs, alone = pair_runs(a, b, args.alpha, args.noise, across=axis)
    if not pairs:
        raise InputError(f"RUN_B {args.other}: no verified cell matches run {reference.run.id} "
                         f"(suites {reference.run.suite} and {candidate.run.suite})")
    # Across a path change every cell moved by design: their scatter is no estimate of the drift
    # then (the host's calibration still is).
    with Store(args.store) as store:
        drift = between_runs(store, reference.run, candidate.run, [p.comparison.ratio for p in pairs], args.noise,
                             calibrate=args.calibrate, own=not across)
    if drift.floor is not None:  # the verdicts weigh the drift too
        pairs, alone = pair_runs(a, b, args.alpha, drift.floor, across=axis)
    unmatched = [f"{r.label} · {r.cell.step}" for r in alone]
    legend = [f"{side}: run {r.id} · suite {r.suite} · {r.started_at[:16].replace('T', ' ')} · "
              f"{r.settings['trials']} trials per cell{' · --quick' if r.settings.get('quick') else ''}"
              for side, r in (("A", reference.run), ("B", candidate.run))]
    if across:
        legend.append(f"{across.axis}: A measured {across.reference} only and B {across.candidate} only, so each cell "
                      f"is matched across them and the {across.axis} is part of every difference (rows show B's)")
    _print(render_comparison(pairs, "A", "B", differences(reference, candidate), unmatched,
                             color=_color(console), width=width, show_all=args.show_all,
                             legend=legend + drift_lines(drift) + ([] if across else step_shift_lines(pairs))))
    return _gate(args, pairs, b, legend, f"a difference is called only beyond ±{drift.found.floor:.1%} (the larger "
                                         "of --noise and the drift between the runs)")


def _gate(args: argparse.Namespace, pairs, candidates, legend: list[str], floor: str) -> int:
    """compare --fail-on: 1 when a cell trips a rule, else 0; the verdict printed, and written
    as Markdown with --summary."""
    if not args.fail_on:
        return 0
    from .report.gate import gate_lines, summary
    from .stats.gate import trips

    rules = list(dict.fromkeys(rule for given in args.fail_on for rule in given))
    tripped = trips(rules, pairs, candidates)
    _print("\n".join(gate_lines(rules, tripped, len(pairs))) + "\n")
    if args.summary:
        try:
            with open(args.summary, "w", encoding="utf-8") as out:
                out.write(summary(rules, tripped, len(pairs), legend, floor))
        except OSError as e:
            raise InputError(f"--summary {args.summary}: cannot write it ({e.strerror or e})") from None
    return 1 if tripped else 0


def cmd_report(args: argparse.Namespace) -> int:
    stored = _load(args.store, args.run)
    if not args.history:
        path = _write_report(stored, args.out, args.view)
        _print(f"wrote {path} (self-contained: open it in any browser, offline)\n")
        return 0
    from .report.history import page_name, render_history_html
    from .report.html import render_html
    from .stats.history import series
    from .store import Store

    with Store(args.store) as store:
        runs, cells, trials = store.history()
        lines = series(runs, cells, trials, lambda host: store.drift(host)[0])
    lines = [s for s in lines if any(p.run.id == stored.run.id for p in s.points)]
    history = _write_file(args.out, page_name(stored.run), render_history_html(stored.run, lines))
    path = _write_file(args.out, f"accessbench-{stored.run.id}.html", render_html(stored, args.view, page_name(stored.run)))
    _print(f"wrote {path} and {history}, its cells over {len({p.run.id for s in lines for p in s.points})} runs "
           "(self-contained: open them in any browser, offline)\n")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    text = FORMATS[args.format].write(_load(args.store, args.run), view=args.view, trials=args.trials)
    if args.out is None:
        _print(text)
        return 0
    try:
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"--out {args.out}: cannot write ({e.strerror})") from None
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def cmd_conformance(args: argparse.Namespace) -> int:
    from . import conformance
    from .methods import catalog, select

    console = _console()
    names = [n for arg in args.method for n in arg.split(",") if n]  # "a b" and "a,b" alike, as run's --method
    methods = select(names, option="METHOD") if names else list(catalog())
    outcomes = conformance.check(methods, progress=lambda text: console.print(text, style="dim"))
    table = Table(box=box.SIMPLE_HEAD)
    for name in ("method", "result", "checks", "notes"):
        table.add_column(name, overflow="fold")
    for o in outcomes:
        result = "[green]pass[/green]" if o.passed else "[bold red]FAIL[/bold red]"
        notes = o.failure if not o.passed else "; ".join(o.notes)
        table.add_row(o.method, result, str(o.checks), notes)
    console.print(table)
    return 0 if all(o.passed for o in outcomes) else 1


def cmd_predict(args: argparse.Namespace) -> int:
    from .report.terminal import render_predictions

    console = _console()
    stored = _load(args.store, args.run)
    text = render_predictions(stored, args.latency, args.base, color=_color(console),
                              width=console.width if console.is_terminal else None)
    if text is None:
        raise InputError(f"predict {stored.run.id}: no cell on {args.base} whose round trips were counted: run a "
                         "tcp+DELAY path too (e.g. --path tcp,tcp+100us) so the proxy counts them")
    _print(text)
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from . import studies
    from .report.studies import render_studies, render_studies_markdown, write_studies_html
    from .store import Store

    console = _console()
    recipes = studies.resolve(args.studies)
    status = 0
    with Store(args.store) as store:
        runs = studies.newest_runs(store, recipes) if args.show else {}
        expected = None if args.show else studies.expected_time(store, recipes, args.quick)
    if args.show and not runs:
        raise InputError(f"reproduce --show: {args.store} holds no run of "
                         f"{', '.join(r.suite for r in recipes)} (run accessbench reproduce first)")
    if expected:
        console.print(expected)
    for recipe in [] if args.show else recipes:
        console.print(f"study {recipe.study.upper()}, {recipe.title}: suite {recipe.suite}, {recipe.parameters}",
                      style="bold")
        try:
            code, stored = _run(studies.run_arguments(recipe, args), console, report=False)
        except InputError as e:  # nothing of this study can run here (say, no method available): the next one can
            console.print(f"study {recipe.study.upper()} not reproduced: {e}", style="bold yellow", markup=False)
            status = max(status, 1)
            continue
        status = max(status, code)
        if stored is None:  # interrupted: judge what was measured so far, then stop
            status = 130
            break
        runs[recipe.study] = studies.study_run(stored)
    wanted = {r.study for r in recipes}
    findings = [f for f in studies.claims.evaluate(runs) if f.study in wanted]
    _print(render_studies_markdown(findings) if args.markdown
           else render_studies(findings, runs, color=_color(console), width=_width(args, console)))
    where = f"HTML studies report: {write_studies_html(findings, runs, args.report_dir)}"
    if args.markdown:  # stdout is the Markdown alone, to paste
        print(where, file=sys.stderr)
    else:
        console.print(where)
    return status


def cmd_suites(args: argparse.Namespace) -> int:
    from .suite.loader import builtin_names, load

    table = Table(box=box.SIMPLE_HEAD)
    for name in ("suite", "tables", "steps", "description"):
        table.add_column(name, overflow="fold")
    for name in builtin_names():
        suite = load(name)
        variant = suite.variants[0]
        table.add_row(name, ", ".join(f"{t.name} ({t.rows:,})" for t in variant.tables),
                      ", ".join(suite.step_names), suite.description)
    console = _console()
    console.print(table)
    console.print("run one: accessbench run --suite NAME · your own: accessbench run --suite path/to/suite.toml")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    end_like_ctrl_c()  # stored trials kept, servers stopped, work directories removed
    args = None
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return args.func(args)
    except InputError as e:
        print(f"accessbench: {e}", file=sys.stderr)
        return 2
    except Fault as e:
        print(f"accessbench: {e}", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as e:  # damaged pages show up when they are read
        print(f"accessbench: --store {getattr(args, 'store', DEFAULT_STORE)}: not an accessbench store, or damaged "
              f"({first_line(e)})", file=sys.stderr)
        return 2
    except Exception as e:
        if not type(e).__module__.startswith("psycopg"):
            raise
        # a team's store lost mid-command (server gone, connection cut): one line, no password
        spec = getattr(args, "store", DEFAULT_STORE)
        print(f"accessbench: --store {shown(spec)}: {redact(first_line(e), spec)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("accessbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
