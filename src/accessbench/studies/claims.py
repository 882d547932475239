"""Every claim of the five studies (../shared/seeds.md) as a row: the claim in one line, the
published figure, today's figure with its CI, and a verdict by a rule stated beside it.

The rules, one per kind of claim:
- a *ratio* claim ("JDBC read 0.37× ODBC's records per second") is **reproduced** when today's
  ratio differs from 1 significantly (stats/compare.py: Mann-Whitney and the ratio's bootstrap
  CI outside ±3%) in the published direction and lies within the same order of magnitude as
  the published ratio (between a tenth and ten times it); **reversed** when it differs
  significantly the other way; otherwise **not reproduced** (no significant difference, or a
  ratio more than ten times off);
- a *direction* claim (the study gave no figure: "by a wide margin") needs only the first part;
- a *closeness* claim ("no ODBC penalty", "gained little") is reproduced when today's figure stays
  inside the bound the row states, else not reproduced;
- a *band* claim ("TLS costs 7–10% of throughput") is reproduced when the cost is significant in
  the published direction and its 95% CI meets the published band; reversed when significant the
  other way; otherwise not reproduced (no significant cost, or a CI wholly outside the band);
- a claim today's machine cannot test says why, and is **untestable here**; one the run did not
  measure (a method unavailable, a study not reproduced) is **not measured**.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..formatting import link
from ..formatting import ratio3 as _x  # a ratio at the precision a run knows it
from ..stats.sizes import method_verdict, size_sweeps
from ..stats.cells import CellResult
from ..stats.compare import Comparison, compare
from ..stats.layers import layer_costs
from ..suite.model import Suite
from ..targets import dbms_of

REPRODUCED, NOT_REPRODUCED, REVERSED = "reproduced", "not reproduced", "reversed"
UNTESTABLE, NOT_MEASURED = "untestable here", "not measured"

RATIO_RULE = "significant, same direction, within 10× of the published ratio"
DIRECTION_RULE = "significant, in the published direction"
PENALTY = 0.10  # S3 counted the native API "ahead" where it was more than 10% faster


@dataclass(frozen=True)
class StudyRun:
    """One study's stored run, as the claims read it."""

    run_id: str
    suite: Suite            # as the run loaded it (--quick scaled)
    results: list[CellResult]


@dataclass(frozen=True)
class Finding:
    study: str
    claim: str
    published: str
    today: str
    verdict: str
    rule: str
    where: str = ""     # the cells today's figure comes from
    # a ratio claim's figures, for the report's chart: today's ratio with its CI, and the published one
    ratio: tuple[float, float, float] | None = None
    published_ratio: float | None = None


# S4's remote call: over tcp to a server the run did not start (`reproduce --target URL`: a
# real network to a real remote database) where the run has one, else over the latency proxy's
# 250 µs to the local one (the study's own distance, simulated).
REMOTE = "remote"
SIMULATED_REMOTE = "tcp+250us"


@dataclass(frozen=True)
class Cells:
    """Where a figure is read: the first of ``methods`` with a verified cell of ``step`` on the
    target (and path, and a variant containing ``variant``). The target is the one of that name
    where the run has it, else any of the same DBMS (`reproduce --target` on the user's server):
    the finding's ``where`` names which."""

    methods: tuple[str, ...]
    step: str
    target: str
    path: str | None = None
    variant: str = ""

    def find(self, results: list[CellResult], method: str | None = None) -> CellResult | None:
        for name in ([method] if method else self.methods):
            for on_target, on_path in self._places():
                for r in results:
                    c = r.cell
                    if (r.verified and c.method == name and c.step == self.step and on_target(c.target)
                            and on_path(c.path) and self.variant in c.variant):
                        return r
        return None

    def _places(self):
        """(target test, path test) pairs, in the order they are preferred."""
        exact, same_dbms = (lambda t: t == self.target), (lambda t: dbms_of(t) == self.target)
        if self.path == REMOTE:
            return [(lambda t: "://" in t and dbms_of(t) == self.target, lambda p: p == "tcp"),
                    (exact, lambda p: p == SIMULATED_REMOTE), (same_dbms, lambda p: p == SIMULATED_REMOTE)]
        on_path = lambda p: self.path is None or p == self.path  # noqa: E731
        return [(exact, on_path), (same_dbms, on_path)]


def _ratio_text(c: Comparison, scale: float = 1.0) -> str:
    return f"{_x(c.ratio * scale)}× {c.interval(lambda v: _x(v * scale))}"


