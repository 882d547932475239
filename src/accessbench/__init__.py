"""accessbench: what a database access method really costs."""

__version__ = "0.1.0"
