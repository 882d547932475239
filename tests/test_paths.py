"""Path names: the proxied and netem forms, and errors that name the bad one."""

import re

import pytest

from accessbench.errors import InputError
from accessbench.paths import netem_missing, parse


def test_plain_paths_are_their_own_base():
    assert parse("unix").base == "unix" and not parse("tcp").proxied


@pytest.mark.parametrize("name, delay, jitter, bandwidth", [
    ("tcp+250us", 250, 0, None),
    ("tcp+1ms", 1000, 0, None),
    ("tcp+0us", 0, 0, None),
    ("tcp+1.5ms~50us", 1500, 50, None),
    ("tcp+100us@10mbit", 100, 0, 1_250_000),
    ("tcp+100us~5us@1MB", 100, 5, 1_000_000),
])
def test_a_proxied_path_carries_its_delay_jitter_and_bandwidth(name, delay, jitter, bandwidth):
    path = parse(name)
    assert path.proxied and path.base == "tcp"
    assert (path.delay_us, path.jitter_us, path.bandwidth) == (delay, jitter, bandwidth)


def test_netem_paths_parse_and_say_whether_the_kernel_has_netem():
    assert parse("netem:250us").base == "netem" and parse("netem:250us").delay_us == 250
    reason = netem_missing()
    assert reason is None or "netem" in reason


@pytest.mark.parametrize("name", ["tcp+", "tcp+250", "udp", "tcp+5s", "netem:"])
def test_a_malformed_path_is_an_input_error_naming_it(name):
    with pytest.raises(InputError, match=re.escape(f"--path {name}:")):
        parse(name)
