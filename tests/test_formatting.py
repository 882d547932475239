"""Figures as text: three significant digits, never an exponent."""

from __future__ import annotations

import pytest

from accessbench import formatting as fmt


@pytest.mark.parametrize("nbytes, text", [
    (None, "—"), (0, "0 B"), (999, "999 B"), (1000, "0.977 KiB"), (1024, "1 KiB"),
    (1010 * 2**20, "0.986 GiB"), (1023 * 2**20, "0.999 GiB"), (11.1 * 2**20, "11.1 MiB"), (3.04 * 2**30, "3.04 GiB"),
])
def test_a_size_takes_the_larger_unit_before_it_would_need_four_digits(nbytes, text):
    assert fmt.size(nbytes) == text