def judge_ratio(c: Comparison, published: float | None, scale: float = 1.0) -> str:
    """The ratio rule on ``c``'s ratio times ``scale`` (published None: the direction rule,
    the published direction being a ratio above 1)."""
    c = replace(c, ratio=c.ratio * scale, ci_low=c.ci_low * scale, ci_high=c.ci_high * scale)
    if not c.significant:
        return NOT_REPRODUCED
    if (c.ratio > 1) != ((published or 2.0) > 1):
        return REVERSED
    if published is not None and abs(math.log10(c.ratio / published)) > 1:
        return NOT_REPRODUCED
    return REPRODUCED


@dataclass(frozen=True)
class Claim:
    study: str
    claim: str
    published: str
    judge: Callable[[dict[str, StudyRun]], tuple] = field(repr=False)
    # judge(runs by study) → (today, verdict, rule, where[, (ratio, CI low, CI high)])
    published_ratio: float | None = None

    def evaluate(self, runs: dict[str, StudyRun]) -> Finding:
        if self.study not in runs:
            return Finding(self.study, self.claim, self.published, "", NOT_MEASURED, f"study {self.study} not run")
        today, verdict, rule, where, *figures = self.judge(runs)
        return Finding(self.study, self.claim, self.published, today, verdict, rule, where,
                       figures[0] if figures else None, self.published_ratio)


def ratio(study: str, claim: str, published: str, value: float | None, a: Cells, b: Cells,
          scale: Callable[[CellResult, Suite], float] = lambda _c, _s: 1.0, close: float | None = None) -> Claim:
    """a's units per second over b's (times ``scale``): the published ``value`` (None: a
    direction claim, a faster than b); with ``close``, a closeness claim: reproduced while the
    ratio's CI stays under ``close`` (a gain of at most that much)."""
    def judge(runs):
        rs = runs[study].results
        for method in a.methods:  # the first method with both cells
            ca, cb = a.find(rs, method), b.find(rs, method if set(a.methods) == set(b.methods) else None)
            if ca is not None and cb is not None:
                c, k = compare(ca, cb), scale(ca, runs[study].suite)
                where = f"{ca.label} {ca.cell.step} ÷ {cb.label} {cb.cell.step}"
                figures = (c.ratio * k, c.ci_low * k, c.ci_high * k)
                if close is not None:
                    return (_ratio_text(c, k), REPRODUCED if c.bounded and c.ci_high * k < close else NOT_REPRODUCED,
                            f"closeness: the ratio's CI under {close:g}×", where, figures)
                return (_ratio_text(c, k), judge_ratio(c, value, k), RATIO_RULE if value else DIRECTION_RULE, where,
                        figures)
        return "", NOT_MEASURED, "", f"needs {a.step} and {b.step} of {' or '.join(a.methods)} on {a.target}"
    return Claim(study, claim, published, judge, value)


def band(study: str, claim: str, published: str, low: float, high: float, a: Cells, b: Cells) -> Claim:
    """The share of a's speed that b loses (a cost of 7–10%: ``low`` 0.07, ``high`` 0.10), the
    first method with both cells."""
    def judge(runs):
        rs = runs[study].results
        for method in a.methods:
            ca, cb = a.find(rs, method), b.find(rs, method)
            if ca is not None and cb is not None:
                c = compare(cb, ca)  # b's speed over a's: 0.92 is a cost of 8%
                cost, cost_low, cost_high = 1 - c.ratio, 1 - c.ci_high, 1 - c.ci_low
                verdict = (NOT_REPRODUCED if not c.significant else REVERSED if cost < 0
                           else REPRODUCED if cost_low <= high and cost_high >= low else NOT_REPRODUCED)
                return (f"{cost:.1%} " + (f"[{cost_low:.1%} to {cost_high:.1%}]" if c.bounded else f"({c.unbounded})"),
                        verdict,
                        f"significant, and the cost's 95% CI meets {low:.0%}–{high:.0%}",
                        f"{cb.label} {cb.cell.step} against {ca.label} {ca.cell.step}", (c.ratio, c.ci_low, c.ci_high))
        return "", NOT_MEASURED, "", f"needs {a.step} on {a.path} and {b.path} of {' or '.join(a.methods)} on {a.target}"
    return Claim(study, claim, published, judge, 1 - (low + high) / 2)


def untestable(study: str, claim: str, published: str, why: str) -> Claim:
    return Claim(study, claim, published, lambda _: ("", UNTESTABLE, why, ""))


# --- the claims with more than two cells ---------------------------------------------------------

def _layers(runs) -> tuple[str, str, str, str]:
    """Every layer against its own driver on S1's read, wherever both were measured (the
    reports' own pairing: stats/layers.py ``layer_costs``)."""
    found = [c.comparison for c in layer_costs([r for r in runs["s1"].results if r.cell.step == "rps"])]
    return _layer_verdict(found, "needs a layer and its driver on rps",
                          "each layer method's rps ÷ its own driver's, same target and path")


