"""Every form a stored run can be written in, behind one interface and chosen by name
(`accessbench export --format NAME`): the exports for other tools (JSON, CSV) and the
report's renderers that make a file (Markdown, HTML). Adding a format = one class here (or a
module it calls) and its entry in ``FORMATS``; the CLI takes its choices and help from them."""

from __future__ import annotations

from typing import ClassVar


class Format:
    """One way to write a stored run as text. ``view``: which of the studies' rules a report
    ranks by (stats/views.py); ``trials``: a flat export's rows are trials, not cells."""

    name: ClassVar[str]
    help: ClassVar[str]

    def write(self, stored, view: str = "median", trials: bool = False) -> str:
        raise NotImplementedError


class Json(Format):
    name, help = "json", "the whole run (settings, environment, methods, targets, every cell's summary and trials)"

    def write(self, stored, view: str = "median", trials: bool = False) -> str:
        from .model import build
        from .writers import to_json

        return to_json(build(stored))


class Csv(Format):
    name, help = "csv", "one row per cell with its summary, or one row per trial with --trials"

    def write(self, stored, view: str = "median", trials: bool = False) -> str:
        from .model import build
        from .writers import to_csv

        return to_csv(build(stored), trials)


class Markdown(Format):
    name, help = "md", "the report's step tables and summary as Markdown, as hyperfine exports them"

    def write(self, stored, view: str = "median", trials: bool = False) -> str:
        from ..report import markdown, model

        return markdown.render_report(model.build(stored, view))


class Html(Format):
    name, help = "html", "the self-contained HTML report, as `run` writes it into reports/"

    def write(self, stored, view: str = "median", trials: bool = False) -> str:
        from ..report.html import render_html

        return render_html(stored, view)


FORMATS: dict[str, Format] = {f.name: f() for f in (Json, Csv, Markdown, Html)}
