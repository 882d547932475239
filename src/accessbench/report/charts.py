"""Charts for the HTML report, drawn as inline SVG strings: no library, no external file.

Every function takes plain data (the figures already formatted by the caller, so the charts
show exactly the terminal report's numbers) and returns one ``<svg>``. Each root carries
``data-chart`` and ``data-step``; each mark carries its numbers as ``data-*`` attributes and a
``<title>`` tooltip, and rows that a reader can filter carry ``data-filter`` plus their
``data-method``/``data-target``/``data-path``. Charts whose marks sit in rows (bars, time
breakdown) also carry their row geometry, so the page's script can close the gaps left by
filtered rows; charts with a value axis carry its geometry (``data-scale``, the pixel span,
the figures' form), so the script can redraw the axis for the marks a filter leaves. The
script (templates/report.js) redraws with the same rules as here: the 1-2-5 ticks, the switch
to a log scale past LOG_SCALE_ABOVE×, the padded log range and the estimated label widths.

Many series: the latency charts are small multiples, one panel per target and path, each
series with a look (colour and dash) of its own within its panel; the TOP_N fastest are drawn
in colour and the rest in grey until asked for, and hovering a line or its name picks it out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Callable, Sequence

from .. import formatting as fmt
from .model import Share

# Layout constants (px). Text widths are estimated, as there is no font metrics here:
# CHAR_W is a generous average width of a 12 px system-font character.
CHAR_W = 6.8
ROW_H = 20
BAR_H = 12
AXIS_TOP = 44          # room above the first row: axis title and tick labels
LINE_TOP = 28          # room above a line chart's plot: its title
X_AXIS_H = 40          # room under a line chart's plot: tick labels and the x title
TEXT_DY = 4            # from a row's middle to the baseline of 12 px text centred on it
SWATCH = 10            # a legend's colour square
TITLE_Y = 14           # baseline of a chart's title line
TICK_GAP = 5           # between tick labels, tick lines and the first row
PAD = 8
MAX_LABEL_W = 300
WHISKER_CAP = 4
MARKER_R = 3.5
DOT_R = 4.5            # a dot plot's dot (bars on a log scale)
LINE_H = 260           # plot height of line charts
LEGEND_ROW_H = 17
LEGEND_SWATCH_W = 28   # line sample and gap before a legend label
LOG_SCALE_ABOVE = 30   # bars switch to a log axis when the largest figure is this many times the smallest
TICKS = 6              # about how many ticks a linear axis gets

# A panel's series take the looks in order (fastest first): Tableau's ten colours, chosen to be
# told apart, solid, then dashed, then dotted: 30 distinct looks, more than a panel holds.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac")
DASHES = ("", "7 3", "2 2.5")
TOP_N = 8              # series drawn in colour per panel; the rest grey until the reader asks
PANEL_W = 485          # two panels side by side on the page


@dataclass(frozen=True)
class Bar:
    """One cell's figure: a bar, and a whisker from low to high when there is a spread."""

    label: str
    value: float
    text: str                       # the figure as the tables show it
    low: float | None = None
    high: float | None = None
    spread_text: str = ""
    verified: bool = True           # unverified (mismatched) cells are drawn in red
    data: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Breakdown:
    """Where one cell's time per operation went; parts is empty when nothing is known."""

    label: str
    total_text: str
    parts: tuple[Share, ...]
    data: dict[str, str] = field(default_factory=dict)
    note: str = ""          # why there are no parts, when CPU was read but is not shown


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    x_text: str
    y_text: str


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[Point, ...]
    color: str = ""
    dash: str = ""
    data: dict[str, str] = field(default_factory=dict)
    rest: bool = False      # beyond a panel's TOP_N: grey until the reader asks for every line


@dataclass(frozen=True)
class LegendItem:
    label: str
    color: str
    dash: str = ""
    data: dict[str, str] = field(default_factory=dict)
    rest: bool = False


def look(i: int) -> tuple[str, str]:
    """The i-th series' (colour, dash) in a panel: distinct for the first 30."""
    return PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)]


@dataclass(frozen=True)
class Panel:
    """One small multiple: the series of one target and path (or one target), fastest first."""

    title: str
    series: tuple[Series, ...]
    data: dict[str, str] = field(default_factory=dict)   # data-target/data-path: the filters hide it


PART_NAMES = {"client": "client CPU", "server": "server CPU", "wait": "wait", "rest": "other",
              "database": "database", "page": "page", "outside": "outside"}
