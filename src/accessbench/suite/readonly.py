"""What a statement would write: a suite over a user's existing data (``data = "existing"``)
refuses it before the run, naming it.

This is the first of two guards, and the weaker: every session of such a run is opened
read-only (protocol/PROTOCOL.md, ``read_only``), so the server itself refuses what slips past
here. Its point is the user's time and a clear line — the statement named before anything
starts — not safety, which the server's refusal gives. sqlglot parses the statement in the
target DBMS's dialect; anything but a query (SELECT, a set operation, VALUES, SHOW) or a query
that holds a write (a data-modifying WITH, SELECT … INTO, a row lock) is a write. A statement
sqlglot cannot parse is judged by its first keyword. What a function does inside a query
(``nextval``) is the server's to refuse.
"""

from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

DIALECTS = {"postgresql": "postgres", "mariadb": "mysql", "sqlite": "sqlite", "duckdb": "duckdb"}
READS = (exp.Query, exp.Values, exp.Show, exp.Describe)
WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable,
          exp.Into, exp.Lock, exp.Set, exp.Command, exp.Use, exp.Transaction, exp.Commit, exp.Rollback)
logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to a Command" warning: ours to judge
# First keywords of statements that write, or change the session or the server, on some DBMS
WRITE_WORDS = frozenset("""INSERT UPDATE DELETE MERGE UPSERT REPLACE CREATE DROP ALTER TRUNCATE RENAME GRANT REVOKE
    COMMENT SECURITY COPY LOAD IMPORT EXPORT INSTALL CALL DO EXECUTE EXEC PREPARE DEALLOCATE SET RESET USE LOCK UNLOCK
    BEGIN START COMMIT ROLLBACK SAVEPOINT RELEASE VACUUM ANALYZE ANALYSE CLUSTER REINDEX REFRESH CHECKPOINT DISCARD
    LISTEN NOTIFY UNLISTEN FLUSH KILL OPTIMIZE REPAIR HANDLER ATTACH DETACH PRAGMA""".split())
_EXPLAIN = re.compile(r"^\s*explain\b(?P<options>(?:\s*\([^)]*\)|\s+(?:analy[sz]e|verbose|extended|partitions|"
                      r"format\s*=\s*\w+)\b)*)", re.I)


def write_in(sql: str, dbms: str) -> str | None:
    """What in ``sql`` would write or change the session (``"UPDATE"``, ``"SELECT … INTO"``,
    ``"FOR UPDATE"``), or None for a plain read."""
    text = _without_comments(sql)
    if explained := _EXPLAIN.match(text):  # EXPLAIN only plans; EXPLAIN ANALYZE runs what it explains
        return write_in(text[explained.end():], dbms) if "analy" in explained["options"].lower() else None
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECTS.get(dbms)) if s is not None]
    except SqlglotError:
        return _head_writes(sql)
    if len(statements) != 1:
        return f"{len(statements)} statements" if statements else None
    node = statements[0]
    if isinstance(node, exp.Command):  # sqlglot's "some statement": by its first keyword
        return _head_writes(sql)
    if not isinstance(node, READS):
        return _head(sql)
    for inner in node.find_all(*WRITES):
        if isinstance(inner, exp.Lock):
            return "FOR UPDATE" if inner.args.get("update") else "FOR SHARE"
        if isinstance(inner, exp.Into):
            return "SELECT … INTO"
        return inner.key.upper().replace("TRUNCATETABLE", "TRUNCATE")
    return None


def plannable(sql: str) -> bool:
    """Whether ``EXPLAIN`` can be put before ``sql`` (not before a SHOW, or another EXPLAIN)."""
    return _head(sql) not in ("EXPLAIN", "SHOW", "DESCRIBE", "DESC")


def _head_writes(sql: str) -> str | None:
    """For a statement sqlglot has no tree of: its first keyword, where that keyword writes or
    changes the session; None for anything else (a query in syntax sqlglot lacks, or no
    statement at all — the server's EXPLAIN then says what is wrong)."""
    head = _head(sql)
    return head if head in WRITE_WORDS else None


def _without_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.S)


def _head(sql: str) -> str:
    words = _without_comments(sql).split()
    return words[0].upper() if words else "an empty statement"
