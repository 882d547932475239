"""accessbench's command line: parse, call, print. Everything else lives in the modules."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys

from rich import box
from rich.console import Console
from rich.table import Table

from . import formatting as fmt
from .errors import Fault, InputError, first_line
from .runner.cleanup import end_like_ctrl_c
from .store.backend import is_server, must_exist, shown
from .targets.url import redact
from .export.formats import FORMATS
from .arguments import DEFAULT_STORE, build_parser


def _console() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:  # files and pipes get wide plain text, not 80 columns, unless COLUMNS says
        console = Console(highlight=False, width=_columns_set() or fmt.PIPE_WIDTH)
    return console


def _columns_set() -> int | None:
    """COLUMNS as terminal tools honour it in a pipe (ls, git): a positive whole number, else None."""
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def _width(args: argparse.Namespace, console: Console) -> int | None:
    """--width, else the terminal's; in a pipe COLUMNS, else None (the report's own default)."""
    return args.width or (console.width if console.is_terminal else _columns_set())


def _color(console: Console) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (rich reads it into ``no_color``)."""
    return console.is_terminal and not console.no_color


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def cmd_run(args: argparse.Namespace) -> int:
    return _run(args, _console())[0]


def _run(args: argparse.Namespace, console: Console, report: bool = True):
    """A run as `run` makes it: (exit status, the stored run or None when interrupted).
    ``report``: print the run's report (`reproduce` prints its own table instead)."""
    from . import studies
    from .runner.prepare import prepare

    prepared = prepare(args, skipped=lambda s: console.print(s.text, style=s.style))
    # the heavy imports (numpy) after the input is known to be good: a mistake is told at once
    from .report.live import LiveProgress, PlainProgress

    runner = prepared.runner
    runner.report_to(LiveProgress(console) if console.is_terminal else PlainProgress(console))  # a log sees lines
    options, store = runner.options, runner.store
    if prepared.resume:
        console.print(f"resuming run {runner.run_id}: {prepared.complete} of {prepared.cells} cells complete, "
                      f"{prepared.to_measure} trials to measure")
    else:
        precision = (f", more (up to {options.max_trials}) where the CI is wider than "
                     f"±{fmt.share(options.precision)} within {_minutes(options.budget)}"
                     if options.precision and options.budget else "")
        console.print(f"run {runner.run_id}: suite {runner.suite.name}, targets "
                      f"{', '.join(t.name for t in runner.targets)}"
                      f"{f' (from {prepared.target_from})' if prepared.target_from else ''}"
                      f"{' over its existing data, read-only' if runner.suite.existing else ''}, "
                      f"{len(runner.methods)} methods, {options.trials} "
                      f"trials + {options.warmup} warmup per cell{precision} → {store.path}")
    if options.trials < 4:
        console.print(f"warning: with {options.trials} trial{'s' if options.trials != 1 else ''} per cell no "
                      "difference can be called significant (a Mann-Whitney test needs 4 against 4 to reach "
                      "p < 0.05): the verdicts will say so", style="yellow")
    try:
        run_id = runner.run()
    except KeyboardInterrupt:
        console.print(f"interrupted: run {runner.run_id} is stored with the trials that finished "
                      f"(accessbench show {runner.run_id}; carry on with accessbench run --resume {runner.run_id})",
                      style="yellow")
        for what in runner.left_behind:
            console.print(f"left behind: {what}", style="bold yellow", markup=False, soft_wrap=True)
        return 130, None
    except Fault as e:
        raise Fault(f"run {runner.run_id} stopped: {e}") from None
    stored = store.load(run_id)
    if report:
        _print(_report_text(stored, args, console))
    console.print(f"stored as run {run_id} in {store.path} · accessbench show {run_id}")
    if report and (study := studies.study_of(stored.run)):  # a reproduction carried on by --resume
        console.print(f"run {run_id} reproduces study {study.upper()}: its claims are judged by "
                      f"accessbench reproduce {study} --show")
    if not args.no_report:
        console.print(f"HTML report: {_write_report(stored, args.report_dir, option='--report-dir')}")
    for what in runner.left_behind:  # a clean-up that could not finish: say what stays where
        console.print(f"left behind: {what}", style="bold yellow", markup=False, soft_wrap=True)
    if stored.run.status != "complete":
        print(f"accessbench: run {run_id} {stored.run.status}: {stored.run.message}", file=sys.stderr)
        return 1, stored
    return 0, stored