def _orm_layers(runs) -> tuple[str, str, str, str]:
    """S1's layer claim on the orm suite: every layer against its own driver on every step both
    ran through the layer's own API (a cell through its raw-SQL API is left out: it is not the
    layer as its users write it)."""
    steps: dict[tuple, list] = {}
    for r in runs["orm"].results:
        if r.cell.api != "raw":
            steps.setdefault(r.step_key, []).append(r)
    found = [c.comparison for rs in steps.values() for c in layer_costs(rs)]
    return _layer_verdict(found, "needs a layer and its driver on the orm suite (reproduce orm)",
                          "each layer's time per operation ÷ its own driver's, every orm step, same target and path")


def _layer_verdict(found: list[Comparison], missing: str, where: str) -> tuple[str, str, str, str]:
    """Most layer cells significantly slower than their driver's: reproduced."""
    if not found:
        return "", NOT_MEASURED, "", missing
    # each comparison is the driver against the layer: its ratio is how many times slower the layer is
    ratios = sorted(1 / c.ratio for c in found)
    slower = sum(c.significant and c.ratio > 1 for c in found)
    faster = sum(c.significant and c.ratio < 1 for c in found)
    verdict = (REPRODUCED if slower > len(found) / 2 else REVERSED if faster > len(found) / 2 else NOT_REPRODUCED)
    return (f"median {_x(float(np.median(ratios)))}× over {len(found)} layer cells ({_x(ratios[0])}–{_x(ratios[-1])}); "
            f"{slower} significantly slower, {faster} faster",
            verdict, "most layer cells significantly slower than their driver's", where)


def _crossover(runs) -> tuple[str, str, str, str]:
    """S1's crossover: a plan cached on the server (prepared) leads on small results, parsing
    each time (extended) on large ones."""
    for sweep in size_sweeps(runs["s1"].results):
        if sweep.target != "postgresql":
            continue
        line = method_verdict(list(sweep.curves), "c-libpq", "unix")
        if line is None:
            continue
        crossed = "crosses over — prepared faster" in line
        return (line.split(": ", 1)[1], REPRODUCED if crossed else NOT_REPRODUCED,
                "the prepared curve leads at small sizes and another at large ones, each lead significant",
                "c-libpq @ postgresql/unix, rows-1 … rows-100000 in prepared and extended modes")
    return "", NOT_MEASURED, "", "needs c-libpq's result-size sweep on postgresql/unix"


def _set_gap(runs) -> tuple[str, str, str, str]:
    """How much more a set-oriented update saves per record for JDBC than for the C API."""
    rs = runs["s2"].results

    def gain(method: str) -> tuple[CellResult, CellResult] | None:
        one = Cells((method,), "upd1-prepared", "mariadb", "unix", "InnoDB").find(rs)
        hundred = Cells((method,), "upd100-prepared", "mariadb", "unix", "InnoDB").find(rs)
        return (one, hundred) if one and hundred else None

    jdbc, native = gain("java-mariadb"), gain("c-libmariadb")
    if not (jdbc and native):
        return "", NOT_MEASURED, "", "needs upd1 and upd100 of java-mariadb and c-libmariadb on InnoDB"
    # records per second: upd100's statements each change 100 records
    g_jdbc = compare(jdbc[1], jdbc[0])   # statements/s ratio; × 100 for records
    g_native = compare(native[1], native[0])
    value = (g_jdbc.ratio * 100) / (g_native.ratio * 100)
    low, high = g_jdbc.ci_low / g_native.ci_high, g_jdbc.ci_high / g_native.ci_low
    bounded = g_jdbc.bounded and g_native.bounded
    verdict = (NOT_REPRODUCED if not bounded else REPRODUCED if low > 1 and value <= 63 else REVERSED if high < 1
               else NOT_REPRODUCED)
    interval = f"[{_x(low)}–{_x(high)}]" if bounded else f"({(g_native if g_jdbc.bounded else g_jdbc).unbounded})"
    return (f"{_x(value)}× {interval} (JDBC {_x(g_jdbc.ratio * 100)}×, C {_x(g_native.ratio * 100)}×)",
            verdict, "JDBC's per-record gain over C's, the interval (from both ratios' CIs) above 1, within 10×",
            "per-record rate of upd100 ÷ upd1, java-mariadb over c-libmariadb, mariadb/unix InnoDB")


def _server_share(runs) -> tuple[str, str, str, str]:
    cell = Cells(("c-odbc", "c-libpq"), "select1-prepared", "postgresql", REMOTE).find(runs["s4"].results)
    if cell is None or not cell.server_cpu_per_op_ns or not cell.per_op_ns:
        return "", NOT_MEASURED, "", "needs select1-prepared remote (tcp+250us, or tcp to a server of yours) with " \
                                     "the server's CPU read"
    share = cell.server_cpu_per_op_ns / cell.per_op_ns
    return (f"{share:.0%} of {cell.per_op_ns / 1e3:.0f} µs per call (medians)", REPRODUCED if share < 0.5 else NOT_REPRODUCED,
            "the server's CPU under half of a remote call", cell.label)


