"""The HTML report's charts as pure logic: made-up figures in, SVG markup out."""

import re

import numpy as np
import pytest
from scipy import stats

from accessbench.report import charts
from accessbench.stats import bootstrap
from accessbench.stats.compare import _mann_whitney_p


def series(n):
    return [charts.Series(f"m{i}", (charts.Point(0, 100.0 + i, "p50", ""), charts.Point(1, 200.0 + i, "p99", "")),
                          data={"method": f"m{i}", "target": "t", "path": "p"}) for i in range(n)]


def panel_markup(n):
    panel = charts.Panel("t/p", tuple(series(n)), {"target": "t", "path": "p"})
    return charts.panels([panel], lambda p, s, legend: charts.percentile_chart("step", s, legend, ["p50", "p99"], 485))[0]


def test_no_two_lines_of_a_thirty_line_panel_look_alike():
    svg = panel_markup(30)
    looks = re.findall(r'<g class="series[^"]*" style="--c:([^"]+)"[^>]*>.*?<polyline class="line" points="[^"]*"'
                       r'(?: stroke-dasharray="([^"]*)")?', svg)
    assert len(looks) == 30 and len(set(looks)) == 30


def test_only_a_panels_fastest_lines_are_coloured_until_the_reader_asks():
    svg = panel_markup(12)
    classes = re.findall(r'<g class="(series[^"]*)"', svg)
    assert classes == ["series"] * charts.TOP_N + ["series rest"] * (12 - charts.TOP_N)
    legend = re.findall(r'<g class="(legend-item[^"]*)"', svg)
    assert legend == ["legend-item"] * charts.TOP_N + ["legend-item rest"] * (12 - charts.TOP_N)


def test_a_panel_is_hidden_by_its_target_and_path_filters():
    svg = panel_markup(2)
    assert re.match(r'<svg data-filter data-target="t" data-path="p" ', svg)


def bars(*values):
    return [charts.Bar(f"b{i}", v, f"{v:g}") for i, v in enumerate(values)]


def test_bars_spanning_more_than_the_log_threshold_become_dots_on_a_log_axis():
    svg = charts.bar_chart("connect", bars(59_605, 65), "connections/s", "rate", 600)
    assert 'class="chart chart-bars log"' in svg and 'data-scale="log"' in svg
    assert "log scale, dots" in svg
    dots = [float(x) for x in re.findall(r'<circle class="dot" cx="([\d.]+)"', svg)]
    assert dots[0] > dots[1]


def test_bars_within_the_log_threshold_start_at_zero():
    svg = charts.bar_chart("sel1", bars(1200, 1000), "ops/s", "rate", 600)
    assert 'class="chart chart-bars"' in svg and 'data-scale="linear"' in svg
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', svg)
    assert ticks[0] == "0"


def test_the_pattern_keyed_mann_whitney_p_is_scipys():
    rng = np.random.default_rng(5)
    for _ in range(300):
        a, b = rng.random(rng.integers(2, 9)), rng.random(rng.integers(2, 9))
        if rng.random() < 0.3:
            b[0] = a[0]  # ties take scipy's own path
        assert _mann_whitney_p(a, b) == pytest.approx(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue,
                                                      rel=1e-12)


def test_the_ratio_interval_is_scipys_two_sample_percentile_bootstrap_up_to_resampling_noise():
    rng = np.random.default_rng(7)
    gaps = []
    for _ in range(20):
        a, b = rng.normal(110, 8, 15), rng.normal(100, 8, 15)
        ours = bootstrap.ratio_ci(a, b)
        theirs = stats.bootstrap((a, b), lambda x, y, axis=-1: np.median(x, axis=axis) / np.median(y, axis=axis),
                                 n_resamples=bootstrap.RESAMPLES, method="percentile", vectorized=True,
                                 rng=np.random.default_rng(1)).confidence_interval
        gaps += [abs(ours[0] / theirs.low - 1), abs(ours[1] / theirs.high - 1)]
    assert np.median(gaps) < 0.01


def test_a_cells_interval_is_reproducible_and_two_cells_never_share_resamples():
    a = np.array([100.0, 101, 103, 99, 98])
    b = a + 1000
    assert bootstrap.median_ci(a) == bootstrap.median_ci(a.copy())
    ma, mb = bootstrap.resampled_medians(a), bootstrap.resampled_medians(b)
    # Shared positions would make b's medians a's plus 1000, draw for draw.
    assert not np.allclose(mb - ma, 1000)


def test_the_studies_ratio_chart_sets_each_ratio_today_beside_the_published_one_on_a_log_axis():
    from accessbench.report.charts import RatioRow, ratio_chart

    svg = ratio_chart([RatioRow("S4 · remote / local", 20.4, 19.2, 23.8, 4.2, "reproduced"),
                       RatioRow("S4 · static / dynamic", 1.15, 0.93, 1.34, None, "not reproduced")], 800)
    assert svg.count('class="published"') == 1 and svg.count('class="dot"') == 2  # no figure: no diamond
    assert svg.count('class="band"') == 1 and 'class="unity"' in svg  # the rule's band, and 1×
    assert "today 20.4× [19.2×–23.8×], published 4.2× — reproduced" in svg
    assert ratio_chart([], 800) == ""


def test_a_labelled_breakdown_names_each_request_and_keys_only_the_parts_it_draws():
    from accessbench.report.model import Share

    rows = [charts.Breakdown("node-http-pg · db-c64", "6.4 ms", (Share("database", 0.44, "2.81 ms"),
                                                                 Share("page", 0.003, "17.2 µs"),
                                                                 Share("outside", 0.557, "3.58 ms")))]
    svg = charts.breakdown_chart("Where each request's time went", rows, 960, labelled=True, per="per request")
    assert ">node-http-pg · db-c64</text>" in svg and ">per request</text>" in svg
    assert re.findall(r'class="key"><title>[^<]*</title><rect class="part-(\w+)"', svg) == ["database", "page", "outside"]
    assert "6.4 ms per request — database 2.81 ms (44%) · page 17.2 µs (0%) · outside 3.58 ms (56%)" in svg
    unlabelled = charts.breakdown_chart("s", rows, 960)  # beside a bar chart: its rows carry no label of their own
    assert 'class="label"' not in unlabelled and ">per op</text>" in unlabelled