def cmd_clean(args: argparse.Namespace) -> int:
    from . import targets as targets_mod

    target = targets_mod.make(args.target)
    if target.managed:
        raise InputError(f"--target {args.target}: clean is for external servers (a managed one is removed whole "
                         "at the end of its run)")
    try:
        found = target.leftovers()
    except targets_mod.TargetUnavailable as e:
        raise InputError(str(e)) from None
    if not found:
        _print(f"{target.name}: nothing left by accessbench runs\n")
        return 0
    lines, failed = [], 0
    for leftover in found:
        state = "in use by a running run: left alone" if leftover.in_use else ("removing" if args.yes else "left over")
        lines.append(f"  {leftover.kind} {leftover.name} — {leftover.mark} — {state}")
    _print(f"{target.name}: {len(found)} object(s) made by accessbench runs\n" + "\n".join(lines) + "\n")
    if not args.yes:
        _print("remove them with: accessbench clean --target URL --yes\n")
        return 0
    for leftover in found:
        if leftover.in_use:
            continue
        try:
            target.remove(leftover)
            _print(f"removed {leftover.kind} {leftover.name}\n")
        except targets_mod.TargetUnavailable as e:
            failed += 1
            print(f"accessbench: {e}", file=sys.stderr)
    target.stop()
    return 1 if failed else 0


def cmd_methods(args: argparse.Namespace) -> int:
    from .methods import catalog
    from .methods.probe import probe_all

    methods = list(catalog())
    probes = list(zip(methods, probe_all(methods, again=args.probe)))
    if not args.long:  # one line per method: its name whole, so it can be copied into --method
        rows = [(m.name, info.status, ",".join(m.dbms), m.language, info.version or "—") for m, info in probes]
        _print(_one_line_rows(("method", "available here", "DBMS", "language", "driver version"), rows,
                              right=set(), squeeze=(1, 4), width=_console().width))
        _print("every pinned setting of each method: accessbench methods --long\n")
        return 0
    console = _console()
    table = Table(box=box.SIMPLE_HEAD)
    for name in ("method", "language", "driver", "version", "DBMS", "available here"):
        table.add_column(name, overflow="fold", no_wrap=name == "method")
    for method, info in probes:
        table.add_row(method.name, info.runtime or method.language, method.driver, info.version or "—",
                      ", ".join(method.dbms), info.status)
    console.print(table)
    for method, info in probes:
        console.print(f"[bold]{method.name}[/bold] — {method.summary}")
        for key, value in info.settings.items():
            console.print(f"    {key}: {value}", highlight=False, markup=False)
        if method.layer:
            console.print(shapes_text(method.layer, info.shapes), highlight=False, markup=False, end="")
    return 0


def shapes_text(layer: str, shapes: dict | None) -> str:
    """A layer's shapes as `methods --long` lists them: those it builds through its own API,
    then each it answers unsupported, with why (protocol/PROTOCOL.md, Shapes)."""
    if shapes is None:
        return f"    shapes: none — {layer}'s API is SQL text: every statement runs through its raw-SQL API, and " \
               "every report says so\n"
    lines = [f"    shapes through {layer}'s own API: {', '.join(shapes.get('maps', [])) or 'none'}"]
    lines += [f"    unsupported: {feature} — {why}" for feature, why in shapes.get("unsupported", {}).items()]
    return "\n".join(lines) + "\n"


