"""The DBMS adapter interface: what the runner needs from a target."""

from __future__ import annotations

import datetime as dt
import os
import re
import secrets
from abc import ABC, abstractmethod
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable

if TYPE_CHECKING:  # annotations only: the paths import this module, and --help should stay quick
    from ..suite.model import Step, Table
    from .registry import Login


class TargetUnavailable(Exception):
    """This target cannot be used on this machine; the message says why in one line."""


# What accessbench creates on a server it does not own (a schema or role on PostgreSQL, a
# database or user on MariaDB) is named ``accessbench_<run id>_<4 hex>`` — a name no user
# object already has (creating it fails otherwise) — and marked by a comment naming the run.
# It drops only objects whose name *and* mark say they are a run's own.
OWNED_NAME = re.compile(r"^accessbench_\d{8}_\d{6}_[0-9a-f]{4}_[0-9a-f]{4}$")
MARK = "accessbench run "


def owned_name(run_id: str) -> str:
    """A new name for the objects one start of a run creates on an external server (the random
    tail keeps a resumed run's objects apart from anything an earlier attempt left)."""
    name = f"accessbench_{run_id.replace('-', '_')}_{secrets.token_hex(2)}"
    assert OWNED_NAME.match(name), name
    return name


def mark(run_id: str) -> str:
    """The comment that marks an object as a run's own."""
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{MARK}{run_id}, created {started}; dropped when the run ends, or by `accessbench clean`"


def is_marked(name: str, comment: str | None) -> bool:
    return bool(OWNED_NAME.match(name or "")) and (comment or "").startswith(MARK)


@dataclass
class Leftover:
    """An object an earlier run created on an external server and did not drop."""

    kind: str        # schema, role, database, user
    name: str
    mark: str        # its comment: which run, when
    in_use: bool     # a run still holds it (its lock is taken): never removed


