"""``url_columns``, ``normalize_url`` and ``domain_of`` (one ``urlsplit`` per URL) pinned to the two functions as they were written apart."""

from __future__ import annotations

import random
from urllib.parse import parse_qsl, urlencode, urlsplit

import pandas as pd

from curation.ingest.urls import _DEFAULT_PORTS, _TRACKING, _decode_unreserved, domain_of, normalize_url, url_columns


# the two functions as they were written apart (one urlsplit each), the reference
def reference_normalize_url(url: str | None) -> str | None:
    """The normal form of ``url`` (no scheme), or None for an empty or unparsable URL."""
    if not isinstance(url, str) or not url.strip():
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return None
    host = host.removeprefix("www.")
    if port and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        host = f"{host}:{port}"
    path = _decode_unreserved(parts.path) or "/"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING.match(k)]
    q = urlencode(sorted(query)) if query else ""
    return f"{host}{path}" + (f"?{q}" if q else "")


def reference_domain_of(url: str | None) -> str | None:
    """The host of ``url``, lower-cased, without ``www.`` and port (None when there is none)."""
    if not isinstance(url, str) or not url.strip():
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".").removeprefix("www.") if host else None

FIXED = [
    None, "", "   ", 3, float("nan"), "not a url", "http://[::1", "http://[::1]:8080/a", "http://h:99999/", "http://h:-1/",
    "http://h:abc/", "http://./", "http://www./", "http://www.www.a.org", "HTTPS://WWW.A.ORG:443/", "http://a.org:80",
    "https://a.org:80/x", "ftp://a.org/x", "//a.org/x", "a.org/x", "mailto:x@a.org", "http://user:pw@WWW.a.org:81/p?q#f",
    "https://a.org/p?utm_source=x&b=2&a=1&fbclid=z#top", "https://a.org/a%7Eb%2f%41?x=%20", "https://a.org/?", "https://a.org?",
    " https://a.org/x ", "http://a.org./", "http://例子.测试/路径", "http://a.org/\u00e9", "http://a.org\n/x", "http://[v1.x]/",
]
PIECES = ["http", "https", "HTTP", "://", "www.", "WWW.", "a", "b.org", ".", ":", "443", "80", "99999", "-", "[", "]", "::1",
          "/", "?", "&", "=", "#", "%7E", "%41", "%2F", "utm_x", "fbclid", "@", " ", "\t", "é", "例"]


def test_url_columns_match_the_two_functions() -> None:
    rng = random.Random(11)
    urls = FIXED + ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    urls += ["http://" + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 10))) for _ in range(3000)]
    cols = url_columns(pd.Series(urls, dtype=object, index=range(10, 10 + len(urls))))
    assert list(cols.index) == list(range(10, 10 + len(urls)))
    assert cols["url_normalized"].tolist() == [reference_normalize_url(u) for u in urls]
    assert cols["url_domain"].tolist() == [reference_domain_of(u) for u in urls]
    assert [normalize_url(u) for u in urls] == cols["url_normalized"].tolist()
    assert [domain_of(u) for u in urls] == cols["url_domain"].tolist()
