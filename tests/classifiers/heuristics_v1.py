"""The heuristic signals as commit 014144c computed them (classifiers/heuristics_chars.py,
heuristics_repetition.py and heuristics_signals.py, unchanged but for their imports of each other):
the reference that tests/classifiers/test_heuristics_fast.py pins the current implementation to."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from itertools import repeat
from typing import NamedTuple

import numpy as np
import pandas as pd

from curation.hashing import codepoints, segment_sums

_HAS_ALPHA = re.compile(r"[^\W\d_]")


class LetterTable:
    """``[^\\W\\d_]`` matches the code point: filled in as code points are met (classifying all of
    Unicode costs ~0.3 CPU-s, paid again by every worker process, which meets a few thousand)."""

    def __init__(self) -> None:
        self.known = np.zeros(0x110000, dtype=bool)
        self.letter = np.zeros(0x110000, dtype=bool)

    def __call__(self, cp: np.ndarray) -> np.ndarray:
        new = np.unique(cp[~self.known[cp]])
        if len(new):
            chars = map(chr, new.tolist())
            self.letter[new] = np.fromiter((_HAS_ALPHA.match(c) is not None for c in chars), dtype=bool, count=len(new))
            self.known[new] = True
        return self.letter[cp]


_letters = LetterTable()


def words_with_alpha(words: list[str]) -> np.ndarray:
    """``re.search("[^\\W\\d_]", w) is not None`` for every word ``w``."""
    if not words:
        return np.zeros(0, dtype=bool)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    return segment_sums(_letters(codepoints(words, "")), lengths) > 0





_PARA = re.compile(r"\n\s*\n")
_U64 = np.uint64
_BASE = _U64(0x9E3779B97F4A7C15)


class WordIndex(NamedTuple):
    """The words of a text as ids: ``ids[i]`` numbers word ``i`` by first appearance of its string,
    ``distinct[k]`` is the string of id ``k``, ``counts[k]`` its occurrences, ``lens[i]`` the
    characters of word ``i``."""

    ids: np.ndarray
    distinct: list[str]
    counts: np.ndarray
    lens: np.ndarray


def index_words(words: list[str]) -> WordIndex:
    """:class:`WordIndex` of ``words`` (ids in first-appearance order).

    >>> index_words(["a", "bb", "a"]).ids.tolist()
    [0, 1, 0]
    """
    if not words:
        empty = np.zeros(0, dtype=np.int64)
        return WordIndex(empty, [], empty, empty)
    codes, uniques = pd.factorize(np.array(words, dtype=object))
    ids = codes.astype(np.int64, copy=False)
    distinct = uniques.tolist()
    distinct_lens = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
    return WordIndex(ids, distinct, np.bincount(ids, minlength=len(distinct)), distinct_lens[ids])


def _duplicates(items: list[str]) -> tuple[int, int]:
    """(number of items equal to an earlier item, their characters)."""
    distinct = set(items)
    return len(items) - len(distinct), sum(map(len, items)) - sum(map(len, distinct))


def dup_line_frac(text: str) -> float:
    """The share of non-blank lines that repeat an earlier line (Gopher), as in :func:`repetition_signals`.

    >>> dup_line_frac("a b\\na b\\nc d")
    0.3333333333333333
    """
    lines = list(filter(str.strip, (text or "").split("\n")))
    return _duplicates(lines)[0] / max(len(lines), 1)


def _ngram_hashes(ids: np.ndarray, max_n: int) -> list[np.ndarray]:
    """hashes[n] = uint64 hash of the word n-gram starting at each position (index 0, 1 unused)."""
    out: list[np.ndarray] = [np.zeros(0, dtype=_U64), ids.astype(_U64)]
    h = out[1]
    with np.errstate(over="ignore"):
        for n in range(2, max_n + 1):
            if len(ids) < n:
                out.append(np.zeros(0, dtype=_U64))
                continue
            h = h[:-1] * _BASE + ids[n - 1 :].astype(_U64) + _U64(n)
            out.append(h)
    return out


def _top_share(h: np.ndarray, n: int, csum: np.ndarray, total: int) -> float:
    """Characters in the most frequent n-gram (ties: the smallest hash; its first occurrence), over ``total``."""
    sh = np.sort(h)
    starts = np.flatnonzero(np.concatenate(([True], sh[1:] != sh[:-1])))
    counts = np.diff(np.append(starts, len(sh)))
    top = int(np.argmax(counts))
    if counts[top] <= 1:
        return 0.0
    start = int(np.argmax(h == sh[starts[top]]))
    ngram_chars = csum[start + n] - csum[start] + (n - 1)
    return min(float(counts[top] * ngram_chars) / total, 1.0)


def _dup_share(h: np.ndarray, n: int, lens: np.ndarray, word_chars: int) -> float:
    """Share of word characters inside n-grams whose hash occurs more than once."""
    order = np.argsort(h)
    sh = h[order]
    same = sh[1:] == sh[:-1]
    if not same.any():
        return 0.0
    in_run = np.zeros(len(h), dtype=bool)  # sorted hashes equal to a neighbour
    in_run[1:] = same
    in_run[:-1] |= same
    dup = np.empty_like(in_run)
    dup[order] = in_run
    covered = np.convolve(dup, np.ones(n, dtype=np.int64)) > 0  # word i lies in an n-gram starting at i-n+1..i
    return float(lens[covered].sum()) / word_chars


def repetition_signals(text: str, words: list[str] | WordIndex | None = None) -> dict[str, float]:
    """Duplicate line/paragraph fractions and top / duplicate word n-gram character fractions.

    ``words``: the words of ``text`` (default: whitespace-separated), or their :func:`index_words`.
    """
    text = text or ""
    total = max(len(text), 1)
    lines = list(filter(str.strip, text.split("\n")))
    paras = list(filter(str.strip, _PARA.split(text)))
    out: dict[str, float] = {}
    n_dup, c_dup = _duplicates(lines)
    out["dup_line_frac"] = n_dup / max(len(lines), 1)
    out["dup_line_char_frac"] = c_dup / total
    n_dup, c_dup = _duplicates(paras)
    out["dup_para_frac"] = n_dup / max(len(paras), 1)
    out["dup_para_char_frac"] = c_dup / total

    index = words if isinstance(words, WordIndex) else index_words(text.split() if words is None else words)
    lens = index.lens
    word_chars = max(int(lens.sum()), 1)
    hashes = _ngram_hashes(index.ids, 10)
    csum = np.concatenate([[0], np.cumsum(lens)])
    for n in (2, 3, 4):
        h = hashes[n]
        out[f"top_{n}gram_char_frac"] = _top_share(h, n, csum, total) if len(h) else 0.0
    for n in range(5, 11):
        h = hashes[n]
        out[f"dup_{n}gram_char_frac"] = _dup_share(h, n, lens, word_chars) if len(h) else 0.0
    return out







@dataclasses.dataclass(frozen=True)
class Signal:
    """One signal: its column suffix, where it comes from, and the rule's pass range."""

    name: str
    source: str
    doc: str
    lo: float | None = None  #: the published rule keeps documents with value >= lo
    hi: float | None = None  #: ... and value <= hi