PART_HINTS = {"client": "the client's CPU time (user + system)", "server": "the serving backend's CPU time",
              "wait": "neither side's CPU: the network, scheduling",
              "rest": "the rest of the operation: wait, and any server CPU (not measured)",
              "database": "in the database driver (the page's Server-Timing db)",
              "page": "the rest of the page: its language, framework, JSON or HTML",
              "outside": "neither: the app server, HTTP, waiting for a free process"}


# --- scales ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scale:
    """Maps data values in [lo, hi] to pixels in [a, b], linearly or by log10."""

    lo: float
    hi: float
    a: float
    b: float
    log: bool = False

    def __call__(self, v: float) -> float:
        if self.log:
            lo, hi, v = math.log10(self.lo), math.log10(self.hi), math.log10(max(v, self.lo))
        else:
            lo, hi = self.lo, self.hi
        return self.a + (v - lo) / ((hi - lo) or 1.0) * (self.b - self.a)

    def ticks(self) -> list[float]:
        return log_ticks(self.lo, self.hi) if self.log else linear_ticks(self.lo, self.hi)


def nice_step(span: float, count: int = TICKS) -> float:
    """A 1, 2 or 5 × 10ⁿ step giving about ``count`` ticks over ``span``."""
    raw = span / max(count, 1)
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def linear_ticks(lo: float, hi: float) -> list[float]:
    step = nice_step(hi - lo)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Decades, with 1-2-5 steps between them when the range spans two decades or less (and
    finer steps under one), so a log axis always has a few labels."""
    span = math.log10(hi / lo)
    steps = (1, 1.5, 2, 3, 5, 7) if span < 1 else (1, 2, 5) if span <= 2.2 else (1,)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks = [m * 10.0 ** e for e in range(first, last + 1) for m in steps]
    return [t for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]


def nice_max(v: float) -> float:
    step = nice_step(v)
    return math.ceil(v / step - 1e-9) * step if v > 0 else 1.0


def padded_log_range(lo: float, hi: float) -> tuple[float, float]:
    """The nearest 1-2-5 values outside [lo, hi], so no line sits on the frame."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    candidates = [m * 10.0 ** e for e in range(first, last + 1) for m in (1, 2, 5)]
    low = max((c for c in candidates if c <= lo), default=lo)
    high = min((c for c in candidates if c >= hi), default=hi)
    return (low, high) if high > low else (low, low * 10)


def readable_ticks(ticks: list[float], scale: Scale, size: Callable[[float], float]) -> list[float]:
    """The ticks whose labels do not overlap: decades first on a log axis, then the rest
    wherever they fit. ``size(t)`` is the room a tick's label needs along the axis."""
    def decade(t: float) -> bool:
        return scale.log and abs(math.log10(t) - round(math.log10(t))) < 1e-9
    kept: list[float] = []
    for t in sorted(ticks, key=lambda t: not decade(t)):
        if all(abs(scale(t) - scale(k)) >= (size(t) + size(k)) / 2 + PAD for k in kept):
            kept.append(t)
    return sorted(kept)


# --- SVG helpers ------------------------------------------------------------------------------

def _e(value) -> str:
    return escape(str(value), quote=True)


def _num(v: float) -> str:
    """Pixel coordinates: two decimals are plenty, and keep the document small."""
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _data(data: dict[str, str]) -> str:
    return "".join(f' data-{_e(k)}="{_e(v)}"' for k, v in data.items() if v is not None)


def _filter_attrs(data: dict[str, str]) -> str:
    """Rows a reader can filter carry data-filter; the page's script looks for it."""
    keys = {"method", "target", "path"}
    return (" data-filter" if keys & data.keys() else "") + _data(data)


def _svg_open(kind: str, step: str, variant: str, width: float, height: float, label: str,
              extra: str = "", cls: str = "") -> str:
    return (f'<svg class="chart chart-{_e(kind)}{" " + cls if cls else ""}" data-chart="{_e(kind)}" data-step="{_e(step)}" '
            f'data-variant="{_e(variant)}" width="{_num(width)}" height="{_num(height)}" '
            f'viewBox="0 0 {_num(width)} {_num(height)}" role="img" aria-label="{_e(label)}"{extra}>'
            f"<title>{_e(label)}</title>")


def _text(cls: str, x: float, y: float, text: str, anchor: str = "start") -> str:
    align = f' text-anchor="{anchor}"' if anchor != "start" else ""
    return f'<text class="{cls}" x="{_num(x)}" y="{_num(y)}"{align}>{_e(text)}</text>'


def _line(x1: float, x2: float, y1: float, y2: float, extra: str = "") -> str:
    return f'<line x1="{_num(x1)}" x2="{_num(x2)}" y1="{_num(y1)}" y2="{_num(y2)}"{extra}/>'


def _text_w(text: str) -> float:
    return len(text) * CHAR_W


