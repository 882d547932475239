"""What the layer tests of every language share: a real run of drivers and the layers above
them, and the check that a layer read and wrote what its driver did."""

from __future__ import annotations

import json
import subprocess

import pytest

from accessbench.methods import select
from accessbench.store import Store

from .conftest import QUICK_STEPS, accessbench


def hello(method: str) -> dict:
    """The worker's hello, asked with no database: who the layer is and what it pins."""
    m = select([method])[0]
    if m.missing():
        pytest.skip(m.missing())
    proc = subprocess.run(m.command(), input='{"op": "hello"}\n{"op": "bye"}\n', capture_output=True, text=True,
                          timeout=120)
    return json.loads(proc.stdout.splitlines()[0])


def run_beside_driver(tmp_path, layers: dict[str, tuple[str, list[str]]], targets: list[str],
                      suite: str = "quick") -> dict[str, dict[str, dict]]:
    """One real run of each target's driver and its layers (``layers``: target → (driver,
    layer methods)); every report's layer-cost lines checked; the cells by method, then step.
    One path per target (unix, or inproc for SQLite): what a layer reads does not depend on it.
    Of the quick suite, every kind of step once: its larger twins (scan-100k, insb-100, upd100)
    go through the same layer calls over more rows."""
    methods = [name for t in targets for name in (layers[t][0], *layers[t][1])]
    paths = ",".join(sorted({"inproc" if t == "sqlite" else "unix" for t in targets}))
    steps = ["--step", QUICK_STEPS] if suite == "quick" else []
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--full", "--suite", suite, "--quick", "--target", ",".join(targets),
                         "--method", ",".join(methods), "--path", paths, *steps, "--trials", "2", "--precision", "0",
                         "--no-report", cwd=tmp_path, timeout=3000)
    assert result.returncode == 0, result.stderr[-3000:]
    text = " ".join(result.stdout.split())
    for target in targets:  # every report says what each layer costs over its driver
        driver, names = layers[target]
        for layer in names:
            assert f"{layer} over {driver} @ {target}/" in text, layer
    with Store(store) as s:
        cells = s.load(s.resolve("last")).cells
    by_method: dict[str, dict[str, dict]] = {}
    for c in cells:
        by_method.setdefault(c["method"], {})[c["step"]] = c
    return by_method


def assert_same_values(cells: dict[str, dict[str, dict]], driver: str, layer: str, unsupported: dict[str, str]) -> None:
    """``layer`` measured every step but ``unsupported`` (each with its reason), and read and
    wrote on each what ``driver`` did: the same checksums of the rows read and of the table after."""
    mine, bare = cells[layer], cells[driver]
    for step, why in unsupported.items():
        assert mine[step]["status"] == "unsupported" and why in mine[step]["message"], (layer, step, mine[step])
    measured = {step for step, c in mine.items() if c["status"] == "ok"}
    assert measured == set(mine) - set(unsupported), (layer, {s: c["status"] for s, c in mine.items()})
    for step in measured:  # verified against the driver's own reading of the same steps
        assert (mine[step]["checksum"], mine[step]["check_checksum"]) == \
               (bare[step]["checksum"], bare[step]["check_checksum"]), (layer, step)
