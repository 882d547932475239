"""The protocol's reference pieces: fixed vectors that every language must reproduce."""

import datetime as dt
import decimal

import pytest

from accessbench.protocol import generators, sqltext
from accessbench.protocol.checksum import Checksum, encode_value
from accessbench.protocol.prng import SplitMix64, derive_seed, fnv1a64


def test_splitmix64_matches_the_published_sequence_for_seed_zero():
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_fnv1a64_matches_the_reference_vectors():
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


def test_derived_seeds_differ_per_name_and_repeat_per_name():
    assert derive_seed(1, "table", "t", "a") == derive_seed(1, "table", "t", "a")
    assert derive_seed(1, "table", "t", "a") != derive_seed(1, "table", "t", "b")


def test_seq_counts_with_step_div_and_mod():
    spec = {"kind": "seq", "start": 0, "div": 10, "mod": 10}
    assert list(generators.values(spec, 25))[9:13] == [0, 1, 1, 1]
    assert list(generators.values({"kind": "seq", "start": 5, "step": 2}, 3)) == [5, 7, 9]


def test_uniform_stays_in_range_and_repeats_for_the_same_seed():
    spec = {"kind": "uniform", "lo": 3, "hi": 5, "seed": 42}
    first = list(generators.values(spec, 200))
    assert set(first) == {3, 4, 5}
    assert first == list(generators.values(spec, 200))


def test_text_pattern_fills_digits_and_letters_and_keeps_the_rest():
    (value,) = generators.values({"kind": "text", "pattern": "ab-##??", "seed": 1}, 1)
    assert value[:3] == "ab-" and value[3:5].isdigit() and value[5:].isalpha() and value[5:].islower()


def test_timestamp_series_steps_from_its_start():
    spec = {"kind": "timestamp", "start": "2001-01-01T00:00:00", "step_us": 1_500_000}
    assert list(generators.values(spec, 2)) == [dt.datetime(2001, 1, 1), dt.datetime(2001, 1, 1, 0, 0, 1, 500000)]


def test_null_fraction_gives_about_that_share_of_nulls():
    values = list(generators.values({"kind": "const", "value": 1, "null": 0.25, "seed": 9}, 4000))
    share = values.count(None) / len(values)
    assert 0.2 < share < 0.3 and set(values) == {None, 1}


def test_checksum_ignores_row_order_but_not_values():
    a, b, c = Checksum(), Checksum(), Checksum()
    a.add_rows([(1, "x"), (2, "y")])
    b.add_rows([(2, "y"), (1, "x")])
    c.add_rows([(1, "x"), (2, "z")])
    assert a.hexdigest() == b.hexdigest() != c.hexdigest()
    assert a.rows == 2


def test_canonical_encoding_tells_types_apart():
    assert encode_value(1) != encode_value(True) != encode_value(1.0)
    assert encode_value("1") != encode_value(b"1")
    assert encode_value(None) == b"N"
    assert encode_value(decimal.Decimal("1E+2")) == encode_value(decimal.Decimal("100"))
    aware = dt.datetime(2001, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert encode_value(aware) == encode_value(dt.datetime(2001, 1, 1))


def test_markers_inside_strings_identifiers_and_comments_are_not_counted():
    sql = "SELECT '?', \"a?\" FROM t -- ?\nWHERE a = ? /* ? */ AND b = ?"
    assert sqltext.count_markers(sql) == 2
    assert sqltext.convert(sql, "numeric").endswith("a = $1 /* ? */ AND b = $2")


def test_format_paramstyle_doubles_percent_signs():
    assert sqltext.convert("SELECT 1 % 2, ?", "format") == "SELECT 1 %% 2, %s"
    assert sqltext.convert("WHERE a = ? AND b = ?", "named") == "WHERE a = :p1 AND b = :p2"


def test_inline_quotes_text_and_formats_timestamps():
    sql = sqltext.inline("INSERT INTO t VALUES (?, ?, ?, ?)", [1, "it's", None, dt.datetime(2001, 2, 3, 4, 5, 6)], "postgresql")
    assert sql == "INSERT INTO t VALUES (1, 'it''s', NULL, '2001-02-03 04:05:06')"


def test_inline_refuses_a_wrong_number_of_values():
    with pytest.raises(ValueError):
        sqltext.inline("SELECT ?", [], "sqlite")
