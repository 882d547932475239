"""Target URLs, read so that their password never reaches a name, a message or the store.

A password may hold any character, escaped or not (``sec%ret`` is not valid percent-encoding
and drivers' own parsers quote the whole URL back when they refuse it), so the password is
found here first, by position, and every message about the URL is redacted with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote

from ..errors import InputError

HIDDEN = "***"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


@dataclass
class TargetURL:
    scheme: str
    user: str | None
    password: str | None
    host: str | None
    port: int | None
    database: str | None
    query: dict[str, str] = field(default_factory=dict)
    text: str = ""  # as given (holds the password: never shown)

    @property
    def shown(self) -> str:
        """The URL as written, its passwords as ***: for messages."""
        return masked(self.text)

    @property
    def name(self) -> str:
        """The target's name as reports and the store show it: no password, no query."""
        host = f"[{self.host}]" if self.host and ":" in self.host else quote(self.host or "", safe="/")
        return (f"{self.scheme}://{quote(self.user, safe='') + '@' if self.user else ''}{host}"
                f"{f':{self.port}' if self.port else ''}/{quote(self.database or '', safe='')}")

    def redact(self, message: str) -> str:
        return redact(message, self.text)


def _userinfo(text: str) -> tuple[int, int] | None:
    """Where the userinfo ``user[:password]`` lies in ``text``: up to the last '@' before the
    query (a password may hold '@', '/' or '?' unescaped; a query rarely holds '@')."""
    match = _SCHEME.match(text)
    if not match:
        return None
    start = match.end()
    head = text[start:].split("?", 1)[0]
    if "@" not in head:
        return None
    return start, start + head.rindex("@")


_QUERY_SECRET = re.compile(r"([?&](?:password|sslpassword)=)([^&#]*)", re.IGNORECASE)


def _password_spans(text: str) -> list[tuple[int, int]]:
    """Where passwords are written: after ``user:`` and in ``password=`` query values."""
    spans = []
    span = _userinfo(text)
    if span is not None:
        colon = text.find(":", span[0], span[1])
        if colon >= 0:
            spans.append((colon + 1, span[1]))
    start = span[1] if span else 0
    spans += [(start + m.start(2), start + m.end(2)) for m in _QUERY_SECRET.finditer(text[start:])]
    return spans


def masked(text: str) -> str:
    """``text`` with its passwords as ***; a text that is not a URL at all has any
    ``:secret@`` masked, in case it was meant as one."""
    if not _SCHEME.match(text):
        return re.sub(r":[^:@/]*@", ":" + HIDDEN + "@", text)
    for begin, end in reversed(_password_spans(text)):
        text = text[:begin] + HIDDEN + text[end:]
    return text


def redact(message: str, url: str) -> str:
    """``message`` with the URL's passwords (as written and as decoded) replaced by ***."""
    secrets = set()
    for begin, end in _password_spans(url):
        raw = url[begin:end]
        secrets.update({raw, unquote(raw), unquote(raw.replace("+", " "))})
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            message = message.replace(secret, HIDDEN)
    return message.replace(url, masked(url))


def parse(text: str, schemes: tuple[str, ...], option: str = "--target") -> TargetURL:
    """``scheme://[user[:password]@][host][:port][/database][?key=value&…]``; any flaw is one
    InputError naming the option and the URL without its password."""
    shown = masked(text)

    def bad(why: str) -> InputError:
        return InputError(f"{option} {shown}: {redact(why, text)}")

    match = _SCHEME.match(text)
    if not match or match.group(1).lower() not in schemes:
        raise bad(f"not a {' or '.join(s + '://' for s in schemes)} URL")
    span = _userinfo(text)
    user = password = None
    rest_start = match.end()
    if span is not None:
        info = text[span[0]: span[1]]
        user, _, secret = info.partition(":")
        password = unquote(secret) if ":" in info else None
        if "%" in user and not re.fullmatch(r"(?:[^%]|%[0-9A-Fa-f]{2})*", user):
            raise bad("the user name has a '%' that is not percent-encoding (write %25)")
        user = unquote(user) or None
        rest_start = span[1] + 1
    rest, _, query_text = text[rest_start:].partition("?")
    if "#" in query_text or "#" in rest:
        raise bad("a URL fragment ('#…') means nothing here")
    hostport, slash, database = rest.partition("/")
    host, port = hostport, None
    if hostport.startswith("["):  # [::1]:5432
        close = hostport.find("]")
        if close < 0:
            raise bad("an IPv6 address needs its closing ']'")
        host, after = hostport[1:close], hostport[close + 1:]
        if after and not after.startswith(":"):
            raise bad(f"unexpected {after!r} after the host")
        port_text = after[1:] if after else ""
    else:
        host, _, port_text = hostport.partition(":")
        if ":" in port_text:
            raise bad("more than one ':' in host:port (several hosts are not supported)")
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise bad(f"port {port_text!r} is not a number from 1 to 65535")
        port = int(port_text)
    if any(c in host for c in " ,/\\@"):
        raise bad(f"host {host!r} is not a host name or address")
    try:
        query = dict(parse_qsl(query_text, keep_blank_values=True, strict_parsing=bool(query_text)))
    except ValueError:
        raise bad("the query part is not key=value pairs joined by '&'") from None
    database = unquote(database) if slash else None
    if database and "/" in database:
        raise bad(f"database {database!r} has a '/'")
    return TargetURL(match.group(1).lower(), user, password, unquote(host) or None, port or None,
                     database or None, query, text)
