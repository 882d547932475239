"""Which targets, paths and methods a run measures: those asked for (each must be usable
here), or every usable one, leaving out, with a note each, what is not.

Pure rules over plain values: what is available here comes from three callables, the real
ones by default, so the rules can be tried without this machine's workers and servers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

from .. import targets as targets_mod
from ..errors import InputError
from ..methods import Method
from ..methods import select as select_methods
from ..paths import Path
from ..paths import parse as parse_path
from ..suite.model import Suite
from ..targets import Target, TargetUnavailable
from ..targets.registry import by_default
from ..targets.url import masked


class Skipped(NamedTuple):
    """One line saying what a run leaves out, and the rich style it is printed in."""

    text: str
    style: str


class Refused(InputError):
    """An input error of the selection, with the lines about what it had left out before it."""

    def __init__(self, message: str, skipped: list[Skipped]) -> None:
        super().__init__(message)
        self.skipped = skipped


@dataclass(frozen=True)
class Selection:
    methods: list[Method]      # usable here
    paths: list[str] | None    # as named (--path, else the suite's); None: every path each target has
    targets: list[Target]
    skipped: list[Skipped]


def select(
    suite: Suite,
    methods: list[str] | None = None,
    paths: list[str] | None = None,
    targets: list[str] | None = None,
    *,
    method_missing: Callable[[Method], str | None] = Method.missing,
    path_missing: Callable[[Path], str | None] = lambda path: path.missing(),
    make_target: Callable[[str], Target] = targets_mod.make,
) -> Selection:
    """The run's methods, paths and targets from the --method, --path and --target lists
    (None when not given). What was named must be usable, else a ``Refused`` input error;
    what was not named is left out where it cannot run, with a ``Skipped`` line."""
    skipped: list[Skipped] = []
    wanted = paths or suite.paths  # the suite may name its paths; --path overrides
    try:
        usable = _methods(methods or suite.methods, method_missing, skipped)  # --method overrides the suite's
        parsed = _paths(wanted, path_missing)
        chosen = _targets(targets, usable, parsed, bool(paths), make_target, skipped)
    except InputError as e:
        raise Refused(str(e), skipped) from None
    return Selection(usable, wanted, chosen, skipped)


def _methods(names: list[str] | None, missing: Callable[[Method], str | None], skipped: list[Skipped]) -> list[Method]:
    usable = []
    for method in select_methods(names):
        why = missing(method)
        if why and names and method.name in names:  # named itself, not through a group (all, layers)
            raise InputError(f"--method {method.name}: unavailable here: {why}")
        if why:
            skipped.append(Skipped(f"skipping {method.name}: {why}", "yellow"))
        else:
            usable.append(method)
    return usable


def _paths(names: list[str] | None, missing: Callable[[Path], str | None]) -> list[Path] | None:
    parsed = [parse_path(p) for p in names] if names else None
    for path in parsed or []:
        why = missing(path)
        if why:
            raise InputError(f"--path {path.name}: unavailable here: {why}")
    return parsed


def _targets(specs: list[str] | None, usable: list[Method], paths: list[Path] | None, named_paths: bool,
             make: Callable[[str], Target], skipped: list[Skipped]) -> list[Target]:
    chosen, offered = [], set()
    for spec in specs or by_default():  # every registered DBMS: the servers, then the embedded engines
        shown = masked(spec)  # a URL's password is never shown
        try:
            target = make(spec)
        except TargetUnavailable as e:
            if specs:
                raise InputError(f"--target {shown}: {e}") from None
            skipped.append(Skipped(f"SKIPPING target {spec}: {e}", "bold yellow"))
            continue
        # Targets are told apart by name (their work directories, the store's rows), not by
        # DBMS: postgresql and postgresql@15 are two servers, postgres and postgresql one.
        if any(t.name == target.name for t in chosen):
            raise InputError(f"--target {shown}: names {target.name} again; name each target once")
        if not any(target.dbms in m.dbms for m in usable):
            if specs:
                raise InputError(f"--target {shown}: no selected method reaches {target.dbms}")
            continue
        offered.update(target.paths)
        if paths and all(p.refuses(target) for p in paths):
            if specs:
                raise InputError(f"--target {shown}: {_refusal(target, paths)}")
            continue
        chosen.append(target)
    # A path the user named must reach some target; a suite's own paths apply where they can.
    unknown = [p.name for p in paths or [] if p.rides_on not in offered] if named_paths else []
    if unknown:
        raise InputError(f"--path {','.join(unknown)}: the targets offer {', '.join(sorted(offered))} "
                         "(and tcp+DELAY where they offer tcp)")
    if not chosen:
        raise InputError("nothing to measure: no target has an available method (see `accessbench methods`)")
    unhelped = [p for p in paths or [] if all(p.refuses(t) for t in chosen)] if named_paths else []
    if unhelped:
        raise InputError(f"--path {unhelped[0].name}: {unhelped[0].refuses(chosen[0])}")
    return chosen


def _refusal(target: Target, paths: list[Path]) -> str:
    """Why none of the paths reaches the target: the paths it offers, or what a path needs."""
    if not any(p.rides_on in target.paths for p in paths):
        return f"offers paths {', '.join(target.paths)}, not {', '.join(p.name for p in paths)}"
    return next(p.refuses(target) for p in paths if p.rides_on in target.paths)