def _row_attrs(top: float, count: int, bottom: float) -> str:
    return f' data-top="{_num(top)}" data-row-h="{ROW_H}" data-bottom="{_num(bottom)}" data-rows="{count}"'


# --- bar chart --------------------------------------------------------------------------------

def bar_chart(step: str, bars: Sequence[Bar], axis_title: str, form: str, width: float, variant: str = "") -> str:
    """Horizontal bars, one per row in the given order, with whiskers for the spread. When
    the figures span more than LOG_SCALE_ABOVE× the axis turns logarithmic and the bars turn
    into dots: a bar's length on a log axis measures nothing (it starts at an arbitrary
    minimum), a dot's position does. ``form`` names how figures read (formatting.FORMS)."""
    if not bars:
        return ""
    label_w = min(MAX_LABEL_W, max(_text_w(b.label) for b in bars) + PAD)
    value_w = max(_text_w(b.text) for b in bars) + 2 * PAD
    x = value_scale([v for b in bars for v in (b.value, b.low, b.high) if v is not None], label_w, width - value_w)
    bottom = PAD
    height = AXIS_TOP + len(bars) * ROW_H + bottom
    suffix = " · log scale, dots" if x.log else ""
    geometry = (_row_attrs(AXIS_TOP, len(bars), bottom)
                + _data({"scale": "log" if x.log else "linear", "x0": _num(x.a), "x1": _num(x.b), "form": form}))
    out = [_svg_open("bars", step, variant, width, height, f"{step}: {axis_title}{suffix}", geometry,
                     "log" if x.log else "")]
    out.append(f'<text class="axis-title" x="{PAD}" y="{TITLE_Y}" data-base="{_e(axis_title)}">'
               f"{_e(axis_title + suffix)}</text>")
    out.append(_value_grid(x, form, AXIS_TOP, height - bottom))
    for i, b in enumerate(bars):
        out.append(_bar_row(b, i, x, label_w))
    out.append("</svg>")
    return "".join(out)


def value_scale(values: Sequence[float], a: float, b: float) -> Scale:
    """From 0, or logarithmic over the padded range when the positive figures span more than
    LOG_SCALE_ABOVE× (the script's valueScale does the same for what a filter leaves)."""
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > LOG_SCALE_ABOVE:
        return Scale(*padded_log_range(min(positive), max(positive)), a, b, True)
    return Scale(0.0, nice_max(max(values, default=0.0)), a, b)


def tick_text(form: str, value: float) -> str:
    """An axis label: the figure's form, and a bare 0 at the origin ("0 ns" reads oddly)."""
    return "0" if value == 0 else fmt.FORMS[form](value)


def _value_grid(x: Scale, form: str, top: float, end: float) -> str:
    out = ['<g class="grid">']
    for t in readable_ticks(x.ticks(), x, lambda t: _text_w(tick_text(form, t))):
        out.append(_line(x(t), x(t), top - TICK_GAP, end) + _text("tick", x(t), top - 2 * TICK_GAP, tick_text(form, t), "middle"))
    out.append("</g>")
    return "".join(out)


def _bar_row(b: Bar, i: int, x: Scale, label_w: float) -> str:
    mid = ROW_H / 2
    x0, x1 = x(x.lo), x(max(b.value, x.lo))
    spread = f" [{b.spread_text}]" if b.spread_text else ""
    status = "" if b.verified else " — not verified: shown, not ranked"
    data = dict(b.data, value=repr(float(b.value)), text=b.text)
    if b.low is not None and b.high is not None:
        data |= {"low": repr(float(b.low)), "high": repr(float(b.high))}
    cls = "row bar" if b.verified else "row bar unverified"
    parts = [f'<g class="{cls}" transform="translate(0,{_num(AXIS_TOP + i * ROW_H)})"{_filter_attrs(data)}>'
             f"<title>{_e(b.label)}: {_e(b.text)}{_e(spread)}{_e(status)}</title>",
             _text("label", label_w - PAD, mid + TEXT_DY, b.label, "end"),
             f'<rect x="{_num(x0)}" y="{_num(mid - BAR_H / 2)}" width="{_num(max(x1 - x0, 1))}" height="{BAR_H}"/>',
             f'<circle class="dot" cx="{_num(x1)}" cy="{_num(mid)}" r="{DOT_R}"/>']
    end = x1 + (DOT_R if x.log else 0)
    if b.low is not None and b.high is not None:
        lo, hi = x(max(b.low, x.lo)), x(b.high)
        end = max(end, hi)
        parts.append(f'<path class="whisker" d="{whisker_path(lo, hi, mid)}"/>')
    parts.append(_text("value", end + PAD / 2, mid + TEXT_DY, b.text) + "</g>")
    return "".join(parts)


