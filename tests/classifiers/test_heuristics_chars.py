"""words_with_alpha pinned to the per-word regular-expression search it stands for."""

from __future__ import annotations

import re

import numpy as np

from classifiers.heuristics_chars import LetterTable, words_with_alpha
from classifiers.heuristics_signals import split_words, text_signals

_HAS_ALPHA = re.compile(r"[^\W\d_]")

WORDS = ["", "abc", "123", "_", "__init__", "函数", "x1", "Ⅻ", "½", "٣", "😀", "😀a", "\ud800", "a\udfff",
         "ǅ", "İ", "ß", "é", "e\u0301", "\u0301", "#", "...", "—", "𝔘", "𠀀", "١٢٣", "ⓐ"]


def _reference(words):
    return [_HAS_ALPHA.search(w) is not None for w in words]


def test_words_with_alpha_matches_the_search():
    assert words_with_alpha(WORDS).tolist() == _reference(WORDS)
    assert words_with_alpha([]).tolist() == []
    rng = np.random.default_rng(5)
    words = ["".join(map(chr, rng.integers(0, 0x110000, int(rng.integers(0, 4))).tolist())) for _ in range(3000)]
    assert words_with_alpha(words).tolist() == _reference(words)
    text = "The cat 12 sat on the mat... 函数的导数 f(x)=2x 😀 — _ __x__ ١٢٣"
    for lang in ("en", "zh"):
        w = split_words(text, lang)
        assert words_with_alpha(w).tolist() == _reference(w)


def test_letter_table_answers_per_code_point_and_fills_only_what_it_met():
    table = LetterTable()
    cps = np.concatenate([np.random.default_rng(3).integers(0, 0x110000, 4000), np.arange(0xD7F0, 0xE010)]).astype(np.uint32)
    assert table(cps).tolist() == [_HAS_ALPHA.match(chr(c)) is not None for c in cps.tolist()]
    assert table.known.sum() == len(np.unique(cps))


def test_alpha_word_frac_as_the_search_counts_it():
    for text, lang in [("12 34 abc _ x", "en"), ("", "en"), ("函数 123 的", "zh"), ("😀 😀 a", "en")]:
        words = split_words(text, lang)
        want = sum(_reference(words)) / max(len(words), 1)
        assert text_signals(text, lang)["alpha_word_frac"] == want