def _penalty(study: str, pairs: list[tuple[str, str]], label: str) -> Callable:
    """S3's question per pair: in how many query types is the candidate significantly slower
    than the reference by more than 10% (a penalty)? Reproduced when in at most half."""
    def judge(runs):
        rs = runs[study].results
        lines, verdicts, where = [], [], []
        for candidate, reference in pairs:
            steps = sorted({r.cell.step for r in rs if r.cell.method == candidate and r.ranked})
            for target in sorted({r.cell.target for r in rs if r.cell.method == reference}):
                comparisons = []
                for step in steps:
                    ca = Cells((candidate,), step, target).find(rs)
                    cb = Cells((reference,), step, target).find(rs)
                    if ca and cb:
                        comparisons.append(compare(ca, cb))
                if not comparisons:
                    continue
                slower = sum(c.significant and c.ratio < 1 / (1 + PENALTY) for c in comparisons)
                faster = sum(c.ratio > 1 for c in comparisons)
                lines.append(f"{candidate} vs {reference}: penalty in {slower} of {len(comparisons)}, faster in {faster}")
                verdicts.append(slower <= len(comparisons) / 2)
                where.append(f"{candidate} vs {reference} @ {target}")
        if not lines:
            return "", NOT_MEASURED, "", f"needs {label} pairs"
        verdict = REPRODUCED if all(verdicts) else NOT_REPRODUCED if not any(verdicts) else f"{REPRODUCED} in {sum(verdicts)} of {len(verdicts)}"
        return ("; ".join(lines), verdict,
                f"a penalty (significantly slower by more than {PENALTY:.0%}) in at most half the types", "; ".join(where))
    return judge


def _prepared_through_pooler(runs) -> tuple[str, str, str, str]:
    """PgBouncer 1.21's prepared statements in transaction mode cannot be measured here (1.18 is
    the newest this machine can install); what 1.18 does with them is shown instead."""
    why = ("needs PgBouncer 1.21 or later (max_prepared_statements): Debian 12 has 1.18, and no package registry "
           "this machine reaches carries a later one (PyPI's and npm's 'pgbouncer' are wrappers, not the pooler)")
    seen = [r for r in runs["connections"].results if r.cell.step == "persistent-prepared" and r.cell.path == "pooler"]
    if not seen:
        return "", UNTESTABLE, why, ""
    r = seen[0]
    today = ("PgBouncer 1.18 in transaction mode served it" if r.cell.status == "ok"
             else f"PgBouncer 1.18 in transaction mode: {r.cell.status}: {r.cell.message}")
    return today, UNTESTABLE, why, r.label


def _loop_count(cell: CellResult, suite: Suite) -> float:
    """The statements one procedure call runs: its first parameter (scaled with the suite)."""
    step = next(s for v in suite.variants for s in v.steps if s.name == cell.cell.step)
    return float(step.params[0].value)


# --- the hostage study: its latency × bandwidth grid ---------------------------------------------

FLOOR = ("wire-floor",)
HOSTAGE_READ = "lineitem"  # suites/transfer.toml's one step: the whole table read
# the paper read through each system's ODBC driver; the C API of its client library where ODBC is missing
HOSTAGE_PG, HOSTAGE_MY = ("c-odbc", "c-libpq"), ("c-odbc", "c-libmariadb")


def _read(methods: tuple[str, ...], target: str, path: str = "tcp") -> Cells:
    """Where a loopback figure of the hostage study is read: the first of ``methods`` reading lineitem."""
    return Cells(methods, HOSTAGE_READ, target, path)


def _grid(results: list[CellResult], method: str, target: str, compress: bool = False) -> dict[tuple, CellResult]:
    """A method's verified reads on the proxied paths, by (one-way delay µs, bytes/s), with or
    without MariaDB's compression."""
    from ..paths import parse as parse_path

    found = {}
    for r in results:
        if r.verified and r.cell.method == method and r.cell.step == HOSTAGE_READ and dbms_of(r.cell.target) == target:
            path = parse_path(r.cell.path)
            if path.proxied and path.bandwidth and path.compress == compress and path.tls is None:
                found[(path.delay_us, path.bandwidth)] = r
    return found


def _link(delay_us: float, bandwidth: float) -> str:
    from ..formatting import duration

    return f"{duration(delay_us * 1e3)} each way at {link(bandwidth)}"


