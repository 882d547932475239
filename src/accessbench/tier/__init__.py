"""The web tier: a tier method runs a driver inside an app server's pages, under HTTP load
from a real load generator (docs/tier.md). Its worker speaks the ordinary worker protocol
(protocol/PROTOCOL.md): it starts the app server at ``open``, answers a verification pass by
requesting the operation page's verify form, and a loaded trial by running the load
generator against the page and reading what it prints. One module per concern:

- ``methods``: the tier methods (driver as a page uses it, its stacks and settings)
- ``servers``: the app servers (Apache with mod_php or PHP-FPM, gunicorn, Node's http)
- ``loadgen``: the load generators (ab, wrk) and what their output says
- ``host``: the worker's message loop
"""
