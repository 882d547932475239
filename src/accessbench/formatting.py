"""Number formatting shared by the reports and the stats' warning texts: a few significant
digits, units a reader expects."""

from __future__ import annotations

# Without a terminal (a pipe, a file, a log) a report is this wide, unless COLUMNS or --width says.
PIPE_WIDTH = 120


def duration(ns: float | None) -> str:
    if ns is None:
        return "—"
    # 999.7 ms shows as "1 s", not "1e+03 ms": pick the unit after rounding to 3 digits
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale * 0.9995:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def durations_in(ns: float, values: list[float]) -> list[str]:
    """``values`` (ns) as bare numbers in the unit ``duration(ns)`` picks, 3 significant digits
    each: "34.6 ms (32.0–38.4)" reads as one unit."""
    scale = next((s for s in (1e9, 1e6, 1e3) if ns >= s * 0.9995), 1.0)
    return [f"{v / scale:,.0f}" if v / scale >= 100 else f"{v / scale:.3g}" for v in values]


def size(nbytes: float | None) -> str:
    """Bytes in binary units, three significant digits (the kernel counts memory in KiB)."""
    if nbytes is None:
        return "—"
    # a unit is taken once the one below it would need four digits (1,010 MiB is 0.986 GiB)
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(nbytes) >= scale / 1024 * 999.5:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.3g} B"


def rate(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def ratio(value: float) -> str:
    return f"{value:.2f}×"


# A figure's form by name: the HTML report's script formats redrawn axis ticks with the same
# rules (report.js, FORMS), so the names are shared with it.
def ratio3(value: float) -> str:
    """A ratio at the precision a run knows it: three significant digits, no exponent."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def times(value: float) -> str:
    """A ratio as the studies report writes it: 20.4×."""
    return f"{ratio3(value)}×"


def link(bytes_per_second: float) -> str:
    """A link's bandwidth (bytes/s each way, as a path's @…bit holds it) in Mbit/s, as networks are named."""
    return f"{bytes_per_second * 8 / 1e6:,.0f} Mbit/s"


FORMS = {"rate": rate, "duration": duration, "seconds": seconds, "times": times}  # times: the studies page (no script)


def share(value: float) -> str:
    """A share the user gave, such as a precision target, as they would write it: 3%, 2.5%, 0.01%."""
    return f"{value * 100:.3g}%"