def whisker_path(lo: float, hi: float, mid: float) -> str:
    return (f"M{_num(lo)} {_num(mid)}H{_num(hi)}M{_num(lo)} {_num(mid - WHISKER_CAP)}V{_num(mid + WHISKER_CAP)}"
            f"M{_num(hi)} {_num(mid - WHISKER_CAP)}V{_num(mid + WHISKER_CAP)}")


# --- layers over their drivers ----------------------------------------------------------------

@dataclass(frozen=True)
class Stack:
    """A driver's cell and the layer cells above it on one step, target and path."""

    driver: str                 # "py-psycopg @ postgresql/unix"
    driver_ns: float            # its time per operation
    driver_text: str
    layers: tuple[tuple[str, float, str], ...]  # (layer method, its time per operation, "41 µs · +120% [..]")
    data: dict[str, str] = field(default_factory=dict)


def layer_stack_chart(step: str, stacks: Sequence[Stack], width: float, variant: str = "") -> str:
    """Per driver, the driver's time per operation and each layer above it as that time plus
    the layer's own: a row for the driver, then a row per layer whose first segment is the
    driver's time and whose second is what the layer adds (a layer faster than its driver
    shows its whole, shorter bar). One linear axis for the chart: lengths compare."""
    if not stacks:
        return ""
    labels = [st.driver for st in stacks] + [f"+ {name}" for st in stacks for name, _, _ in st.layers]
    texts = [st.driver_text for st in stacks] + [t for st in stacks for _, _, t in st.layers]
    label_w = min(MAX_LABEL_W, max(_text_w(t) for t in labels) + PAD)
    value_w = max(_text_w(t) for t in texts) + 2 * PAD
    top = max([st.driver_ns for st in stacks] + [ns for st in stacks for _, ns, _ in st.layers])
    x = Scale(0.0, nice_max(top), label_w, width - value_w)
    rows = sum(1 + len(st.layers) for st in stacks)
    bottom = PAD
    height = AXIS_TOP + rows * ROW_H + bottom
    title = "time per operation · the driver, then each layer above it: the driver's time plus the layer's own"
    out = [_svg_open("layers", step, variant, width, height, f"{step}: {title}", _row_attrs(AXIS_TOP, rows, bottom)),
           f'<text class="axis-title" x="{PAD}" y="{TITLE_Y}">{_e(title)}</text>',
           _value_grid(x, "duration", AXIS_TOP, height - bottom)]
    i, mid = 0, ROW_H / 2

    def row(label: str, base: float, extra: float, text: str, data: dict, cls: str) -> str:
        x0, x1, x2 = x(0.0), x(base), x(base + extra)
        parts = [f'<g class="row {cls}" transform="translate(0,{_num(AXIS_TOP + i * ROW_H)})"{_filter_attrs(data)}>'
                 f"<title>{_e(label.removeprefix('+ '))}: {_e(text)}</title>",
                 _text("label", label_w - PAD, mid + TEXT_DY, label, "end"),
                 f'<rect class="part-driver" x="{_num(x0)}" y="{_num(mid - BAR_H / 2)}" width="{_num(max(x1 - x0, 1))}" '
                 f'height="{BAR_H}"/>']
        if extra > 0:
            parts.append(f'<rect class="part-layer" x="{_num(x1)}" y="{_num(mid - BAR_H / 2)}" '
                         f'width="{_num(max(x2 - x1, 1))}" height="{BAR_H}"/>')
        parts.append(_text("value", x2 + PAD / 2, mid + TEXT_DY, text) + "</g>")
        return "".join(parts)

    for st in stacks:
        out.append(row(st.driver, st.driver_ns, 0.0, st.driver_text, st.data, "driver"))
        i += 1
        for name, ns, text in st.layers:
            out.append(row(f"+ {name}", min(st.driver_ns, ns), max(0.0, ns - st.driver_ns), text,
                           dict(st.data, method=name), "layer"))
            i += 1
    out.append("</svg>")
    return "".join(out)


# --- time breakdown ---------------------------------------------------------------------------