def cmd_history(args: argparse.Namespace) -> int:
    from .report.history import render_history
    from .stats.history import stored
    from .store import Store

    must_exist(args.store)
    with Store(args.store) as store:
        lines = stored(store, args.alpha, args.noise, method=args.method, step=args.step, target=args.target,
                       path=args.path)
    if args.changes:
        lines = [s for s in lines if s.changes]
    if not lines:
        asked = ", ".join(f"--{k} {','.join(v)}" for k, v in (("method", args.method), ("step", args.step),
                                                             ("target", args.target), ("path", args.path)) if v)
        raise InputError(f"history: no verified cell in {shown(args.store)}"
                         + (f" matches {asked}" if asked else "") + (" changed significantly" if args.changes else ""))
    console = _console()
    _print(render_history(lines, color=_color(console), width=args.width or console.width))
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from .runner.resume import orphaned
    from .store import Store

    if not is_server(args.store) and not os.path.exists(args.store):
        _print(f"no runs in {args.store} yet: try `accessbench run --quick`\n")
        return 0
    store = Store(args.store)
    rows = store.runs(args.limit)
    if not rows:
        _print(f"no runs in {store.path} yet: try `accessbench run --quick`\n")
        return 0
    # One line per run, never wrapped: what a reader scans for (which run, when, what was
    # measured, whether it finished); only the targets and a failed run's reason are cut to the
    # width left.
    lines = []
    contents = store.contents(rows)
    for r in rows:
        settings, env, (targets, methods) = r.settings, r.environment, contents[r.id]
        status = r.status if r.status == "complete" or not r.message else f"{r.status}: {r.message}"
        if orphaned(r):
            status = "stopped: process gone (--resume)"  # killed: nothing could store why
        lines.append((r.id, r.started_at.replace("T", " ")[:16], f"{env.get('user') or '—'}@{env.get('hostname')}",
                      r.suite, ",".join(targets),
                      str(methods), f"{settings.get('trials', '?')}{' quick' if settings.get('quick') else ''}",
                      status, settings.get("label") or ""))
    # who ran it where: in a team's store, or once a file holds runs of more than one user or host
    shared = store.server or len({line[2] for line in lines}) > 1
    labelled = any(line[-1] for line in lines)  # a label column only where some run has one
    names = ("run", "started (UTC)", "user@host", "suite", "targets", "methods", "trials", "status", "label")
    keep = [i for i in range(len(names)) if (i != 2 or shared) and (i != 8 or labelled)]
    squeeze = tuple(keep.index(i) for i in (4, 8, 7, 2) if i in keep)
    _print(_one_line_rows(tuple(names[i] for i in keep), [tuple(line[i] for i in keep) for line in lines],
                          right={keep.index(5), keep.index(6)}, squeeze=squeeze, width=_console().width))
    return 0


def cmd_copy(args: argparse.Namespace) -> int:
    from .store import Store

    must_exist(args.store)
    with Store(args.store) as source:
        ids = list(dict.fromkeys(source.resolve(ref) for ref in args.runs))
        if not is_server(args.to) and os.path.abspath(args.to) == os.path.abspath(args.store):
            raise InputError(f"--to {args.to}: the store the runs are in")
        with Store(args.to) as destination:
            for run_id in ids:
                status = source.run(run_id).status
                trials = destination.copy_run(source, run_id)
                note = "" if status != "running" else " (still running there: trials stored later are not copied)"
                _print(f"copied run {run_id} ({trials:,} trials) to {destination.path}{note}\n")
    return 0


def _one_line_rows(names: tuple[str, ...], rows: list[tuple[str, ...]], right: set[int], squeeze: tuple[int, ...],
                   width: int) -> str:
    """Rows of plain columns, one line each, whatever the width: every column whole but those
    in ``squeeze``, which share what the terminal leaves, in that order, cut with "…"."""
    widths = [max(len(name), *(len(row[i]) for row in rows)) for i, name in enumerate(names)]
    left = width - sum(w for i, w in enumerate(widths) if i not in squeeze) - 2 * (len(names) - 1)
    for k, i in enumerate(squeeze):
        later = sum(len(names[j]) for j in squeeze[k + 1:])
        widths[i] = max(len(names[i]), min(widths[i], left - later))
        left -= widths[i]

    def line(cells) -> str:
        return "  ".join(f"{_cut(c, w):>{w}}" if i in right else f"{_cut(c, w):<{w}}"
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(names), *(line(row) for row in rows)]) + "\n"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _load(store_path: str, ref: str, option: str = "--store"):
    """A stored run from a reference: an id, a unique prefix, 'last', or FILE:RUN for a run
    kept in another results file (another machine's, say)."""
    from .store import Store

    if ":" in ref:  # FILE:RUN, the file named as the user named it when it is missing (or STORE-URL:RUN)
        file, run = ref.rsplit(":", 1)
        if is_server(file) and "/" not in run or not is_server(ref) and (
                os.path.exists(file) or file.endswith(".db") or os.sep in file):
            store_path, ref, option = file, run, f"RUN {shown(ref)}:"
    must_exist(store_path, option)
    store = Store(store_path)
    return store.load(store.resolve(ref))


def _write_report(stored, directory: str, view: str = "median", option: str = "--out") -> str:
    return _write_file(directory, f"accessbench-{stored.run.id}.html", FORMATS["html"].write(stored, view=view), option)


def _write_file(directory: str, name: str, text: str, option: str = "--out") -> str:
    path = os.path.join(directory, name)
    try:
        os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"{option} {directory}: cannot write the report ({e.strerror or e})") from None
    return path


