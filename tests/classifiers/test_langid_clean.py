"""langid's text cleaning pinned to the four chained substitutions it replaces."""

from __future__ import annotations

import random
import re

import pytest

from classifiers import langid
from classifiers.langid import MAX_CHARS, clean

SPACE = re.compile(r"\s+")


def reference_clean(text: str, max_chars: int = MAX_CHARS) -> str:
    head = text[: max_chars * 4]
    fenced = langid._FENCE.sub(" ", head)
    prose = SPACE.sub(" ", langid._URL.sub(" ", langid._LINK_TARGET.sub("]", fenced))).strip()
    if not langid._LETTER.search(prose):
        prose = SPACE.sub(" ", head).strip()
    return prose[:max_chars]


PIECES = [
    "word",
    "Ünïcödé",
    "看这里",
    "东京大学",
    "🙂",
    "🚀🚀",
    "12345",
    "_",
    "---",
    "```",
    "```python\nls -l\n",
    "](",
    "[链接](http://x.cn)",
    "](no close",
    "http://example.com/a?b=1",
    "https://x.y)z",
    "www.site.org",
    "WWW.SITE.ORG",
    "HTTP://UP.CASE",
    "http",
    "www.",
    " ",
    "  ",
    "\n",
    "\t",
    "\r\n",
    "\u3000",
    "\u00a0",
    "\u2028",
    "\x1c",
    "\x85",
    "\u200b",
    "\x0b\x0c",
    "\ud800",
    "\udfff",
]


def random_texts(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.choice([0, 1, 3, 20, 200, 3000]))) for _ in range(n)]


def test_every_whitespace_the_regex_collapses_is_what_split_splits_on() -> None:
    chars = "".join(map(chr, range(0x110000)))
    assert [c for c in chars if SPACE.fullmatch(c)] == [c for c in chars if c.split() == []]


@pytest.mark.parametrize("max_chars", [MAX_CHARS, 5, 1])
def test_clean_matches_chained_substitutions(max_chars: int) -> None:
    fixed = [
        "",
        " ",
        "\n\n",
        "12345",
        "```\nonly code\n```",
        "看这里 [链接](http://x.cn)\n```\nls -l\n```\n结束",
        "🙂 🙂",
        "\ud800 lone",
    ]
    for text in fixed + random_texts(400):
        assert clean(text, max_chars) == reference_clean(text, max_chars), repr(text[:80])


def long_texts(n: int, seed: int = 5) -> list[str]:
    """Texts around the prefix cut: runs of whitespace, words, letters only late, code fences."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = [rng.choice(["word", " ", "   \n\t ", "12", "---", "看", "\u3000", "```", "http://x.y/z ", "ab" * 50, " " * 500])
                 for _ in range(rng.choice([100, 600, 1500, 4000]))]
        if rng.random() < 0.2:  # letters only after thousands of characters of digits and blanks
            parts = ["1 2\n"] * rng.choice([500, 1000, 2500]) + parts[:5]
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("max_chars", [MAX_CHARS, 7, 2, 1])
def test_clean_of_long_texts_matches_chained_substitutions(max_chars: int) -> None:
    for text in long_texts(300):
        for t in (text, text[: max_chars + max_chars // 2], text[: max_chars + max_chars // 2 + 1], text[: 4 * max_chars]):
            assert clean(t, max_chars) == reference_clean(t, max_chars), repr(t[:80])