def breakdown_chart(step: str, rows: Sequence[Breakdown], width: float, variant: str = "",
                    labelled: bool = False, per: str = "per op") -> str:
    """Each cell's time per operation split into shares (client CPU, server CPU, wait; or a
    page request's database, page and outside), one row per cell. Unlabelled, it stands beside
    the bar chart of the same cells, row for row (each row's tooltip names its cell);
    ``labelled``, each row's label stands at its left."""
    if not rows:
        return ""
    total_w = max(_text_w(r.total_text) for r in rows) + 3 * PAD
    label_w = min(MAX_LABEL_W, max(_text_w(r.label) for r in rows) + PAD) if labelled else 0.0
    x = Scale(0.0, 1.0, PAD + label_w, width - total_w)
    bottom = PAD
    height = AXIS_TOP + len(rows) * ROW_H + bottom
    out = [_svg_open("breakdown", step, variant, width, height, f"{step}: where each operation's time went",
                     _row_attrs(AXIS_TOP, len(rows), bottom))]
    # The legend doubles as the axis title: one swatch per kind of time.
    lx = x.a
    for kind in PART_NAMES:
        if any(p.kind == kind for r in rows for p in r.parts):
            swatch = f'x="{_num(lx)}" y="{TITLE_Y - SWATCH + 1}" width="{SWATCH}" height="{SWATCH}"'
            out.append(f'<g class="key"><title>{_e(PART_HINTS[kind])}</title><rect class="part-{kind}" {swatch}/>'
                       + _text("legend-text", lx + SWATCH + TEXT_DY, TITLE_Y, PART_NAMES[kind]) + "</g>")
            lx += SWATCH + TEXT_DY + _text_w(PART_NAMES[kind]) + PAD
    out.append('<g class="grid">')
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(_line(x(t), x(t), AXIS_TOP - TICK_GAP, height - bottom)
                   + _text("tick", x(t), AXIS_TOP - 2 * TICK_GAP, f"{t:.0%}", "middle"))
    out.append(_text("tick", width - PAD, AXIS_TOP - 2 * TICK_GAP, per, "end") + "</g>")
    for i, r in enumerate(rows):
        out.append(_breakdown_row(r, i, x, per, labelled))
    out.append("</svg>")
    return "".join(out)


def _breakdown_row(r: Breakdown, i: int, x: Scale, per: str = "per op", labelled: bool = False) -> str:
    mid = ROW_H / 2
    data = dict(r.data, total=r.total_text) | {p.kind: repr(float(p.share)) for p in r.parts}
    shares = " · ".join(f"{PART_NAMES[p.kind]} {p.text} ({p.share:.0%})" for p in r.parts) or (
        f"CPU time {r.note}" if r.note else "CPU time not measured")
    out = [f'<g class="row breakdown" transform="translate(0,{_num(AXIS_TOP + i * ROW_H)})"{_filter_attrs(data)}>'
           f"<title>{_e(r.label)}: {_e(r.total_text)} {_e(per)} — {_e(shares)}</title>"]
    if labelled:
        out.append(_text("label", x.a - PAD / 2, mid + TEXT_DY, r.label, "end"))
    left = 0.0
    for p in r.parts:
        x0, x1 = x(left), x(min(1.0, left + p.share))
        out.append(f'<rect class="part-{p.kind}" x="{_num(x0)}" y="{_num(mid - BAR_H / 2)}" '
                   f'width="{_num(max(x1 - x0, 0))}" height="{BAR_H}"/>')
        left += p.share
    if not r.parts:
        out.append(_text("na", x.a, mid + TEXT_DY, "not shown (clock too coarse)" if r.note else "not measured"))
    out.append(_text("value", x.b + PAD / 2, mid + TEXT_DY, r.total_text) + "</g>")
    return "".join(out)


# --- line charts ------------------------------------------------------------------------------

def panels(panels: Sequence[Panel], draw: Callable[[Panel, Sequence[Series], Sequence[LegendItem]], str]) -> list[str]:
    """Small multiples: each panel's series get their looks (fastest first) and a legend in
    the same order; beyond TOP_N they are marked as the rest. ``draw`` makes one panel's chart."""
    out = []
    for panel in panels:
        series = [Series(s.label, s.points, *look(i), s.data, i >= TOP_N) for i, s in enumerate(panel.series)]
        legend = [LegendItem(s.label, s.color, s.dash, s.data, s.rest) for s in series]
        chart = draw(panel, series, legend)
        if chart:
            out.append(chart.replace("<svg ", f"<svg{_filter_attrs(panel.data)} ", 1) if panel.data else chart)
    return out


def percentile_chart(step: str, series: Sequence[Series], legend: Sequence[LegendItem],
                     x_labels: Sequence[str], width: float, variant: str = "", title: str = "") -> str:
    """Latency percentiles: categories along x (p50 … max), ns on a log y axis, one line per
    cell. Points' x are the category indexes."""
    values = [p.y for s in series for p in s.points if p.y > 0]
    if not values:
        return ""
    lo, hi = padded_log_range(min(values), max(values))
    return _line_chart("percentiles", step, variant, series, legend, width,
                       x_ticks=[(i, t) for i, t in enumerate(x_labels)], x=(0, len(x_labels) - 1, False),
                       y=(lo, hi, True), y_form="duration", y_title="latency per operation", title=title,
                       x_kind="category")


