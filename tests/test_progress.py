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
