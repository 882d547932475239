"""The terminal report of a run: per step, methods ranked by median with a 95% CI, and the
methods × steps table in seconds per 1,000 units (study S2's form). Returns text; rich
tables, colour only when asked (the CLI asks when stdout is a terminal)."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..stats import model
from ..stats.cells import CellResult, analyse, by_step
from ..store import StoredRun
from . import format as fmt

_STATUS_STYLE = {"ok": "green", "mismatch": "bold red", "unsupported": "dim", "error": "red", "timeout": "red"}


def render(stored: StoredRun, color: bool = False, width: int | None = None) -> str:
    out = io.StringIO()
    # Without a terminal there is no width to respect: wide enough for the S2 table.
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 240,
                      highlight=False, soft_wrap=False)
    results = analyse(stored)
    _header(console, stored)
    for variant, step, rs in by_step(results):
        console.print(_step_table(variant, step, rs))
    console.print(_per_1000_table(results))
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
    return out.getvalue()


def _header(console: Console, stored: StoredRun) -> None:
    run, settings = stored.run, stored.run["settings"]
    console.print(Text(f"accessbench run {run['id']}", style="bold"),
                  f"· suite {run['suite']} ({run['suite_source']}) · {run['started_at']} · {run['status']}")
    targets = ", ".join(
        f"{t['target']} {t['server_version'] or ''} ({'managed' if t['managed'] else 'external'})".replace("  ", " ")
        for t in stored.targets
    )
    console.print(f"targets: {targets}")
    for t in stored.targets:
        for key in ("latency proxy", "netem"):
            if key in t["settings"]:
                console.print(f"{key} ({t['target']}): {t['settings'][key]}")
    env = run["environment"]
    power = env.get("power", {})
    idle = f" · cpuidle {power['cpuidle_driver']}" if power.get("cpuidle_driver") else ""
    console.print(f"host: {env.get('cpu')} · {env.get('cores')} cores · {env.get('memory_gib')} GiB · "
                  f"{env.get('os')} · kernel {env.get('kernel')}{idle}")
    console.print(
        f"trials: {settings['trials']} per cell after {settings['warmup']} warmup, interleaved across methods"
        f"{' · --quick sizes' if settings.get('quick') else ''} · figure: median [95% bootstrap CI]"
    )
    if run.get("message"):
        console.print(Text(f"note: {run['message']}", style="yellow"))
    console.print()


def _step_table(variant: str, step: str, rs: list[CellResult]) -> Table:
    first = rs[0].cell
    mode = f", {first['mode']}" if first["mode"] else ""
    title = f"{step}{f' [{variant}]' if variant else ''} — {first['kind']}{mode}: {first['description']}"
    unit = rs[0].unit
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    for name, justify in [("#", "right"), ("method", "left"), ("target/path", "left"),
                          (f"{unit}/s", "right"), ("95% CI", "right"), ("vs best", "right"),
                          ("p50", "right"), ("p99", "right"), ("client CPU/op", "right"),
                          ("server CPU/op", "right"), ("time: client▕server▕wait", "left"),
                          ("RT/op", "right"), ("verified", "left")]:
        table.add_column(name, justify=justify, no_wrap=True)
    best = next((r.rate.median for r in rs if r.ranked), None)
    rank = 0
    for r in (r for r in rs if r.measured):
        status = r.cell["status"]
        rank += r.ranked
        p = r.percentiles or {}
        table.add_row(
            str(rank) if r.ranked else "-", r.cell["method"], r.where, fmt.rate(r.rate.median),
            f"{fmt.rate(r.rate.ci_low)}–{fmt.rate(r.rate.ci_high)}",
            fmt.ratio(best / r.rate.median) if r.ranked and best else "",
            fmt.duration(p.get(50.0)), fmt.duration(p.get(99.0)), fmt.duration(r.cpu_per_op_ns),
            fmt.duration(r.server_cpu_per_op_ns), _breakdown(r),
            f"{r.round_trips_per_op:.3g}" if r.round_trips_per_op is not None else "—",
            Text(status, style=_STATUS_STYLE.get(status, "")),
        )
    missing = [f"{r.cell['method']} @ {r.where} ({r.cell['status']})" for r in rs if not r.measured]
    if missing:
        table.caption = "not measured: " + ", ".join(missing)
        table.caption_justify = "left"
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
        table.add_column(f"{step}{f' [{variant}]' if variant else ''}", justify="right", no_wrap=True)
    rows: dict[tuple, dict] = {}
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
                text = fmt.seconds(r.seconds_per_1000)
                values.append(Text(text + ("!" if not r.ranked else ""), style="" if r.ranked else "red"))
            else:
                values.append(Text("n/a" if r.cell["status"] == "unsupported" else r.cell["status"], style="dim"))
        table.add_row(method, where, *values)
    table.caption = "! = verification mismatch: shown, not ranked"
    return table


def _study_table(stored: StoredRun, results: list[CellResult]) -> Table | None:
    """A built-in study's published figures, and the same figures from this run per method."""
    from ..suite.loader import parse

    run = stored.run
    suite = parse(run["suite_text"], run["suite_source"], quick=bool(run["settings"].get("quick")))
    if suite.study is None:
        return None
    steps = {s.name: s for v in suite.variants for s in v.steps}
    cells = {(r.cell["method"], r.cell["step"], r.cell["path"]): r for r in results if r.ranked}
    methods = list(dict.fromkeys(r.cell["method"] for r in results))
    figures = suite.study.figures
    sources = "; ".join(
        f"{f.label}: {f.step} on {f.path}" + (" ÷ its loop count" if f.per_param is not None else "")
        + (f" × {f.times:,.0f}" if f.times != 1 else "")
        for f in figures if f.step)
    table = Table(title=suite.study.title, title_justify="left", box=box.SIMPLE_HEAD, title_style="bold",
                  caption=f"today's figures: {sources}", caption_justify="left")
    table.add_column("", no_wrap=True)
    for f in figures:
        table.add_column(f.label, justify="right")
    table.add_row("published", *[f.published for f in figures], style="bold")
    for method in methods:
        values: dict[str, float] = {}
        for f in figures:
            r = cells.get((method, f.step, f.path)) if f.step else None
            if r is not None and r.per_op_ns:
                per = steps[f.step].params[f.per_param].value if f.per_param is not None else 1
                values[f.label] = r.per_op_ns / per * f.times
            elif f.ratio and all(label in values for label in f.ratio):
                values[f.label] = values[f.ratio[0]] / values[f.ratio[1]]
        if values:
            table.add_row(method, *[
                "" if f.label not in values else f"{values[f.label]:.1f}×" if f.ratio else fmt.duration(values[f.label])
                for f in figures])
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
            seen.setdefault((r.cell["method"], r.cell["status"], r.cell["message"]), []).append(r.cell["step"])
    if not seen:
        return
    console.print(Text("Not measured", style="bold"))
    for (method, status, message), steps in seen.items():
        console.print(f"  {method} · {status} · {', '.join(dict.fromkeys(steps))}: {message}")
