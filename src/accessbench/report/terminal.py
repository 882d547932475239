"""The terminal report of a run: per step, methods ranked by median with a 95% CI, and the
methods × steps table in seconds per 1,000 units (study S2's form). Returns text; rich
tables, colour only when asked (the CLI asks when stdout is a terminal)."""

from __future__ import annotations

import io

import numpy as np

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..stats import model
from ..stats.cells import CellResult, analyse, by_step
from ..stats.compare import ALPHA, NOISE, compare
from ..stats.stability import Flag, flags
from ..stats.views import VIEWS, View
from ..store import StoredRun
from .. import formatting as fmt
from .study import study_table

_STATUS_STYLE = {"ok": "green", "mismatch": "bold red", "unsupported": "dim", "error": "red", "timeout": "red"}


def render(stored: StoredRun, color: bool = False, width: int | None = None, view: str = "median") -> str:
    """The whole report. ``view`` picks the rule for each step's figure: median (default),
    best (S1), mean (S3) or per1000 (S2's table alone)."""
    out = io.StringIO()
    # Without a terminal there is no width to respect: wide enough for the S2 table.
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 240,
                      highlight=False, soft_wrap=False)
    results = analyse(stored)
    _header(console, stored, VIEWS[view])
    for variant, step, rs in by_step(results):
        if view == "median":
            console.print(_step_table(variant, step, rs))
        elif view != "per1000":
            console.print(_view_table(VIEWS[view], variant, step, rs))
    console.print(_per_1000_table(results))
    if view == "per1000":
        return out.getvalue()
    predictions = _predictions_table(results)
    if predictions is not None:
        console.print(predictions)
    study = _study_table(stored, results)
    if study is not None:
        console.print(study)
    cold = _cold_start_table(stored, results)
    if cold is not None:
        console.print(cold)
    _not_measured(console, results)
    console.print(render_flags(results))
    return out.getvalue()


def _header(console: Console, stored: StoredRun, view: View) -> None:
    run, settings = stored.run, stored.run["settings"]
    resumed = settings.get("resumed") or []
    console.print(Text(f"accessbench run {run['id']}", style="bold"),
                  f"· suite {run['suite']} ({run['suite_source']}) · {run['started_at']} · {run['status']}"
                  + (f" · resumed {', '.join(resumed)}" if resumed else ""))
    targets = ", ".join(
        f"{t['target']} {t['server_version'] or ''} ({'managed' if t['managed'] else 'external'})".replace("  ", " ")
        for t in stored.targets
    )
    console.print(f"targets: {targets}")
    for t in stored.targets:
        for key in ("latency proxy", "netem", "pooler"):
            if key in t["settings"]:
                console.print(f"{key} ({t['target']}): {t['settings'][key]}")
    env = run["environment"]
    power = env.get("power", {})
    idle = f" · cpuidle {power['cpuidle_driver']}" if power.get("cpuidle_driver") else ""
    console.print(f"host: {env.get('cpu')} · {env.get('cores')} cores · {env.get('memory_gib')} GiB · "
                  f"{env.get('os')} · kernel {env.get('kernel')}{idle}")
    console.print(
        f"trials: {settings['trials']} per cell after {settings['warmup']} warmup, interleaved across methods"
        f"{' · --quick sizes' if settings.get('quick') else ''} · figure: {view.rule}"
    )
    if run.get("message"):
        console.print(Text(f"note: {run['message']}", style="yellow"))
    console.print()


