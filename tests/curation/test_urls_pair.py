"""``url_columns`` (one ``urlsplit`` per URL) pinned to ``normalize_url`` and ``domain_of`` applied apart."""

from __future__ import annotations

import random

import pandas as pd

from curation.ingest.urls import domain_of, normalize_url, url_columns

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
    assert cols["url_normalized"].tolist() == [normalize_url(u) for u in urls]
    assert cols["url_domain"].tolist() == [domain_of(u) for u in urls]