def cmd_show(args: argparse.Namespace) -> int:
    console = _console()
    stored = _load(args.store, args.run)
    if args.profile:
        return _show_profiles(stored, args, console)
    if args.against or args.flamegraph or args.method or args.step or args.target or args.path or args.side:
        raise InputError("show: --method, --step, --target, --path, --side, --against and --flamegraph select "
                         "profiles: add --profile")
    _print(_report_text(stored, args, console))
    return 0


def _show_profiles(stored, args: argparse.Namespace, console: Console) -> int:
    """`show --profile`: the profiles selected, their diff against --against's, or a flame graph."""
    from .profile.folded import diff_graph, flame_graph
    from .report.profiles import pairs, render_diff, render_profiles, select

    rows = stored.profiles
    if not rows:
        raise InputError(f"show --profile: run {stored.run.id} has no profiles (make one with `accessbench run "
                         "--profile`)")
    chosen = select(rows, args.method, args.step, args.target, args.path, args.side)
    base = select(rows, [args.against], args.step, args.target, args.path, args.side) if args.against else []
    if not chosen or (args.against and not base):
        methods = ", ".join(sorted({r["method"] for r in rows}))
        raise InputError(f"show --profile: no profile of run {stored.run.id} matches (its methods: {methods})")
    color, width = _color(console), args.width or console.width
    matched = pairs([p for p in chosen if p.row["method"] != args.against], base) if args.against else []
    if args.against and not matched:
        raise InputError(f"show --profile --against {args.against}: no cell of {args.against} was profiled beside "
                         "the ones selected (same step, target and path)")
    if args.flamegraph:
        one = matched if args.against else [(None, p) for p in chosen if p.row["folded"]]
        if len(one) != 1:
            raise InputError(f"show --flamegraph: {len(one)} profiles match; choose one with --method, --step, "
                             "--target, --path and --side (a cell's client and server are two)")
        reference, profile = one[0]
        title = f"{profile.label} · {profile.row['side']}"
        svg = diff_graph(reference.stacks, profile.stacks, f"{title} against {reference.row['method']}") \
            if reference else flame_graph(profile.stacks, title, profile.heading())
        with open(args.flamegraph, "w") as f:
            f.write(svg)
        _print(f"wrote {args.flamegraph}\n")
        return 0
    _print(render_diff(matched, color, width, args.top) if args.against else
           render_profiles(chosen, color, width, args.top))
    return 0


def _report_text(stored, args: argparse.Namespace, console: Console) -> str:
    """A run's report as `run` and `show` print it: the brief one (two screens), or with
    --full, --wide or another --view than the median the whole of it."""
    from .report.terminal import render, render_brief

    view = getattr(args, "view", "median")
    if args.full or args.wide or view != "median":
        return render(stored, color=_color(console), width=_width(args, console), view=view, wide=args.wide)
    return render_brief(stored, color=_color(console), width=_width(args, console))


