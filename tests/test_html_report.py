"""The HTML report of a real SQLite run, opened from file:// in headless Chromium (Debian's
chromium and chromedriver, nothing downloaded): self-contained, one bar per measured cell
carrying the run's own median, sortable tables, filters that hide rows and bars, no script
errors. Leaves a full-page screenshot in test-artifacts/report.png."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from accessbench import formatting as fmt
from accessbench.report.html import render_html
from accessbench.stats.cells import analyse, by_step


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture(scope="module")
def stored(sqlite_run):
    return sqlite_run


@pytest.fixture(scope="module")
def report(stored, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(render_html(stored), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def results(stored):
    return analyse(stored)


@pytest.fixture(scope="module")
def browser(report):
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if missing:
        pytest.skip(f"!!! {' and '.join(missing)} ABSENT: THE HTML REPORT WAS NOT CHECKED IN A REAL BROWSER "
                    "(apt-get install chromium chromium-driver) !!!")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit chromedriver path: Selenium Manager is never asked to fetch one.
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.get(report.as_uri())
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser, report):
    """The report freshly loaded, so no test sees another's sorting or filtering."""
    browser.get(report.as_uri())
    return browser


def steps_of(results):
    return [(step, [r for r in rs if r.measured]) for _, step, rs in by_step(results)]


