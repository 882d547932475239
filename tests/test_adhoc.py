"""Ad-hoc statements as a suite (suite/adhoc.py): the call form of a parameter, a file of
statements with their declarations, and the suite's TOML, read back by the loader (pure logic)."""

from __future__ import annotations

import pytest

from accessbench.errors import InputError
from accessbench.suite.adhoc import from_options, parse_param, read_file, suite_text
from accessbench.suite.loader import parse


@pytest.mark.parametrize("text, spec", [
    ("uniform(1,1000)", {"kind": "uniform", "lo": 1, "hi": 1000}),
    ("uniform(lo=1, hi=1000)", {"kind": "uniform", "lo": 1, "hi": 1000}),
    ("choice('r', 'i')", {"kind": "choice", "values": ["r", "i"]}),
    ("choice(true, false)", {"kind": "choice", "values": [True, False]}),
    ("const(42)", {"kind": "const", "value": 42}),
    ("text('user-####')", {"kind": "text", "pattern": "user-####"}),
    ("decimal('0.00', '99.99', 2)", {"kind": "decimal", "lo": "0.00", "hi": "99.99", "scale": 2}),
])
def test_a_parameter_is_a_generator_written_as_a_call(text, spec):
    assert parse_param(text) == spec


@pytest.mark.parametrize("text, says", [
    ("uniform(5, 1)", "hi (1) is below lo (5)"),
    ("zipf(1.1)", "no generator zipf"),
    ("uniform(1", "not a generator call"),
    ("uniform(lo, 2)", "lo is not a literal"),
    ("choice()", "choice needs its values"),
    ("text('a', 3)", "text takes at most 1 value (pattern)"),
    ("uniform(1, 2, 3)", "uniform takes at most 2 values"),
    ("__import__('os')", "no generator __import__"),
])
def test_a_malformed_parameter_is_one_line_naming_it(text, says):
    with pytest.raises(InputError) as e:
        parse_param(text)
    assert str(e.value).startswith(f"--param {text!r}: ") and says in str(e.value)
    assert "\n" not in str(e.value)


def test_one_statement_takes_every_parameter_and_several_take_as_many_as_their_markers():
    (one,) = from_options(["SELECT a FROM t WHERE a BETWEEN ? AND ?"], ["uniform(1, 5)", "uniform(6, 9)"])
    assert len(one.params) == 2 and one.where == "--sql"
    first, second = from_options(["SELECT 1", "SELECT a FROM t WHERE b = ? -- a comment's ?"], ["const(7)"])
    assert (first.params, second.params, second.where) == ([], [{"kind": "const", "value": 7}], "--sql 2")
    with pytest.raises(InputError, match="--param: 1 more than the statements' \\? markers take"):
        from_options(["SELECT 1", "SELECT 2"], ["const(7)"])


def test_a_file_declares_each_statements_name_and_parameters_in_its_comments(tmp_path):
    path = tmp_path / "queries.sql"
    path.write_text("-- step: by-id\n-- param: uniform(1, 1000)\nSELECT name\n  FROM visitors WHERE id = ?;\n\n"
                    "-- the busiest pages\nSELECT path FROM pages ORDER BY views DESC LIMIT 10;\n")
    by_id, busiest = read_file(str(path))
    assert (by_id.name, by_id.params, by_id.where) == ("by-id", [{"kind": "uniform", "lo": 1, "hi": 1000}],
                                                       f"{path}:3")
    assert by_id.sql == "SELECT name\n  FROM visitors WHERE id = ?"
    assert busiest.name is None and busiest.sql.startswith("-- the busiest pages\nSELECT path")


@pytest.mark.parametrize("text, says", [
    ("SELECT 1", ":1: the last statement has no ; at the end of a line"),
    ("-- param: uniform(2, 1)\nSELECT ?;", ":1 'uniform(2, 1)': hi (1) is below lo (2)"),
    ("-- step: 9lives\nSELECT 1;", ":1: step name '9lives'"),
    ("\n-- only a comment\n", "no statement"),
])
def test_a_bad_file_is_one_line_naming_the_file_and_line(tmp_path, text, says):
    path = tmp_path / "q.sql"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        read_file(str(path))
    assert says in str(e.value) and str(path) in str(e.value)


def test_the_suite_measures_each_statement_in_each_mode_and_reads_back_as_any_suite():
    statements = from_options(["SELECT count(*) FROM pg_class WHERE relkind = ?"], ["choice('r', 'i')"])
    text = suite_text(statements, command="run --sql …")
    suite = parse(text, "adhoc")
    steps = suite.variants[0].steps
    assert [s.name for s in steps] == ["sql1-literal", "sql1-extended", "sql1-prepared"]
    assert {s.sql for s in steps} == {"SELECT count(*) FROM pg_class WHERE relkind = ?"}
    assert suite.variants[0].tables == [] and text.startswith("# made by accessbench run --sql …\n")
    only = parse(suite_text(statements, modes=["prepared"]), "adhoc").variants[0].steps
    assert [s.name for s in only] == ["sql1-prepared"]


def test_two_statements_of_one_name_are_refused_naming_the_second(tmp_path):
    path = tmp_path / "q.sql"
    path.write_text("-- step: a\nSELECT 1;\n-- step: a\nSELECT 2;\n")
    with pytest.raises(InputError, match=f"{path}:4: a second step named a"):
        suite_text(read_file(str(path)))
