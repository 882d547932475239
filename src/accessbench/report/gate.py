"""The regression gate's verdict: lines after `compare`'s tables, and a Markdown summary fit
for a CI job's page (`compare --fail-on RULE --summary FILE`)."""

from __future__ import annotations

from ..stats.gate import Rule, Trip


def _rules(rules: list[Rule]) -> str:
    return ", ".join(f"`{r}`" for r in rules)


def _pairs(compared: int) -> str:
    return f"{compared} {'pair' if compared == 1 else 'pairs'} compared"


def gate_lines(rules: list[Rule], tripped: list[Trip], compared: int) -> list[str]:
    """What tripped the gate, one line per cell, or that nothing did."""
    names = ", ".join(str(r) for r in rules)
    if not tripped:
        return [f"gate passed: no cell trips {names} ({_pairs(compared)})"]
    lines = [f"gate failed: {len(tripped)} {'cell trips' if len(tripped) == 1 else 'cells trip'} {names} "
             f"({_pairs(compared)}):"]
    lines += [f"  {t.rule}: {t.cell.label} · {t.step}: {t.what}" for t in tripped]
    return lines


def summary(rules: list[Rule], tripped: list[Trip], compared: int, legend: list[str], floor: str) -> str:
    """The gate as Markdown: its verdict first, then the runs, the rules, the floor and each cell
    that tripped it."""
    verdict = "failed" if tripped else "passed"
    out = [f"## accessbench regression gate: {verdict}", ""]
    out += [f"- {line}" for line in legend]
    out += [f"- rules: {_rules(rules)}", f"- {_pairs(compared)}; {floor}", ""]
    if not tripped:
        out.append(f"No cell trips {_rules(rules)}.")
        return "\n".join(out) + "\n"
    out += ["| rule | method @ target/path | step | what |", "|---|---|---|---|"]
    out += [f"| `{t.rule}` | {_cell(t.cell.label)} | {_cell(t.step)} | {_cell(t.what)} |" for t in tripped]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")
