"""Associations: tables that reference one another, load steps that read a parent's rows with
its children and grandchildren, and the statements a driver runs by hand for each strategy."""

import sqlite3

import pytest

from accessbench.errors import SuiteError
from accessbench.suite import association
from accessbench.suite.loader import load, parse
from accessbench.suite.message import step_message

FAMILY = """\
[suite]
name = "family"
seed = 3

[[tables]]
name = "parents"
rows = 4
primary_key = ["id"]
columns = [
  { name = "id",   type = "integer", gen = { kind = "seq", start = 1 } },
  { name = "name", type = "text",    gen = { kind = "text", pattern = "p##" } },
]

[[tables]]
name = "kids"
rows = 8
primary_key = ["id"]
columns = [
  { name = "id",        type = "integer", gen = { kind = "seq", start = 1 } },
  { name = "parent_id", type = "integer", gen = { kind = "seq", start = 1, div = 2 }, references = "{ref}" },
]

[[steps]]
name = "family"
kind = "load"
sql = "SELECT * FROM parents WHERE id <= ?"
params = [{{ kind = "const", value = 3 }}]
include = ["kids"]
load = "selectin"
iterations = 2
"""


def family(ref: str = "parents.id") -> str:
    return FAMILY.replace("{ref}", ref).replace("{{", "{").replace("}}", "}")


def error_of(text: str) -> str:
    with pytest.raises(SuiteError) as e:
        parse(text, "my.toml")
    return str(e.value)


def test_a_reference_must_name_another_tables_one_column_primary_key_at_its_line():
    message = error_of(family("parents.name"))
    assert message.startswith("my.toml:") and "name is not parents's primary key (id)" in message
    assert "no table 'nobody'" in error_of(family("nobody.id"))


def test_a_load_step_needs_children_that_reference_the_rows_above_them():
    message = error_of(family("kids.id"))  # kids refer to themselves, not to their parents
    assert "kids needs exactly one column with references = \"parents.…\"" in message


def test_a_load_step_reads_whole_parents_and_names_a_strategy():
    assert "reads every column of parents" in error_of(family().replace("SELECT * FROM parents", "SELECT id FROM parents"))
    assert "load = lazy, joined or selectin" in error_of(family().replace('load = "selectin"\n', ""))
    assert "apply to load steps only" in error_of(family().replace('kind = "load"', 'kind = "scan"'))


def test_the_load_message_gives_each_level_its_entity_and_the_drivers_statements_quoted_for_the_dbms():
    suite = parse(family(), "my.toml")
    variant = suite.variants[0]
    message = step_message(variant.steps[0], "mariadb", suite.seed, variant.tables)
    level = message["load"]["levels"][0]
    assert level["table"] == "kids" and level["column"] == "parent_id" and level["parent_column"] == "id"
    assert level["one"] == "SELECT `id`, `parent_id` FROM `kids` WHERE `parent_id` = ?"
    assert level["in"] == ["SELECT `id`, `parent_id` FROM `kids` WHERE `parent_id` IN (", ")"]
    assert message["load"]["joined"].startswith("SELECT p0.`id`, p0.`name`, p1.`id`, p1.`parent_id` FROM (SELECT * FROM ")
    postgres = step_message(variant.steps[0], "postgresql", suite.seed, variant.tables)["load"]["levels"][0]
    assert postgres["one"] == 'SELECT "id", "parent_id" FROM "kids" WHERE "parent_id" = ?'


def test_every_entity_is_read_once_whatever_the_strategy_on_a_real_sqlite():
    suite = parse(family(), "my.toml")
    variant = suite.variants[0]
    message = step_message(variant.steps[0], "sqlite", suite.seed, variant.tables)
    db = sqlite3.connect(":memory:")
    db.executescript("CREATE TABLE parents (id INTEGER PRIMARY KEY, name TEXT);"
                     "CREATE TABLE kids (id INTEGER PRIMARY KEY, parent_id INTEGER);"
                     "INSERT INTO parents VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd');"
                     "INSERT INTO kids VALUES (1, 1), (2, 1), (3, 2), (4, 4);")
    query = lambda sql, params=(): db.execute(sql, params).fetchall()  # noqa: E731
    found = association.entities(query, "SELECT * FROM parents WHERE id <= ?", (3,), ["id", "name"], message["load"])
    assert sorted(found, key=repr) == sorted([(1, "a"), (2, "b"), (3, "c"), (1, 1), (2, 1), (3, 2)], key=repr)
    joined = query(message["load"]["joined"], (3,))
    assert len(joined) == 4 and (3, "c", None, None) in joined  # a parent without children: NULLs


def test_the_orm_suite_loads_100_users_with_10_posts_and_10_comments_each_by_every_strategy():
    suite = load("orm")
    steps = {s.name: s for s in suite.variants[0].steps}
    assert {steps[f"load-{s}"].load for s in ("lazy", "joined", "selectin")} == {"lazy", "joined", "selectin"}
    assert steps["load-lazy"].include == ["posts", "comments"]
    assert {s for s in steps if s.startswith("trivial-")} == {f"trivial-{n}-{mode}" for n in (1, 10, 100, 1000, 10000)
                                                              for mode in ("literal", "extended", "prepared")}
    assert {s for s in steps if s.startswith("insert-")} == {f"insert-{n}" for n in (1, 10, 25, 50, 100)}
