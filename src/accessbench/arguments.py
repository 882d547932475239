"""accessbench's command line, the parsing half: every command, option and help text, and
the checks of a value as it is given (one line naming the option, exit status 2). cli.py
calls the command each parse names."""

from __future__ import annotations

import argparse
import re

from . import __version__
from . import paths
from .errors import InputError
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
    """``a,b`` as [a, b]; a comma inside brackets is part of its name (a step varied over two
    keys without a placeholder is named ``get[mode=literal,rows=10]``)."""
    return [part.strip() for part in re.split(r",(?![^\[\]]*\])", text) if part.strip()]


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


def _rows(text: str) -> int:
    """'100000', '100,000' or '100_000' rows."""
    try:
        value = int(text.replace(",", "_"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of rows") from None
    if value < 1:
        raise argparse.ArgumentTypeError("a table read needs at least 1 row")
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
                          "`all`: every one, `layers`: every layer and the driver it runs on, `web`: the web tier's "
                          "pages, `transfer`: the defaults and every bulk and columnar reader, a language (python, "
                          "c, java, go, rust, node, ruby, php, cpp, perl): every method of its worker, layers "
                          "too; see `accessbench methods`)")
    _add_measuring_options(run)
    run.add_argument("--workdir", default=None, metavar="DIR",
                     help="where managed servers and files live during the run (default: a new temp dir)")
    run.add_argument("--report-dir", default=DEFAULT_REPORTS, metavar="DIR",
                     help=f"where the run's HTML report is written at the end (default ./{DEFAULT_REPORTS})")
    run.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    run.add_argument("--resume", default=None, metavar="RUN",
                     help="carry on a stopped run (interrupted, failed or crashed) under its own id: only its missing "
                     "trials are measured, with its settings; RUN is an id, a unique prefix or 'last'. Other options "
                     "given must agree with the run's, but a larger --trials adds trials to each cell (to a complete "
                     "run too); give an external --target URL again (passwords are never stored)")
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
    _add_profile_option(run)
    run.add_argument("--raw-latencies", action="store_true",
                     help="steps under load also keep every operation's latency, where the worker can write them "
                     "(Python's), beside the histogram they are summarised in: to check it (large)")
    run.add_argument("--label", default=None, metavar="TEXT",
                     help="a name for the run, shown by `accessbench runs` and in its reports (a resumed run keeps "
                     "its own unless given)")
    _add_width_options(run)
    run.set_defaults(command="run")


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
    run.add_argument("--rows", type=_rows, default=None, metavar="N",
                     help="read each table whose size is the reader's to choose (one with quick_rows: the transfer "
                          "suite's lineitem) at N rows")
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
    clean.set_defaults(command="clean")

    methods = sub.add_parser("methods", help="list every method, its driver version, and whether it runs here")
    methods.add_argument("--long", action="store_true",
                         help="also every setting each method pins (what its worker's hello reports)")
    methods.add_argument("--probe", action="store_true",
                         help="ask every worker again (by default a worker is asked only when its build changed; "
                              "what each said is kept in ~/.cache/accessbench)")
    methods.set_defaults(command="methods")
    runs = sub.add_parser("runs", help="list stored runs")
    runs.add_argument("--limit", type=_positive, default=30, metavar="N", help="show the newest N (default 30)")
    runs.set_defaults(command="runs")
    copy = sub.add_parser("copy", help="copy runs into another store (a team's PostgreSQL store, say)",
                          description="Copy stored runs whole — settings, environment, cells, every trial — from "
                          "--store into --to, under the same run ids, each in one transaction. A run already in "
                          "--to is refused; nothing else there is changed.")
    copy.add_argument("runs", nargs="+", metavar="RUN", help="run ids, unique prefixes of them, or 'last'")
    copy.add_argument("--to", required=True, metavar="STORE",
                      help="the store to copy into: a SQLite file (made if missing) or postgresql://…")
    copy.set_defaults(command="copy")
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
    history.set_defaults(command="history")
    show = sub.add_parser("show", help="print a stored run's report again, without rerunning")
    show.add_argument("run", metavar="RUN", help=RUN_HELP)
    show.add_argument("--view", choices=VIEWS, default="median", help=VIEW_HELP)
    _add_width_options(show)
    _add_profile_selection(show)
    show.set_defaults(command="show")


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
    compare.set_defaults(command="compare")


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
    report.set_defaults(command="report")

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
    export.set_defaults(command="export")


def _add_checks(sub) -> None:
    """`conformance`, `predict`, `reproduce`, `suites`."""
    conformance = sub.add_parser(
        "conformance", help="check workers against the protocol's vectors and a reference script",
        description="Run each method's worker through protocol/vectors (PRNG, generators, checksum) and a "
        "reference script against managed servers (hello, open, every step kind and mode, an error, bye). "
        "Prints pass or the first difference; exit status 1 when a method fails.")
    conformance.add_argument("method", nargs="*", metavar="METHOD", help="methods or groups to check, separated by spaces or commas (default: every one in the catalog)")
    conformance.set_defaults(command="conformance")
    predict = sub.add_parser(
        "predict", help="predict a stored run's per-op times at another network latency",
        description="Per-op time at one-way delay L' = per-op time on the base path + round trips per op × "
        "2 × (L' − L). Round trips come from the run's tcp+DELAY cells (the latency proxy counts them).")
    predict.add_argument("run", metavar="RUN", help=RUN_HELP)
    predict.add_argument("--latency", required=True, type=_latency, metavar="DELAY",
                         help="one-way delay to predict for, e.g. 250us or 1ms")
    predict.add_argument("--from", dest="base", default="tcp", metavar="PATH", help="base path (default tcp)")
    predict.set_defaults(command="predict")
    _add_reproduce(sub)
    suites = sub.add_parser("suites", help="list the built-in suites")
    suites.set_defaults(command="suites")


def _add_reproduce(sub) -> None:
    reproduce = sub.add_parser(
        "reproduce", help="run the five studies' suites at their own parameters and judge each claim",
        description="Run each study's built-in suite at the study's own parameters on every target and method "
        "that speaks to its claims, store the runs like any other, and print the studies report: each claim "
        "of the five studies in one line, the published figure, today's figure with its CI, and a "
        "verdict (reproduced, not reproduced, reversed) by the rule beside it; a claim this machine cannot test "
        "says why. The HTML studies report goes to --report-dir.",
        epilog="examples:\n  accessbench reproduce all --quick     every study, shrunk, in minutes\n"
        "  accessbench reproduce s3 s4           two studies at full size\n"
        "  accessbench reproduce tfb hostage --quick   TechEmpower's tests and \"Don't Hold My Data Hostage\"\n"
        "  accessbench reproduce all --show      the studies report again from the newest stored runs",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    reproduce.add_argument("studies", nargs="*", metavar="STUDY",
                           help="s1 s2 s3 s4 s5 (the five seed studies), connections (TLS, logins and poolers "
                                "against published figures), orm, upgrade, hostage (\"Don't Hold My Data Hostage\": "
                                "lineitem out of each DBMS against the wire, over a latency × bandwidth grid), tfb "
                                "(TechEmpower's database tests on every web-tier method under wrk), or all: the "
                                "five (default)")
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
    reproduce.add_argument("--rows", type=_rows, default=None, metavar="N",
                           help="the hostage study's lineitem read at N rows (default: 1,000,000; --quick 100,000), "
                                "as `run --rows`: its full grid at 1,000,000 rows reads for hours at 10 Mbit/s")
    reproduce.add_argument("--show", action="store_true",
                           help="measure nothing: judge the claims on the newest stored run of each study")
    reproduce.add_argument("--markdown", action="store_true",
                           help="print the claims table as Markdown (for a README) instead of the terminal table, "
                           "then each study's own tables (the hostage grid, where tfb's requests went)")
    reproduce.add_argument("--report-dir", default="reports", metavar="DIR",
                           help="where the HTML studies report (and each run's report) is written (default ./reports)")
    reproduce.add_argument("--timeout", type=_seconds, default=None, metavar="S",
                           help="seconds a worker may take to answer before it is killed (default 300)")
    reproduce.add_argument("--allow-idle-halt", action="store_true", default=None, help=IDLE_HELP)
    reproduce.add_argument("--width", type=_columns, default=None, metavar="N",
                           help="the report's width in columns (default: the terminal's, or 120 in a pipe or file)")
    reproduce.set_defaults(command="reproduce")


def _add_profile_option(run) -> None:
    run.add_argument("--profile", nargs="?", type=_seconds, const=2.0, default=0.0, metavar="SECONDS",
                     help="after each cell's timed trials, sample where its client and its server backend spend "
                     "their CPU, in a trial of its own lasting SECONDS (default 2): perf (C, Go, Rust, Node, the "
                     "servers), py-spy (Python), JFR (Java). `accessbench show RUN --profile` and the HTML report "
                     "show them; no timed figure includes a profile's trial (docs/profiles.md)")


def _add_profile_selection(show) -> None:
    """`show --profile`'s options: which profiles, against which method, as a flame graph."""
    profile = show.add_argument_group(
        "profiles (a run made with --profile)",
        "accessbench show last --profile --method rust-diesel+sqlite --step get-prepared   where its CPU went; "
        "add --against rust-rusqlite for how each frame's share differs from the driver's, and --flamegraph "
        "FILE.svg for the flame graph (a differential one with --against)")
    profile.add_argument("--profile", action="store_true", help="the cells' profiles: the frames that hold the CPU, "
                         "client and server")
    for option in ("--method", "--step", "--target", "--path"):
        profile.add_argument(option, type=_csv, default=None, metavar=f"{option[2:].upper()}[,…]",
                             help=f"only the profiles of these {option[2:]}s")
    profile.add_argument("--side", choices=("client", "native", "server"), default=None,
                         help="only the client's profiles (the worker, and an embedded engine in it), a Python "
                         "client's native frames (perf, beside py-spy's Python ones) or the server backend's")
    profile.add_argument("--against", default=None, metavar="METHOD",
                         help="each profile beside the same cell's profile of METHOD (a layer's driver, another version)")
    profile.add_argument("--flamegraph", default=None, metavar="FILE",
                         help="write the one profile selected as an SVG flame graph (with --against: differential, "
                         "red where it spends a larger share than METHOD, blue a smaller)")
    profile.add_argument("--top", type=_positive, default=15, metavar="N", help="frames listed per profile (15)")
