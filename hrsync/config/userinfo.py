"""What a config error may show of a URL: never its user-info.

A URL's `user:password@` is a credential, and so is a user name alone (an API key sent as
basic auth's user). Every problem the loader reports goes through `hide_userinfo`: the
URLs the config holds have their user-info replaced by `***` wherever a message quotes
them (found from the value itself, so a password holding an unencoded "/" or "@" is
hidden whole), and any other `scheme://user:password@` in a message is masked as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

# `scheme://USERINFO@` anywhere in a message, up to the last "@" before the path: a
# password holding an unencoded "@" is hidden whole, not up to its first "@".
_WITH_SCHEME = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^\s'\"/?#]+)@")
# `'user:password@host…'` quoted without a scheme (a URL missing its `https://`).
_WITHOUT_SCHEME = re.compile(r"(?P<head>['\"])(?P<info>[^\s'\"/?#@:]*:[^\s'\"/?#]*)@")
# User (no "/"), ":", a password up to the last "@" before any query: one holding both an
# unencoded "/" and "@" is hidden whole.
_USER_PASSWORD = re.compile(r"[^/?#@]*:[^?#]*@")


def userinfo(url: str) -> str | None:
    """The user-info of `url` (without its "@"), None when it has none. Of the readings
    of a URL with an unencoded "/" or "@" in its password (urllib's, SQLAlchemy's), the
    longest: the one that hides the most."""
    rest = url.split("://", 1)[1] if "://" in url else url
    netloc = re.split(r"[/?#]", rest, maxsplit=1)[0]
    spans = [netloc.rpartition("@")[0]] if "@" in netloc else []
    match = _USER_PASSWORD.match(rest)
    if match:
        spans.append(match.group(0)[:-1])
    return max(spans, key=len) if spans else None


def hide_userinfo(text: str, urls: Iterable[str] = ()) -> str:
    """`text` with the user-info of each of `urls`, and of any URL it quotes, as `***`.

    A database URL the state store already redacted (`hr:***@`, the role kept on
    purpose) stays as it is."""
    for url in urls:
        info = userinfo(url)
        if info and info != MASK and not info.endswith(f":{MASK}"):
            for form in (info, repr(info)[1:-1]):
                text = text.replace(f"{form}@", f"{MASK}@")
    return _WITHOUT_SCHEME.sub(_masked, _WITH_SCHEME.sub(_masked, text))


def _masked(match: re.Match[str]) -> str:
    info = match.group("info")
    if info == MASK or info.endswith(f":{MASK}"):
        return match.group(0)
    return f"{match.group('head')}{MASK}@"
