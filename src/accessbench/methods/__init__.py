"""The method catalog: which access methods exist, which are usable here, and why not."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..worker_process import workers_dir
from . import versions
from .toolchains import LIBRARY_PROBES, TOOLCHAINS, toolchain_absent  # noqa: F401 — the methods' own tools, named here too


# language → (how to start its worker, "{workers}" standing for workers_dir(); the file that
# must exist; how to build it). The method name is appended as the last argument.
NATIVE_WORKERS = {
    "c": (["{workers}/c/build/abworker-c"], "c/build/abworker-c",
          "make workers (needs gcc, pkg-config, libpq-dev, unixodbc-dev, libjansson-dev)"),
    "java": (["java", "-jar", "{workers}/java/target/abworker-java.jar"], "java/target/abworker-java.jar",
             "make workers (needs a JDK 17+ and Maven)"),
    "go": (["{workers}/go/build/abworker-go"], "go/build/abworker-go", "make workers (needs Go)"),
    "rust": (["{workers}/rust/target/release/abworker-rust"], "rust/target/release/abworker-rust",
             "make workers (needs cargo)"),
    "node": (["node", "{workers}/node/src/main.js"], "node/node_modules/.package-lock.json",
             "make workers (needs Node.js 18+ and npm)"),
    "cpp": (["{workers}/cpp/build/abworker-cpp"], "cpp/build/abworker-cpp",
            "make workers (needs g++, pkg-config, libpqxx-dev, libsoci-dev, nlohmann-json3-dev)"),
    # The interpreted workers have no build: their drivers are Debian's packages (`module`
    # names the gem, Perl module or PHP extension whose absence makes a method unavailable).
    "ruby": (["ruby", "{workers}/ruby/main.rb"], "ruby/main.rb", "make system-deps (needs ruby and its gems)"),
    "php": (["php", "{workers}/php/worker.php"], "php/worker.php", "make system-deps (needs php8.2-cli)"),
    "perl": (["perl", "{workers}/perl/abworker.pl"], "perl/abworker.pl", "make system-deps (needs perl and DBI)"),
}
# language → how to start a method's worker at another version of its driver (methods/versions.py),
# "{version}" standing for that version's directory, where Go and Rust have their builds and Java
# the driver's jar (Python and Node start their usual worker, which loads the driver from there).
VERSIONED_WORKERS = {
    "go": ["{version}/abworker-go"],
    "rust": ["{version}/abworker-rust"],
    "java": ["java", "-cp", "{version}/*:{workers}/java/target/abworker-java.jar", "accessbench.worker.Main"],
}


class Web(BaseModel):
    """What a tier method's pages do (catalog-web.toml's ``[methods.web]``; docs/tier.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str                  # what its driver version is read from (a PHP extension, a pip or npm package)
    modes: list[str]              # the protocol modes its pages have
    policies: list[str]           # per-request, persistent, pooled
    servers: list[str]            # its app servers, the default first
    page_driver: str = ""         # the worker driver its pages reuse (PHP, Python, Node)
    unsupported: dict[str, str] = {}  # mode → why its pages do not have it