def _step_table(variant: str, step: str, rs: list[CellResult]) -> Table:
    first = rs[0].cell
    mode = f", {first['mode']}" if first["mode"] else ""
    title = escape(f"{step}{f' [{variant}]' if variant else ''} — {first['kind']}{mode}: {first['description']}")
    unit = rs[0].unit
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    for name, justify in [("#", "right"), ("method", "left"), ("target/path", "left"),
                          (f"{unit}/s", "right"), ("95% CI", "right"), ("CV", "right"), ("vs best", "right"),
                          ("p50", "right"), ("p99", "right"), ("client CPU/op", "right"),
                          ("server CPU/op", "right"), ("time: client▕server▕wait", "left"),
                          ("RT/op", "right"), ("verified", "left")]:
        table.add_column(name, justify=justify, no_wrap=True)
    loaded = any(r.per_client_rates is not None and len(r.per_client_rates) > 0 for r in rs)
    if loaded:  # under load: each client's own rate, and how late an open loop fell behind
        table.add_column("per client", justify="right", no_wrap=True)
        table.add_column("late", justify="right", no_wrap=True)
    best_cell = next((r for r in rs if r.ranked), None)
    # Each ranked cell against the best, once: marks the rows and decides the caption.
    alike = {id(r) for r in rs if r.ranked and r is not best_cell and not compare(best_cell, r).significant}
    rank = 0
    for r in (r for r in rs if r.measured):
        status = r.cell["status"]
        rank += r.ranked
        p = r.percentiles or {}
        table.add_row(
            str(rank) if r.ranked else "-", r.cell["method"], r.where, fmt.rate(r.rate.median),
            f"{fmt.rate(r.rate.ci_low)}–{fmt.rate(r.rate.ci_high)}", f"{r.rate.cv:.1%}",
            (("≈" if id(r) in alike else "") + fmt.ratio(best_cell.rate.median / r.rate.median)) if r.ranked else "",
            fmt.duration(p.get(50.0)), fmt.duration(p.get(99.0)), fmt.duration(r.cpu_per_op_ns),
            fmt.duration(r.server_cpu_per_op_ns), _breakdown(r),
            f"{r.round_trips_per_op:.3g}" if r.round_trips_per_op is not None else "—",
            Text(status, style=_STATUS_STYLE.get(status, "")),
            *(_per_client(r) if loaded else ()),
        )
    missing = [f"{r.cell['method']} @ {r.where} ({r.cell['status']})" for r in rs if not r.measured]
    notes = []
    if alike:
        notes.append(f"≈ no significant difference from the best (Mann-Whitney p ≥ {ALPHA:g} or within {NOISE:.0%})")
    if missing:
        notes.append("not measured: " + ", ".join(missing))
    table.caption, table.caption_justify = " · ".join(notes) or None, "left"
    return table


def _per_client(r: CellResult) -> tuple[str, str]:
    """A loaded cell's clients: their median rate with the slowest and fastest, and the share
    of open-loop operations that started late."""
    rates = r.per_client_rates
    spread = (f"{fmt.rate(float(np.median(rates)))} [{fmt.rate(float(rates.min()))}–{fmt.rate(float(rates.max()))}]"
              if rates is not None and len(rates) else "")
    late = f"{r.late_share:.1%}" + (f" +{r.skipped} skipped" if r.skipped else "") if r.late_share is not None else ""
    return spread, late


def _view_table(view: View, variant: str, step: str, rs: list[CellResult]) -> Table:
    """A step's cells ranked by one of the studies' rules."""
    first = rs[0].cell
    title = escape(f"{step}{f' [{variant}]' if variant else ''} — {first['kind']}: {view.unit(rs[0])}, {view.rule}")
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    columns = [("#", "right"), ("method", "left"), ("target/path", "left"), (view.name, "right")]
    columns += [(view.spread_name, "right")] if view.spread_name else []
    columns += [("vs best", "right"), ("trials", "right"), ("verified", "left")]
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=True)
    show = fmt.rate if view.kind == "rate" else (fmt.seconds if view.name == "per1000" else fmt.duration)
    ranked = [r for r in view.rank(rs) if r.measured]
    best = ranked[0] if ranked and ranked[0].ranked else None
    for rank, r in enumerate(ranked, 1):
        spread = view.spread(r)
        row = [str(rank) if r.ranked else "-", r.cell["method"], r.where, show(view.value(r))]
        row += [f"{show(spread[0])}–{show(spread[1])}" if spread else ""] if view.spread_name else []
        row += [fmt.ratio(view.times_behind(r, best)) if best and r.ranked else "", str(r.rate.n),
                Text(r.cell["status"], style=_STATUS_STYLE.get(r.cell["status"], ""))]
        table.add_row(*row)
    return table


_BAR = 16


def _breakdown(r: CellResult) -> Text:
    """Each operation's time as shares: the client's CPU, the server's CPU, and the wait
    neither accounts for (network, scheduling). Unknown parts are left out."""
    if not r.per_op_ns or r.cpu_per_op_ns is None:
        return Text("")
    client = min(1.0, r.cpu_per_op_ns / r.per_op_ns)
    server = min(1.0 - client, (r.server_cpu_per_op_ns or 0.0) / r.per_op_ns)
    c, s = round(client * _BAR), round(server * _BAR)
    bar = Text("█" * c, style="cyan") + Text("▓" * s, style="magenta")
    if r.server_cpu_per_op_ns is not None:
        bar += Text("░" * max(0, _BAR - c - s), style="dim")
    return bar


