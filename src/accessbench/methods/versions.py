"""Methods at another version of their driver (``py-psycopg@3.2.10``, ``go-pgx@v5.8.0``): what
versions.toml declares, where each is installed, and the installing itself (`make setup` calls
``install``).

A versioned method is its catalog entry under another name, at another version of the driver:
the same worker code, the same driver code, only the driver's own package swapped. Each is
installed from its ecosystem's registry into a directory of its own,
``.cache/versions/LANGUAGE/METHOD@VERSION`` — so the pinned version stays installed and
untouched beside it — by one small installer per language (INSTALLERS):

- Python: the driver's packages (pip, without their dependencies: those are accessbench's
  environment's); the worker puts the directory first on its module path before it imports the
  driver.
- Go: the worker built again (``go build -modfile``) from a copy of go.mod/go.sum with
  ``go get MODULE@VERSION`` applied (Go's minimal version selection moves what must move with
  it); the method's command starts that binary.
- Rust: the worker built again from a copy of its manifest that requires ``=VERSION`` of the
  crate and a copy of Cargo.lock that cargo re-resolves from the pinned one (moving only the
  crates that must move with it), its sources the worker's own, in a target directory of the
  versions' own (so that it builds while the worker does, on the cores the worker's long last
  compile leaves), the binary copied out.
- Java: the driver's jar at that version (Maven's dependency:copy), on the class path ahead of
  the worker's shaded jar.
- Node: the driver's npm package at that version with its own dependencies (npm install
  --prefix); the worker resolves that package from there (workers/node/src/versions.js).

A Go or Rust version is a build of the worker's sources: it counts as installed only while those
are the ones it was built from (its ``.installed`` marker records their digest), and `make setup`
builds it again when they change.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from ..worker_process import workers_dir
from .toolchains import toolchain_absent

INSTALLED = ".installed"  # written last into a version's directory: it is whole

# versions.toml's key naming what to install → the language whose installer reads it
KEYS = {"packages": "python", "module": "go", "crate": "rust", "artifact": "java", "package": "node"}


@dataclass(frozen=True)
class Versions:
    method: str
    language: str
    versions: tuple[str, ...]
    # what is installed at each version: pip requirements, "{version}" standing for it (Python);
    # the Go module, the crate, the Maven groupId:artifactId, the npm package (one each)
    packages: tuple[str, ...]


@cache
def declared() -> dict[str, Versions]:
    text = (resources.files("accessbench") / "methods" / "versions.toml").read_text()
    entries = {}
    for v in tomllib.loads(text).get("versions", []):
        keys = [k for k in KEYS if k in v]
        if len(keys) != 1:
            raise ValueError(f"methods/versions.toml: {v.get('method')}: one of {', '.join(KEYS)} says what to "
                             f"install, not {' and '.join(keys) or 'none'}")
        what = v[keys[0]]
        entries[v["method"]] = Versions(v["method"], KEYS[keys[0]], tuple(v["versions"]),
                                        tuple(what) if isinstance(what, list) else (what,))
    return entries


def root() -> Path:
    """Where versions are installed: the checkout's .cache/versions (beside workers/)."""
    return workers_dir().parent / ".cache" / "versions"


def directory(method: str, version: str) -> Path:
    entry = declared().get(method)
    return root() / (entry.language if entry else "undeclared") / f"{method}@{version}"


def installed(method: str, version: str) -> bool:
    """Whole, and (a worker's build) built from the worker's sources as they are now."""
    marker = directory(method, version) / INSTALLED
    if not marker.exists():
        return False
    sources = _sources(declared()[method].language)
    return not sources or f"sources {sources}" in marker.read_text().splitlines()


def install(log=print, only: Collection[str] | None = None, skip: Collection[str] = ()) -> int:
    """Every declared version not yet installed (or built from other sources than the worker's
    now), of the languages ``only`` names (all by default) but those of ``skip``; 1 when one
    could not be, the others installed all the same. ``log`` is called as print is (``end``,
    ``flush``)."""
    status = 0
    for entry in declared().values():
        if entry.language in skip or (only is not None and entry.language not in only):
            continue
        todo = [v for v in entry.versions if not installed(entry.method, v)]
        if not todo:
            continue
        installer = INSTALLERS[entry.language]
        if installer.absent():
            log(f"*** SKIPPING {', '.join(f'{entry.method}@{v}' for v in todo)}: {installer.absent()} ***")
            continue
        for version in todo:
            target = directory(entry.method, version)
            shutil.rmtree(target, ignore_errors=True)  # a version's directory is whole or made anew
            target.mkdir(parents=True)
            # one line per version: what, then (when done) how long it took or why it failed
            log(f"installing {entry.method}@{version}: {installer.what(entry, version)} …", end="", flush=True)
            start = time.monotonic()
            try:
                installer.install(entry, version, target)
            except (Failed, OSError, ValueError) as e:
                log(f" *** NOT INSTALLED: {e} ***")
                status = 1
                continue
            sources = _sources(entry.language)
            (target / INSTALLED).write_text(installer.what(entry, version) + "\n"
                                            + (f"sources {sources}\n" if sources else ""))
            log(f" {time.monotonic() - start:.0f} s")
    return status


# ---- the installers, one per language -----------------------------------------------------------

def _cache() -> Path:
    """The checkout's .cache: the same download and build caches as the Makefile's workers."""
    return root().parent


def _run(argv: list[str], **kwargs) -> None:
    """A tool's run, its output kept (shown, its end, only when it fails)."""
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode:
        said = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr).strip().splitlines()[-15:]
        raise Failed(f"{' '.join(argv[:2])} exited with {done.returncode}:\n    " + "\n    ".join(said))


class Failed(Exception):
    """A tool of an installer failed: what it said."""