#: Every signal, in column order. ``lo``/``hi``: the published rule's pass range.
SIGNALS: tuple[Signal, ...] = (
    Signal("n_words", "gopher", "words (whitespace-separated)", 50, 100_000),
    Signal("mean_word_length", "gopher", "mean characters per word", 3, 10),
    Signal("symbol_word_ratio", "gopher", "'#' and ellipses per word", None, 0.1),
    Signal("bullet_line_frac", "gopher", "lines starting with a bullet", None, 0.9),
    Signal("ellipsis_line_frac", "gopher", "lines ending with an ellipsis", None, 0.3),
    Signal("alpha_word_frac", "gopher", "words with an alphabetic character", 0.8, None),
    Signal("gopher_stop_words", "gopher", "distinct words of the, be, to, of, and, that, have, with", 2, None),
    Signal("stop_word_frac", "gopher", "share of words that are English stop words", None, None),
    Signal("dup_line_frac", "gopher", "lines that repeat an earlier line", None, 0.3),
    Signal("dup_para_frac", "gopher", "paragraphs that repeat an earlier paragraph", None, 0.3),
    Signal("dup_line_char_frac", "gopher", "characters in repeated lines (FineWeb: 0.01)", None, 0.2),
    Signal("dup_para_char_frac", "gopher", "characters in repeated paragraphs", None, 0.2),
    Signal("top_2gram_char_frac", "gopher", "characters in the most frequent word 2-gram", None, 0.2),
    Signal("top_3gram_char_frac", "gopher", "characters in the most frequent word 3-gram", None, 0.18),
    Signal("top_4gram_char_frac", "gopher", "characters in the most frequent word 4-gram", None, 0.16),
    Signal("dup_5gram_char_frac", "gopher", "characters inside repeated word 5-grams", None, 0.15),
    Signal("dup_6gram_char_frac", "gopher", "characters inside repeated word 6-grams", None, 0.14),
    Signal("dup_7gram_char_frac", "gopher", "characters inside repeated word 7-grams", None, 0.13),
    Signal("dup_8gram_char_frac", "gopher", "characters inside repeated word 8-grams", None, 0.12),
    Signal("dup_9gram_char_frac", "gopher", "characters inside repeated word 9-grams", None, 0.11),
    Signal("dup_10gram_char_frac", "gopher", "characters inside repeated word 10-grams", None, 0.10),
    Signal("line_punct_frac", "c4", "lines ending in terminal punctuation (FineWeb: >= 0.12)", 0.12, None),
    Signal("few_words_line_frac", "c4", "lines with fewer than 3 words (C4 drops them)", None, None),
    Signal("n_sentences", "c4", "sentence ends (. ! ? followed by space or end)", 5, None),
    Signal("lorem_ipsum", "c4", "'lorem ipsum' occurs (0/1)", None, 0),
    Signal("curly_bracket", "c4", "'{' occurs (0/1)", None, None),
    Signal("javascript_line_frac", "c4", "lines mentioning javascript", None, None),
    Signal("policy_line_frac", "c4", "lines about cookies, terms of use, privacy policy", None, None),
    Signal("short_line_frac", "fineweb", "lines of at most 30 characters", None, 0.67),
    Signal("newline_word_ratio", "fineweb", "newlines per word", None, 0.3),
    Signal("uppercase_frac", "extra", "upper-case share of letters", None, None),
    Signal("digit_frac", "extra", "digit share of characters", None, None),
    Signal("url_word_frac", "extra", "URL markers (http://, www., .com …) per word", None, None),
)
SIGNAL_NAMES: tuple[str, ...] = tuple(s.name for s in SIGNALS)

