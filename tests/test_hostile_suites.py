"""Hostile and pathological suites: each is one suite error (file:line, exit 2) before anything
runs. The corpus is tests/hostile/: one suite per case, its first line saying what it tries
and ``# expect: <fragment of the error>``; ``# <-`` ends the line the error must name;
``# make: directory`` or ``# make: pad N`` has the test make the file (a directory, or the
suite padded to N bytes) instead of keeping it in the tree."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from accessbench.errors import SuiteError
from accessbench.suite.limits import DBMS_LIMITS, check_for_dbms
from accessbench.suite.loader import parse

from . import forked_cli
from .conftest import SCRATCH, accessbench

CORPUS = sorted((Path(__file__).parent / "hostile").iterdir())
MARK = b"# <-"


def _case(file: Path) -> dict:
    data = file.read_bytes()
    first = data.split(b"\n", 1)[0].decode()
    make = re.search(rb"^# make: (.*)$", data, re.M)
    marked = [n for n, line in enumerate(data.split(b"\n"), start=1) if line.rstrip().endswith(MARK)]
    return {"data": data, "tries": first.split("# expect:")[0].strip("# "), "make": make and make.group(1).decode(),
            "expect": re.search(r"# expect: (.+)$", first).group(1).strip(), "line": marked[0] if marked else None}


def _suite_file(file: Path, case: dict, folder: Path) -> Path:
    """The path to give --suite: the corpus file itself, or what its `# make:` says."""
    if not case["make"]:
        return file
    path = folder / file.name
    if case["make"] == "directory":
        path.mkdir()
    else:  # "pad N": the suite followed by comment lines up to N bytes
        size = int(case["make"].split()[1])
        path.write_bytes(case["data"] + b"# padding\n" * ((size - len(case["data"])) // 10 + 1))
    return path


def _command(file: Path, folder: Path, store: Path) -> tuple[Path, list[str]]:
    path = _suite_file(file, _case(file), folder)
    return path, ["--store", str(store), "run", "--suite", str(path), "--target", "sqlite", "--precision", "0"]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess | Exception]]:
    """Every case run by the real CLI, each in a process of its own forked from one that imported
    accessbench once (tests/forked_cli.py: the imports were most of each case's time); a hang is
    ended after 60 s and reported by the case's own test."""
    folder, store = tmp_path_factory.mktemp("hostile"), tmp_path_factory.mktemp("store") / "s.db"
    commands = [_command(file, folder, store) for file in CORPUS]
    answers = forked_cli.run_all([{"args": args, "cwd": SCRATCH, "timeout": 60} for _, args in commands])
    return {file.name: (path, answer) for file, (path, _), answer in zip(CORPUS, commands, answers)}


@pytest.mark.parametrize("name", ["001-toml-syntax-error.toml", "010-huge-file.toml"])
def test_a_forked_cli_answers_a_hostile_suite_as_its_own_process_does(name, tmp_path):
    # the corpus runs forked from one interpreter; these cases are run both ways, byte for byte
    file = next(f for f in CORPUS if f.name == name)
    path, args = _command(file, tmp_path, tmp_path / "s.db")
    own = accessbench(*args, timeout=60)
    (forked,) = forked_cli.run_all([{"args": args, "cwd": SCRATCH, "timeout": 60}])
    assert (forked.returncode, forked.stdout, forked.stderr) == (own.returncode, own.stdout, own.stderr)
    assert own.returncode == 2


def test_the_corpus_holds_at_least_seventy_cases_each_saying_what_it_tries_and_expects():
    assert len(CORPUS) >= 70
    for file in CORPUS:
        case = _case(file)
        assert file.suffix in (".toml", ".bin") and re.match(r"\d{3}-[a-z0-9-]+$", file.stem), file.name
        assert len(case["tries"]) > 10 and case["expect"], file.name


@pytest.mark.parametrize("file", CORPUS, ids=[f.stem for f in CORPUS])
def test_a_hostile_suite_is_one_line_and_exit_2(file, outcomes):
    case = _case(file)
    path, result = outcomes[file.name]
    assert not isinstance(result, Exception), f"{file.name} ran for more than 60 s"
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    where = f"accessbench: {path}:{case['line']}:" if case["line"] else f"accessbench: {path}:"
    assert lines[0].startswith(where), (where, lines[0])
    assert case["expect"] in lines[0], (case["expect"], lines[0])
    assert result.stdout.strip() == ""  # nothing started, nothing measured


# check_for_dbms: what each DBMS itself refuses, on a suite that parse() accepts.

SUITE = """\
[suite]
name = "limits"

[[tables]]
name = "t"
rows = 10
primary_key = ["id"]
columns = [
  { name = "id", type = "integer", gen = { kind = "seq" } },
  { name = "v",  type = "text",    gen = { kind = "text", pattern = "##" } },
]

[[steps]]
name = "get"
kind = "exec"
sql = "SELECT v FROM t WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 10 }]
mode = "prepared"
iterations = 5
"""


def refusal(text: str, dbms: str) -> str | None:
    """check_for_dbms's message for the suite on ``dbms``, None when it passes."""
    suite = parse(text, "limits.toml")
    try:
        check_for_dbms(suite, dbms)
    except SuiteError as e:
        return str(e)
    return None


def test_char_300_is_fine_on_postgresql_and_sqlite_but_above_mariadbs_char_limit():
    text = SUITE.replace('type = "text",    gen = { kind = "text", pattern = "##" }',
                         'type = "char(300)", gen = { kind = "text", pattern = "##" }')
    assert refusal(text, "postgresql") is None and refusal(text, "sqlite") is None
    assert refusal(text, "mariadb") == ("limits.toml:10: tables.0.columns.1: char(300): 300 characters is above "
                                        "MariaDB's limit of 255 for char")


def test_a_64_character_name_fails_on_postgresql_passes_on_mariadb_and_65_fails_to_parse():
    text = SUITE.replace('name = "t"', f'name = "{"t" * 64}"').replace("FROM t ", f"FROM {'t' * 64} ")
    assert "limits.toml:5: tables.0.name: table name" in refusal(text, "postgresql")
    assert "PostgreSQL's limit of 63" in refusal(text, "postgresql")
    assert refusal(text, "mariadb") is None and refusal(text, "sqlite") is None
    with pytest.raises(SuiteError, match="65 characters, above any DBMS's limit of 64"):
        parse(text.replace("t" * 64, "t" * 65), "limits.toml")


def test_an_index_name_of_64_characters_is_postgresqls_problem_only():
    column = "c" * 58  # t_ + 58 + _idx = 64
    text = SUITE.replace('{ name = "v",  type = "text"', f'{{ name = "{column}",  type = "varchar(20)"').replace(
        'primary_key = ["id"]', f'primary_key = ["id"]\nindexes = [["{column}"]]')
    text = text.replace("SELECT v FROM", f"SELECT {column} FROM")
    assert "tables.0.indexes.0: index name" in refusal(text, "postgresql")
    assert refusal(text, "mariadb") is None


def test_an_override_in_suite_limits_lets_200_million_rows_through():
    big = SUITE.replace("rows = 10", "rows = 200_000_000")
    with pytest.raises(SuiteError, match=r"limits.toml:6: tables.0.rows: 200,000,000 rows is above the limit of "
                                         r"100,000,000 per table \(raise it with \[suite.limits\] rows = …\)"):
        parse(big, "limits.toml")
    raised = big.replace('name = "limits"', 'name = "limits"\n\n[suite.limits]\nrows = 250_000_000')
    assert parse(raised, "limits.toml").variants[0].tables[0].rows == 200_000_000
    assert refusal(raised, "postgresql") is None


def test_mariadb_refuses_a_row_wider_than_65535_bytes_of_utf8mb4():
    columns = "".join(f'  {{ name = "c{i}", type = "varchar(1000)", gen = {{ kind = "const", value = "x" }} }},\n'
                      for i in range(17))  # 17 × 4,002 bytes = 68,034
    text = SUITE.replace("]\n\n[[steps]]", columns + "]\n\n[[steps]]")
    assert refusal(text, "postgresql") is None
    assert "tables.0.columns: a row of 68,0" in refusal(text, "mariadb")
    assert "above MariaDB's limit of 65,535" in refusal(text, "mariadb")
    fewer = text.replace('  { name = "c16", type = "varchar(1000)", gen = { kind = "const", value = "x" } },\n', "")
    assert refusal(fewer, "mariadb") is None  # 16 × 4,002 + the rest fits


def test_mariadb_keys_text_columns_only_by_prefix_and_myisam_keys_are_1000_bytes():
    text_key = SUITE.replace('primary_key = ["id"]', 'primary_key = ["id"]\nindexes = [["v"]]')
    assert "tables.0.indexes.0: v is text" in refusal(text_key, "mariadb")
    assert refusal(text_key, "postgresql") is None
    wide = SUITE.replace('type = "text",    gen', 'type = "varchar(255)", gen').replace(
        'primary_key = ["id"]', 'primary_key = ["id"]\nengine = "MyISAM"\nindexes = [["v"]]')
    assert "above MyISAM's limit of 1,000" in refusal(wide, "mariadb")  # 255 × 4 + 2
    assert refusal(wide.replace('"MyISAM"', '"InnoDB"'), "mariadb") is None


def test_decimal_precision_and_scale_follow_each_dbms():
    text = SUITE.replace('type = "text",    gen = { kind = "text", pattern = "##" }',
                         'type = "numeric(66,2)", gen = { kind = "uniform", lo = 1, hi = 10 }')
    assert "precision 66 is above MariaDB's limit of 65" in refusal(text, "mariadb")
    assert refusal(text, "postgresql") is None
    scale = text.replace("numeric(66,2)", "numeric(60,39)")
    assert "scale 39 is above MariaDB's limit of 38" in refusal(scale, "mariadb")


def many_params(step: str, n: int) -> str:
    """The step reading ``n`` ids at once: n markers and n params."""
    params = ", ".join(['{ kind = "const", value = 1 }'] * n)
    return step.replace("WHERE id = ?", "WHERE id IN (" + ", ".join(["?"] * n) + ")").replace(
        'params = [{ kind = "uniform", lo = 1, hi = 10 }]', f"params = [{params}]")


def test_a_statement_with_more_parameters_than_sqlite_binds_is_refused_there_only():
    n = DBMS_LIMITS["sqlite"].markers + 1
    text = many_params(SUITE, n)
    text = text.replace('name = "limits"', 'name = "limits"\n\n[suite.limits]\nfile_bytes = 4_000_000')
    assert f"steps.0.params: {n:,} parameters is above SQLite's limit of 32,766" in refusal(text, "sqlite")
    assert refusal(text, "postgresql") is None
    assert refusal(text.replace('mode = "prepared"', 'mode = "literal"'), "sqlite") is None  # literals bind nothing


def test_mariadb_has_no_datetime_before_the_year_1000():
    text = SUITE.replace('type = "text",    gen = { kind = "text", pattern = "##" }',
                         'type = "timestamp", gen = { kind = "timestamp", start = "0999-12-31T00:00:00" }')
    assert "before MariaDB's first timestamp, 1000-01-01" in refusal(text, "mariadb")
    assert refusal(text, "postgresql") is None


def test_too_many_columns_for_innodb_are_fine_for_myisam_and_refused_by_postgresql():
    columns = "".join(f'  {{ name = "c{i}", type = "integer", gen = {{ kind = "const", value = 1 }} }},\n'
                      for i in range(1100))
    text = SUITE.replace("]\n\n[[steps]]", columns + "]\n\n[[steps]]")
    assert "1,102 columns is above InnoDB's limit of 1,017" in refusal(text, "mariadb")
    assert refusal(text.replace('primary_key = ["id"]', 'primary_key = ["id"]\nengine = "Aria"'), "mariadb") is None
    assert refusal(text, "postgresql") is None  # 1,102 ≤ 1,600
    assert refusal(text, "sqlite") is None      # ≤ 2,000


def test_a_dbms_refusal_names_the_line_of_the_step_it_came_from_after_vary():
    n = DBMS_LIMITS["sqlite"].markers + 1
    tables, step = SUITE.split("[[steps]]\n")
    step = many_params(step, n)
    step = step.replace('mode = "prepared"', 'mode = "${m}"\nvary = { m = ["literal", "prepared"] }')
    scan = 'name = "first"\nkind = "scan"\nsql = "SELECT * FROM t"\niterations = 1\n\n'
    text = tables.replace('name = "limits"', 'name = "limits"\n\n[suite.limits]\nfile_bytes = 4_000_000')
    text += "[[steps]]\n" + scan + "[[steps]]\n" + step
    line = next(n for n, row in enumerate(text.split("\n"), start=1) if row.startswith("params = ["))
    assert refusal(text, "sqlite").startswith(f"limits.toml:{line}: steps.1.params: {n:,} parameters")


def test_a_suite_the_chosen_dbms_would_refuse_is_refused_in_one_line_before_any_server_starts(tmp_path):
    suite = tmp_path / "wide.toml"
    suite.write_text('[suite]\nname = "wide"\n\n[[tables]]\nname = "t"\nrows = 1\n'
                     'columns = [{ name = "c", type = "char(300)", gen = { kind = "const", value = "x" } }]\n\n'
                     '[[steps]]\nname = "s"\nkind = "scan"\nsql = "SELECT c FROM t"\niterations = 1\n')
    store = tmp_path / "s.db"
    fine = accessbench("--store", str(store), "run", "--suite", str(suite), "--target", "sqlite", "--no-report",
                       "--trials", "1", "--warmup", "0")
    assert fine.returncode == 0, fine.stderr[-2000:]  # SQLite takes char(300)
    store.unlink()
    refused = accessbench("--store", str(store), "run", "--suite", str(suite), "--target", "mariadb,sqlite")
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"accessbench: {suite}:7: ") and "255" in lines[0], lines
    assert not store.exists()  # nothing started, nothing stored
