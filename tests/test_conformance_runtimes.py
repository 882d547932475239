"""Conformance of the methods whose workers run on a runtime (Java, Node.js): beside the other
languages' (test_conformance.py, test_conformance_scripts.py), in a module of its own so that
they run at once."""

from __future__ import annotations

import pytest

from .test_conformance import ON_RUNTIMES, check_language


@pytest.mark.server
@pytest.mark.parametrize("language", ON_RUNTIMES)
def test_every_method_on_a_runtime_passes_conformance(language):
    check_language(language)
