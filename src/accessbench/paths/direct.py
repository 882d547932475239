"""``inproc`` (embedded engines), ``unix`` and ``tcp``: the target's own ways in, as it offers
them; nothing between the worker and the target."""

from __future__ import annotations

import os
from typing import Any

from .base import Path, PathRun
from .floor import NoFloor, Sender


class Direct(Path):
    forms = "inproc, unix, tcp"
    help = "inproc, unix, tcp (as the target offers them)"

    @classmethod
    def parse(cls, name: str) -> Direct | None:
        return cls(name, name) if name in ("inproc", "unix", "tcp") else None

    def floor(self, directory: str, run: PathRun) -> dict[str, Any]:
        if self.base == "inproc":
            raise NoFloor("inproc: in process no bytes cross a wire, so there is no wire's floor")
        if not self.floor_parts:
            # one socket per started path (a target's name may be a URL: not part of a file name)
            unix = os.path.join(run.workdir, f"floor-{run.links}-{id(self):x}.sock") if self.base == "unix" else None
            self.floor_parts.append(Sender(directory, unix))
        return self.floor_parts[0].endpoint()
