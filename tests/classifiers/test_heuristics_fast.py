"""The heuristic signals equal, float for float, those of the implementation they replaced
(``tests/classifiers/heuristics_v1.py``, commit 014144c), on real pages and on edge cases."""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import tests.classifiers.heuristics_v1 as v1
from classifiers import heuristics_chars as chars
from classifiers import heuristics_repetition as rep
from classifiers import heuristics_signals as sig
from tests.classifiers.test_heuristics_reference import EDGE_CASES

ROOT = Path(__file__).resolve().parents[2]
#: The web pages of the recipe benchmark's 30 MB mix (benchmarks/recipe), where it has been built.
MIX = ROOT / "benchmarks" / "_work" / "recipe" / "corpus-30mb" / "web.jsonl"
LANGS = ("en", "zh", "ja", "fr", None)
_CJK = re.compile("[\u3040-\u30ff\u4e00-\u9fff]")

MORE_EDGES = (
    "no newline at all, just one long line " * 400,
    "\n".join(["x" * 3000, "y" * 5000, "short"]),
    "trailing newline.\n",
    "Ends with ellipsis…\nAnd three dots...\n…\n...",
    "• a\n● b\n○ c\n▪ d\n◦ e\n‣ f\n⁃ g\n■ h\n□ i\n- j\n* k\n– l\n— m\n· n\n➢ o\n→ p\n✓ q",
    "“Quoted.” ‘Single.’ «Guillemets» (paren) 「括号」 ¿Qué? ¡Hola! end。 next！ last？",
    "Wait!!! Really?! Yes... no.. ok.\tTab. Nbsp.\u00a0Em.\u2003Ideographic.\u3000End.",
    "中文句子。。。第二句！！第三句？？。!?混合.。 end.",
    "ΣΑΣ ΟΔΟΣ. σας ς Σ ΑΣ\u0301Β ΑΣ\u00adΒ ΑΣ.Β ΣΣ aΣ\u0e31b",
    "Kelvin \u212a K k Å Å İ ı ſ ﬀ ﬃ ŉ ǰ ΐ ΰ և ẖ ẗ ẘ ẙ ẚ ᾀ ᾈ ῼ",
    "HTTP://EXAMPLE.COM WWW.EXAMPLE.ORG Index.HTML a.PHP x.Net www .com com ://",
    "hTTpS://x ＷＷＷ．ｘ．ｃｏｍ wWw.y ſite.com http:/ no https//no",
    "PRIVACY POLICY\nTerms Of Use\nWe use COOKIES\nThis website uses cookies\nAccept cookies\n"
    "cookie policy © All rights reserved.\nenable JavaScript\njavascript:void(0)",
    "{ curly } lorem IPSUM Lorem Ipsum",
    "1 2 3 4 5 6 7 8 9 0 12.5% ٣ ５ ²",
    "a b c d e f g h i j\n" * 50 + "a b c d e f g h i j k",
    " ".join(["alpha beta gamma delta epsilon zeta eta theta"] * 40),
    "repeat this line\n\nrepeat this line\n\n\n  \nrepeat this line\nother\n \t \nother",
    "ㄱ 한국어 문장입니다. 한국어 문장입니다.",
    "ไทย ภาษา ไทย。ภาษา",
    "\u2028line sep\u2029para sep\x85nel\x0bvt\x0cff\rcr\r\n",
    "\ufeffbom start \u200bzero width\u200b joiner\u200d",
    "emoji 👍🏽 👨‍👩‍👧 🇫🇷 text",
    "𝐁𝐨𝐥𝐝 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝒮𝒸𝓇𝒾𝓅𝓉",
    "a.。 b。. c.\u3000d!\u00a0e?\u2028f.\x1cg!\x85h?\u200bi.\u2009j。\n!k ?.! ..。。.. 。",
    "end.",
    "end。",
    "?",
    "。",
    "x.\n",
    "Read the Terms of Use.",
    "See our PRIVACY policy",
    "© 2024 All Rights Reserved",
    "Please enable JavaScript",
    "We use cookies",
    "lorem ipsum",
    "a b\nc d e\n  f  g  \n h i j k \n\x0bx\x0by\x0bz\n\u3000p\u3000q\u3000r\u3000\n s\rt\ru",
)


