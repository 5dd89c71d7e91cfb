"""URL normal form and domains: spellings of one page meet, other pages stay apart."""

from __future__ import annotations

import pandas as pd
import pytest

from curation.ingest.urls import domain_of, normalize_url, url_columns


@pytest.mark.parametrize("a, b", [
    ("https://www.example.com/a/b?x=1&y=2", "http://example.com/a/b?y=2&x=1"),
    ("https://example.com", "https://EXAMPLE.com/"),
    ("https://example.com:443/p#section", "https://example.com/p"),
    ("https://example.com/p?utm_source=feed&utm_medium=rss", "https://example.com/p"),
    ("https://example.com/a%7Eb", "https://example.com/a~b"),
])
def test_spellings_of_one_page_normalise_alike(a: str, b: str) -> None:
    assert normalize_url(a) == normalize_url(b)


@pytest.mark.parametrize("a, b", [
    ("https://example.com/a", "https://example.com/a/"),        # a trailing slash can be another resource
    ("https://example.com/a?id=1", "https://example.com/a?id=2"),
    ("https://example.com:8080/a", "https://example.com/a"),
    ("https://a.example.com/", "https://b.example.com/"),
    ("https://example.com/A", "https://example.com/a"),          # paths are case-sensitive
])
def test_different_pages_stay_apart(a: str, b: str) -> None:
    assert normalize_url(a) != normalize_url(b)


def test_missing_or_broken_urls_give_none() -> None:
    assert normalize_url(None) is None and normalize_url("") is None and normalize_url("not a url") is None
    assert normalize_url("http://[::1") is None
    assert domain_of("https://www.News.Example.co.uk:8443/x") == "news.example.co.uk"


def test_url_columns_keep_the_index() -> None:
    cols = url_columns(pd.Series(["https://www.a.org/x", None], index=[5, 7]))
    assert cols.index.tolist() == [5, 7]
    assert cols.loc[5].tolist() == ["a.org/x", "a.org"] and cols.loc[7].isna().all()