def _compression_pays(runs) -> tuple:
    """MariaDB's compressed protocol against its plain one on the narrowest link of the run (at
    its lowest delay): faster there, significantly. Today's figure says, besides, the widest
    link on which it already pays."""
    rs = runs["hostage"].results
    for method in HOSTAGE_MY:
        plain, packed = _grid(rs, method, MARIADB), _grid(rs, method, MARIADB, compress=True)
        both = sorted(set(plain) & set(packed), key=lambda k: (k[1], k[0]))
        if not both:
            continue
        gains = {k: compare(packed[k], plain[k]) for k in both}
        narrowest = both[0]
        c = gains[narrowest]
        pays = [k for k, d in gains.items() if d.significant and d.ratio > 1]
        widest = max(pays, key=lambda k: k[1]) if pays else None
        return (f"{_ratio_text(c)} on {_link(*narrowest)}"
                + (f"; it pays up to {link(widest[1])}" if widest else "; it pays on no link here"),
                judge_ratio(c, None), DIRECTION_RULE + " (compressed reads faster than plain on the narrowest link)",
                f"{method} @ mariadb, +compress ÷ plain", (c.ratio, c.ci_low, c.ci_high))
    return "", NOT_MEASURED, "", "needs a MariaDB reader on proxied paths with a bandwidth, plain and +compress"


def _floor_falls_with_latency(runs) -> tuple:
    """Each method's time over the wire's floor at the run's lowest and highest delay on the same
    link: the protocol's own cost fades as the network's grows. Reproduced when, for most
    methods, the ratio at the highest delay is below the lowest's, their 95% CIs apart."""
    from ..formatting import duration

    rs = runs["hostage"].results
    lines, falls, checked = [], 0, 0
    for target in (PG, MARIADB):
        floor = _grid(rs, FLOOR[0], target)
        for method in sorted({r.cell.method for r in rs if r.ranked and dbms_of(r.cell.target) == target}):
            mine = _grid(rs, method, target)
            for bandwidth in sorted({k[1] for k in mine}, reverse=True):
                delays = sorted(k[0] for k in mine if k[1] == bandwidth and k in floor)
                if len(delays) < 2:
                    continue
                near, far = (compare(floor[(d, bandwidth)], mine[(d, bandwidth)]) for d in (delays[0], delays[-1]))
                checked += 1
                fell = near.bounded and far.bounded and far.ci_high < near.ci_low
                falls += fell
                lines.append(f"{method} @ {target}: {_x(near.ratio)}× at {duration(delays[0] * 1e3)} → {_x(far.ratio)}× "
                             f"at {duration(delays[-1] * 1e3)}, {link(bandwidth)}")
                break  # the widest link both delays have: where the protocol's cost shows most
    if not checked:
        return "", NOT_MEASURED, "", "needs methods and the wire's floor at two delays of one bandwidth"
    verdict = REPRODUCED if falls > checked / 2 else NOT_REPRODUCED
    return (f"falls for {falls} of {checked}: " + "; ".join(lines[:4]) + ("; …" if len(lines) > 4 else ""), verdict,
            "× the floor lower at the highest delay than at the lowest (95% CIs apart), for most methods",
            "each method's time ÷ the wire's floor on the same path, lowest and highest delay")


def _queries_converge(runs) -> tuple:
    """Each tier method's 20-query page against its 1-query page at the same connections (the
    most both have): far fewer requests per second, significantly, for every method. A page
    bound wholly by its queries would serve 1/20 as many."""
    study = runs["tfb"]
    # each step's page, queries a request and connections, as the suite declares them
    steps = {s.name: (s.page, s.queries, s.clients) for v in study.suite.variants for s in v.steps}
    cells = {(r.cell.method, r.cell.target, *steps[r.cell.step]): r
             for r in study.results if r.verified and r.cell.step in steps}
    lines, fell, first = [], 0, None
    for method, target in sorted({(m, t) for m, t, *_ in cells}):
        both = [n for (m, t, page, q, n) in cells if (m, t, page, q) == (method, target, "queries", 20)
                and (method, target, "queries", 1, n) in cells]
        if not both:
            continue
        n = max(both)
        c = compare(cells[(method, target, "queries", 20, n)], cells[(method, target, "queries", 1, n)])
        fell += c.significant and c.ratio < 1
        first = first or c
        lines.append(f"{method} @ {target}: {_ratio_text(c)} at {n} connections")
    if not lines:
        return "", NOT_MEASURED, "", "needs queries-1 and queries-20 of a tier method at the same connections"
    return ("; ".join(lines), REPRODUCED if fell == len(lines) else NOT_REPRODUCED,
            "20 queries' requests/s significantly below 1 query's at the same connections, for every tier method "
            "(0.05× would be a page bound wholly by its queries)",
            "each method's queries-20 ÷ its queries-1", (first.ratio, first.ci_low, first.ci_high))


# --- the claims -----------------------------------------------------------------------------------

