"""The heuristic signals stay bit-identical: :func:`signal_matrix` on a fixed mixed corpus equals
the matrix recorded in ``data/heuristics_signals_reference.npz`` (every float equal, NaNs in the
same places).

The record was written once by the implementation of commit 4fd2ff6 (before the signals were
vectorised), with ``np.savez_compressed(path, x=signal_matrix(texts, langs))`` on
:func:`reference_corpus`. Do not regenerate it to make a change pass: a difference is a change of
output.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from classifiers.heuristics_signals import SIGNAL_NAMES, signal_matrix

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).parent / "data" / "heuristics_signals_reference.npz"

#: Hand-written edge cases: empty and blank texts, characters whose case mapping changes length,
#: Unicode white space and separators, words made only of stripped punctuation, repetition.
EDGE_CASES = (
    "",
    " ",
    "\n",
    "\n\n\n",
    "   \n \t\n  \n",
    "\r\n\r\n",
    "a",
    "İstanbul İZMİR ıi",
    "Straße STRASSE ß ẞ groß",
    "ŉ ǰ ΐ ﬁ ﬂ ﬃ Ǆ ǅ ǆ",
    "ΣΑΣ σας ΌΣΟΣ",
    "İ",
    "... … -- — * • | / \\ \"'“”",
    "«Hello», (world)! [the] {of} <and>.\nTHE THE the The",
    "tab\tseparated\twords\x0bvertical\x0cform\x1cfile\x1dgroup\x1eunit\x1fsep\x85nel\u2028ls\u2029ps",
    "ideographic\u3000space\u3000here\u00a0nbsp\u2003em",
    "line with trailing spaces   \n   leading spaces line\n\t\n",
    "# #tag ### wait... more … end...\n• bullet\n- dash\n→ arrow\n✓ check",
    "Please enable JavaScript.\nJAVASCRIPT required\nThis site uses cookies.\nPrivacy Policy | Terms of Use\n"
    "© All Rights Reserved",
    "Lorem ipsum dolor sit amet.\nLOREM IPSUM again {x}",
    "http://a.com https://b.org www.c.net page.html index.php x.htm",
    "one two three four five six seven eight nine ten eleven\n" * 7,
    "a b a b a b a b a b a b a b a b a b a b a b",
    "the the the the the the the the the the the the the the",
    "menu\nmenu\nmenu\nreal text here\n\nmenu\n\nreal text here",
    "digits 0123456789 ٠١٢٣ ①② ５６",
    "我们今天在家里学习了数据库的索引。索引可以加快查询！\n用 Redis 做缓存。\n\n用 Redis 做缓存。",
    "混合 mixed 文本 text。English words 和中文字符 together?",
    "日本語のテキストです。カタカナとひらがな。",
    "ภาษาไทย ไม่มีช่องว่าง",
    "lone surrogate \ud800 here \udfff",
    "nul\x00char and \x7f del",
    "emoji 😀 😀 😀 🎉 text 😀 😀 😀 🎉",
    "x" * 5000,
    ("word " * 3000).strip(),
)


def reference_corpus() -> tuple[list[str], list[str | None]]:
    """(texts, langs): the English and Chinese sample pages, each also under other languages (the
    unspaced-segmentation path, a language without stop words, no language), and the edge cases
    under every one of those languages."""
    def pages(name: str) -> list[str]:
        with gzip.open(ROOT / "sample_data" / "web" / name, "rt", encoding="utf-8") as f:
            return [json.loads(line)["text"] for line in f]

    en, zh = pages("web.jsonl.gz"), pages("web_zh.jsonl.gz")
    texts: list[str] = []
    langs: list[str | None] = []
    for group, lang in ((en, "en"), (zh, "zh"), (en[:40], "zh"), (zh[:40], "en"), (en[:20], "fr"),
                        (zh[:20], "ja"), (en[:10], None)):
        texts += group
        langs += [lang] * len(group)
    for lang in ("en", "zh", "fr", "ja", None):
        texts += list(EDGE_CASES)
        langs += [lang] * len(EDGE_CASES)
    return texts, langs


def test_signal_matrix_is_bit_identical_to_the_record() -> None:
    texts, langs = reference_corpus()
    expected = np.load(REFERENCE)["x"]
    got = signal_matrix(texts, langs)
    assert got.shape == expected.shape == (len(texts), len(SIGNAL_NAMES))
    assert got.dtype == expected.dtype == np.float64
    for j, name in enumerate(SIGNAL_NAMES):  # name the first differing signal and text
        same = (got[:, j] == expected[:, j]) | (np.isnan(got[:, j]) & np.isnan(expected[:, j]))
        bad = np.flatnonzero(~same)
        assert not len(bad), f"{name}: text {bad[0]} ({langs[bad[0]]}): {got[bad[0], j]!r} != {expected[bad[0], j]!r}"
    assert np.array_equal(got, expected, equal_nan=True)
