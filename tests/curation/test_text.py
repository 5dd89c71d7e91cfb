"""The exact-dedup key: every Unicode whitespace run folds to one space, as the regex ``\\s+`` does."""

from __future__ import annotations

import re
import unicodedata

from curation.text import normalize_exact


def test_split_and_join_fold_the_whitespace_the_regex_folds():
    whitespace = [chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000 and re.fullmatch(r"\s", chr(i))]
    assert len(whitespace) == 29  # tab … \u3000: what the key has always folded
    for ws in whitespace:
        text = f"{ws}a{ws}{ws}b c\u00a0{ws}"
        expected = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()
        assert normalize_exact(text) == expected == "a b c", repr(ws)
    # invisible format characters (zero-width space, BOM) are not whitespace: they leave the key, and
    # the letters they stood between join (copies differing only by them are one text)
    assert normalize_exact("a\u200bb\ufeffc") == "abc"
    assert normalize_exact("") == "" and normalize_exact(" \n\t ") == ""