GOPHER_STOP_WORDS = frozenset({"the", "be", "to", "of", "and", "that", "have", "with"})
#: English function words (closed-class words of the NLTK/spaCy lists, inflections included).
STOP_WORDS = frozenset(
    (
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
        "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
        "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from",
        "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself",
        "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most",
        "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our",
        "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than",
        "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
        "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
        "yourself", "yourselves",
    )
)

#: Chinese function words, one character each (words are characters in ``zh``): particles,
#: pronouns, copula, common prepositions and conjunctions, negation, measure word 个.
ZH_STOP_WORDS = frozenset("的了是在和有不这也就都我你他她它们着过吗呢吧啊与及或而但把被让给对从到为以之其所个一上中要会能可那")
#: The Gopher rule's eight most frequent English function words, and the eight most frequent
#: Chinese ones (frequency order in real Chinese technical notes and reviews).
GOPHER_STOP_WORDS_BY_LANG = {"en": GOPHER_STOP_WORDS, "zh": frozenset("的是在了和不有这")}
STOP_WORDS_BY_LANG = {"en": STOP_WORDS, "zh": ZH_STOP_WORDS}
#: Languages written without spaces between words.
UNSPACED_LANGS = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo"})
#: Languages whose characters each carry about a word (short-line threshold 10 characters, not 30).
WIDE_LANGS = frozenset({"zh", "ja", "ko"})
_UNSPACED_CHARS = "\u0e00-\u0eff\u1000-\u109f\u0f00-\u0fff\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_SEGMENT = re.compile(f"[{_UNSPACED_CHARS}]|[^\\s{_UNSPACED_CHARS}]+")

_BULLETS = ("•", "●", "○", "▪", "◦", "‣", "⁃", "■", "□", "-", "*", "–", "—", "·", "➢", "→", "✓")
_ELLIPSES = ("...", "…")
_TERMINAL = ('.', '!', '?', '"', "'", '”', '’', '…', '。', '！', '？', '»', ')')
_POLICY = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies",
           "accept cookies", "all rights reserved")
