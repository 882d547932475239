"""Conformance of the methods whose workers are scripts run by Debian's interpreters (PHP, Ruby,
Perl): in a module of their own, beside the compiled languages' (test_conformance.py) and the
other runtimes' (test_conformance_runtimes.py), so that --dist loadfile runs them at once."""

from __future__ import annotations

import pytest

from .test_conformance import SCRIPTS, check_language


@pytest.mark.server
@pytest.mark.parametrize("language", SCRIPTS)
def test_every_method_of_a_scripting_language_passes_conformance(language):
    check_language(language)