PG, MARIADB = "postgresql", "mariadb"
CONNECTING = ("c-libpq", "c-libmariadb", "py-psycopg", "py-pymysql")  # the connections study's quick methods
S1_CLIENT, S1_BESIDE = "tcp+250us", "unix"

CLAIMS: list[Claim] = [
    # S1
    ratio("s1", "JDBC reads fewer records per second than the ODBC API across a network",
          "2,296 vs 6,266/s: 0.37×", 0.37,
          Cells(("java-pgjdbc",), "rps", PG, S1_CLIENT), Cells(("c-odbc",), "rps", PG, S1_CLIENT)),
    Claim("s1", "Every layer above the API costs (ADO over ODBC)", "5,734 vs 6,266/s: 0.92×", _layers),
    ratio("s1", "Two layers cost more than one (ADO over OLE DB against ADO over ODBC)",
          "4,625 vs 5,734/s: 0.81×", 0.81,
          Cells(("py-sqlalchemy-orm+psycopg",), "rps", PG, S1_CLIENT),
          Cells(("py-sqlalchemy-core+psycopg",), "rps", PG, S1_CLIENT)),
    ratio("s1", "Beside the server, set-oriented SQL reads faster than record-level access",
          "RPG embedded SQL 54,205 vs RPG RLA 26,511/s: 2.0×", 2.04,
          Cells(("c-libmariadb",), "rps", MARIADB, S1_BESIDE), Cells(("c-libmariadb",), "rps-record", MARIADB, S1_BESIDE)),
    ratio("s1", "A plan cached on the server wins on a small result set",
          "JDBC with a stored package 7,332 vs without 6,570/s: 1.12×", 1.12,
          Cells(("c-libpq",), "rows-1-prepared", PG, S1_BESIDE), Cells(("c-libpq",), "rows-1-extended", PG, S1_BESIDE)),
    Claim("s1", "…while the native driver moves rows faster on large ones: a crossover by result size",
          "crossover (no figure)", _crossover),
    # S2
    ratio("s2", "Native record I/O reads faster than SQL", "0.06 vs 0.37 s per 1,000: 6.2×", 6.2,
          Cells(("c-libmariadb",), "read-record", MARIADB, "unix", "InnoDB"),
          Cells(("c-libmariadb",), "read", MARIADB, "unix", "InnoDB")),
    ratio("s2", "Native record I/O reads 10–100× faster than JDBC", "0.06 vs 0.77 s per 1,000: 12.8×", 12.8,
          Cells(("c-libmariadb",), "read-record", MARIADB, "unix", "InnoDB"),
          Cells(("java-mariadb",), "read", MARIADB, "unix", "InnoDB")),
    Claim("s2", "Set-oriented updates close the gap, far more for JDBC than for embedded SQL",
          "per record, Upd×1 ÷ Upd×100: JDBC 17×, embedded SQL 2.7×: 6.3×", _set_gap),
    ratio("s2", "InnoDB's per-row transactional cost is huge for row-at-a-time updates",
          "Upd×1 112.03 vs MyISAM 6.07 s per 1,000: 18×", 18.5,
          Cells(("c-libmariadb",), "upd1-prepared", MARIADB, "unix", "MyISAM"),
          Cells(("c-libmariadb",), "upd1-prepared", MARIADB, "unix", "InnoDB")),
    ratio("s2", "An index on the filtered column turns nearly an hour into a little over a minute",
          "1,000 updates on 500,000 rows: ≈45×", 45,
          Cells(("c-libmariadb", "c-libpq"), "upd-key2-index", MARIADB, "unix", "InnoDB"),
          Cells(("c-libmariadb", "c-libpq"), "upd-key2-no-index", MARIADB, "unix", "InnoDB")),
    # S3
    Claim("s3", "No ODBC penalty: ODBC matches or beats the native API in most query types (C)",
          "Oracle 9i: ODBC faster in 5 of 6; Oracle 7: in 5 of 9; 29 tests: native better in 12, by >10% in 2",
          _penalty("s3", [("c-odbc", "c-libpq"), ("c-odbc", "c-libmariadb"), ("c-odbc", "c-sqlite")], "ODBC")),
    Claim("s3", "A wire-protocol driver needing no vendor library matches or beats the vendor's own API",
          "the wire-protocol ODBC driver matched or beat OCI (Oracle 9i)",
          _penalty("s3", [("go-pgx", "c-libpq"), ("node-postgres-js", "c-libpq"), ("node-mysql2", "c-libmariadb"),
                          ("py-pg8000", "py-psycopg"), ("py-pymysql", "py-mysqlclient")], "wire-protocol")),
    # S3's question asked where a language has both: a generic interface over the vendor's
    # library (what ODBC is in C) beside that language's own binding of the same library
    Claim("s3", "No generic-interface penalty in PHP and C++ either: PDO and SOCI beside the vendor's own binding",
          "the study's C finding, asked again: ODBC matched or beat the native API in most query types",
          _penalty("s3", [("php-pdo-pgsql", "php-pgsql"), ("php-pdo-mysql", "php-mysqli"),
                          ("php-pdo-sqlite", "php-sqlite3"), ("cpp-soci-pg", "cpp-libpqxx")], "generic-interface")),
    # S4
    ratio("s4", "A remote call costs about four local ones", "615 vs 147 µs per call: 4.2×", 4.2,
          Cells(("c-odbc", "c-libpq"), "select1-prepared", PG, "unix"),
          Cells(("c-odbc", "c-libpq"), "select1-prepared", PG, REMOTE)),
    Claim("s4", "Network latency dominates a remote call, not the database", "89 of ≈500 µs in the database: 18%",
          _server_share),
    ratio("s4", "The loop moved into a stored procedure, called once remotely, runs many times faster",
          "49 s vs 615 s per million: 12.5×", 12.5,
          Cells(("c-odbc", "c-libpq"), "procedure", PG, REMOTE),
          Cells(("c-odbc", "c-libpq"), "select1-prepared", PG, REMOTE), scale=_loop_count),
    ratio("s4", "Locally, static SQL beats dynamic SQL by a wide margin", "a wide margin (no figure)", None,
          Cells(("c-odbc", "c-libpq"), "select1-prepared", PG, "unix"),
          Cells(("c-odbc", "c-libpq"), "select1-literal", PG, "unix")),
    ratio("s4", "Moving the logic into a procedure without switching to static SQL gains little (locally)",
          "little (no figure)", 1.0,
          Cells(("c-odbc", "c-libpq"), "procedure-dynamic", PG, "unix"),
          Cells(("c-odbc", "c-libpq"), "select1-literal", PG, "unix"), scale=_loop_count, close=1.5),
    untestable("s4", "150 feet or a mile of LAN make no measurable difference", "no measurable difference",
               "one machine: distance here is the latency proxy's delay, so the claim would test the proxy, "
               "not a cable"),
    # S5
    # S5 as it was run (s5-web): PHP's pgsql pages under Apache with mod_php, 10 clients of ab
    ratio("s5", "Persistent connections carry many times the requests of connecting per request",
          "504.04 vs 64.54 requests/s: 7.8×", 7.8,
          Cells(("php-apache-pgsql", "php-apache-pdo-pgsql", "php-apache-mysqli"), "persistent", PG, "unix"),
          Cells(("php-apache-pgsql", "php-apache-pdo-pgsql", "php-apache-mysqli"), "per-request", PG, "unix")),
    ratio("s5", "A static page sets the web tier's ceiling, above PHP's hello world",
          "767.87 vs 560.05 requests/s: 1.37×", 1.37,
          Cells(("php-apache-pgsql", "php-apache-pdo-pgsql"), "static", PG, "unix"),
          Cells(("php-apache-pgsql", "php-apache-pdo-pgsql"), "hello", PG, "unix")),
    ratio("s5", "A page that reads through a persistent connection runs close to hello world",
          "560.05 vs 504.04 requests/s: 1.11×", 1.11,
          Cells(("php-apache-pgsql", "php-apache-pdo-pgsql"), "hello", PG, "unix"),
          Cells(("php-apache-pgsql", "php-apache-pdo-pgsql"), "persistent", PG, "unix"), close=1.5),
    untestable("s5", "The toolkit call kept in a server job beats one started in-process", "320.72 vs 69.58 requests/s: 4.6×",
               "the IBM i PHP toolkit and its server jobs exist on IBM i only"),
    untestable("s5", "A stateful (keyed) toolkit connection beats a stateless one", "162.75 vs 62.97 requests/s: 2.6×",
               "the IBM i PHP toolkit and its server jobs exist on IBM i only"),
    untestable("s5", "Rule of thumb: requests/s × 5–10 s of thinking ≈ concurrent users carried",
               "504 requests/s: 2,520–5,040 users", "arithmetic, not a measurement: the s5 study table applies it "
               "to today's requests/s"),
    # upgrade: psycopg PR #1187's read of 1,000,000 rows × 10 text columns (suites/psycopg-upgrade.toml)
    ratio("upgrade", "psycopg 3.2.11 reads the rows faster than 3.2.10 (PR #1187)", "0.868 → 0.483 s: 1.80×",
          0.868 / 0.483, Cells(("py-psycopg@3.2.11",), "read", PG), Cells(("py-psycopg@3.2.10",), "read", PG)),
    ratio("upgrade", "psycopg2 reads them faster than psycopg 3.2.10", "0.522 vs 0.868 s: 1.66×", 0.868 / 0.522,
          Cells(("py-psycopg2",), "read", PG), Cells(("py-psycopg@3.2.10",), "read", PG)),
    ratio("upgrade", "psycopg 3.2.11 reads them a little faster than psycopg2", "0.483 vs 0.522 s: 1.08×",
          0.522 / 0.483, Cells(("py-psycopg@3.2.11",), "read", PG), Cells(("py-psycopg2",), "read", PG)),
    # orm: S1's layer question on today's layers, as their users write them (suites/orm.toml)
    Claim("orm", "S1: every layer above the API costs, as its users write it (ADO over ODBC then)",
          "5,734 vs 6,266/s: 0.92×", _orm_layers),
    # hostage: Raasveldt and Mühleisen's lineitem out of each DBMS (suites/transfer.toml), read as
    # they read it, through each DBMS's ODBC driver (the C API where ODBC is missing); the paper's
    # loopback table is times at SF10, here × the wire's floor (its netcat line)
    ratio("hostage", "PostgreSQL's client protocol takes about twenty times the wire's time over loopback",
          "202 s vs netcat's 10.25 s: 19.7×", 202 / 10.25,
          _read(FLOOR, PG), _read(HOSTAGE_PG, PG)),
    ratio("hostage", "MySQL's client protocol takes about ten times the wire's time over loopback",
          "101.3 s vs netcat's 10.25 s: 9.9×", 101.3 / 10.25,
          _read(FLOOR, MARIADB), _read(HOSTAGE_MY, MARIADB)),
    ratio("hostage", "MySQL's protocol moves the result about twice as fast as PostgreSQL's",
          "101.3 s vs 202 s: 2.0×", 202 / 101.3,
          _read(HOSTAGE_MY, MARIADB), _read(HOSTAGE_PG, PG)),
    ratio("hostage", "Compression makes MySQL's protocol several times slower over loopback",
          "391.3 s vs 101.3 s: 3.9×", 391.3 / 101.3,
          _read(HOSTAGE_MY, MARIADB), _read(HOSTAGE_MY, MARIADB, "tcp+compress")),
    Claim("hostage", "…and pays once the network narrows", "compression pays as bandwidth falls (the paper's grid)",
          _compression_pays),
    Claim("hostage", "As latency grows the network's time dominates: each protocol's × the wire falls",
          "the protocols' cost falls as the network narrows (the paper's grid)", _floor_falls_with_latency),
    untestable("hostage", "The paper's other systems pay their own protocols' costs too",
               "DB2, Oracle ('DBMS X'), MonetDB, MongoDB and Hive, each well above netcat", "none of them is "
               "installable here: Debian 12 and the package registries this machine reaches have PostgreSQL, MariaDB, "
               "SQLite and DuckDB"),
    # tfb: TechEmpower's database tests (suites/tfb.toml), on every tier method under wrk
    Claim("tfb", "Multiple queries: at 20 queries a request every framework converges toward zero requests/s",
          "TechEmpower's description of its multiple-queries test (no figure)", _queries_converge),
    untestable("tfb", "TechEmpower's published ratios between its tests and between frameworks",
               "each round's requests/s per test and framework (Round 22: techempower.com, November 2023)",
               "TechEmpower publishes its per-framework results only on its own sites (techempower.com, "
               "tfb-status), which this machine cannot reach, and none of the sources it can read reprints a round's "
               "figures for these frameworks: the study table shows today's requests/s and ratios alone"),
    # connections: published figures a cloud user checks against (suites/connections.toml)
    ratio("connections", "A SCRAM login costs several times an md5 login (autobase issue #746)",
          "about 40 ms vs 10 ms a connect: 4×", 4.0,
          Cells(CONNECTING, "connect", "postgresql?auth=md5", "tcp"),
          Cells(CONNECTING, "connect", "postgresql?auth=scram", "tcp")),
    band("connections", "TLS costs 7–10% of throughput (TiDB issue #19399, MySQL's protocol)",
         "7–10% fewer queries per second", 0.07, 0.10,
         Cells(CONNECTING, "persistent", MARIADB, "tcp"), Cells(CONNECTING, "persistent", MARIADB, "tcp+tls")),
    Claim("connections", "PgBouncer 1.21's prepared statements in transaction mode raise throughput (its release notes)",
          "+15% to +250%", _prepared_through_pooler),
    ratio("connections", "10 ms of added latency cuts pgbench -S -c 10 from 8,813 to 461 TPS (Cybertec, 2020)",
          "8,813 vs 461 TPS: 19.1×", 19.1,
          Cells(("c-libpq", "py-psycopg"), "persistent", PG, "tcp"),
          Cells(("c-libpq", "py-psycopg"), "persistent", PG, "tcp+10ms")),
]


def evaluate(runs: dict[str, StudyRun]) -> list[Finding]:
    """Every claim against the studies' runs (keyed by study: s1 … s5)."""
    return [claim.evaluate(runs) for claim in CLAIMS]