#: ``[.!?]+(?:\s|$)|[。！？]+`` and ``(?i)https?://|www\.|\.(?:com|org|net|html?|php)\b``, written to
#: start with a character class so that the regex engine skips ahead to candidates (same matches).
_SENTENCE_END = re.compile(r"[.!?。！？](?:(?<=[.!?])[.!?]*(?:\s|$)|(?<=[。！？])[。！？]*)")
_URLISH = re.compile(r"[hHwW.](?i:(?<=h)ttps?://|(?<=w)ww\.|(?<=\.)(?:com|org|net|html?|php)\b)")
#: At least three words / segments (C4's short-line rule) from the start of a line, without crossing "\n".
_THREE_WORDS = r"(?:[^\S\n]*\S+(?!\S)){3}"
_THREE_SEGMENTS = f"(?:[^\\S\\n]*(?:[{_UNSPACED_CHARS}]|[^\\s{_UNSPACED_CHARS}]+(?![^\\s{_UNSPACED_CHARS}]))){{3}}"
_MANY_WORDS = {False: (re.compile(_THREE_WORDS), re.compile("\n" + _THREE_WORDS)),
               True: (re.compile(_THREE_SEGMENTS), re.compile("\n" + _THREE_SEGMENTS))}
_JAVASCRIPT = re.compile(r"^.*?javascript", re.MULTILINE)
_POLICY_LINE = re.compile("^.*?(?:" + "|".join(map(re.escape, _POLICY)) + ")", re.MULTILINE)
_STRIP = "\"'“”‘’«»()[]{}<>.,;:!?…-–—*•|/\\"


def split_words(text: str, lang: str | None = None) -> list[str]:
    """The words of ``text`` in ``lang``: whitespace-separated, or segmented for unspaced languages.

    >>> split_words("用 Redis 做缓存。", "zh")
    ['用', 'Redis', '做', '缓', '存', '。']
    """
    return _SEGMENT.findall(text) if lang in UNSPACED_LANGS else text.split()


def text_signals(text: str, lang: str | None = "en") -> dict[str, float]:
    """Every signal of :data:`SIGNALS` for one text in ``lang`` (floats; NaN only for the stop-word
    signals of a language without a stop-word list).

    Per-word work is done once per distinct word (:func:`index_words`) and weighted by its count;
    per-line work is done by C-level maps and regular expressions over the whole text.

    >>> text_signals("")["n_words"]
    0.0
    """
    text = text or ""
    lang = lang or "en"
    words = split_words(text, lang)
    index = index_words(words)
    n_words = len(words)
    nonempty = list(filter(None, map(str.strip, text.split("\n"))))
    n_lines = max(len(nonempty), 1)
    lower = text.lower()  # line by line the same as lowering each line: no case context crosses "\n"
    out: dict[str, float] = {"n_words": float(n_words)}

    lowered = _lower_strip(index.distinct)
    lowered_lens = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered))
    n_kept = int(index.counts[lowered_lens > 0].sum())
    out["mean_word_length"] = int(lowered_lens @ index.counts) / n_kept if n_kept else 0.0
    n_symbols = text.count("#") + sum(text.count(e) for e in _ELLIPSES)
    out["symbol_word_ratio"] = n_symbols / max(n_words, 1)
    out["bullet_line_frac"] = sum(map(str.startswith, nonempty, repeat(_BULLETS))) / n_lines
    out["ellipsis_line_frac"] = sum(map(str.endswith, nonempty, repeat(_ELLIPSES))) / n_lines
    # A word that isalpha() has a character of [^\W\d_], so that class alone decides.
    out["alpha_word_frac"] = int(index.counts[words_with_alpha(index.distinct)].sum()) / max(n_words, 1)
    stop, gopher = STOP_WORDS_BY_LANG.get(lang), GOPHER_STOP_WORDS_BY_LANG.get(lang)
    out["gopher_stop_words"] = float(len(gopher.intersection(lowered))) if gopher else float("nan")
    out["stop_word_frac"] = _weighted(index, map(stop.__contains__, lowered)) / max(n_words, 1) if stop else float("nan")

    out.update(repetition_signals(text, index))

    out["line_punct_frac"] = sum(map(str.endswith, nonempty, repeat(_TERMINAL))) / n_lines if nonempty else 0.0
    first, later = _MANY_WORDS[lang in UNSPACED_LANGS]  # "\n" leads the regex engine to each later line
    n_many = (first.match(text) is not None) + len(later.findall(text))
    out["few_words_line_frac"] = (len(nonempty) - n_many) / n_lines if nonempty else 0.0
    out["n_sentences"] = float(len(_SENTENCE_END.findall(text)))
    out["lorem_ipsum"] = float("lorem ipsum" in lower)
    out["curly_bracket"] = float("{" in text)
    out["javascript_line_frac"] = _lines_with(lower, _JAVASCRIPT, ("javascript",)) / n_lines if nonempty else 0.0
    out["policy_line_frac"] = _lines_with(lower, _POLICY_LINE, _POLICY) / n_lines if nonempty else 0.0
    short = 10 if lang in WIDE_LANGS else 30
    line_lens = np.fromiter(map(len, nonempty), dtype=np.int64, count=len(nonempty))
    out["short_line_frac"] = int(np.count_nonzero(line_lens <= short)) / n_lines if nonempty else 0.0
    out["newline_word_ratio"] = text.count("\n") / max(n_words, 1)

    out["uppercase_frac"], out["digit_frac"] = _char_classes(text, lower)
    out["url_word_frac"] = len(_URLISH.findall(text)) / max(n_words, 1)
    return {name: float(out[name]) for name in SIGNAL_NAMES}


