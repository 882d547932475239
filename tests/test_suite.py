"""Suite files: expansion, and errors that name file:line."""

import textwrap

import pytest

from accessbench.cli import main
from accessbench.errors import SuiteError
from accessbench.suite.loader import builtin_names, load, parse

BASE = """\
[suite]
name = "t"
seed = 7

[[tables]]
name = "t1"
rows = 10
columns = [
  { name = "id", type = "integer", gen = { kind = "seq" } },
  { name = "v",  type = "text",    gen = { kind = "text", pattern = "##" } },
]

[[steps]]
name = "sel"
kind = "exec"
sql = "SELECT v FROM t1 WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 10 }]
mode = "prepared"
iterations = 5
"""


def error_of(text: str) -> str:
    with pytest.raises(SuiteError) as e:
        parse(textwrap.dedent(text), "my.toml")
    return str(e.value)


def test_the_quick_suite_is_built_in_and_valid():
    assert "quick" in builtin_names()
    suite = load("quick")
    names = suite.step_names
    assert {"connect", "scan-6k", "scan-100k", "sel1-literal", "sel1-extended", "sel1-prepared", "ins1",
            "insb-10", "insb-100", "upd1", "upd10", "upd100"} <= set(names)
    webhits = suite.variants[0].tables[0]
    assert webhits.rows == 6071 and len(webhits.columns) == 8


def test_quick_mode_shrinks_iterations_but_keeps_rows():
    full, quick = load("quick"), load("quick", quick=True)
    assert quick.variants[0].steps[3].iterations == full.variants[0].steps[3].iterations // 10
    assert [t.rows for t in quick.variants[0].tables] == [t.rows for t in full.variants[0].tables]


def test_vary_expands_a_step_and_names_each_copy():
    text = BASE.replace('mode = "prepared"', 'mode = "${m}"\nvary = { m = ["literal", "prepared"] }')
    steps = parse(text, "x.toml").variants[0].steps
    assert [(s.name, s.mode) for s in steps] == [("sel[m=literal]", "literal"), ("sel[m=prepared]", "prepared")]


def test_parameters_make_one_variant_per_value_with_typed_substitution():
    text = BASE.replace("rows = 10", 'rows = "${n}"') + "\n[parameters]\nn = [10, 20]\n"
    suite = parse(text, "x.toml")
    assert [v.tables[0].rows for v in suite.variants] == [10, 20]
    assert [v.label for v in suite.variants] == ["n=10", "n=20"]


@pytest.mark.parametrize("change, line, fragment", [
    (("iterations = 5", "iterations = 5\nspeed = 3"), 20, "unknown key 'speed'"),
    (("iterations = 5", 'iterations = "many"'), 19, "iterations"),
    (("WHERE id = ?", "WHERE id = ? AND v = ?"), 16, "steps.0.sql: 2 '?' markers but 1 params"),
    (('kind = "text", pattern = "##"', 'kind = "lorem"'), 10, "unknown generator 'lorem'"),
    (("seed = 7", "seed = = 7"), 3, "not valid TOML"),
    (("hi = 10", "hi = 0"), 17, "hi (0) is below lo (1)"),
    (('pattern = "##"', 'pattern = "##", null = 1.5'), 10, "less than or equal to 1"),
], ids=["unknown key", "wrong type", "marker count", "unknown generator", "invalid TOML", "bad range", "bad null"])
def test_a_suite_error_names_the_file_and_line_where_it_was_written(change, line, fragment):
    message = error_of(BASE.replace(*change))
    assert message.startswith(f"my.toml:{line}:") and fragment in message


