"""Exports of a stored run for other tools: JSON (the whole run, schema in docs/export.md)
and CSV (one row per cell, or per trial), and the report's files, every one a ``Format``
chosen by name (formats.py). Same numbers as the reports. Nothing heavy is imported here, so
the command line can list the formats without paying for numpy."""