class Installer:
    language = ""

    def absent(self) -> str | None:
        """Why this language's versions cannot be installed here (its tools not found), or None."""
        return toolchain_absent(self.language)

    def what(self, entry: Versions, version: str) -> str:
        return " ".join(p.replace("{version}", version) for p in entry.packages)

    def install(self, entry: Versions, version: str, target: Path) -> None:
        raise NotImplementedError


class Python(Installer):
    language = "python"

    def install(self, entry, version, target):
        _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade", "--target", str(target),
              *self.what(entry, version).split()])


class Go(Installer):
    language = "go"

    def what(self, entry, version):
        return f"{entry.packages[0]}@{version} (workers/go built with it)"

    def install(self, entry, version, target):
        worker = workers_dir() / "go"
        for name in ("go.mod", "go.sum"):
            shutil.copy(worker / name, target / name)
        env = {**os.environ, "GOMODCACHE": str(_cache() / "gomod"), "GOCACHE": str(_cache() / "gobuild")}
        modfile = f"-modfile={target / 'go.mod'}"
        _run(["go", "get", "-C", str(worker), modfile, f"{entry.packages[0]}@{version}"], env=env)
        _run(["go", "build", "-C", str(worker), "-mod=readonly", modfile, "-o", str(target / "abworker-go"), "."],
             env=env)


VERSIONED_BIN = "abworker-rust-versioned"


class Rust(Installer):
    language = "rust"

    def what(self, entry, version):
        return f"{entry.packages[0]} ={version} (workers/rust built with it)"

    def install(self, entry, version, target):
        worker = workers_dir() / "rust"
        crate = entry.packages[0]
        manifest = (worker / "Cargo.toml").read_text()
        pinned, found = re.subn(rf'^({re.escape(crate)}\s*=\s*(?:\{{[^}}\n]*?\bversion\s*=\s*)?)"[^"]*"',
                                rf'\g<1>"={version}"', manifest, count=1, flags=re.M)
        if not found:  # not a direct dependency: required here, it pins the one the others use
            pinned = manifest.replace("[dependencies]\n", f'[dependencies]\n{crate} = "={version}"\n', 1)
        # built under another name, in the Rust versions' own target directory: cargo locks a
        # target directory while it builds in it, and this build runs beside the worker's
        (target / "Cargo.toml").write_text(pinned.replace('name = "abworker-rust"', f'name = "{VERSIONED_BIN}"'))
        shutil.copy(worker / "Cargo.lock", target / "Cargo.lock")
        for name in ("src", "build.rs"):  # the worker's own sources
            (target / name).symlink_to(os.path.relpath(worker / name, target))
        shared = _cache() / "versions" / "rust-target"
        env = {**os.environ, "CARGO_HOME": str(_cache() / "cargo"), "CARGO_TARGET_DIR": str(shared),
               "ABW_ACCESSBENCH": str(_package())}
        manifest_path = ["--manifest-path", str(target / "Cargo.toml")]
        _run(["cargo", "fetch", "-q", *manifest_path], env=env)  # resolves the lock copy: the crate at =VERSION
        _run(["cargo", "build", "-q", "--release", "--locked", *manifest_path, *SLIM_BUILDS.get(entry.method, [])],
             env=env)
        shutil.copy(shared / "release" / VERSIONED_BIN, target / "abworker-rust")


# A Rust method whose version's worker is built with its own driver only (the features of
# workers/rust/Cargo.toml): the other drivers and the layers are most of a build's time, and a
# version's worker measures its one method. A method not named here gets the whole worker.
SLIM_BUILDS = {"rust-tokio-postgres": ["--no-default-features"]}


class Java(Installer):
    language = "java"
    PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

    def what(self, entry, version):
        return f"{entry.packages[0]}:{version} (its jar ahead of the worker's)"

    def install(self, entry, version, target):
        _run(["mvn", "-B", "-q", "-Dstyle.color=never", f"-Dmaven.repo.local={_cache() / 'm2'}", f"{self.PLUGIN}:copy",
              f"-Dartifact={entry.packages[0]}:{version}:jar", f"-DoutputDirectory={target}"])


class Node(Installer):
    language = "node"

    def what(self, entry, version):
        return f"{entry.packages[0]}@{version} (npm, with its dependencies)"

    def install(self, entry, version, target):
        _run(["npm", "install", "--prefix", str(target), "--cache", str(_cache() / "npm"), "--no-audit", "--no-fund",
              "--loglevel=error", "--save-exact", f"{entry.packages[0]}@{version}"])


INSTALLERS: dict[str, Installer] = {i.language: i for i in (Python(), Go(), Rust(), Java(), Node())}


# ---- what a worker's build is made from -----------------------------------------------------------

def _package() -> Path:
    """accessbench's own package directory (the Rust worker's build reads the suites from it)."""
    return Path(__file__).resolve().parents[1]


# language → the files its worker's build is made from, under the checkout's workers/ (and, for
# Rust, whose build generates code from the suites' tables, under the package)
SOURCES = {
    "go": lambda w, p: [*w.glob("go/*.go"), w / "go/go.mod", w / "go/go.sum"],
    "rust": lambda w, p: [*(w / "rust").glob("Cargo.*"), w / "rust/build.rs", *(w / "rust/src").rglob("*.rs"),
                          *p.glob("suites/*.toml"), p / "conformance/script.toml"],
}


@cache
def _sources(language: str) -> str:
    """A digest of the files a language's versioned worker is built from ("" for a language
    whose versions are not builds of its worker)."""
    if language not in SOURCES:
        return ""
    digest = hashlib.sha256()
    for path in sorted(SOURCES[language](workers_dir(), _package())):
        digest.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"") + b"\0")
    return digest.hexdigest()[:16]
