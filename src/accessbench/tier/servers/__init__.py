"""The app servers, one module per kind; ``SERVERS`` by the name a method's ``server`` setting gives."""

from .apache import Fpm, ModPhp
from .base import AppServer, ServerFailed
from .node import NodeHttp
from .python import Gunicorn

SERVERS: dict[str, type[AppServer]] = {s.name: s for s in (ModPhp, Fpm, Gunicorn, NodeHttp)}

__all__ = ["SERVERS", "AppServer", "ServerFailed"]