def _predictions_table(results: list[CellResult]) -> Table | None:
    rows = model.checks(results)
    if not rows:
        return None
    table = Table(title="Round-trip model: per-op time predicted from tcp vs measured through the latency proxy",
                  title_justify="left", box=box.SIMPLE_HEAD, title_style="bold",
                  caption="predicted = per-op on tcp + round trips/op × 2 × delay; error = (predicted − measured) / measured",
                  caption_justify="left")
    for name, justify in [("method", "left"), ("step", "left"), ("path", "left"), ("tcp /op", "right"),
                          ("RT/op", "right"), ("predicted /op", "right"), ("measured /op", "right"), ("error", "right")]:
        table.add_column(name, justify=justify, no_wrap=True)
    for p in rows:
        table.add_row(p.base.cell["method"], p.base.cell["step"], p.measured.cell["path"], fmt.duration(p.base.per_op_ns),
                      f"{p.round_trips_per_op:.3g}", fmt.duration(p.predicted_ns), fmt.duration(p.measured.per_op_ns),
                      f"{p.error:+.1%}")
    return table


def render_predictions(stored: StoredRun, latency_us: float, base_path: str = "tcp", color: bool = False,
                       width: int | None = None) -> str:
    """`accessbench predict`: every cell measured on the base path, at another latency."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 200, highlight=False)
    rows = model.predict(analyse(stored), latency_us, base_path)
    if not rows:
        console.print(f"run {stored.run['id']} has no cell on {base_path} whose round trips were counted: "
                      "run a tcp+DELAY path too (e.g. --path tcp,tcp+100us) so the proxy counts them")
        return out.getvalue()
    table = Table(title=f"run {stored.run['id']}: per-op time predicted at {latency_us:g} µs one way "
                        f"({2 * latency_us:g} µs round trip) from {base_path}",
                  title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    for name, justify in [("method", "left"), ("target", "left"), ("step", "left"), (f"{base_path} /op", "right"),
                          ("RT/op", "right"), ("predicted /op", "right"), ("predicted ops/s", "right"),
                          ("measured there", "right"), ("error", "right")]:
        table.add_column(name, justify=justify, no_wrap=True)
    for p in sorted(rows, key=lambda p: (p.base.cell["step_index"], p.predicted_ns)):
        table.add_row(p.base.cell["method"], p.base.cell["target"], p.base.cell["step"], fmt.duration(p.base.per_op_ns),
                      f"{p.round_trips_per_op:.3g}", fmt.duration(p.predicted_ns), fmt.rate(1e9 / p.predicted_ns),
                      fmt.duration(p.measured.per_op_ns) if p.measured else "", f"{p.error:+.1%}" if p.error is not None else "")
    console.print(table)
    return out.getvalue()


def _per_1000_table(results: list[CellResult]) -> Table:
    steps = list(dict.fromkeys((r.cell["variant"], r.cell["step_index"], r.cell["step"]) for r in results))
    steps.sort(key=lambda s: s[:2])
    table = Table(title="Seconds per 1,000 units (median; connections, rows or operations as per step)",
                  title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    table.add_column("method", no_wrap=True)
    table.add_column("target/path", no_wrap=True)
    for variant, _, step in steps:
        table.add_column(escape(f"{step}{f' [{variant}]' if variant else ''}"), justify="right", no_wrap=True)
    rows: dict[tuple, dict] = {}
    marks: set[str] = set()
    for r in results:
        key = (r.cell["method"], r.where)
        rows.setdefault(key, {})[(r.cell["variant"], r.cell["step_index"], r.cell["step"])] = r
    for (method, where), cells in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        values = []
        for step in steps:
            r = cells.get(step)
            if r is None:
                values.append("")
            elif r.measured:
                mark = _MARKS.get(r.cell["status"], "")
                marks.add(mark)
                values.append(Text(fmt.seconds(r.seconds_per_1000) + mark, style="" if r.ranked else "red"))
            else:
                values.append(Text("n/a" if r.cell["status"] == "unsupported" else r.cell["status"], style="dim"))
        table.add_row(method, where, *values)
    legend = [text for mark, text in _MARK_LEGEND.items() if mark in marks]
    table.caption = "; ".join(legend) or None
    return table


# A figure whose cell is not ranked says why: its verification disagreed, or the cell stopped
# (an error or a timeout) after the trials shown.
_MARKS = {"mismatch": "!", "error": "†", "timeout": "†"}
_MARK_LEGEND = {"!": "! = verification mismatch: shown, not ranked",
                "†": "† = stopped by an error or timeout after the trials shown: not ranked"}


def _study_table(stored: StoredRun, results: list[CellResult]) -> Table | None:
    """A built-in study's published figures, and the same figures from this run."""
    study = study_table(stored, results)
    if study is None:
        return None
    caption = f"today's figures: {study.sources}" + (f"\n{study.note}" if study.note else "")
    table = Table(title=study.title, title_justify="left", box=box.SIMPLE_HEAD, title_style="bold",
                  caption=caption, caption_justify="left")
    table.add_column("", overflow="fold", min_width=24)
    for label in study.columns:
        table.add_column(label, justify="right")
    for label, texts in study.published:
        table.add_row(Text(label), *texts, style="bold")
    for label, texts in study.today:
        table.add_row(Text(label), *texts)  # Text: "[engine=…]" is not rich markup
    return table