def throughput_chart(sweep: str, series: Sequence[Series], legend: Sequence[LegendItem], clients: Sequence[int],
                     unit: str, width: float, variant: str = "", title: str = "") -> str:
    """Throughput against clients: one line per method and path, a point per step of the
    sweep. x is log-scaled when clients span 8× or more (1, 2, 4 … 64 spread evenly)."""
    values = [p.y for s in series for p in s.points if p.y > 0]
    if not values or len(clients) < 2:
        return ""
    lo, hi = min(clients), max(clients)
    log = lo > 0 and hi / lo >= 8
    y = value_scale(values, 0, 1)
    return _line_chart("throughput-clients", sweep, variant, series, legend, width,
                       x_ticks=[(c, str(c)) for c in clients], x=(lo, hi, log), y=(y.lo, y.hi, y.log),
                       y_form="rate", y_title=f"{unit} · median, all clients together", title=title,
                       x_title="clients" + (" (log scale)" if log else ""), x_kind="fixed", y_rule="value")


def size_chart(sweep: str, series: Sequence[Series], legend: Sequence[LegendItem], sizes: Sequence[int],
               width: float, variant: str = "", title: str = "") -> str:
    """Rows/s against the rows one read returns (study S1's crossover): log-log, a point per
    size, one line per method, path and mode."""
    values = [p.y for s in series for p in s.points if p.y > 0]
    if not values or len(sizes) < 2:
        return ""
    lo, hi = padded_log_range(min(values), max(values))
    return _line_chart("throughput-size", sweep, variant, series, legend, width,
                       x_ticks=[(n, f"{n:,}") for n in sizes], x=(min(sizes), max(sizes), True), y=(lo, hi, True),
                       y_form="rate", y_title="rows/s · median", title=title,
                       x_title="rows per read (log scale)", x_kind="fixed")


def latency_throughput_chart(sweep: str, series: Sequence[Series], legend: Sequence[LegendItem], width: float,
                             variant: str = "", unit: str = "ops/s", title: str = "") -> str:
    """p99 latency against throughput: where a method's latency turns up as load grows."""
    xs = [p.x for s in series for p in s.points if p.x > 0]
    ys = [p.y for s in series for p in s.points if p.y > 0]
    if not ys or len(set(xs)) < 2:
        return ""
    lo, hi = padded_log_range(min(ys), max(ys))
    x = value_scale(xs, 0, 1)
    return _line_chart("latency-throughput", sweep, variant, series, legend, width,
                       x_ticks=[(v, tick_text("rate", v)) for v in x.ticks()], x=(x.lo, x.hi, x.log),
                       y=(lo, hi, True), y_form="duration", y_title="p99 latency per operation", title=title,
                       x_title=f"throughput, {unit} (median)", x_kind="value", x_form="rate")


def floor_chart(title: str, series: Sequence[Series], legend: Sequence[LegendItem], delays_us: Sequence[float],
                width: float) -> str:
    """× the wire's floor against the one-way delay (the hostage study's grid): log-log, a point
    per delay, one line per method and bandwidth; 1× (the floor itself) always in range."""
    values = [p.y for s in series for p in s.points if p.y > 0]
    if not values or len(delays_us) < 2:
        return ""
    lo, hi = padded_log_range(min(min(values), 1.0), max(values))
    return _line_chart("floor-delay", title, "", series, legend, width,
                       x_ticks=[(d, fmt.duration(d * 1e3)) for d in delays_us], x=(min(delays_us), max(delays_us), True),
                       y=(lo, hi, True), y_form="times", y_title="× the wire's floor on the same path", title=title,
                       x_title="one-way delay (log scale)", x_kind="fixed")


