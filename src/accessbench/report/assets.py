"""The HTML pages' templates and the CSS and script inlined into them (report/templates/):
every page is one self-contained file, so each renderer takes them from here."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


@cache
def template(name: str) -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template(name)


@cache
def asset(name: str) -> str:
    """CSS and script live beside the templates and are inlined verbatim (ours, trusted)."""
    return (TEMPLATES / name).read_text(encoding="utf-8")
