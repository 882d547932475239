"""The results store: every run, its environment, cells and trials. ``Store`` and
``StoredRun`` are imported on first use (they bring numpy), so that the command line can name
a store (store.backend) without paying for it."""

__all__ = ["Store", "StoredRun"]


def __getattr__(name: str):
    if name in __all__:
        from . import store

        return getattr(store, name)
    raise AttributeError(name)
