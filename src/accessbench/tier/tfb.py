"""TechEmpower's Framework Benchmarks' database tests as the tier's pages serve them
(docs/tier.md, TechEmpower's tests): what a page must answer, checked here by the tier worker
on a real request before a step is measured, as TechEmpower's own verifier does
(toolset/test_types/verifications.py and fortune/fortune_html_parser.py in its repository).

- ``db``: one row of World by a random key, as the JSON object ``{"id": …, "randomNumber": …}``;
- ``queries``: N such rows, one query each, as a JSON array of N objects;
- ``fortunes``: every row of Fortune, one more added in memory (``ADDED``), sorted by message,
  each message HTML-escaped into a table page (``text/html; charset=utf-8``);
- ``updates``: N rows read as ``queries`` does, each given a new random number and written
  back (one statement per row), answered as ``queries`` answers.

A problem is said in one line naming the page; a page that answers well is None.

Every test's page also says where its time went, in a ``Server-Timing`` header (W3C Server
Timing): ``db``, the request's wall time in the database driver (getting its connection where
the policy makes or borrows one, each statement, its rows read), and ``app``, the whole page's,
from its handler's first line to its answer made, the ``db`` inside it; each in milliseconds to
the microsecond. The tier worker reads them on one of the load's connections, which it drives
itself (tier/sampler.py), so a ranking says how much of a request was the database, the page,
and neither (the app server, the HTTP exchange, waiting for a process).
"""

from __future__ import annotations

import json
from html import escape
from html.parser import HTMLParser

PAGES = ("db", "queries", "fortunes", "updates")  # the page steps that are its tests (suite/model.py)
# TechEmpower's rule: the fortune each request adds before sorting, with id 0.
ADDED = "Additional fortune added at request time."
JSON_TYPE = "application/json"
HTML_TYPE = "text/html; charset=utf-8"


def server_timing(db_ns: int, app_ns: int) -> str:
    """A page's ``Server-Timing`` value: its time in the driver and in the whole page."""
    return f"db;dur={db_ns / 1e6:.3f}, app;dur={app_ns / 1e6:.3f}"


def read_timing(header: str | None) -> tuple[int, int] | None:
    """(db, app) in nanoseconds from a ``Server-Timing`` value as the pages write it (any
    order, other metrics and parameters ignored); None where either is missing or malformed."""
    found: dict[str, int] = {}
    for metric in (header or "").split(","):
        name, *params = (part.strip() for part in metric.split(";"))
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "dur" and name in ("db", "app"):
                try:
                    found[name] = round(float(value.strip().strip('"')) * 1e6)
                except ValueError:
                    return None
    return (found["db"], found["app"]) if len(found) == 2 else None


def html_page(rows) -> str:
    """The fortunes page of ``rows`` (id, message), already sorted, in TechEmpower's template, as
    the Python pages write it: each message escaped by Python's ``html.escape`` (the other
    languages' pages escape in their own)."""
    cells = "".join(f"<tr><td>{i}</td><td>{escape(str(m))}</td></tr>" for i, m in rows)
    return ("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
            f"<tr><th>id</th><th>message</th></tr>{cells}</table></body></html>")


def problem(page: str, status: int, content_type: str, body: bytes, queries: int = 1, lo: int = 1,
            hi: int = 10000, fortunes: list | None = None) -> str | None:
    """What is wrong with a page's answer to one real request, or None. ``lo``/``hi``: the keys'
    range (and the numbers'); ``fortunes``: the rows (id, message) the verification pass read,
    the added one among them, in the page's order."""
    if status != 200:
        return f"the {page} page answered {status}: {body[:200].decode(errors='replace').strip()}"
    kind = content_type.split(";")[0].strip().lower()
    if page == "fortunes":
        if content_type.replace(" ", "").lower() != HTML_TYPE.replace(" ", ""):
            return f"the fortunes page is {content_type!r}, not {HTML_TYPE!r}"
        return _fortunes_problem(body, fortunes or [])
    if kind != JSON_TYPE:
        return f"the {page} page is {content_type!r}, not {JSON_TYPE!r}"
    try:
        answer = json.loads(body)
    except ValueError as e:
        return f"the {page} page is not JSON: {e}"
    if page == "db":
        return _world_problem(page, answer, lo, hi)
    if not isinstance(answer, list):
        return f"the {page} page answered a JSON {type(answer).__name__}, not an array"
    if len(answer) != queries:
        return f"the {page} page answered {len(answer)} rows for queries={queries}"
    return next(filter(None, (_world_problem(page, o, lo, hi) for o in answer)), None)


def _world_problem(page: str, world, lo: int, hi: int) -> str | None:
    if not isinstance(world, dict) or set(world) != {"id", "randomNumber"}:
        return f"the {page} page answered {str(world)[:80]}, not an object of id and randomNumber alone"
    for key in ("id", "randomNumber"):
        value = world[key]
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            return f"the {page} page answered {key} {value!r}: an integer from {lo} to {hi} was due"
    return None


def _fortunes_problem(body: bytes, want: list) -> str | None:
    try:
        page = _Table.read(body.decode("utf-8"))
    except UnicodeDecodeError as e:
        return f"the fortunes page is not UTF-8: {e}"
    if page.title != "Fortunes":
        return f"the fortunes page's title is {page.title!r}, not 'Fortunes'"
    if not page.rows or page.rows[0] != ["id", "message"]:
        return "the fortunes page's table does not begin with the header row id, message"
    got = page.rows[1:]
    expected = [[str(i), str(m)] for i, m in want]
    if page.script or got != expected:
        first = next((n for n, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        seen = got[first] if first < len(got) else "nothing"
        due = expected[first] if first < len(expected) else "nothing"
        return (f"the fortunes page's row {first + 1} is {seen}, not {due}"
                + (" (a message's markup was not escaped)" if page.script else ""))
    if [m for _, m in want] != sorted(m for _, m in want) or [0, ADDED] not in [[i, m] for i, m in want]:
        return "the fortunes page's rows are not every fortune and the added one, sorted by message"
    return None


class _Table(HTMLParser):
    """The title, the table's rows as their cells' text (character references resolved, as a
    browser shows them), and whether any tag other than the template's appeared (an unescaped
    message's markup)."""

    TEMPLATE = {"html", "head", "title", "body", "table", "tr", "th", "td", "meta", "thead", "tbody"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title, self.rows, self.script = "", [], False
        self._cell: list[str] | None = None
        self._in_title = False

    @classmethod
    def read(cls, text: str) -> "_Table":
        parser = cls()
        parser.feed(text)
        parser.close()
        return parser

    def handle_starttag(self, tag, attrs):
        if tag not in self.TEMPLATE:
            self.script = True
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append("".join(self._cell))
            self._cell = None
        self._in_title = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_title:
            self.title += data
