"""The pages' languages, one entry each: where its pages are, what its persistent connection
policy keeps, and how the pages' runtime and their driver's version are read (a tier method's
``hello``). A new page language is an entry here, its app server a module of ``servers/``, and
its pages."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Callable

from ..worker_process import workers_dir
from .servers.python import WEB_PYTHON


def printed(command: list[str]) -> str:
    """What ``command`` prints, or ``?`` where it cannot run or prints nothing."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip() or "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def _node_package(driver: str) -> str:
    """The npm package's version as the Node worker installed it."""
    try:
        return json.loads((workers_dir() / "node" / "node_modules" / driver / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def _python_package(driver: str) -> str:
    """The pip package's version: the web tier's Python has the drivers at accessbench's versions."""
    from importlib.metadata import version

    return version(driver)


@dataclass(frozen=True)
class PageLanguage:
    pages: str                              # where the pages are, for a reader to open
    persistent: str                         # what the persistent policy keeps (and whether there is a pool)
    runtime: list[str]                      # prints the pages' runtime and its version
    driver_version: Callable[[str], str]    # the driver's version, from the driver's name as packaged


LANGUAGES: dict[str, PageLanguage] = {
    "php": PageLanguage(
        "workers/php",
        "the PHP process's persistent connection (pg_pconnect, PDO::ATTR_PERSISTENT, mysqli p: host)",
        ["php", "-r", "echo 'PHP ', PHP_VERSION;"],
        lambda driver: printed(["php", "-r", f"echo phpversion('{driver}');"])),  # the extension's own version
    "python": PageLanguage(
        "accessbench.pyworker.web",
        "one connection per gunicorn worker process, kept across requests; pooled: the driver's pool in each process",
        [str(WEB_PYTHON), "-c", "import platform; print(platform.python_implementation(), platform.python_version())"],
        _python_package),
    "node": PageLanguage(
        "workers/node/src/web",
        "one connection for the process (requests queue on it); pooled: the driver's pool",
        ["node", "-e", "console.log('Node.js', process.version)"],
        _node_package),
    "ruby": PageLanguage(
        "workers/ruby/lib/accessbench/web.rb",
        "one connection per Puma worker process (one thread each), kept across requests (ruby-pg and mysql2 have no "
        "pool: pooled is unsupported)",
        ["ruby", "-e", "print 'Ruby ', RUBY_VERSION, 'p', RUBY_PATCHLEVEL"],
        # the gem as Debian installs it (ruby-pg, ruby-mysql2)
        lambda driver: printed(["ruby", "-e", "print Gem::Specification.find_by_name(ARGV[0]).version", driver])),
    "perl": PageLanguage(
        "workers/perl/app.psgi",
        "one connection per Starman worker process, kept across requests (DBI has no pool: pooled is unsupported)",
        ["perl", "-e", "printf 'Perl %vd', $^V"],
        lambda driver: printed(["perl", f"-M{driver}", "-e", f"print ${driver}::VERSION"])),  # the DBD module's own
}
