"""``inproc`` (embedded engines), ``unix`` and ``tcp``: the target's own ways in, as it offers
them; nothing between the worker and the target."""

from __future__ import annotations

from .base import Path


class Direct(Path):
    forms = "inproc, unix, tcp"
    help = "inproc, unix, tcp (as the target offers them)"

    @classmethod
    def parse(cls, name: str) -> Direct | None:
        return cls(name, name) if name in ("inproc", "unix", "tcp") else None