def test_the_cli_prints_one_line_and_exits_2_for_a_bad_suite(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE.replace("iterations = 5", "iterations = 0"))
    assert main(["--store", str(tmp_path / "s.db"), "run", "--suite", str(bad), "--target", "sqlite"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{bad}:19:" in err


@pytest.mark.parametrize("argv, fragment", [
    (["run", "--trials", "x"], "--trials"),
    (["run", "--target", "oracle"], "--target oracle"),
    (["run", "--method", "py-nothing"], "--method py-nothing"),
    (["run", "--suite", "nope"], "--suite nope"),
    (["show", "no-such-run"], "RUN no-such-run"),
])
def test_bad_options_give_one_line_and_exit_2(argv, fragment, tmp_path, capsys):
    from accessbench.store import Store

    Store(str(tmp_path / "s.db")).close()
    assert main(["--store", str(tmp_path / "s.db"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and fragment in err


def test_the_example_in_the_suite_docs_is_a_valid_suite():
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "suites.md").read_text()
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    suite = parse(example, "docs/suites.md")
    assert [v.label for v in suite.variants] == ["rows=1000", "rows=100000"]
    assert [s.name for s in suite.variants[0].steps] == ["get-literal", "get-extended", "get-prepared"]


def test_reading_commands_do_not_create_a_store(tmp_path, capsys):
    store = tmp_path / "none.db"
    assert main(["--store", str(store), "runs"]) == 0
    assert "no runs" in capsys.readouterr().out
    assert main(["--store", str(store), "show", "last"]) == 2
    assert not store.exists()


def test_a_path_no_target_offers_is_refused_with_the_paths_there_are(tmp_path, capsys):
    assert main(["--store", str(tmp_path / "s.db"), "run", "--target", "sqlite", "--path", "unix"]) == 2
    assert "--target sqlite: offers paths inproc, not unix" in capsys.readouterr().err
    assert main(["--store", str(tmp_path / "s.db"), "run", "--path", "carrier-pigeon"]) == 2
    assert "--path carrier-pigeon: expected inproc, unix, tcp, tcp+DELAY" in capsys.readouterr().err


def test_a_timestamp_generator_with_a_time_zone_is_refused():
    text = BASE.replace('gen = { kind = "seq" }', 'gen = { kind = "timestamp", start = "2001-01-01T00:00:00+02:00" }')
    assert "has a time zone" in error_of(text)


def test_the_s4_suite_names_its_paths_setup_and_the_study_figures():
    suite = load("s4-roundtrip", quick=True)
    assert suite.paths == ["unix", "tcp", "tcp+250us", "inproc"] and "ab_loop" in suite.setup["postgresql"][0]
    procedure = next(s for s in suite.variants[0].steps if s.name == "procedure")
    assert procedure.params[0].value == 2000  # the loop in the server scales with --quick too
    assert {f.published for f in suite.study.figures} >= {"147 µs", "615 µs", "49 s", "4.2×", "12.5×"}


def test_the_s5_suite_loads_ten_clients_for_fifteen_seconds_per_policy_and_scales_with_quick():
    full, quick = load("s5-connections"), load("s5-connections", quick=True)
    steps = {s.name: s for s in full.variants[0].steps}
    assert {n: (s.policy, s.clients, s.duration) for n, s in steps.items()} == {
        "per-request": ("per-request", 10, 15.0), "persistent": ("persistent", 10, 15.0),
        "pooled": ("pooled", 10, 15.0)}
    assert full.paths == ["unix", "tcp", "pooler"]
    assert all(s.duration == 1.5 for s in quick.variants[0].steps)
    assert {f.published for f in full.study.figures} >= {"64.54/s", "504.04/s", "7.8×"}


def test_a_step_path_that_is_no_path_is_refused_at_its_line():
    assert "steps.0.paths" in error_of(BASE.replace('iterations = 5', 'iterations = 5\npaths = ["unix", "tcp+fast"]'))
    assert "steps.0.paths" in error_of(BASE.replace('iterations = 5', 'iterations = 5\npaths = []'))


def test_load_settings_read_units_and_refuse_what_is_not_one():
    text = BASE.replace('iterations = 5', 'iterations = 5\nduration = "250ms"\nrate = "30/min"\nclients = 3')
    step = parse(text, "t.toml").variants[0].steps[0]
    assert (step.duration, step.rate, step.clients, step.loaded) == (0.25, 0.5, 3, True)
    assert "is not a rate like 200/s" in error_of(text.replace('"30/min"', '"fast"'))
    assert "is not a duration like 15s" in error_of(text.replace('"250ms"', '"soon"'))


def test_a_study_figure_must_name_a_step_of_the_suite():
    text = BASE + '\n[study]\ntitle = "t"\n[[study.figures]]\nlabel = "x"\npublished = "1 s"\nstep = "nope"\npath = "unix"\n'
    assert "no step 'nope' in the suite" in error_of(text)


def test_every_builtin_suite_loads_and_fits_the_limits_of_every_dbms():
    from accessbench.suite.limits import check_for_dbms

    for name in builtin_names():
        for quick in (False, True):
            suite = load(name, quick=quick)
            for dbms in ("postgresql", "mariadb", "sqlite"):
                check_for_dbms(suite, dbms)  # raises a SuiteError naming file:line


def test_the_docs_list_every_soft_limit_with_its_default():
    from pathlib import Path

    from accessbench.suite.limits import Limits

    doc = (Path(__file__).parent.parent / "docs" / "suites.md").read_text().split("## Limits", 1)[1]
    for key, field in Limits.model_fields.items():
        assert f"| `{key}` | {field.default:,} |" in doc, key


def test_a_soft_limit_names_itself_and_how_to_raise_it_and_the_override_is_checked():
    text = BASE.replace("iterations = 5", "iterations = 20_000_000")
    assert error_of(text) == ("my.toml:19: steps.0.iterations: 20,000,000 is above the limit of 10,000,000 per step "
                              "(raise it with [suite.limits] iterations = …)")
    raised = text.replace("seed = 7", "seed = 7\n\n[suite.limits]\niterations = 20_000_000")
    assert parse(raised, "x.toml").variants[0].steps[0].iterations == 20_000_000
    assert "a limit is a whole number" in error_of(raised.replace("iterations = 20_000_000\n", "iterations = 0\n", 1))


def test_a_suite_file_is_read_as_utf8_with_its_line_ends_as_before(tmp_path):
    from accessbench.suite.loader import read

    path = tmp_path / "crlf.toml"
    path.write_bytes(BASE.replace("\n", "\r\n").encode())
    assert read(path) == BASE  # as Path.read_text gave it: a stored run compares this text
    path.write_bytes(BASE.encode().replace(b'name = "t1"', b'name = "t\xe91"'))
    with pytest.raises(SuiteError, match=r"crlf.toml:6: not UTF-8: byte 0xe9 at column 10"):
        read(path)


def test_variants_and_steps_are_counted_before_anything_is_expanded():
    import time

    keys = ", ".join(f"k{i} = {list(range(100))}" for i in range(6))
    sql = "SELECT v FROM t1 WHERE id = ? -- " + "".join(f"${{k{i}}}" for i in range(6))
    vary = f'mode = "prepared"\nsql_for = {{ sqlite = "{sql}" }}\nvary = {{ {keys} }}'
    text = BASE.replace('mode = "prepared"', vary)
    start = time.monotonic()
    assert "1,000,000,000,000 steps is above the limit of 10,000" in error_of(text)
    assert time.monotonic() - start < 5  # counted, not expanded (expanding ate memory for ever)
