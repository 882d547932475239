"""What differs between two stored runs besides the results: host, server and driver versions,
settings, the suite. Comparing such runs is allowed; the differences are listed above the
table so nobody reads a machine change as a driver change."""

from __future__ import annotations

from typing import Any

from .store import StoredRun

_RUN_SETTINGS = ("trials", "warmup", "max_warmup_jit", "quick", "seed", "paths")


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out |= _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
        return out
    return {prefix: value}


def _changed(scope: str, a: dict, b: dict) -> list[str]:
    fa, fb = _flatten(a), _flatten(b)
    return [f"{scope}{key}: {fa.get(key, '—')} → {fb.get(key, '—')}"
            for key in sorted(fa.keys() | fb.keys()) if fa.get(key) != fb.get(key)]


def differences(a: StoredRun, b: StoredRun) -> list[str]:
    """One line per difference, 'what: A's value → B's value'."""
    lines = _changed("host ", a.run.environment, b.run.environment)
    lines += _changed("setting ", {k: a.run.settings.get(k) for k in _RUN_SETTINGS},
                      {k: b.run.settings.get(k) for k in _RUN_SETTINGS})
    if a.run.suite != b.run.suite:
        lines.append(f"suite: {a.run.suite} → {b.run.suite}")
    elif a.run.suite_text != b.run.suite_text:
        lines.append(f"suite {a.run.suite}: its text differs (steps or data may have changed)")
    targets_a, targets_b = ({t.target: t for t in s.targets} for s in (a, b))
    same = [(name, targets_a[name], targets_b[name]) for name in sorted(targets_a.keys() & targets_b.keys())]
    if not same and len(a.targets) == len(b.targets) == 1:  # one target each, another: the change under study
        (ta,), (tb,) = a.targets, b.targets
        same = [(f"{ta.target} → {tb.target}", ta, tb)]
    for name, ta, tb in same:
        lines += _changed(f"{name} ", {"server version": ta.server_version, "settings": ta.settings},
                          {"server version": tb.server_version, "settings": tb.settings})
    methods_a, methods_b = ({m.method: m for m in s.methods} for s in (a, b))
    for name in sorted(methods_a.keys() & methods_b.keys()):
        ma, mb = methods_a[name], methods_b[name]
        lines += _changed(f"{name} ", {"runtime": ma.runtime, "driver version": ma.driver_version,
                                       "settings": ma.settings},
                          {"runtime": mb.runtime, "driver version": mb.driver_version, "settings": mb.settings})
    for run, only in ((a, methods_a.keys() - methods_b.keys()), (b, methods_b.keys() - methods_a.keys())):
        if only:
            lines.append(f"methods only in run {run.run.id}: {', '.join(sorted(only))}")
    return lines