def cmd_compare(args: argparse.Namespace) -> int:
    from .report.compare import drift_lines, render_comparison, step_shift_lines
    from .stats.cells import analyse
    from .stats.compare import axis_change, pair_runs, pair_with_base
    from .stats.drift import between_runs
    from .store import Store
    from .store.differences import differences

    if (args.other is None) == (args.base is None):
        raise InputError("compare: give either RUN_B (run against run) or --base METHOD (methods inside RUN_A)")
    if args.summary and not args.fail_on:
        raise InputError("compare --summary: it writes the gate's verdict; give the rules with --fail-on")
    console = _console()
    width = console.width if console.is_terminal else None
    reference = _load(args.store, args.run)
    if args.base:
        results = analyse(reference)
        known = sorted({r.cell.method for r in results})
        for base in args.base:
            if base not in known:
                raise InputError(f"--base {base}: not in run {reference.run.id} (it has {', '.join(known)})")
        pairs, without = pair_with_base(results, args.base, args.alpha, args.noise)
        unmatched = [f"{target}/{path} (no verified {' or '.join(args.base)} cell; add one to --base)"
                     for target, path in without]
        _print(render_comparison(pairs, "base", "method", [], unmatched, color=_color(console),
                                 width=width, by_method=True, show_all=args.show_all))
        return _gate(args, pairs, results, [f"run {reference.run.id}: every method against {', '.join(args.base)}"],
                     f"a difference is called only beyond ±{args.noise:.1%}")
    candidate = _load(args.store, args.other)
    a, b = analyse(reference), analyse(candidate)
    across = axis_change(a, b)  # the path or target that changed between the runs, if that is what did
    axis = across.axis if across else None
    pairs, alone = pair_runs(a, b, args.alpha, args.noise, across=axis)
    if not pairs:
        raise InputError(f"RUN_B {args.other}: no verified cell matches run {reference.run.id} "
                         f"(suites {reference.run.suite} and {candidate.run.suite})")
    # Across a path change every cell moved by design: their scatter is no estimate of the drift
    # then (the host's calibration still is).
    with Store(args.store) as store:
        drift = between_runs(store, reference.run, candidate.run, [p.comparison.ratio for p in pairs], args.noise,
                             calibrate=args.calibrate, own=not across)
    if drift.floor is not None:  # the verdicts weigh the drift too
        pairs, alone = pair_runs(a, b, args.alpha, drift.floor, across=axis)
    unmatched = [f"{r.label} · {r.cell.step}" for r in alone]
    legend = [f"{side}: run {r.id} · suite {r.suite} · {r.started_at[:16].replace('T', ' ')} · "
              f"{r.settings['trials']} trials per cell{' · --quick' if r.settings.get('quick') else ''}"
              for side, r in (("A", reference.run), ("B", candidate.run))]
    if across:
        legend.append(f"{across.axis}: A measured {across.reference} only and B {across.candidate} only, so each cell "
                      f"is matched across them and the {across.axis} is part of every difference (rows show B's)")
    _print(render_comparison(pairs, "A", "B", differences(reference, candidate), unmatched,
                             color=_color(console), width=width, show_all=args.show_all,
                             legend=legend + drift_lines(drift) + ([] if across else step_shift_lines(pairs))))
    return _gate(args, pairs, b, legend, f"a difference is called only beyond ±{drift.found.floor:.1%} (the larger "
                                         "of --noise and the drift between the runs)")


def _gate(args: argparse.Namespace, pairs, candidates, legend: list[str], floor: str) -> int:
    """compare --fail-on: 1 when a cell trips a rule, else 0; the verdict printed, and written
    as Markdown with --summary."""
    if not args.fail_on:
        return 0
    from .report.gate import gate_lines, summary
    from .stats.gate import trips

    rules = list(dict.fromkeys(rule for given in args.fail_on for rule in given))
    tripped = trips(rules, pairs, candidates)
    _print("\n".join(gate_lines(rules, tripped, len(pairs))) + "\n")
    if args.summary:
        try:
            with open(args.summary, "w", encoding="utf-8") as out:
                out.write(summary(rules, tripped, len(pairs), legend, floor))
        except OSError as e:
            raise InputError(f"--summary {args.summary}: cannot write it ({e.strerror or e})") from None
    return 1 if tripped else 0


def cmd_report(args: argparse.Namespace) -> int:
    stored = _load(args.store, args.run)
    if not args.history:
        path = _write_report(stored, args.out, args.view)
        _print(f"wrote {path} (self-contained: open it in any browser, offline)\n")
        return 0
    from .report.history import page_name, render_history_html
    from .report.html import render_html
    from .stats.history import stored as history_of
    from .store import Store

    with Store(args.store) as store:
        lines = history_of(store)
    lines = [s for s in lines if any(p.run.id == stored.run.id for p in s.points)]
    history = _write_file(args.out, page_name(stored.run), render_history_html(stored.run, lines))
    path = _write_file(args.out, f"accessbench-{stored.run.id}.html", render_html(stored, args.view, page_name(stored.run)))
    _print(f"wrote {path} and {history}, its cells over {len({p.run.id for s in lines for p in s.points})} runs "
           "(self-contained: open them in any browser, offline)\n")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    text = FORMATS[args.format].write(_load(args.store, args.run), view=args.view, trials=args.trials)
    if args.out is None:
        _print(text)
        return 0
    try:
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"--out {args.out}: cannot write ({e.strerror})") from None
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def cmd_conformance(args: argparse.Namespace) -> int:
    from . import conformance
    from .methods import catalog, select

    console = _console()
    names = [n for arg in args.method for n in arg.split(",") if n]  # "a b" and "a,b" alike, as run's --method
    methods = select(names, option="METHOD") if names else list(catalog())
    outcomes = conformance.check(methods, progress=lambda text: console.print(text, style="dim"))
    table = Table(box=box.SIMPLE_HEAD)
    for name in ("method", "result", "checks", "notes"):
        table.add_column(name, overflow="fold")
    for o in outcomes:
        result = "[green]pass[/green]" if o.passed else "[bold red]FAIL[/bold red]"
        notes = o.failure if not o.passed else "; ".join(o.notes)
        table.add_row(o.method, result, str(o.checks), notes)
    console.print(table)
    return 0 if all(o.passed for o in outcomes) else 1


