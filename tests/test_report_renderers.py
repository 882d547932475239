"""The terminal and the HTML report are two renderings of one report model: read back from
their output (the terminal's text columns, the page's tables), they show the same figures for
every cell, the same header and the same verdict per step and target."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import pytest

from accessbench.report import model
from accessbench.report.html import render_html
from accessbench.report import terminal
from accessbench.report.terminal import render
from accessbench.runner.steadiness import LOOPS, Steadiness

# The columns both step tables show: terminal header → HTML header (None: the figure column,
# whose name is the step's unit in both).
SHARED = {None: None, "95% CI": "95% CI", "vs best": "×\u00a0behind", "p50": "p50", "p99": "p99",
          "client CPU/op": "client CPU", "server CPU/op": "server CPU", "RT/op": "RT/op", "CV": "CV",
          "verified": "verified"}
RIGHT = {"#", "95% CI", "CV", "vs best", "p50", "p99", "client CPU/op", "server CPU/op", "RT/op"}


class _Tables(HTMLParser):
    """The page's step tables: {step title: [{column: text}]}, and the header's pairs."""

    def __init__(self):
        super().__init__()
        self.steps: dict[str, list[dict[str, str]]] = {}
        self.verdicts: list[list[str]] = []
        self.header: list[tuple[str, str]] = []
        self._title = self._text = self._tag = None
        self._in_step = self._in_cells = self._in_meta = self._in_verdicts = False
        self._columns: list[str] = []
        self._row: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self._in_step = "step" in (a.get("class") or "").split()
        elif tag == "dl" and a.get("class") == "meta":
            self._in_meta = True
        elif tag == "table" and self._in_step and "cells" in (a.get("class") or ""):
            self._in_cells, self._columns = True, []
            self.steps[self._title] = []
        elif tag == "table" and "verdict-table" in (a.get("class") or ""):
            self._in_verdicts = True
        elif tag == "tr" and (self._in_cells or self._in_verdicts):
            self._row = []
        if tag in ("h2", "th", "td", "dt", "dd"):
            self._tag, self._text = tag, ""

    def handle_data(self, data):
        if self._text is not None:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_cells = self._in_verdicts = False
        elif tag == "dl":
            self._in_meta = False
        elif tag == "tr" and self._in_cells and self._row:
            self.steps[self._title].append(dict(zip(self._columns, self._row)))
            self._row = None
        elif tag == "tr" and self._in_verdicts and self._row:
            self.verdicts.append(self._row)
            self._row = None
        if tag != self._tag:
            return
        text, self._tag, self._text = self._text.strip(), None, None
        if tag == "h2" and self._in_step:
            self._title = text
        elif tag == "th" and self._in_cells:
            self._columns.append(text)
        elif tag == "td" and self._row is not None:
            self._row.append(text)
        elif tag == "dt" and self._in_meta:
            self.header.append((text, ""))
        elif tag == "dd" and self._in_meta:
            self.header[-1] = (self.header[-1][0], text)


def _terminal_tables(text: str, units: dict[str, str]) -> dict[str, list[dict[str, str]]]:
    """The terminal's step tables read back by column: a cell's text starts where its
    left-justified header starts, or ends where its right-justified header ends."""
    lines, tables, i = text.splitlines(), {}, 0
    titles = {f"{title} — ": title for title in units}
    while i < len(lines):
        title = next((t for prefix, t in titles.items() if lines[i].startswith(prefix)), None)
        if title is None:
            i += 1
            continue
        while not lines[i].lstrip().startswith("# "):  # the title (it may wrap), a blank line
            i += 1
        head = lines[i]
        spans = [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", head)]
        rows, i = [], i + 2  # the header, its rule
        while i < len(lines) and lines[i].strip():
            row = {}
            for m in re.finditer(r"\S+(?: \S+)*", lines[i]):
                for name, start, end in spans:
                    right = name in RIGHT or name == units[title]
                    if (m.end() == end) if right else (m.start() == start):
                        row[name] = m.group()
            rows.append(row)
            i += 1
        tables[title] = rows
    return tables


@pytest.fixture(scope="module")
def report(sqlite_run):
    return model.build(sqlite_run)


def test_the_terminal_and_the_html_report_show_the_same_figures_for_every_cell(sqlite_run, report):
    units = {s.title: s.unit for s in report.steps}
    terminal = _terminal_tables(render(sqlite_run, wide=True), units)
    page = _Tables()
    page.feed(render_html(sqlite_run))
    assert set(terminal) == set(page.steps) == set(units)
    compared = 0
    for title, unit in units.items():
        html_rows = {(r["method"], f"{r['target']}/{r['path']}"): r for r in page.steps[title]}
        term_rows = {(r["method"], r["target/path"]): r for r in terminal[title]}
        assert set(html_rows) == set(term_rows), title
        for key, h in html_rows.items():
            t = term_rows[key]
            for term_name, html_name in SHARED.items():
                shown = t.get(term_name or unit, "").lstrip("≈")
                assert shown == h[html_name or unit], (title, key, term_name or unit, shown, h[html_name or unit])
                compared += 1
    assert compared >= 10 * len(units)  # a figure per shared column, for every cell of every step


def test_both_reports_open_with_the_same_header(sqlite_run):
    page = _Tables()
    page.feed(render_html(sqlite_run))
    terminal = render(sqlite_run, wide=True).splitlines()
    assert page.header and all(f"{label}: {text}" in terminal for label, text in page.header)


def test_every_figure_of_a_row_is_the_views_own_format_of_its_value(report):
    for step in report.steps:
        for row in step.rows:
            assert row.figure.text == report.view.text(row.figure.value)
            if row.spread:
                assert row.spread_text == f"{report.view.text(row.spread[0].value)}–{report.view.text(row.spread[1].value)}"


def test_the_time_breakdown_never_exceeds_the_operations_time(report):
    rows = [row for step in report.steps for row in step.rows if row.shares]
    assert rows
    for row in rows:
        assert all(0.0 <= share.share <= 1.0 for share in row.shares)
        assert sum(share.share for share in row.shares) == pytest.approx(1.0)


def test_the_terminal_report_ends_with_the_pages_verdict_for_every_step_and_target(sqlite_run, report):
    page = _Tables()
    page.feed(render_html(sqlite_run))
    text = render(sqlite_run, wide=True)
    summary = [line.rstrip() for line in text[text.index("\nSummary"):].splitlines()]
    assert page.verdicts and len(page.verdicts) == len(report.verdicts)
    step = None
    for title, target, fastest, figure, against in page.verdicts:
        if title != step:  # the step's heading, then a line per target
            step = title
            assert f"  {title}" in summary
        expected = (f"{fastest} {figure}: {against}" if fastest else against)
        assert any(line.split(None, 1) == [target, expected] for line in summary), (title, target, expected)


def _markdown_tables(text: str) -> dict[str, list[dict[str, str]]]:
    tables, title, columns = {}, None, None
    for line in text.splitlines():
        if line.startswith("## "):
            title, columns = line[3:], None
        elif line.startswith("| ") and title in tables and columns is not None:
            tables[title].append(dict(zip(columns, [c.strip() for c in line.strip("| ").split(" | ")])))
        elif line.startswith("| ") and title is not None and title != "Summary":
            columns, tables[title] = [c.strip() for c in line.strip("| ").split(" | ")], []
    return tables


def test_the_markdown_export_shows_the_terminals_figures(sqlite_run, report):
    from accessbench.report import markdown

    units = {s.title: s.unit for s in report.steps}
    terminal = _terminal_tables(render(sqlite_run, wide=True), units)
    md = _markdown_tables(markdown.render_report(report))
    assert set(md) == set(terminal)
    for title, unit in units.items():
        term_rows = {(r["method"], r["target/path"]): r for r in terminal[title]}
        md_rows = {(r["method"], r["target/path"]): r for r in md[title]}
        assert set(md_rows) == set(term_rows)
        for key, m in md_rows.items():
            t = term_rows[key]
            for term_name, md_name in ((unit, unit), ("95% CI", "95% CI"), ("vs best", "× behind"), ("p50", "p50"),
                                       ("p99", "p99"), ("verified", "verified")):
                assert t.get(term_name, "") == m[md_name], (title, key, md_name)


@pytest.mark.parametrize("width", [100, 200])
def test_the_terminal_report_fits_its_width_with_every_essential_figure_whole(sqlite_run, report, width):
    text = render(sqlite_run, width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    units = {s.title: terminal.short_unit(s.unit) for s in report.steps}
    tables = _terminal_tables(text, units)
    for step in report.steps:
        shown = {(r["method"], r["target/path"]): r for r in tables[step.title]}
        assert len(shown) == len(step.rows)
        for row in step.rows:
            cells = shown[(row.cell["method"], row.result.where)]
            assert cells[units[step.title]] == row.figure.text and cells["95% CI"] == row.spread_text
            assert cells["vs best"].lstrip("≈") == row.behind.text and cells["p99"] == row.percentiles[99.0].text
            assert cells["verified"] == row.status


def test_the_seconds_per_1000_matrix_is_split_to_fit_and_keeps_every_step(sqlite_run, report):
    text = render(sqlite_run, width=100)
    heads = [line for line in text.splitlines() if line.startswith(" method ") and "target/path" in line
             and "#" not in line]
    steps = [name for head in heads for name in head.split()[2:]]
    assert steps == [s.title for s in report.steps] and len(heads) > 1


def test_the_host_speed_line_says_when_the_machine_was_unsteady():
    steady = {"probes": 3, "timings": 45, "quickest_ms": 1.0, "median_ms": 1.02, "p90_ms": 1.1, "slowest_ms": 1.4}
    assert model.host_speed(steady) == ("a fixed piece of work took 1.00 ms at best; median +2%, p90 +10%, slowest +40% "
                                  "(45 timings, before and after each step)")
    unsteady = model.host_speed({**steady, "p90_ms": 1.3})
    assert "UNSTEADY" in unsteady and "CIs are wider" in unsteady


def test_the_steadiness_probe_times_the_same_work_each_time():
    probe = Steadiness()
    assert probe.summary() is None
    probe.probe()
    probe.probe()
    summary = probe.summary()
    assert summary["probes"] == 2 and summary["timings"] == 2 * LOOPS
    assert summary["quickest_ms"] == round(min(probe.ms), 3) and summary["slowest_ms"] == round(max(probe.ms), 3)


def test_a_run_ends_with_the_verdict_per_step_and_a_ranking_in_two_screens_pointing_to_the_rest(sqlite_run, report):
    brief = terminal.render_brief(sqlite_run, width=120)
    lines = brief.splitlines()
    assert len(lines) <= 100  # two screens of a 50-line terminal
    for v in report.verdicts:  # every step's verdict, as the full report ends with it
        assert v.step.title in brief and v.target in brief
    ranked = model.standings(report)
    assert ranked and "Ranking per target" in brief and ranked[0].label in brief
    for target in {s.target for s in ranked}:  # each target's, the nearest to its best first
        mine = [s for s in ranked if s.target == target]
        assert mine[0].behind >= 1 and all(a.behind <= b.behind for a, b in zip(mine, mine[1:]))
    assert f"accessbench show {sqlite_run.run.id} --full" in " ".join(brief.split())
    assert "p99" not in brief  # the step tables are the full report's


def test_a_step_a_target_refuses_by_design_is_one_line_not_a_failure_to_verify(sqlite_run):
    report = model.build(sqlite_run)  # a report of its own, changed below
    step = report.steps[0]
    cells = [row.result for row in step.rows if row.cell.target == "sqlite"]
    for r in cells:  # every cell of the step on sqlite: unsupported, for one reason
        step.rows.remove(next(row for row in step.rows if row.result is r))
        r.rate = None
        r.cell = dataclasses.replace(r.cell, status="unsupported", message="SQLite: read-only by design")
        step.not_measured.append(r)
    refused = model.refused(step, "sqlite")
    assert refused is not None and refused.reason == "refused" and refused.best is None
    report.verdicts = [refused if v.step is step and v.target == "sqlite" else v for v in report.verdicts]
    text = terminal.render_report(report, width=200)
    summary = text[text.index("Summary"):]
    assert f"sqlite refuses {step.title} by design — SQLite: read-only by design" in summary
    assert "no verified cell" not in summary
