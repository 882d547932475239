"""The app servers, one module per kind; ``SERVERS`` by the name a method's ``server`` setting gives."""

from .apache import Fpm, ModPhp
from .base import AppServer, ServerFailed
from .node import NodeHttp
from .puma import Puma
from .python import Gunicorn
from .starman import Starman

SERVERS: dict[str, type[AppServer]] = {s.name: s for s in (ModPhp, Fpm, Gunicorn, NodeHttp, Starman, Puma)}

__all__ = ["SERVERS", "AppServer", "ServerFailed"]
