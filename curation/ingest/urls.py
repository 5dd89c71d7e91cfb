"""URL normalisation and domains, so the same page crawled twice (Common Crawl snapshots repeat
pages) is recognised by its URL.

Normal form: scheme and host lower-cased, ``www.`` dropped, default ports dropped, ``http`` and
``https`` folded to one, fragment dropped, percent-escapes of unreserved characters decoded,
tracking parameters (``utm_*``, ``fbclid``, ``gclid``, …) dropped and the other query parameters
sorted, an empty path written ``/``, a trailing slash kept (it can be another resource).

>>> normalize_url("HTTPS://www.Example.com:443/a%7Eb/?utm_source=x&b=2&a=1#top")
'example.com/a~b/?a=1&b=2'
>>> domain_of("https://news.example.co.uk/x")
'news.example.co.uk'
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import pandas as pd

_TRACKING = re.compile(r"^(utm_\w+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_ga|yclid|igshid|ref_src)$", re.I)
_UNRESERVED_ESCAPE = re.compile(r"%(2[DdEe]|5[Ff]|7[Ee]|[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9])")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _decode_unreserved(path: str) -> str:
    return _UNRESERVED_ESCAPE.sub(lambda m: unquote(m.group(0)), path)


def normalize_url(url: str | None) -> str | None:
    """The normal form of ``url`` (no scheme), or None for an empty or unparsable URL."""
    return _normal_and_domain(url)[0]


def domain_of(url: str | None) -> str | None:
    """The host of ``url``, lower-cased, without ``www.`` and port (None when there is none)."""
    return _normal_and_domain(url)[1]


#: Columns ingest adds to every document (null where a document has no URL).
URL_COLUMNS: dict[str, Any] = {"url_normalized": object, "url_domain": object}


def url_columns(urls: pd.Series) -> pd.DataFrame:
    """``url_normalized`` and ``url_domain`` for a column of URLs (None where there is no URL)."""
    pairs = [_normal_and_domain(u) for u in urls.tolist()]
    return pd.DataFrame(
        {"url_normalized": [p[0] for p in pairs], "url_domain": [p[1] for p in pairs]}, index=urls.index, dtype=object,
    )


def _normal_and_domain(url: Any) -> tuple[str | None, str | None]:
    """``(normalize_url(url), domain_of(url))`` from one ``urlsplit`` (half the parsing).

    >>> _normal_and_domain("https://www.News.Example.co.uk:8443/x?utm_source=a")
    ('news.example.co.uk:8443/x', 'news.example.co.uk')
    >>> _normal_and_domain("http://h:99999/"), _normal_and_domain("http://[::1"), _normal_and_domain(None)
    ((None, 'h'), (None, None), (None, None))
    """
    if not isinstance(url, str) or not url.strip():
        return None, None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None, None
    hostname = parts.hostname
    domain = hostname.rstrip(".").removeprefix("www.") if hostname else None
    try:
        port = parts.port
    except ValueError:
        return None, domain
    host = (hostname or "").rstrip(".")
    if not host:
        return None, domain
    host = host.removeprefix("www.")
    if port and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        host = f"{host}:{port}"
    path = _decode_unreserved(parts.path) or "/"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING.match(k)]
    q = urlencode(sorted(query)) if query else ""
    return f"{host}{path}" + (f"?{q}" if q else ""), domain
