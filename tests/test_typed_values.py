"""Typed parameters and data: values keep their suite type to the database (pure logic on
suite texts, the reference generators and the literal rules)."""

import datetime as dt
import decimal

import pytest

from accessbench.errors import SuiteError
from accessbench.protocol import generators
from accessbench.protocol.sqltext import as_sqlite, literal
from accessbench.suite.loader import parse

SUITE = """\
[suite]
name = "typed"

[[tables]]
name = "t"
rows = 10
columns = [
  {{ name = "id", type = "integer", gen = {{ kind = "seq" }} }},
  {{ name = "x",  type = "{type}", gen = {gen} }},
]

[[steps]]
name = "ins"
kind = "exec"
sql = "INSERT INTO t (id, x) VALUES (?, ?)"
params = [{{ kind = "seq" }}, {param}]
mode = "prepared"
iterations = 5
"""


def suite(type_="boolean", gen='{ kind = "choice", values = [true, false] }', param=None):
    return parse(SUITE.format(type=type_, gen=gen, param=param or gen), "typed.toml")


def error_of(**kwargs) -> str:
    with pytest.raises(SuiteError) as e:
        suite(**kwargs)
    return str(e.value)


def test_booleans_stay_booleans_from_the_suite_to_the_worker():
    step = suite().variants[0].steps[0]
    spec = step.params[1].wire(seed=3)
    assert spec["type"] == "bool"
    values = list(generators.values(spec, 20))
    assert {type(v) for v in values} == {bool}


@pytest.mark.parametrize("type_, gen, kind", [
    ("double", '{ kind = "float", lo = -1.0, hi = 1.0, digits = 3 }', "float"),
    ("numeric(8,2)", '{ kind = "decimal", lo = "-100.00", hi = "100.00", scale = 2 }', "decimal"),
    ("date", '{ kind = "date", start = "2024-02-27", jitter_days = 3 }', "date"),
    ("bytes", '{ kind = "bytes", length = 4 }', "bytes"),
    ("numeric(8,2)", '{ kind = "choice", values = ["9.99", "-0.01"], type = "decimal" }', "decimal"),
    ("double", '{ kind = "choice", values = [1, 2.5] }', "float"),
    ("timestamp", '{ kind = "const", value = "2001-02-03T04:05:06", type = "timestamp" }', "timestamp"),
])
def test_every_type_a_column_takes_is_accepted_and_generated_as_that_type(type_, gen, kind):
    column = suite(type_=type_, gen=gen).variants[0].tables[0].columns[1]
    spec = column.gen.wire(seed=1)
    assert spec["type"] == kind
    native = {"float": float, "decimal": decimal.Decimal, "date": dt.date, "bytes": bytes, "timestamp": dt.datetime}
    assert all(isinstance(v, native[kind]) for v in generators.values(spec, 10))


def test_a_decimal_generator_sends_integer_units_of_its_scale():
    column = suite(type_="numeric(8,2)", gen='{ kind = "decimal", lo = "-1.5", hi = 3, scale = 2 }').variants[0].tables[0].columns[1]
    spec = column.gen.wire(seed=1)
    assert (spec["lo"], spec["hi"], spec["scale"]) == (-150, 300, 2)
    assert all(v.as_tuple().exponent == -2 and -decimal.Decimal("1.5") <= v <= 3 for v in generators.values(spec, 50))


def test_a_float_generator_for_an_integer_column_is_the_suites_error_with_its_line():
    message = error_of(type_="integer", gen='{ kind = "float", lo = 0.0, hi = 1.0 }', param='{ kind = "seq" }')
    assert message.startswith("typed.toml:9:") and "float values, which integer columns do not take" in message


def test_a_decimal_with_more_places_than_its_column_keeps_is_refused():
    message = error_of(type_="numeric(6,1)", gen='{ kind = "decimal", lo = 0, hi = 1, scale = 2 }', param='{ kind = "seq" }')
    assert "scale 2 exceeds the column's 1" in message


def test_decimals_wider_than_their_column_are_refused():
    message = error_of(type_="numeric(4,2)", gen='{ kind = "decimal", lo = "-500.00", hi = 0, scale = 2 }',
                       param='{ kind = "seq" }')
    assert "more than the column's 2 digits before the point" in message


def test_an_insert_parameter_its_column_cannot_take_is_refused_naming_the_parameter():
    message = error_of(param='{ kind = "choice", values = [0, 1] }')
    assert message.startswith("typed.toml:16:") and "steps.0.params.1: fills column x of t" in message


@pytest.mark.parametrize("gen, says", [
    ('{ kind = "choice", values = [true, 1] }', "values mix bool and int"),
    ('{ kind = "choice", values = ["2024-13-01"], type = "date" }', "is not a date (YYYY-MM-DD)"),
    ('{ kind = "const", value = "1e5", type = "decimal" }', "is not a decimal (plain digits"),
    ('{ kind = "const", value = "ABCD", type = "bytes" }', "is not a bytes (lower-case hex"),
    ('{ kind = "const", value = 5, type = "date" }', "type = 'date' but the values are int"),
])
def test_a_typed_value_not_in_its_types_form_is_refused(gen, says):
    assert says in error_of(type_="text", gen='{ kind = "text", pattern = "#" }', param=gen)


@pytest.mark.parametrize("value, dialect, text", [
    (True, "postgresql", "TRUE"), (False, "mariadb", "FALSE"), (True, "sqlite", "1"),
    (0.1, "postgresql", "0.1e0::float8"), (0.1, "mariadb", "0.1e0"), (1e300, "sqlite", "1e+300"),
    (decimal.Decimal("-12.50"), "mariadb", "-12.50"), (decimal.Decimal("1E+3"), "sqlite", "1000"),
    (dt.date(2024, 2, 29), "postgresql", "DATE '2024-02-29'"), (dt.date(2024, 2, 29), "mariadb", "'2024-02-29'"),
    (b"\x00\xff", "postgresql", "'\\x00ff'::bytea"), (b"\x00\xff", "sqlite", "X'00ff'"),
])
def test_literal_mode_writes_each_type_by_the_literal_rules(value, dialect, text):
    assert literal(value, dialect) == text


def test_sqlite_gets_dates_decimals_and_booleans_as_it_stores_them():
    assert as_sqlite((True, dt.date(2024, 1, 2), decimal.Decimal("1.50"), dt.datetime(2001, 1, 1, 0, 0, 0, 5), b"x", None)) == \
        (1, "2024-01-02", "1.50", "2001-01-01 00:00:00.000005", b"x", None)