def _line_chart(kind: str, step: str, variant: str, series: Sequence[Series], legend: Sequence[LegendItem],
                width: float, x_ticks: list[tuple[float, str]], x: tuple[float, float, bool],
                y: tuple[float, float, bool], y_form: str, y_title: str, title: str = "", x_title: str = "",
                x_kind: str = "category", x_form: str = "", y_rule: str = "log") -> str:
    """x_kind: "category" (fixed labels at indexes), "fixed" (numeric ticks given, domain
    fixed) or "value" (a value axis the script redraws for what a filter leaves, as it
    always redraws y). y_rule: "log" (always the padded log range) or "value" (value_scale's
    rule: from 0, or log past LOG_SCALE_ABOVE×)."""
    legend_cols = 1  # one column beside the plot, which keeps its width; a long legend makes the panel taller
    col_w = max((_text_w(i.label) for i in legend), default=0) + LEGEND_SWATCH_W + PAD
    legend_w = legend_cols * col_w + PAD if legend else 0
    y_scale = Scale(y[0], y[1], LINE_TOP + LINE_H, LINE_TOP, y[2])
    y_labels = [(t, tick_text(y_form, t)) for t in readable_ticks(y_scale.ticks(), y_scale, lambda t: LEGEND_ROW_H)]
    left = max(max(_text_w(text) for _, text in y_labels), _text_w("999 µs")) + 2 * PAD
    x_scale = Scale(x[0], x[1], left + 3 * PAD, width - legend_w - 3 * PAD, x[2])
    labels = dict(x_ticks)
    x_shown = readable_ticks(list(labels), x_scale, lambda v: _text_w(labels[v]))
    legend_h = math.ceil(len(legend) / legend_cols) * LEGEND_ROW_H
    bottom = X_AXIS_H + (LEGEND_ROW_H if x_title else 0)
    height = max(y_scale.a + bottom, LINE_TOP + legend_h)
    heading = f"{title} · " if title else ""
    y_suffix = " (log scale)" if y[2] else ""
    geometry = _data({"y-scale": "log" if y[2] else "linear", "y0": _num(y_scale.a), "y1": _num(y_scale.b),
                      "y-form": y_form, "left": _num(left), "right": _num(x_scale.b + 2 * PAD), "x-kind": x_kind,
                      "y-rule": y_rule, "x-scale": "log" if x[2] else "linear", "x-lo": repr(float(x[0])),
                      "x-hi": repr(float(x[1])), "x0": _num(x_scale.a), "x1": _num(x_scale.b),
                      "x-form": x_form or None, "top-n": str(TOP_N)})
    out = [_svg_open(kind, step, variant, width, height, f"{step}: {heading}{y_title}{y_suffix}", geometry)]
    out.append(f'<text class="axis-title y-title" x="{_num(left)}" y="{TITLE_Y}" data-base="{_e(heading + y_title)}">'
               f"{_e(heading + y_title + y_suffix)}</text>")
    out.append('<g class="grid y-grid">')
    for t, text in y_labels:
        out.append(_line(left, x_scale.b + 2 * PAD, y_scale(t), y_scale(t))
                   + _text("tick", left - PAD / 2, y_scale(t) + TEXT_DY, text, "end"))
    out.append('</g><g class="grid x-grid">')
    for xv in x_shown:
        out.append(_line(x_scale(xv), x_scale(xv), y_scale.b, y_scale.a + TEXT_DY)
                   + _text("tick", x_scale(xv), y_scale.a + X_AXIS_H / 2 - 2, labels[xv], "middle"))
    out.append("</g>")
    if x_title:
        x_suffix = " (log scale)" if x[2] and x_kind == "value" else ""
        out.append(f'<text class="axis-title x-title" x="{_num((x_scale.a + x_scale.b) / 2)}" '
                   f'y="{_num(y_scale.a + X_AXIS_H + 4)}" text-anchor="middle" data-base="{_e(x_title)}">'
                   f"{_e(x_title + x_suffix)}</text>")
    for s in series:
        out.append(_series(s, x_scale, y_scale))
    out.append(_legend(legend, x_scale.b + 4 * PAD, LINE_TOP, legend_cols, col_w))
    out.append("</svg>")
    return "".join(out)


def _series(s: Series, x: Scale, y: Scale) -> str:
    points = [p for p in s.points if p.y > 0 or not y.log]
    dash = f' stroke-dasharray="{_e(s.dash)}"' if s.dash else ""
    coords = " ".join(f"{_num(x(p.x))},{_num(y(p.y))}" for p in points)
    out = [f'<g class="series{" rest" if s.rest else ""}" style="--c:{_e(s.color)}"{_filter_attrs(s.data)}>'
           f'<title>{_e(s.label)}</title><polyline class="line" points="{coords}"{dash}/>']
    for p in points:
        out.append(f'<circle class="marker" cx="{_num(x(p.x))}" cy="{_num(y(p.y))}" r="{MARKER_R}"'
                   f'{_data({"x": p.x_text, "xv": repr(float(p.x)), "value": repr(float(p.y)), "text": p.y_text})}>'
                   f"<title>{_e(s.label)} · {_e(p.x_text)}: {_e(p.y_text)}</title></circle>")
    out.append("</g>")
    return "".join(out)


