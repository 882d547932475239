"""Generated columns kept between runs (data/kept.py): read back exactly as generated, made
anew when the spec or count changes, and made again when the kept file is damaged."""

from __future__ import annotations

from accessbench.data import kept
from accessbench.protocol import generators

SPEC = {"kind": "text", "pattern": "row-####", "seed": 7, "null": 0.1}


def test_a_kept_column_reads_back_the_values_the_generator_makes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    made = kept.column(SPEC, 500)
    assert made == list(generators.values(SPEC, 500))
    files = list((tmp_path / "accessbench" / "data").iterdir())
    assert len(files) == 1
    assert kept.column(SPEC, 500) == made  # read back this time
    assert list((tmp_path / "accessbench" / "data").iterdir()) == files


def test_another_count_or_seed_is_another_column(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    kept.column(SPEC, 500)
    assert kept.column(SPEC, 300) == list(generators.values(SPEC, 300))
    other = {**SPEC, "seed": 8}
    assert kept.column(other, 500) == list(generators.values(other, 500))
    assert len(list((tmp_path / "accessbench" / "data").iterdir())) == 3


def test_a_damaged_kept_file_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    kept.column(SPEC, 500)
    (file,) = (tmp_path / "accessbench" / "data").iterdir()
    file.write_bytes(b"not a pickle")
    assert kept.column(SPEC, 500) == list(generators.values(SPEC, 500))
    assert file.read_bytes() != b"not a pickle"


def test_a_column_longer_than_the_limit_is_generated_as_it_is_loaded_and_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(kept, "LONGEST", 100)
    assert list(kept.column(SPEC, 101)) == list(generators.values(SPEC, 101))
    assert not (tmp_path / "accessbench" / "data").exists()