class Method(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    language: str
    driver: str
    module: str
    package: str | None = None
    dbms: list[str]
    summary: str = ""
    default: bool = True  # measured when no --method is given; variants are opt-in
    # A layer method (an ORM, a query builder, a row mapper) names the layer and the method it
    # runs on: its cells are paired with that method's, and its step messages carry the
    # statement's shape (suite/shape.py) so that it can use its own API.
    layer: str | None = None
    over: str | None = None
    # A tier method (docs/tier.md): the driver inside an app server's pages, under HTTP load.
    # Its worker is the tier worker, which starts the app server and the load generator.
    tier: str | None = None
    web: Web | None = None  # a tier method's own entry: what its pages do (its variants name no web)
    # How it reads a result: row by row (the drivers' usual way), by COPY out, or into columns
    # (Arrow, a data frame). The transfer suite reads with every one of them, beside the
    # "floor": wire-floor, no method but the result's bytes moved raw along the same path.
    reads: Literal["rows", "copy", "columnar", "floor"] = "rows"
    # The connections its worker keeps open between trials, per client (a layer that keeps one
    # per statement mode: 2; a reader that connects anew for every read: its open's and the
    # read's), which the runner counts against a session pooler's pool and a server's
    # max_connections (runner/plan.py Room). A tier method's app server holds one per process.
    connections: int = Field(1, ge=1)
    # Another version of its driver than the pinned one (methods/versions.toml): the method is
    # its base's entry, named base@version, with the driver's packages at that version.
    version: str | None = None

    @property
    def app_server(self) -> int | None:
        """A tier method's app-server processes, each with its connection, whatever the clients."""
        if not self.tier:
            return None
        from ..tier.settings import PROCESSES

        return PROCESSES

    def command(self) -> list[str]:
        """How to start this method's worker: its program and the full method name."""
        if self.tier:
            return [sys.executable, "-m", "accessbench.tier", self.name]
        if self.language == "python":
            return [sys.executable, "-m", "accessbench.pyworker", self.name]
        argv, _, _ = NATIVE_WORKERS[self.language]
        if self.version and self.language in VERSIONED_WORKERS:
            argv = VERSIONED_WORKERS[self.language]
        where = {"{workers}": str(workers_dir())} | ({"{version}": str(self._version_directory())} if self.version else {})
        return [_fill(part, where) for part in argv] + [self.name]

    def _own_build(self) -> bool:
        """A version with a worker built for it (Go, Rust): the pinned worker's build is not needed."""
        return bool(self.version) and VERSIONED_WORKERS.get(self.language, [""])[0].startswith("{version}")

    def _version_directory(self) -> Path:
        """Where its version is installed (a method at its pinned version has none)."""
        assert self.version
        return versions.directory(self.name.partition("@")[0], self.version)

    def files(self) -> list[str]:
        """The files its worker needs on a host that runs it (--cluster checks every host has
        them): the programs its command names, what its worker is built into, its driver's module,
        a version's installed directory (its marker)."""
        needed = [path for part in self.command() for path in part.split(os.pathsep)
                  if os.path.isabs(path) and not path.endswith("*")]
        if self.language in NATIVE_WORKERS and not self._own_build():
            needed.append(str(workers_dir() / NATIVE_WORKERS[self.language][1]))
        if self.language == "python" and not self.tier and (spec := importlib.util.find_spec(self.module)):
            needed.append(spec.origin or "")
        if self.version:
            needed.append(str(self._version_directory() / versions.INSTALLED))
        return [path for path in dict.fromkeys(needed) if path]

    def missing(self) -> str | None:
        """Why the method cannot run here (one line), or None."""
        if self.tier:
            from ..tier.settings import missing

            base = next((m for m in catalog() if m.name == self.name.split("/")[0] and m.web), None)
            return missing(self.name, base.web.servers if base else None)
        if self.version and not versions.installed(self.name.partition("@")[0], self.version):
            if (self._version_directory() / versions.INSTALLED).exists():
                return (f"version {self.version} was built from other {self.language} worker sources than these: "
                        "make setup builds it again")
            return f"version {self.version} is not installed here: make setup installs the versions methods/versions.toml declares"
        if self.language == "python" and importlib.util.find_spec(self.module) is None:
            hint = f" (pip install {self.package})" if self.package else ""
            return f"Python module {self.module} is not installed{hint}"
        if self.language in NATIVE_WORKERS:
            argv, built, build = NATIVE_WORKERS[self.language]
            if not self._own_build() and not (workers_dir() / built).exists():
                return f"the {self.language} worker is not built: {build}"
            if "{workers}" not in argv[0] and shutil.which(argv[0]) is None:
                return f"{argv[0]} is not on PATH"
            if self.language in LIBRARY_PROBES and self.module not in _loadable(self.language):
                return f"the {self.language} library {self.module} is not installed: make system-deps installs it"
        return None


@cache
def _loadable(language: str) -> frozenset[str]:
    modules = sorted({m.module for m in catalog() if m.language == language and not m.tier})
    done = subprocess.run([*LIBRARY_PROBES[language], *modules], capture_output=True, text=True, timeout=60)
    return frozenset(done.stdout.split())


@cache
def catalog() -> tuple[Method, ...]:
    """Every method: catalog.toml first, then one catalog-<language>.toml per worker."""
    folder = resources.files("accessbench") / "methods"
    files = sorted((p for p in folder.iterdir() if p.name.startswith("catalog") and p.name.endswith(".toml")),
                   key=lambda p: (p.name != "catalog.toml", p.name))
    methods = tuple(Method(**m) for f in files for m in tomllib.loads(f.read_text())["methods"])
    names = {m.name for m in methods}
    for m in methods:
        if (m.layer is None) != (m.over is None) or (m.over is not None and m.over not in names):
            raise ValueError(f"catalog: {m.name}: a layer method names its layer and a known method it runs on (over)")
    return methods + tuple(_versioned(methods))


def _versioned(methods: tuple[Method, ...]):
    """Each version methods/versions.toml declares, as its method's entry under its own name."""
    by_name = {m.name: m for m in methods}
    for entry in versions.declared().values():
        if entry.method not in by_name:
            raise ValueError(f"methods/versions.toml: {entry.method} is not a method of the catalog")
        base = by_name[entry.method]
        if base.language != entry.language:
            key = [k for k, language in versions.KEYS.items() if language == base.language]
            raise ValueError(f"methods/versions.toml: {entry.method} is a {base.language} method: " + (
                f"its versions name what to install by {key[0]}" if key else "it has one version, the installed one"))
        for version in entry.versions:
            yield base.model_copy(update={"name": f"{base.name}@{version}", "version": version, "default": False,
                                          "summary": f"{base.summary} At {version} (methods/versions.toml)."})


def _fill(text: str, where: dict[str, str]) -> str:
    for key, value in where.items():
        text = text.replace(key, value)
    return text


def _check_version(name: str, known: dict[str, Method], option: str) -> None:
    """A method at a version: one that is installed here, or one line saying which are and how
    to add one."""
    base, _, version = name.partition("@")
    if base not in known:
        return  # unknown, said with the others
    have = [m.version for m in known.values() if m.version and m.name.startswith(f"{base}@")
            and versions.installed(base, m.version)]
    if known[base].language == "c":
        raise InputError(f"{option} {name}: {base}'s library comes from Debian's package: it has one version "
                         f"here, the installed one (`accessbench methods` names it)")
    if name in known and version in have:
        return
    raise InputError(f"{option} {name}: {'not installed' if name in known else 'not a version declared'} here "
                     f"(installed: {', '.join(have) if have else 'none'}, and {base} without @ is its pinned "
                     "version); to add one, list it in src/accessbench/methods/versions.toml and run make setup")


# Names that stand for several methods in --method.
GROUPS = {
    "all": "every method in the catalog: setting variants and layers too",
    "layers": "every layer method, and the driver each runs on",
    "web": "every tier method: drivers in web pages under HTTP load (docs/tier.md); web/load=wrk: each under wrk",
    "transfer": "the default methods and every bulk (COPY) and columnar (Arrow, data frame) reader",
}


def _tier_settings(name: str, known: dict[str, Method], option: str) -> list[str]:
    """A tier method named with settings its catalog entry does not list (``py-gunicorn-psycopg/
    load=wrk``) becomes a method of that name, as its tier worker takes it; ``web/SETTINGS`` is
    every tier method so (the variants the catalog lists left out: each base once). Any other
    name is as given."""
    base, _, text = name.partition("/")
    if not text or name in known or not (base == "web" or base in known and known[base].web):
        return [name]
    from ..tier.settings import choose, variants

    bases = [m for m in known.values() if m.web] if base == "web" else [known[base]]
    for m in bases:
        _, why = choose(m.name, variants(m.web.servers), text)
        if why:
            raise InputError(f"{option} {name}: {why}")
        known.setdefault(f"{m.name}/{text}", m.model_copy(update={
            "name": f"{m.name}/{text}", "web": None, "summary": f"{m.name} with {text.replace('/', ', ')}"}))
    return [f"{m.name}/{text}" for m in bases]


def select(names: list[str] | None, option: str = "--method") -> list[Method]:
    """Methods by name or group (the default ones when ``names`` is empty); an unknown name
    is an input error, naming ``option`` (where the user gave it)."""
    known = {m.name: m for m in catalog()}
    if not names:
        return [m for m in known.values() if m.default]
    for name in names:
        if "@" in name:
            _check_version(name, known, option)
    names = [n for name in names for n in _tier_settings(name, known, option)]
    # a language's name: every method of its worker (drivers, their setting variants, layers);
    # its web pages are `web`'s, its other driver versions are asked for by name@version
    languages = sorted({m.language for m in known.values()})
    unknown = [n for n in names if n not in known and n not in GROUPS and n not in languages]
    if unknown:
        raise InputError(f"{option} {','.join(unknown)}: unknown (known: {', '.join(known)}; "
                         f"or {' or '.join(GROUPS)}; or a language: {', '.join(languages)})")
    chosen: list[str] = []
    for name in names:
        if name == "all":
            chosen += known
        elif name == "layers":
            chosen += [n for m in known.values() if m.over for n in (m.over, m.name)]
        elif name == "web":
            chosen += [m.name for m in known.values() if m.tier]
        elif name == "transfer":
            chosen += [m.name for m in known.values() if not m.tier and (m.default or m.reads != "rows")]
        elif name in languages and name not in known:
            chosen += [m.name for m in known.values() if m.language == name and not m.tier and not m.version]
        else:
            chosen.append(name)
    return [known[n] for n in dict.fromkeys(chosen)]
