"""The two values every report shows its figures through: a ``Figure`` (a number as measured
and as shown, or "not measured") and a step's title. report/model.py builds reports from them;
the tables beside a report (transfer.py) use them too."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """A number as measured and as shown; ``value`` None is "not measured" (text "—")."""

    value: float | None
    text: str
    note: str = ""          # why there is no figure ("not shown: … under 10× its clock's resolution")

    @property
    def sort(self) -> str | None:
        """The unrounded number a table sorts on."""
        return None if self.value is None else repr(float(self.value))


def step_title(variant: str, step: str) -> str:
    return f"{step} [{variant}]" if variant else step