class Target(ABC):
    name: str              # as shown and stored: "postgresql", "postgresql@15", "sqlite", a URL without password
    dbms: str
    version: str | None = None  # the server version asked for (--target NAME@VERSION); None: not asked
    login: "Login | None" = None  # how its clients log in, when asked (--target NAME?auth=METHOD)
    managed: bool
    paths: tuple[str, ...]  # paths this target can be reached by, default first
    helps: frozenset[str] = frozenset()  # path kinds it helps: "netem" (listen_on), "pooler" (behind_pooler), "tls"
    # The run's certificate authority (paths/tls.py), set by the runner before start when a path
    # to it is over TLS: a managed server then serves TLS with the authority's key.
    authority: Any = None
    local_server = False    # a server process on this machine whose CPU the runner can read
    serves_by_thread = False  # its server_pids are OS thread ids of one server process (MariaDB)
    server_settings: dict[str, Any] = {}  # the suite's [server.DBMS]: a managed server starts with them
    run_id = "manual"       # set by the runner before start: names and marks what an external run creates
    # External servers: the suite's SQL must stay inside the run's own schema or database.
    # Where the connecting user may create roles (users), it runs as one made for the run
    # with rights there only; ``confine`` (a user's suite without --unconfined-sql) makes that
    # a condition of starting at all.
    confine = False
    # Set by the runner before start for a suite over the user's existing data (data =
    # "existing"): the target creates nothing — no schema, role, database, user or table — its
    # own connection is read-only, and so is every worker's session (``read_only`` in the
    # endpoint: the server itself refuses a write).
    existing = False
    data_file: str | None = None  # over existing data, a managed target's: what it holds (targets/datafile.py)

    @abstractmethod
    def start(self, workdir: str) -> None:
        """Make the target usable (start a managed server, connect to an external one)."""

    def identify(self, version: str | None, login: "Login | None") -> None:
        """Name a managed target by what sets it apart from its DBMS's default one:
        ``postgresql@16?auth=md5``."""
        self.version, self.login = version, login
        self.name += (f"@{version}" if version else "") + (login.suffix if login else "")

    @property
    def file_name(self) -> str:
        """The target's name as a file name: what its files in the run's work directory (its
        server's, a pooler's or a proxy's before it) are named after, so that two servers of
        one DBMS (``postgresql`` and ``postgresql@15``) in one run keep apart."""
        return file_safe(self.name)

    def own_directory(self, workdir: str) -> str:
        """Where in the run's work directory this target keeps its files: ``postgresql@15`` →
        ``postgresql-15``."""
        return os.path.join(workdir, self.file_name)

    @abstractmethod
    def stop(self) -> None:
        """Undo ``start``: drop accessbench's own objects, stop what was started. Safe to
        call twice and after a failed start."""

    def refuses_step(self, step: "Step") -> str | None:
        """Why this target cannot run ``step`` at all (one line: the cell is unsupported), or
        None. DuckDB's workers read its file read-only, so it refuses steps that write."""
        return None

    def alive(self) -> str | None:
        """None while the target can serve; else why not, in one line (a server that died)."""
        return None

    def bound(self, seconds: float) -> None:
        """Bound every statement on the runner's own connection (reset, check, setup) by
        ``seconds``, as workers are bounded by --timeout."""

    def cancel(self, pids: set[int]) -> None:
        """Cancel the statements the run's own sessions are executing: those whose server
        pids (thread ids on MariaDB) are given, or — where every session but the runner's is
        provably the run's own — every active one. Called when a worker times out, before it
        is killed, so that nothing it started keeps running on the server."""

    def transport_mark(self) -> Any:
        """Read before a worker opens its connections to a server serving TLS: what
        ``transport`` compares with afterwards."""
        return None

    def transport(self, mark: Any, server_pid: int | None) -> tuple[bool, str | None] | None:
        """After a worker opened its connections: whether the server saw them encrypted, and by
        which TLS version (None: not known); None where the server cannot tell."""
        return None

    def connection_room(self) -> int | None:
        """The connections the server can still accept, read when the run starts (its limit
        less those open now, the runner's own and others' among them); None: no limit (an
        embedded engine). The runner keeps no more workers open on it than that allows."""
        return None

    def server_process(self) -> int | None:
        """The pid of the managed server's first process (PostgreSQL's postmaster, mariadbd),
        whose process tree is the whole server: None for a server the run did not start."""
        return None

    def holds(self) -> str | None:
        """What ``stop`` removes, in one line naming where it is — what stays behind if the
        user stops the clean-up (None: nothing outside the run's work directory)."""
        return None

    def leftovers(self) -> list[Leftover]:
        """Objects earlier runs created here and did not drop (external servers)."""
        return []

    def remove(self, leftover: Leftover) -> None:
        """Drop one leftover, after checking again that its name and mark are a run's."""

    @abstractmethod
    def endpoint(self, path: str) -> dict[str, Any]:
        """What a worker's ``open`` needs to reach the target by ``path`` (may hold a
        password: sent to workers, never stored or printed)."""

    def listen_on(self, address: str, network: str) -> None:
        """Also accept connections on ``address`` (a netem link's host end) from ``network``:
        targets whose ``helps`` has "netem"."""
        raise NotImplementedError(f"{self.name} does not help netem paths")

    def round_trips(self, endpoint: dict[str, Any]) -> ContextManager[Callable[[], None]]:
        """A connection of the runner's own by ``endpoint`` (as a worker is given it), and one
        round trip on it (SELECT 1): the yardstick for what a path between them adds."""
        raise TargetUnavailable(f"{self.name}: the runner cannot time round trips to it")

    def behind_pooler(self) -> dict[str, Any]:
        """What PgBouncer needs to serve this server (socket_dir, port, user, password): targets
        whose ``helps`` has "pooler"."""
        raise NotImplementedError(f"{self.name} does not help pooler paths")

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Server version and the settings that decide results, for the run record."""

    def load_data(self, file: str) -> None:
        """Over existing data, a managed or embedded target holds what ``file`` gives it (a
        dump loaded into its server, a database file copied into the work directory), then
        serves it read-only; the user's file is only read."""
        raise TargetUnavailable(f"{self.name} cannot load a data file")

    def refuses_statement(self, sql: str, params: tuple) -> str | None:
        """Before a run over existing data: the server's own message where it would not run
        ``sql`` (neutral, ``?`` markers, given ``params``) — a syntax error, a table that is
        not there — found by planning it on the runner's read-only connection, never running
        it; None where it plans."""
        return None

    @abstractmethod
    def create(self, tables: list[Table]) -> None:
        """(Re)create the suite's tables in accessbench's own schema or file."""

    @abstractmethod
    def load(self, table: Table, rows: Iterable[tuple]) -> None:
        """Bulk-load rows by the DBMS's fast path."""

    @abstractmethod
    def execute(self, sql: str) -> None:
        """Run a statement on the runner's own connection (reset SQL)."""

    @abstractmethod
    def changes(self, sql: str, params: tuple = ()) -> int:
        """Run a write (neutral SQL, ``?`` markers) on the runner's own connection; the rows it
        changed — rows matched, on every DBMS (MariaDB counts them with CLIENT_FOUND_ROWS)."""

    @abstractmethod
    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Rows of a query (neutral SQL, ``?`` markers) on the runner's own connection: check
        SQL, and the reference results conformance compares workers with."""

    def reading(self) -> ContextManager[Callable[..., list[tuple]]]:
        """``query`` for a run of reads in a row (a reference's hundreds): the same here; a
        target whose ``query`` opens a connection each time holds one for the run instead."""
        return nullcontext(self.query)


_DECLARED = re.compile(r"^(char|varchar)\((\d+)\)$|^(numeric)\((\d+), ?(\d+)\)$")


def declared(sql_type: str) -> tuple[str, int | None, int | None]:
    """A suite's SQL type, its declared length or precision and scale apart: ``"varchar(20)"`` →
    ``("varchar", 20, None)``; ``"numeric(11,2)"`` → ``("numeric", 11, 2)``; ``"text"`` →
    ``("text", None, None)``."""
    m = _DECLARED.match(sql_type)
    if not m:
        return sql_type, None, None
    if m.group(1):
        return m.group(1), int(m.group(2)), None
    return "numeric", int(m.group(4)), int(m.group(5))


def column_ddl(table: Table, type_of) -> str:
    cols = [f"{c.name} {type_of(c.type)}" for c in table.columns]
    if table.primary_key:
        cols.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    return f"CREATE TABLE {table.name} ({', '.join(cols)})"


def index_ddl(table: Table) -> list[str]:
    return [
        f"CREATE INDEX {table.name}_{'_'.join(cols)}_idx ON {table.name} ({', '.join(cols)})"
        for cols in table.indexes
    ]


def process_alive(pid: int) -> bool:
    """The process runs (a killed server whose parent has not reaped it yet is a zombie: dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def closed_to_others(path: str) -> str | None:
    """The first directory from ``path`` up to / that other users cannot enter, or None: where
    a server running as its own OS user (as root runs it) cannot reach."""
    while path != "/":
        if not os.stat(path).st_mode & 0o001:
            return path
        path = os.path.dirname(path)
    return None


def server_can_enter(workdir: str, user: str) -> None:
    """As root a managed server runs as its own OS user, which must be able to enter the
    work directory's parents."""
    closed = closed_to_others(os.path.dirname(os.path.abspath(workdir)))
    if closed is not None:
        raise TargetUnavailable(
            f"--workdir: the '{user}' user cannot enter {closed}; choose a directory it can reach, e.g. under /tmp"
        )


# What a managed server says about the TLS it serves on a TLS path (paths/tls.py).
TLS_SERVED = "the run's own certificate authority, RSA 2048 keys, the server's and its client libraries' TLS defaults"


def server_owner(user: str) -> tuple[int, int] | None:
    """The uid and gid a managed server runs as when accessbench runs as root (None otherwise):
    the owner of the files it must keep private."""
    if os.geteuid() != 0:
        return None
    import pwd

    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid


def file_safe(name: str) -> str:
    """A name (a target's, a path's: ``postgresql@16?auth=md5``, ``pooler:session+tls``) as
    part of a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", name)