def _legend(items: Sequence[LegendItem], x0: float, y0: float, cols: int, col_w: float) -> str:
    if not items:
        return ""
    per_col = math.ceil(len(items) / cols)
    out = [f'<g class="legend" data-per-col="{per_col}" data-col-w="{_num(col_w)}">']
    for i, item in enumerate(items):
        x, y = x0 + (i // per_col) * col_w, y0 + (i % per_col) * LEGEND_ROW_H
        dash = f' stroke-dasharray="{_e(item.dash)}"' if item.dash else ""
        out.append(f'<g class="legend-item{" rest" if item.rest else ""}" style="--c:{_e(item.color)}"{_filter_attrs(item.data)}>'
                   + _line(x, x + LEGEND_SWATCH_W - PAD, y + LEGEND_ROW_H / 2 - 2, y + LEGEND_ROW_H / 2 - 2, dash)
                   + _text("legend-text", x + LEGEND_SWATCH_W, y + LEGEND_ROW_H / 2 + 2, item.label) + "</g>")
    out.append("</g>")
    return "".join(out)


# --- the studies' ratios ----------------------------------------------------------------------

@dataclass(frozen=True)
class RatioRow:
    """One study claim's ratio: today's with its CI beside the published one, on one log axis."""

    label: str
    today: float
    low: float
    high: float
    published: float | None
    verdict: str                    # drawn as a class: verdict-reproduced, …


def ratio_chart(rows: Sequence[RatioRow], width: float) -> str:
    """A dot plot on a log axis: each claim's ratio today (a dot and its 95% CI) and the
    published ratio (an open diamond), with the line at 1× where the direction turns and the
    band within ten times the published figure that the ratio rule accepts."""
    if not rows:
        return ""
    label_w = min(MAX_LABEL_W + 140, max(_text_w(r.label) for r in rows) + PAD)
    values = [v for r in rows for v in (r.today, r.low, r.high, r.published) if v and v > 0] + [1.0]
    x = Scale(*padded_log_range(min(values), max(values)), label_w, width - 2 * PAD, True)
    height = AXIS_TOP + len(rows) * ROW_H + PAD
    title = "Each ratio today (dot, 95% CI) beside the published one (◇) · log scale"
    out = [_svg_open("ratios", "studies", "", width, height, title, cls="log"),
           _text("axis-title", PAD, TITLE_Y, title), _value_grid(x, "times", AXIS_TOP, height - PAD),
           _line(x(1.0), x(1.0), AXIS_TOP - TICK_GAP, height - PAD, ' class="unity"')]
    for i, r in enumerate(rows):
        mid = AXIS_TOP + i * ROW_H + ROW_H / 2
        lo, hi = x(max(r.low, x.lo)), x(min(r.high, x.hi))
        parts = [f'<g class="row ratio verdict-{_e(r.verdict.replace(" ", "-"))}"'
                 f'{_data({"today": repr(r.today), "published": repr(r.published) if r.published else None})}>'
                 f"<title>{_e(r.label)}: today {fmt.times(r.today)} [{fmt.times(r.low)}–{fmt.times(r.high)}]"
                 f"{f', published {fmt.times(r.published)}' if r.published else ''} — {_e(r.verdict)}</title>",
                 _text("label", label_w - PAD, mid + TEXT_DY, r.label, "end")]
        if r.published:
            band = (x(max(r.published / 10, x.lo)), x(min(r.published * 10, x.hi)))
            parts.append(f'<rect class="band" x="{_num(band[0])}" y="{_num(mid - BAR_H / 2)}" '
                         f'width="{_num(band[1] - band[0])}" height="{BAR_H}"/>')
            px = x(r.published)
            parts.append(f'<path class="published" d="M{_num(px)} {_num(mid - 5)}L{_num(px + 5)} {_num(mid)}'
                         f'L{_num(px)} {_num(mid + 5)}L{_num(px - 5)} {_num(mid)}Z"/>')
        parts.append(f'<path class="whisker" d="{whisker_path(lo, hi, mid)}"/>')
        parts.append(f'<circle class="dot" cx="{_num(x(r.today))}" cy="{_num(mid)}" r="{DOT_R}"/></g>')
        out.append("".join(parts))
    out.append("</svg>")
    return "".join(out)


def history_chart(cell: str, series: Sequence[Series], legend: Sequence[LegendItem], runs: Sequence[str],
                  unit: str, width: float) -> str:
    """A cell's figure over the runs that measured it, oldest first: the runs along x (their
    dates), the median on a value axis; each significant change its own point, in red."""
    values = [p.y for s in series for p in s.points if p.y > 0]
    if not values:
        return ""
    y = value_scale(values, 0, 1)
    return _line_chart("history", cell, "", series, legend, width,
                       x_ticks=[(i, t) for i, t in enumerate(runs)], x=(0, max(len(runs) - 1, 1), False),
                       y=(y.lo, y.hi, y.log), y_form="rate", y_title=f"{unit}/s · median over trials",
                       x_kind="category", y_rule="value")