def _cold_start_table(stored: StoredRun, results: list[CellResult]) -> Table | None:
    """JIT runtimes: the first operation before any warm-up, against the warm median."""
    jit = {m["method"] for m in stored.methods if m["capabilities"].get("jit")}
    rows = [r for r in results if r.cell["method"] in jit and r.measured and r.cell.get("cold_first_op_ns")]
    if not rows:
        return None
    table = Table(title="Cold start (JIT runtimes): first operation of each cell vs warm p50",
                  title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    for name, justify in [("method", "left"), ("target/path", "left"), ("step", "left"), ("cold 1st op", "right"),
                          ("warm p50", "right"), ("cold/warm", "right"), ("warmups", "right")]:
        table.add_column(name, justify=justify, no_wrap=True)
    for r in rows:
        cold, warm = r.cell["cold_first_op_ns"], (r.percentiles or {}).get(50.0)
        table.add_row(r.cell["method"], r.where, r.cell["step"], fmt.duration(cold), fmt.duration(warm),
                      f"{cold / warm:.1f}×" if warm else "", str(r.cell.get("warmups") or ""))
    return table


def _not_measured(console: Console, results: list[CellResult]) -> None:
    seen = {}
    for r in results:
        if not r.measured and r.cell["status"] != "ok":
            seen.setdefault((r.label, r.cell["status"], r.cell["message"]), []).append(r.cell["step"])
    if not seen:
        return
    console.print(Text("Not measured", style="bold"))
    for (where, status, message), steps in seen.items():
        console.print(f"  {where} · {status} · {', '.join(dict.fromkeys(steps))}: {message}")


_FLAG_TITLES = {
    "unstable": "unstable (standard deviation above 10% of the mean)",
    "short": "too short (a trial under 3 ms is at the mercy of one preemption)",
    "few": f"too few trials for their spread (to resolve {NOISE:.0%} differences)",
    "outlier": "outliers (modified z-score above 14; kept, never removed)",
}
_FLAGS_SHOWN = 8


def render_flags(results: list[CellResult]) -> Text:
    """pyperf-style warnings, grouped by kind: a few cells each, the count of the rest."""
    by_kind: dict[str, list[tuple[CellResult, Flag]]] = {}
    for r in results:
        for f in flags(r):
            by_kind.setdefault(f.kind, []).append((r, f))
    text = Text()
    if not by_kind:
        return text
    text.append("Warnings", style="bold yellow")
    text.append(" — the figures stand, but read these cells with care\n")
    for kind, title in _FLAG_TITLES.items():
        found = by_kind.get(kind, [])
        if not found:
            continue
        text.append(f"  {title}: {len(found)} cell{'s' if len(found) > 1 else ''}\n", style="yellow")
        if kind == "few":
            needs = sorted(f.trials_needed for _, f in found)
            text.append(f"    half of them need {needs[len(needs) // 2]}+ trials, the worst {needs[-1]}; "
                        f"rerun with --trials N, or accept a coarser resolution\n")
            continue
        for r, f in found[:_FLAGS_SHOWN]:
            text.append(f"    {r.label} · {r.cell['step']}: {f.text}\n")
        if len(found) > _FLAGS_SHOWN:
            text.append(f"    … and {len(found) - _FLAGS_SHOWN} more (the HTML report lists every cell's flags)\n")
    return text