def _same(a: dict[str, float], b: dict[str, float]) -> str | None:
    """The first signal whose values differ (type, value or NaN-ness), or None."""
    assert list(a) == list(b)
    for k in a:
        x, y = a[k], b[k]
        if type(x) is not type(y) or not (x == y or (math.isnan(x) and math.isnan(y))):
            return f"{k}: {x!r} != {y!r}"
    return None


def _check(texts: list[str], langs: list[str | None]) -> None:
    for i, (text, lang) in enumerate(zip(texts, langs, strict=True)):
        diff = _same(sig.text_signals(text, lang), v1.text_signals(text, lang))
        assert diff is None, f"text {i} ({lang}, {text[:60]!r}): {diff}"
    got = sig.signal_matrix(texts, langs)
    assert np.array_equal(got, v1.signal_matrix(texts, langs), equal_nan=True)


def _random_texts(n: int, seed: int) -> list[str]:
    """Texts of words, punctuation, white space, CJK, Greek and case-changing letters, repetitive."""
    rng = np.random.default_rng(seed)
    vocab = ["the", "The", "THE", "of", "and", "cat", "sat", "mat.", "end!", "why?", "...", "…", "#tag", "•",
             "-", "—", "www.x.com", "http://a.org", "İ", "ß", "ΣΑΣ", "σας", "\u212a", "数据", "。", "！", "的",
             "123", "4.5", "_", "(x)", "“q”", "javascript", "cookies", "privacy", "policy", "lorem", "ipsum", "{",
             "ǅ", "ﬁ", "😀", "\ud800"]
    seps = [" ", " ", " ", "\n", "\n\n", "\t", "\u00a0", "\u3000", "", " \n ", "\r\n"]
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 300))
        words = rng.choice(vocab[: int(rng.integers(3, len(vocab) + 1))], k)
        gaps = rng.choice(seps, k)
        out.append("".join(w + g for w, g in zip(words.tolist(), gaps.tolist(), strict=True)))
    return out


def test_edge_cases_in_every_language() -> None:
    texts = list(EDGE_CASES) + list(MORE_EDGES)
    for lang in LANGS:
        _check(texts, [lang] * len(texts))


def test_random_texts() -> None:
    texts = _random_texts(400, 7)
    _check(texts, [LANGS[i % len(LANGS)] for i in range(len(texts))])


def test_sample_pages() -> None:
    texts: list[str] = []
    for name in ("web.jsonl.gz", "web_zh.jsonl.gz"):
        with gzip.open(ROOT / "sample_data" / "web" / name, "rt", encoding="utf-8") as f:
            texts += [json.loads(line)["text"] for line in f]
    langs = ["zh" if _CJK.search(t) else "en" for t in texts]
    _check(texts, langs)
    _check(texts[::5], ["en" if lang == "zh" else "zh" for lang in langs[::5]])


@pytest.mark.skipif(not MIX.exists(), reason="the recipe benchmark's 30 MB mix is not built here")
def test_pages_of_the_30mb_mix() -> None:
    with open(MIX, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] or "" for line in f][::3]
    langs = ["zh" if _CJK.search(t[:2000]) else "en" for t in texts]
    _check(texts, langs)
    _check(texts[::7], ["en" if lang == "zh" else "zh" for lang in langs[::7]])


