"""Whether the host pages out idle file pages on its own (env.page_cache): read from the
kernel's DAMON interface, stored with every run. Checked against sysfs trees of the two
filter semantics (before and after kernel 6.14) and against this host's own."""

from __future__ import annotations

from accessbench import env


def damon(root, action="pageout", age=12, aggr_us=5_000_000, filters=(), state="on", folder="ops_filters"):
    """A sysfs tree of one kdamond with one context and one scheme."""
    kdamond = root / "kernel/mm/damon/admin/kdamonds/0"
    context = kdamond / "contexts/0"
    scheme = context / "schemes/0"
    for path, text in [(kdamond / "state", state), (context / "monitoring_attrs/intervals/aggr_us", aggr_us),
                       (scheme / "action", action), (scheme / "access_pattern/age/min", age)]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{text}\n")
    for i, fields in enumerate(filters):
        (scheme / folder / str(i)).mkdir(parents=True)
        for name, value in fields.items():
            (scheme / folder / str(i) / name).write_text(f"{value}\n")
    return root


def test_a_pageout_scheme_is_named_with_the_pages_it_may_take_and_after_how_long_idle(tmp_path):
    unmapped_only = [{"type": "anon", "matching": "Y", "allow": "N"},
                     {"type": "unmapped", "matching": "Y", "allow": "Y"}]
    assert env.page_cache(str(damon(tmp_path / "a", filters=unmapped_only))) == \
        "DAMON pages out file pages no process maps idle ≥ 60 s"
    assert env.page_cache(str(damon(tmp_path / "b", age=3, aggr_us=100_000))) == "DAMON pages out memory idle ≥ 0.3 s"
    # before 6.14 a matching filter only excluded: anon matching, so file pages are what is left
    assert env.page_cache(str(damon(tmp_path / "c", filters=[{"type": "anon", "matching": "Y"}], folder="filters"))) \
        == "DAMON pages out file pages idle ≥ 60 s"


def test_a_host_whose_damon_is_off_or_does_something_else_pages_nothing_out(tmp_path):
    assert env.page_cache(str(tmp_path)) is None
    assert env.page_cache(str(damon(tmp_path / "off", state="off"))) is None
    assert env.page_cache(str(damon(tmp_path / "stat", action="stat"))) is None


def test_the_damon_reclaim_module_counts_as_well(tmp_path):
    params = tmp_path / "module/damon_reclaim/parameters"
    params.mkdir(parents=True)
    (params / "enabled").write_text("Y\n")
    (params / "min_age").write_text("120000000\n")
    assert env.page_cache(str(tmp_path)) == "damon_reclaim pages out memory idle ≥ 120 s"


def test_every_run_stores_what_this_host_does():
    assert env.environment()["page_cache"] == env.page_cache("/sys")