class _Resources(HTMLParser):
    """Every attribute through which a page would load something."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href", "srcset", "data", "poster", "action", "xlink:href") and value:
                self.found.append((tag, name, value))
        names = {n for n, _ in attrs}
        if tag == "script" and "src" in names or tag == "link" and dict(attrs).get("rel") == "stylesheet":
            self.found.append((tag, "external", str(attrs)))


def test_the_report_references_no_external_resource(report):
    html = report.read_text(encoding="utf-8")
    parser = _Resources()
    parser.feed(html)
    external = [(tag, name, value) for tag, name, value in parser.found
                if name == "external" or re.match(r"\s*(https?:)?//", value, re.I)]
    assert not external
    assert not re.search(r"<script[^>]*\bsrc=", html, re.I)
    assert not re.search(r"<link[^>]*stylesheet", html, re.I)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html, re.I)  # nor fonts or images from CSS
    assert "<style>" in html and "<script>" in html


def test_every_step_has_a_rendered_bar_chart_with_one_bar_per_measured_cell(page, results):
    from selenium.webdriver.common.by import By

    for step, measured in steps_of(results):
        svg = page.find_element(By.CSS_SELECTOR, f'svg[data-chart="bars"][data-step="{step}"]')
        assert svg.size["width"] > 0 and svg.size["height"] > 0, step
        bars = svg.find_elements(By.CSS_SELECTOR, "g.bar")
        assert len(bars) == len(measured), step
        for bar in bars:
            rect = bar.find_element(By.TAG_NAME, "rect")
            assert rect.size["width"] > 0 and rect.size["height"] > 0


def test_each_bar_carries_the_runs_median_figure(page, results):
    from selenium.webdriver.common.by import By

    for step, measured in steps_of(results):
        expected = {(r.cell["method"], r.cell["target"], r.cell["path"]): fmt.rate(r.rate.median) for r in measured}
        svg = page.find_element(By.CSS_SELECTOR, f'svg[data-chart="bars"][data-step="{step}"]')
        shown = {}
        for bar in svg.find_elements(By.CSS_SELECTOR, "g.bar"):
            key = tuple(bar.get_attribute(f"data-{k}") for k in ("method", "target", "path"))
            shown[key] = fmt.rate(float(bar.get_attribute("data-value")))
            assert bar.get_attribute("data-text") == shown[key]
        assert shown == expected, step


def test_the_step_tables_first_row_is_the_fastest_cell(page, results):
    from selenium.webdriver.common.by import By

    for step, measured in steps_of(results):
        fastest = max((r for r in measured if r.ranked), key=lambda r: r.rate.median)
        section = page.find_element(By.CSS_SELECTOR, f'section.step[data-step="{step}"]')
        first = section.find_element(By.CSS_SELECTOR, "table.cells tbody tr")
        assert first.get_attribute("data-method") == fastest.cell["method"], step
        assert first.find_element(By.CSS_SELECTOR, "td").text == "1"


def test_the_verdict_names_the_fastest_method_per_step_and_weighs_it_against_the_next_method(page, results):
    from selenium.webdriver.common.by import By

    rows = page.find_elements(By.CSS_SELECTOR, "#verdict tbody tr")
    assert len(rows) == len(steps_of(results))  # one target (sqlite) in this run
    for row, (step, measured) in zip(rows, steps_of(results)):
        cells = [td.text for td in row.find_elements(By.CSS_SELECTOR, "td")]
        ranked = sorted((r for r in measured if r.ranked), key=lambda r: -r.rate.median)
        assert cells[0] == step and cells[1] == "sqlite"
        assert cells[2] == f"{ranked[0].cell['method']} @ {ranked[0].cell['path']}"
        assert cells[3].startswith(fmt.rate(ranked[0].rate.median))
        if len(ranked) > 1:
            assert ("faster [" in cells[4] or "no significant difference" in cells[4]), cells[4]
            assert ranked[1].cell["method"] in cells[4]


def test_clicking_a_column_header_sorts_the_table_by_it(page, results):
    from selenium.webdriver.common.by import By

    step, measured = steps_of(results)[0]
    table = page.find_element(By.CSS_SELECTOR, f'section.step[data-step="{step}"] table.cells')
    headers = [th.text.replace("\n", " ") for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    column = headers.index("p50")

    def p50s():
        return [float(td.get_attribute("data-sort"))
                for td in table.find_elements(By.CSS_SELECTOR, f"tbody tr td:nth-child({column + 1})")]

    header = table.find_elements(By.CSS_SELECTOR, "thead th")[column]
    header.click()
    ascending = p50s()
    assert ascending == sorted(ascending) and len(ascending) == len(measured)
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert p50s() == sorted(ascending, reverse=True)
    method_header = table.find_elements(By.CSS_SELECTOR, "thead th")[headers.index("method")]
    method_header.click()
    methods = [td.text for td in table.find_elements(By.CSS_SELECTOR, "tbody tr td:nth-child(2)")]
    assert methods == sorted(methods)


def test_unticking_a_method_hides_its_rows_and_its_bars(page, results):
    from selenium.webdriver.common.by import By

    method = "py-sqlite3"
    rows = page.find_elements(By.CSS_SELECTOR, f'table.cells tr[data-method="{method}"]')
    bars = page.find_elements(By.CSS_SELECTOR, f'svg[data-chart="bars"] g.bar[data-method="{method}"]')
    others = page.find_elements(By.CSS_SELECTOR, f'svg[data-chart="bars"] g.bar:not([data-method="{method}"])')
    assert rows and bars and all(r.is_displayed() for r in rows) and all(b.is_displayed() for b in bars)

    box = page.find_element(By.CSS_SELECTOR, f'#filters input[data-key="method"][value="{method}"]')
    if not box.is_displayed():  # many methods: the checkboxes sit in a drop-down
        box.find_element(By.XPATH, "ancestor::details/summary").click()
    box.click()
    assert not box.is_selected()
    assert not any(r.is_displayed() for r in rows)
    assert not any(b.is_displayed() for b in bars)
    assert all(b.is_displayed() for b in others)
    lines = page.find_elements(By.CSS_SELECTOR, f'svg[data-chart="percentiles"] g.series[data-method="{method}"]')
    assert not any(line.is_displayed() for line in lines)

    box.click()
    assert all(r.is_displayed() for r in rows) and all(b.is_displayed() for b in bars)


def test_the_page_logs_no_javascript_errors(page):
    try:
        log = page.get_log("browser")
    except Exception as e:  # a driver without the log endpoint: nothing to read
        pytest.skip(f"the browser log is not available from this chromedriver: {e}")
    severe = [entry for entry in log if entry.get("level") == "SEVERE"]
    assert not severe


def test_a_full_page_screenshot_is_saved(page):
    ARTIFACTS.mkdir(exist_ok=True)
    height = page.execute_script("return document.body.scrollHeight")
    page.set_window_size(1400, height)
    target = ARTIFACTS / "report.png"
    try:
        assert page.save_screenshot(str(target))
    finally:
        page.set_window_size(1400, 1000)
    assert target.stat().st_size > 10_000


def test_filtering_every_cell_out_says_so_and_the_url_keeps_the_filters(browser, report):
    from selenium.webdriver.common.by import By

    browser.get(report.as_uri())
    boxes = browser.find_elements(By.CSS_SELECTOR, '#filters input[data-key="method"]')
    for box in boxes:
        if not box.is_displayed():  # many methods: the checkboxes sit in a drop-down
            box.find_element(By.XPATH, "ancestor::details/summary").click()
        box.click()
    empties = browser.find_elements(By.CSS_SELECTOR, "section.step p.empty")
    assert empties and all(p.is_displayed() for p in empties)
    verdict_empty = browser.find_element(By.CSS_SELECTOR, "#verdict p.empty")
    assert not verdict_empty.is_displayed()  # the verdict's rows are per target
    browser.find_element(By.CSS_SELECTOR, '#filters input[data-key="target"][value="sqlite"]').click()
    assert verdict_empty.is_displayed()
    hidden = sorted([f"method:{b.get_attribute('value')}" for b in boxes] + ["target:sqlite"])
    assert sorted(browser.current_url.split("#filter=", 1)[1].split(",")) == hidden

    # the same URL opens the page filtered as it was left
    browser.get("about:blank")
    browser.get(f"{report.as_uri()}#filter=method:py-sqlite3")
    rows = browser.find_elements(By.CSS_SELECTOR, 'table.cells tr[data-method="py-sqlite3"]')
    assert rows and not any(r.is_displayed() for r in rows)
    box = browser.find_element(By.CSS_SELECTOR, '#filters input[data-key="method"][value="py-sqlite3"]')
    assert not box.is_selected()
    assert not any(p.is_displayed() for p in browser.find_elements(By.CSS_SELECTOR, "section.step p.empty"))


SNAPSHOT = """
const num = v => (+v).toFixed(1);
const attrs = (sel, ...names) => [...document.querySelectorAll(sel)].map(e => names.map(n => num(e.getAttribute(n))).join(","));
return {
  ticks: [...document.querySelectorAll("svg.chart g.grid text")].map(t => t.textContent + "@" + num(t.getAttribute("x")) + "," + num(t.getAttribute("y"))),
  bars: attrs("svg.chart-bars g.bar rect", "x", "width"),
  dots: attrs("svg.chart-bars circle.dot", "cx"),
  values: attrs("svg.chart-bars text.value", "x"),
  markers: attrs("circle.marker", "cx", "cy"),
  scales: [...document.querySelectorAll("svg.chart-bars")].map(s => s.classList.contains("log")),
  titles: [...document.querySelectorAll("svg .axis-title")].map(t => t.textContent),
  grey: [...document.querySelectorAll(".series")].map(s => s.classList.contains("rest")),
  verdicts: [...document.querySelectorAll("#verdict tbody td")].map(t => t.textContent + "|" + (t.title || "")),
  ranks: [...document.querySelectorAll("table.cells td.rank")].map(t => t.textContent),
  behind: [...document.querySelectorAll("table.cells td.behind")].map(t => t.textContent),
};"""


def test_redrawn_by_the_script_for_every_cell_the_page_is_the_report_as_drawn(page):
    """The script redraws axes, ranks and verdicts for what a filter leaves by the report's
    own rules: with nothing filtered out it must land exactly where report/charts.py did."""
    from selenium.webdriver.common.by import By

    drawn = page.execute_script(SNAPSHOT)
    page.find_element(By.ID, "filters-reset").click()  # every cell shown: the script redraws them all
    redrawn = page.execute_script(SNAPSHOT)
    assert drawn["bars"] and drawn["markers"] and drawn["verdicts"] and drawn["ranks"]
    for key in drawn:
        assert redrawn[key] == drawn[key], key


def test_a_filter_reranks_the_cells_left_and_redoes_times_behind_the_verdict_and_the_axis(page, stored):
    """Unticking each step's fastest method: the next cell becomes #1 and 1.00× behind, the
    verdict names it (alone among those shown), and the axis is the one the report draws for
    that cell alone."""
    from selenium.webdriver.common.by import By

    from accessbench.report import charts
    from accessbench.report.html import _axis_title, _bar
    from accessbench.report.model import build

    report = build(stored)
    step = next(s for s in report.steps if len({row.cell["method"] for row in s.rows if row.rank}) == 2)
    fastest = step.rows[0].cell["method"]
    left = [row for row in step.rows if row.cell["method"] != fastest]
    box = page.find_element(By.CSS_SELECTOR, f'#filters input[data-key="method"][value="{fastest}"]')
    if not box.is_displayed():
        box.find_element(By.XPATH, "ancestor::details/summary").click()
    box.click()

    section = page.find_element(By.CSS_SELECTOR, f'section.step[data-step="{step.step}"]')
    rows = [r for r in section.find_elements(By.CSS_SELECTOR, "table.cells tbody tr") if r.is_displayed()]
    assert [r.get_attribute("data-method") for r in rows] == [row.cell["method"] for row in left]
    ranks = [r.find_element(By.CSS_SELECTOR, "td.rank").text for r in rows if r.get_attribute("data-ranked") is not None]
    assert ranks == [str(i + 1) for i in range(len(ranks))]
    assert rows[0].find_element(By.CSS_SELECTOR, "td.behind").text == "1.00×"

    verdict = next(r for r in page.find_elements(By.CSS_SELECTOR, "#verdict tbody tr")
                   if r.find_element(By.CSS_SELECTOR, "td").text == step.title)
    cells = [td.text for td in verdict.find_elements(By.CSS_SELECTOR, "td")]
    assert cells[2] == f"{left[0].cell['method']} @ {left[0].cell['path']}"
    assert cells[4] == "the only verified method among those shown"

    alone = charts.bar_chart(step.step, [_bar(row) for row in left], _axis_title(report.view, step), report.view.form, 600)
    expected = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', alone)
    svg = section.find_element(By.CSS_SELECTOR, 'svg[data-chart="bars"]')
    assert [t.text for t in svg.find_elements(By.CSS_SELECTOR, "g.grid text")] == expected
