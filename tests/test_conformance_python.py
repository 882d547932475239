"""Conformance of the Python methods, the catalog's most numerous: in a module of its own so
that they run beside the other languages' (test_conformance.py, test_conformance_runtimes.py)."""

from __future__ import annotations

import pytest

from .test_conformance import check_language


@pytest.mark.server
def test_every_python_method_passes_conformance():
    check_language("python")
