"""The tools a language's worker is built with: the Makefile's `workers` target skips, loudly,
a language whose tools are absent, and so do the versions `make setup` installs (versions.py).
And how a language's runtime says which of its libraries it has (the catalog's methods, the
app servers' own: Puma's Rack)."""

from __future__ import annotations

import shutil

TOOLCHAINS = {"python": [], "c": ["cc", "pkg-config"], "java": ["java", "mvn"], "go": ["go"], "php": ["php"],
              "rust": ["cargo"], "node": ["node", "npm"],
              "cpp": ["c++", "pkg-config"], "ruby": ["ruby"], "perl": ["perl"]}


def toolchain_absent(language: str) -> str | None:
    missing = [tool for tool in TOOLCHAINS.get(language, []) if shutil.which(tool) is None]
    return f"{', '.join(missing)} not found" if missing else None

# language → how to ask its runtime which of its methods' libraries (`module`) are installed: a
# command given every module of the language's catalog entries, that prints those that load, a
# line each (one process per language, once per accessbench process). Ruby's finds each library's
# file without loading it (requiring ActiveRecord and Sequel takes most of a second, and
# `accessbench methods` asks every time); a library found but broken is the worker's hello's to say.
LIBRARY_PROBES = {
    "ruby": ["ruby", "-e", "ARGV.each { |m| puts m if ($LOAD_PATH.resolve_feature_path(m) rescue nil) || "
             "Gem.find_files(m).any? }"],
    "perl": ["perl", "-e", "for (@ARGV) { print \"$_\\n\" if eval qq{require $_; 1} }"],
    "php": ["php", "-r", "foreach (array_slice($argv, 1) as $m) { if (extension_loaded($m)) echo $m, \"\\n\"; }"],
}
