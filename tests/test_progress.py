"""Progress where no terminal is: a plain line every 10% of the run or 30 s, with a total that
never moves and the time left from the run's own pace (a fake clock: pure logic)."""

from __future__ import annotations

import io

from rich.console import Console

from accessbench.report.live import PlainProgress, progress_line


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _progress():
    out, clock = io.StringIO(), Clock()
    return PlainProgress(Console(file=out, width=200), clock), clock, out


def test_a_line_is_printed_every_tenth_of_the_run():
    progress, clock, out = _progress()
    progress.begin(100)
    for i in range(100):
        clock.now += 0.1
        progress.advance(f"cell {i}")
    progress.end()
    lines = out.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == [f"{p}%" for p in range(10, 101, 10)]
    assert lines[0] == "progress 10% (10 of 100) · 0:01 elapsed · about 0:09 left · cell 9"


def test_a_slow_run_prints_a_line_every_30_seconds_between_tenths():
    progress, clock, out = _progress()
    progress.begin(1000)
    for _ in range(3):
        clock.now += 31
        progress.advance("a long scan")
    assert len(out.getvalue().splitlines()) == 3


def test_the_time_left_is_the_runs_average_pace_applied_to_what_remains():
    assert progress_line(250, 1000, 60.0, "") == "progress 25% (250 of 1,000) · 1:00 elapsed · about 3:00 left"
    assert progress_line(1000, 1000, 3725.0, "") == "progress 100% (1,000 of 1,000) · 1:02:05 elapsed"


def test_executions_outside_the_total_move_the_description_but_not_the_count():
    progress, clock, out = _progress()
    progress.begin(10)
    progress.advance("java-pgjdbc · warmup 3 (JIT)", 0)
    clock.now += 40
    progress.advance("java-pgjdbc · warmup 4 (JIT)", 0)
    assert out.getvalue().splitlines() == ["progress 0% (0 of 10) · 0:40 elapsed · java-pgjdbc · warmup 4 (JIT)"]


def test_loaded_trials_are_counted_at_their_duration_not_at_the_pace_of_short_ones():
    progress, clock, out = _progress()
    progress.begin(20, fixed=(10, 150.0))  # ten short executions, then ten loaded trials of 15 s
    for i in range(10):
        progress.advance(f"short {i}")
        clock.now += 0.5
    progress.advance("loaded 0", 1, 15.0)
    assert progress.pace.left(clock.now) == 150.0  # what the short ones' pace alone would call 5 s
    clock.now += 16.0
    progress.advance("loaded 1", 1, 15.0)
    # one loaded trial took 16 s against its 15: the other 8 after this one at that stretch
    assert abs(progress.pace.left(clock.now) - 16.0 / 15.0 * 135.0) < 1e-9
    assert "about 2:24 left" in out.getvalue().splitlines()[-1]


def test_a_skipped_loaded_cell_takes_its_seconds_off_the_time_left():
    progress, clock, out = _progress()
    progress.begin(4, fixed=(4, 60.0))
    progress.advance("loaded 0", 1, 15.0)
    clock.now += 15.0
    progress.skip(3, 45.0)  # its cell failed: the rest will not run
    assert progress.pace.left(clock.now) == 0.0


def test_skipped_executions_take_their_count_off_what_is_left_without_hastening_the_pace():
    progress, clock, out = _progress()
    progress.begin(4)
    progress.advance("verify a")
    clock.now += 10.0
    progress.skip(2)  # a failed cell's trials: they take no time, and say nothing of the others'
    progress.advance("verify b")
    assert progress.pace.left(clock.now) == 10.0  # the one in flight, at the one ended's 10 s


def test_each_cells_trials_are_expected_at_what_its_own_last_one_took():
    progress, clock, out = _progress()
    progress.begin(6, cells={"fast": (2, None, "loopback"), "slow": (2, None, "10mbit")})  # a grid: loopback beside 10 Mbit/s
    for cell in ("fast", "slow"):
        progress.advance(f"{cell} · verify")
        clock.now += 2.0
    assert progress.pace.left(clock.now) == 4 * 2.0  # no trial yet: the verifications' pace stands in
    progress.advance("fast · trial 1", cell="fast")
    clock.now += 1.0
    progress.advance("slow · trial 1", cell="slow")
    clock.now += 100.0
    progress.advance("fast · trial 2", cell="fast")
    # fast's second (in flight) at 1 s, and slow's second at 100 s: the run's average (26 s) would say 52
    assert progress.pace.left(clock.now) == 101.0


def test_a_resumed_runs_cells_are_expected_at_what_their_stored_trials_took():
    progress, clock, out = _progress()
    progress.begin(4, cells={"fast": (1, 0.5, "loopback"), "slow": (1, 170.0, "10mbit"), "new": (1, None, "1gbit")})
    assert progress.pace.left(clock.now) is None  # the verification to come has no pace yet
    progress.advance("slow · verify")
    clock.now += 3.0
    progress.advance("fast · trial 1", cell="fast")
    # fast in flight at its 0.5 s, slow at its 170 s, and new, never timed, at their mean
    assert progress.pace.left(clock.now) == 0.5 + 170.0 + (0.5 + 170.0) / 2


def test_a_cell_not_yet_timed_is_expected_at_what_its_own_verification_took_where_that_read_the_step():
    progress, clock, out = _progress()
    progress.begin(7, cells={"loopback": (2, None, "a"), "10mbit": (2, None, "b"), "kept": (1, None, "c")})
    progress.advance("loopback · verify", verifies="loopback")
    clock.now += 1.0
    progress.advance("10mbit · verify", verifies="10mbit")
    clock.now += 170.0
    progress.advance("kept · verify")  # a resumed run's kept verification: it reads nothing
    clock.now += 0.5
    progress.advance("loopback · trial 1", cell="loopback")
    # loopback's two at its 1 s (one in flight), 10mbit's two at its 170 s, kept's one at the
    # mean of the cells timed so far (1 and 170)
    assert progress.pace.left(clock.now) == 2 * 1.0 + 2 * 170.0 + (1.0 + 170.0) / 2


def test_a_cell_never_timed_is_expected_at_what_its_kin_took_the_other_methods_on_its_link():
    progress, clock, out = _progress()
    cells = {("odbc", "tcp"): (1, 2.0, "tcp"), ("odbc", "10mbit"): (1, 170.0, "10mbit"),
             ("libpq", "10mbit"): (1, None, "10mbit")}
    progress.begin(4, cells=cells)  # a resumed grid: odbc's stored trials, libpq's none yet
    progress.advance("a verification that reads nothing")
    clock.now += 1.0
    progress.advance("odbc @ tcp · trial 2", cell=("odbc", "tcp"))
    # libpq at 10 Mbit/s at what odbc took there, not at the 86 s of every cell's mean
    assert progress.pace.left(clock.now) == 2.0 + 170.0 + 170.0