def test_char_classes_over_every_code_point() -> None:
    """Both branches (a character that changes length when cased, or none), in chunks of Unicode."""
    cps = np.arange(0x110000)
    for chunk in np.array_split(cps, 1100):
        text = "".join(map(chr, chunk.tolist()))
        assert chars.char_classes(text) == v1._char_classes(text, text.lower())
        kept = "".join(c for c in text if len(c.lower()) == len(c.upper()) == 1)
        assert chars.char_classes(kept) == v1._char_classes(kept, kept.lower())
    for text in ("Σ", "ΑΣ", "ΑΣ Β", "aΣ\u0301", "ΣΣΣ", "\u212a", "AB12", "", "İ1", "ß"):
        assert chars.char_classes(text) == v1._char_classes(text, text.lower())


def test_url_needles_are_necessary() -> None:
    """The only characters that match the needles' letters case-insensitively are the ASCII letter
    and its capital (ſ matches s, which no needle holds), so a text without the needles has no match."""
    chars = [chr(c) for c in range(0x110000)]
    for letter in "wcomrgnethp:/.":
        pattern = re.compile(re.escape(letter), re.IGNORECASE)
        assert {c for c in chars if pattern.fullmatch(c)} == {letter, letter.upper()}
    for text in MORE_EDGES + tuple(_random_texts(200, 3)):
        for lang in ("en", "zh"):
            if v1._URLISH.findall(text):
                assert sig._may_have_urls(" ".join(w.lower() for w in sig.split_words(text, lang)))


def test_split_and_the_regex_agree_on_white_space() -> None:
    """Sentence ends are read from the words' last characters: ``str.split`` and ``\\s`` must agree."""
    space = re.compile(r"\s")
    assert all(bool(space.match(chr(c))) == chr(c).isspace() for c in range(0x110000))


def test_lower_casing_keeps_white_space_apart() -> None:
    """Phrases are looked for in the lower-cased words before the lower-cased text: lower-casing
    neither makes nor unmakes white space, and no character of an unspaced script lowers to ASCII."""
    unspaced = re.compile(f"[{sig._UNSPACED_CHARS}]")
    for c in map(chr, range(0x110000)):
        low = c.lower()
        assert low == c if c.isspace() else not any(x.isspace() for x in low)
        if unspaced.match(c):
            assert not low.isascii()
    phrases = {p: [n for n in sig._LOWER_NEEDLES if n in p] for p in ("lorem ipsum", "javascript", *v1._POLICY)}
    assert all(phrases.values()) and not any(" " in n for n in sig._LOWER_NEEDLES)
    for text in MORE_EDGES + tuple(_random_texts(300, 5)):
        for lang in ("en", "zh"):
            word_text = " ".join(w.lower() for w in sig.split_words(text, lang))
            for phrase, needles in phrases.items():
                if phrase in text.lower():
                    assert all(n in word_text for n in needles)


def test_letters_of_joined_words() -> None:
    from classifiers.heuristics_chars import nonempty_words_with_alpha, words_with_alpha
    from curation.hashing import codepoints

    rng = np.random.default_rng(2)
    for _ in range(50):
        words = ["".join(map(chr, rng.integers(0, 0x110000, int(rng.integers(1, 4))).tolist())) for _ in range(200)]
        words += ["a", "1", "_", "函", "😀", "\ud800", "x1"]
        lens = np.array([len(w) for w in words])
        got = nonempty_words_with_alpha(codepoints(words, ""), np.cumsum(lens) - lens)
        assert got.tolist() == words_with_alpha(words).tolist() == [v1._HAS_ALPHA.search(w) is not None for w in words]


def test_repetition_on_few_words() -> None:
    """Many repeated n-grams (and hash ties) from small vocabularies, whole texts and word lists."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        vocab = [f"w{i}" * int(rng.integers(1, 4)) for i in range(int(rng.integers(1, 8)))]
        words = rng.choice(vocab, int(rng.integers(0, 400))).tolist()
        text = " ".join(words)
        assert rep.repetition_signals(text) == v1.repetition_signals(text)
        assert rep.repetition_signals(text, rep.index_words(words)) == v1.repetition_signals(text, v1.index_words(words))