def cmd_predict(args: argparse.Namespace) -> int:
    from .report.terminal import render_predictions

    console = _console()
    stored = _load(args.store, args.run)
    text = render_predictions(stored, args.latency, args.base, color=_color(console),
                              width=console.width if console.is_terminal else None)
    if text is None:
        raise InputError(f"predict {stored.run.id}: no cell on {args.base} whose round trips were counted: run a "
                         "tcp+DELAY path too (e.g. --path tcp,tcp+100us) so the proxy counts them")
    _print(text)
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from . import studies
    from .report.studies import render_studies, render_studies_markdown, write_studies_html
    from .store import Store

    console = _console()
    recipes = studies.resolve(args.studies)
    status = 0
    with Store(args.store) as store:
        runs = studies.newest_runs(store, recipes) if args.show else {}
        expected = None if args.show else studies.expected_time(store, recipes, args.quick, args)
    if args.show and not runs:
        raise InputError(f"reproduce --show: {args.store} holds no run of "
                         f"{', '.join(r.suite for r in recipes)} (run accessbench reproduce first)")
    if expected:
        console.print(expected)
    for recipe in [] if args.show else recipes:
        console.print(f"study {recipe.study.upper()}, {recipe.title}: suite {recipe.suite}, {recipe.parameters}",
                      style="bold")
        try:
            code, stored = _run(studies.run_arguments(recipe, args), console, report=False)
        except InputError as e:  # nothing of this study can run here (say, no method available): the next one can
            console.print(f"study {recipe.study.upper()} not reproduced: {e}", style="bold yellow", markup=False)
            status = max(status, 1)
            continue
        status = max(status, code)
        if stored is None:  # interrupted: judge what was measured so far, then stop
            status = 130
            break
        runs[recipe.study] = studies.study_run(stored)
    wanted = {r.study for r in recipes}
    findings = [f for f in studies.claims.evaluate(runs) if f.study in wanted]
    _print(render_studies_markdown(findings, runs) if args.markdown
           else render_studies(findings, runs, color=_color(console), width=_width(args, console)))
    where = f"HTML studies report: {write_studies_html(findings, runs, args.report_dir)}"
    if args.markdown:  # stdout is the Markdown alone, to paste
        print(where, file=sys.stderr)
    else:
        console.print(where)
    return status


def cmd_suites(args: argparse.Namespace) -> int:
    from .suite.loader import builtin_names, load

    table = Table(box=box.SIMPLE_HEAD)
    for name in ("suite", "tables", "steps", "description"):
        table.add_column(name, overflow="fold")
    for name in builtin_names():
        suite = load(name)
        variant = suite.variants[0]
        table.add_row(name, ", ".join(f"{t.name} ({t.rows:,})" for t in variant.tables),
                      ", ".join(suite.step_names), suite.description)
    console = _console()
    console.print(table)
    console.print("run one: accessbench run --suite NAME · your own: accessbench run --suite path/to/suite.toml")
    return 0


# What each command of the parser (arguments.py) calls.
COMMANDS = {"clean": cmd_clean, "compare": cmd_compare, "conformance": cmd_conformance, "copy": cmd_copy, "export": cmd_export, "history": cmd_history, "methods": cmd_methods, "predict": cmd_predict, "report": cmd_report, "reproduce": cmd_reproduce, "run": cmd_run, "runs": cmd_runs, "show": cmd_show, "suites": cmd_suites}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    end_like_ctrl_c()  # stored trials kept, servers stopped, work directories removed
    args = None
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return 2
        return COMMANDS[args.command](args)
    except InputError as e:
        print(f"accessbench: {e}", file=sys.stderr)
        return 2
    except Fault as e:
        print(f"accessbench: {e}", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as e:  # damaged pages show up when they are read
        print(f"accessbench: --store {getattr(args, 'store', DEFAULT_STORE)}: not an accessbench store, or damaged "
              f"({first_line(e)})", file=sys.stderr)
        return 2
    except Exception as e:
        if not type(e).__module__.startswith("psycopg"):
            raise
        # a team's store lost mid-command (server gone, connection cut): one line, no password
        spec = getattr(args, "store", DEFAULT_STORE)
        print(f"accessbench: --store {shown(spec)}: {redact(first_line(e), spec)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("accessbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
