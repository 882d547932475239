"""A mismatch explained (pure logic on made-up row dumps): the first row read otherwise, its
column, and both values."""

from accessbench.protocol.checksum import typed
from accessbench.runner.diagnosis import column_names, explain, first_difference


def rows(*values):
    return [[typed(v) for v in row] for row in values]


PLURALITY = rows((1, "a", ","), (2, "b", ";"), (3, "c", "|"))


def test_the_first_row_read_otherwise_is_paired_with_the_same_record_and_its_column_named():
    mine = rows((2, "b", ";"), (1, "a", b","), (3, "c", "|"))  # another order, one value decoded as bytes
    number, column, row, closest = first_difference(mine, PLURALITY)
    assert (number, column) == (2, 2) and closest == PLURALITY[0]
    text = explain(mine, PLURALITY, "py-asyncpg", 6, "SELECT id, name, typdelim FROM pg_type")
    assert text == "first difference at row 2 read, column typdelim: text ',' from 6 methods, bytes 2c from py-asyncpg"


def test_rows_in_another_order_are_no_difference():
    assert first_difference(list(reversed(PLURALITY)), PLURALITY) is None


def test_without_a_plain_select_list_the_column_is_numbered():
    assert column_names("SELECT * FROM t") is None
    text = explain(rows((1, "a", "x")), rows((1, "a", "y")), "c-odbc", 1, "SELECT * FROM t")
    assert "column 3: text 'y' from 1 method, text 'x' from c-odbc" in text


def test_a_row_no_other_method_read_anything_like_is_named_whole():
    assert "is not among the other methods' rows" in explain(rows((1, "a"), (9, "z")), rows((1, "a")), "m", 2, None)


SUITE = """\
[suite]
name = "char-column"

[[tables]]
name = "t"
rows = 1
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[[steps]]
name = "types"
kind = "scan"
sql = "SELECT oid::int8, typname::text, typdelim FROM pg_catalog.pg_type WHERE oid < 30"
iterations = 1
"""


def test_a_real_mismatch_names_its_first_differing_column_and_both_values(tmp_path):
    """PostgreSQL's "char" column typdelim: psycopg and pg8000 read text ',', asyncpg bytes."""
    import sqlite3

    from .conftest import accessbench

    suite = tmp_path / "char.toml"
    suite.write_text(SUITE)
    store = tmp_path / "s.db"
    result = accessbench("--store", str(store), "run", "--suite", str(suite), "--target", "postgresql",
                         "--method", "py-psycopg,py-pg8000,py-asyncpg", "--trials", "1", "--warmup", "0",
                         "--precision", "0", "--no-report", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    cells = dict(sqlite3.connect(store).execute("SELECT method, status || ': ' || coalesce(message, '') FROM cells "
                                                "WHERE path = 'unix'"))
    assert cells["py-psycopg"].startswith("ok") and cells["py-pg8000"].startswith("ok")
    assert cells["py-asyncpg"].startswith("mismatch")
    assert "column typdelim: text ',' from 2 methods, bytes 2c from py-asyncpg" in cells["py-asyncpg"]
    # its other path read the same rows: the one explanation, made once, is that cell's too
    tcp = sqlite3.connect(store).execute("SELECT message FROM cells WHERE method = 'py-asyncpg' AND path = 'tcp'")
    assert tcp.fetchone()[0] == cells["py-asyncpg"].removeprefix("mismatch: ")


def test_a_dumped_value_is_the_canonical_encoding_made_readable():
    from accessbench.protocol.checksum import encode_value
    from accessbench.protocol.vectors import VALUE_CASES, native

    for name, value in VALUE_CASES:
        assert encode_value(native(typed(native(value)))) == encode_value(native(value)), name