def _lower_strip(words: list[str]) -> list[str]:
    """``w.lower().strip(_STRIP)`` of each word, with one ``lower()`` call: words hold no "\\n" and
    no case mapping crosses it or yields it."""
    if not words:
        return []
    return list(map(str.strip, "\n".join(words).lower().split("\n"), repeat(_STRIP)))


def _weighted(index: WordIndex, flags: Iterable[bool]) -> int:
    """How many words (not distinct words) have the flag of their distinct word."""
    mask = np.fromiter(flags, dtype=bool, count=len(index.distinct))
    return int(index.counts[mask].sum())


def _lines_with(lower: str, pattern: re.Pattern[str], needles: tuple[str, ...]) -> int:
    """Lines of the lower-cased text that contain any of ``needles`` (``pattern`` finds each once)."""
    return len(pattern.findall(lower)) if any(n in lower for n in needles) else 0


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


class _AlphaUpper:
    """(str.isalpha, str.isupper) of code points, for texts whose case mapping changes length.

    Filled in as code points are met: the whole Unicode range costs ~0.5 CPU-s to classify, paid
    again by every worker process of a cluster run (benchmarks/recipe), while a process meets a
    few thousand distinct code points. The answers are ``str.isalpha``/``str.isupper`` either way.
    """

    def __init__(self) -> None:
        self.known = np.zeros(0x110000, dtype=bool)
        self.alpha = np.zeros(0x110000, dtype=bool)
        self.upper = np.zeros(0x110000, dtype=bool)

    def __call__(self, cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        new = np.unique(cp[~self.known[cp]])
        if len(new):
            chars = "".join(map(chr, new.tolist()))
            self.alpha[new] = np.fromiter(map(str.isalpha, chars), dtype=bool, count=len(new))
            self.upper[new] = np.fromiter(map(str.isupper, chars), dtype=bool, count=len(new))
            self.known[new] = True
        return self.alpha[cp], self.upper[cp]


_alpha_upper = _AlphaUpper()


def _char_classes(text: str, lower: str) -> tuple[float, float]:
    """(upper-case share of cased letters, ASCII-digit share of characters), vectorised."""
    if not text:
        return 0.0, 0.0
    cp, low, up = _codes(text), _codes(lower), _codes(text.upper())
    digits = float(np.count_nonzero((cp >= 48) & (cp <= 57))) / len(cp)
    if len(low) != len(cp) or len(up) != len(cp):  # a few letters change length when cased
        is_alpha, is_upper = _alpha_upper(cp)
        return int(np.count_nonzero(is_upper)) / max(int(np.count_nonzero(is_alpha)), 1), digits
    cased = np.count_nonzero(low != up)
    return float(np.count_nonzero(cp != low)) / max(cased, 1), digits


def signal_matrix(texts: list[str], langs: list[str] | None = None) -> np.ndarray:
    """(len(texts), len(SIGNALS)) float64 matrix of :func:`text_signals`, columns in SIGNAL_NAMES order."""
    out = np.zeros((len(texts), len(SIGNALS)), dtype=np.float64)
    for i, t in enumerate(texts):
        out[i] = list(text_signals(t, langs[i] if langs is not None else "en").values())
    return out
