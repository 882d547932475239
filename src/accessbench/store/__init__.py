"""The results store: every run, its environment, cells and trials."""

from .store import Store, StoredRun

__all__ = ["Store", "StoredRun"]
