"""The tools a language's worker is built with: the Makefile's `workers` target skips, loudly,
a language whose tools are absent, and so do the versions `make setup` installs (versions.py)."""

from __future__ import annotations

import shutil

TOOLCHAINS = {"python": [], "c": ["cc", "pkg-config"], "java": ["java", "mvn"], "go": ["go"], "php": ["php"],
              "rust": ["cargo"], "node": ["node", "npm"],
              "cpp": ["c++", "pkg-config"], "ruby": ["ruby"], "perl": ["perl"]}


def toolchain_absent(language: str) -> str | None:
    missing = [tool for tool in TOOLCHAINS.get(language, []) if shutil.which(tool) is None]
    return f"{', '.join(missing)} not found" if missing else None
