"""The conformance kit: the vectors are the reference's, every method passes, and a worker
that differs is caught with its first difference."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from accessbench import conformance
from accessbench.methods import Method, catalog, toolchain_absent
from accessbench.protocol import vectors

from .conftest import accessbench

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", sorted(vectors.FILES))
def test_the_committed_vectors_are_what_the_reference_makes(name):
    assert (vectors.default_dir() / name).read_text() == vectors.render(name), (
        f"protocol/vectors/{name} is stale: python -m accessbench.protocol.vectors"
    )


LANGUAGES = sorted({m.language for m in catalog()})
# The languages whose workers run on a runtime are checked in test_conformance_runtimes.py and
# Python's in test_conformance_python.py: modules of their own, so that --dist loadfile runs
# them beside these rather than after them.
ON_RUNTIMES = ("java", "node")
SCRIPTS = ("php", "ruby", "perl")  # test_conformance_scripts.py
ELSEWHERE = (*ON_RUNTIMES, *SCRIPTS, "python")


def test_every_language_of_the_catalog_is_checked_in_one_of_the_four_modules():
    assert set(ELSEWHERE) <= set(LANGUAGES)


@pytest.mark.server
@pytest.mark.parametrize("language", [language for language in LANGUAGES if language not in ELSEWHERE])
def test_every_method_in_the_catalog_passes_conformance(language):
    check_language(language)


def check_language(language: str) -> None:
    # one test per language: a failure names its language, and a language whose toolchain is
    # absent is skipped, loudly, without excusing the others
    absent = toolchain_absent(language)
    if absent:  # only a toolchain missing from the machine excuses a method, and loudly
        pytest.skip(f"*** SKIPPING conformance of the {language} methods: {absent} ***")
    methods = [m for m in catalog() if m.language == language]
    outcomes = conformance.check(methods)
    failures = {o.method: o.failure for o in outcomes if not o.passed}
    assert not failures
    assert len(outcomes) == len(methods) and all(o.checks > 100 for o in outcomes)


class Corrupt(Method):
    fault: str

    def command(self) -> list[str]:
        return [sys.executable, str(FIXTURES / "corrupt_worker.py"), self.fault, self.name]


@pytest.mark.server
@pytest.mark.parametrize("fault, difference", [
    ("generate", "generate {'kind': 'seq'}: value 39 is 1, want 40"),
    ("hello", "hello: no 'driver_version'"),
    ("scan-checksum", "step scan-items (verify): checksum 0000000000000000, want"),
])
def test_a_worker_that_differs_is_caught_at_its_first_difference(fault, difference):
    base = next(m for m in catalog() if m.name == "py-sqlite3")
    (outcome,) = conformance.check([Corrupt(**base.model_dump(), fault=fault)])
    assert not outcome.passed and difference in outcome.failure


def test_the_conformance_command_reports_pass_per_method():
    result = accessbench("conformance", "py-sqlite3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "py-sqlite3" in result.stdout and "pass" in result.stdout


def test_a_reference_is_kept_only_for_reads_of_tables_no_statement_of_the_script_writes():
    from accessbench.conformance import References, script

    variant = script().variants[0]
    kept = References.of(variant).unchanging
    assert {"scan-types", "typed-select-prepared", "shape-join", "load-lazy"} <= kept
    # conf_items is read, and written by update (a method that cannot update leaves it otherwise)
    assert not kept & {"scan-items", "select-prepared", "insert-prepared", "update", "shape-delete-range"}
    written = variant.model_copy(update={"steps": [*variant.steps, variant.steps[1].model_copy(
        update={"name": "scribble", "kind": "exec", "sql": "DELETE FROM conf_types", "reset": ["SELECT 1"]})]})
    assert "scan-types" not in References.of(written).unchanging
