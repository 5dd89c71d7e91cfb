"""Web-page quality signals from the Gopher, C4 and FineWeb rules, as numbers, per language.

Words are whitespace-separated, except in languages written without spaces (``zh``, ``ja``,
``th``, …: :data:`UNSPACED_LANGS`), where every character of those scripts is a word and the
runs of other non-space characters between them are words too (FineWeb-2 segments such
languages before applying the same rules). Stop words are the language's
(:data:`STOP_WORDS_BY_LANG`); for a language without a list the stop-word signals are NaN
(undefined), and the heuristic combination leaves them out of the page's score.

Each signal is a number per document; none decides anything. The rule that uses it and the
threshold the rule applies are in :data:`SIGNALS` (documentation: ``lo``/``hi``, the published
pass range). A stage that applies one rule on its own is ``repeated_lines`` (``dup_line_frac``).

>>> s = text_signals("The cat sat on the mat.\\nThe dog ate the bone and slept.")
>>> s["n_words"], round(s["stop_word_frac"], 2), s["line_punct_frac"]
(13.0, 0.46, 1.0)
>>> z = text_signals("我们今天在家里学习了数据库的索引。索引可以加快查询。", "zh")
>>> z["n_words"], round(z["stop_word_frac"], 2), z["n_sentences"]
(26.0, 0.27, 2.0)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from itertools import repeat

import numpy as np

from classifiers.heuristics_chars import char_classes, nonempty_words_with_alpha
from classifiers.heuristics_repetition import WordIndex, index_words, repetition_signals
from curation.hashing import codepoints


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
_CJK_SENTENCE_END = re.compile("[。！？]+")
_URLISH = re.compile(r"[hHwW.](?i:(?<=h)ttps?://|(?<=w)ww\.|(?<=\.)(?:com|org|net|html?|php)\b)")
#: At least three segments (C4's short-line rule) from the start of a line, without crossing "\n".
_THREE_SEGMENTS = f"(?:[^\\S\\n]*(?:[{_UNSPACED_CHARS}]|[^\\s{_UNSPACED_CHARS}]+(?![^\\s{_UNSPACED_CHARS}]))){{3}}"
_MANY_SEGMENTS = (re.compile(_THREE_SEGMENTS), re.compile("\n" + _THREE_SEGMENTS))
_JAVASCRIPT = re.compile(r"^.*?javascript", re.MULTILINE)
_POLICY_LINE = re.compile("^.*?(?:" + "|".join(map(re.escape, _POLICY)) + ")", re.MULTILINE)
_STRIP = "\"'“”‘’«»()[]{}<>.,;:!?…-–—*•|/\\"
#: Every match of _URLISH holds "://" or, lower-cased, one of these: the only characters that
#: match w, c, o, m, r, g, n, e, t, h or p case-insensitively are that letter and its capital.
_URL_NEEDLES = ("://", "www.", ".com", ".org", ".net", ".htm", ".php")
#: A word of "lorem ipsum", "javascript" and of each phrase of _POLICY (all of the cookie ones hold
#: "cookie"): where the lower-cased words hold none of these, the lower-cased text holds none of them.
_LOWER_NEEDLES = ("ipsum", "javascript", "cookie", "terms", "privacy", "reserved")


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
    raw_lines = text.split("\n")
    nonempty = list(filter(None, map(str.strip, raw_lines)))
    n_lines = max(len(nonempty), 1)
    out: dict[str, float] = {"n_words": float(n_words)}

    lower_words = list(map(str.lower, index.distinct))
    lowered = list(map(str.strip, lower_words, repeat(_STRIP)))
    lowered_lens = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered))
    n_kept = int(index.counts[lowered_lens > 0].sum())
    out["mean_word_length"] = int(lowered_lens @ index.counts) / n_kept if n_kept else 0.0
    n_symbols = text.count("#") + sum(text.count(e) for e in _ELLIPSES)
    out["symbol_word_ratio"] = n_symbols / max(n_words, 1)
    out["bullet_line_frac"] = sum(map(str.startswith, nonempty, repeat(_BULLETS))) / n_lines
    out["ellipsis_line_frac"] = sum(map(str.endswith, nonempty, repeat(_ELLIPSES))) / n_lines
    # A word that isalpha() has a character of [^\W\d_], so that class alone decides.
    cp = codepoints(index.distinct, "")  # the distinct words (none empty) joined; each ends at word_ends
    word_ends = np.cumsum(index.distinct_lens)
    alpha = nonempty_words_with_alpha(cp, word_ends - index.distinct_lens)
    out["alpha_word_frac"] = int(index.counts[alpha].sum()) / max(n_words, 1)
    stop, gopher = STOP_WORDS_BY_LANG.get(lang), GOPHER_STOP_WORDS_BY_LANG.get(lang)
    out["gopher_stop_words"] = float(len(gopher.intersection(lowered))) if gopher else float("nan")
    out["stop_word_frac"] = _weighted(index, map(stop.__contains__, lowered)) / max(n_words, 1) if stop else float("nan")

    out.update(repetition_signals(text, index, raw_lines))

    out["line_punct_frac"] = sum(map(str.endswith, nonempty, repeat(_TERMINAL))) / n_lines if nonempty else 0.0
    if lang in UNSPACED_LANGS:
        first, later = _MANY_SEGMENTS  # "\n" leads the regex engine to each later line
        n_many = (first.match(text) is not None) + len(later.findall(text))
    else:  # lines of at least three words: their split at the first two runs of white space has three parts
        n_many = list(map(len, map(str.split, nonempty, repeat(None), repeat(2)))).count(3)
    out["few_words_line_frac"] = (len(nonempty) - n_many) / n_lines if nonempty else 0.0
    out["n_sentences"] = float(_sentence_ends(text, lang, index, cp[word_ends - 1]))
    # the lower-cased text, needed only where a phrase looked for in it may occur
    word_text = " ".join(lower_words)
    lower = text.lower() if any(n in word_text for n in _LOWER_NEEDLES) else ""
    out["lorem_ipsum"] = float("lorem ipsum" in lower)
    out["curly_bracket"] = float("{" in text)
    out["javascript_line_frac"] = _lines_with(lower, _JAVASCRIPT, ("javascript",)) / n_lines if nonempty else 0.0
    out["policy_line_frac"] = _lines_with(lower, _POLICY_LINE, _POLICY) / n_lines if nonempty else 0.0
    short = 10 if lang in WIDE_LANGS else 30
    line_lens = np.fromiter(map(len, nonempty), dtype=np.int64, count=len(nonempty))
    out["short_line_frac"] = int(np.count_nonzero(line_lens <= short)) / n_lines if nonempty else 0.0
    out["newline_word_ratio"] = text.count("\n") / max(n_words, 1)

    out["uppercase_frac"], out["digit_frac"] = char_classes(text)
    n_urls = len(_URLISH.findall(text)) if _may_have_urls(word_text) else 0
    out["url_word_frac"] = n_urls / max(n_words, 1)
    return {name: float(out[name]) for name in SIGNAL_NAMES}


def _weighted(index: WordIndex, flags: Iterable[bool]) -> int:
    """How many words (not distinct words) have the flag of their distinct word."""
    mask = np.fromiter(flags, dtype=bool, count=len(index.distinct))
    return int(index.counts[mask].sum())


def _sentence_ends(text: str, lang: str, index: WordIndex, last: np.ndarray) -> int:
    """``len(_SENTENCE_END.findall(text))``; ``last``: the last code point of each of ``index.distinct``.

    Where words are whitespace-separated (``str.split`` and ``\\s`` agree on white space), a match of
    ``[.!?]`` is the run of them that ends a word, one per word ending in . ! or ?; a match of
    ``[。！？]`` is a whole run of those, and neither kind of match holds a character of the other.
    """
    if lang in UNSPACED_LANGS or not index.distinct:
        return len(_SENTENCE_END.findall(text))
    n = int(index.counts[(last == 46) | (last == 33) | (last == 63)].sum())  # . ! ?
    if not text.isascii() and ("。" in text or "！" in text or "？" in text):
        n += len(_CJK_SENTENCE_END.findall(text))
    return n


def _may_have_urls(word_text: str) -> bool:
    """False only where :data:`_URLISH` finds nothing in the text whose lower-cased words are joined
    in ``word_text`` (a match holds no white space, so it lies in one word)."""
    return any(n in word_text for n in _URL_NEEDLES)


def _lines_with(lower: str, pattern: re.Pattern[str], needles: tuple[str, ...]) -> int:
    """Lines of the lower-cased text that contain any of ``needles`` (``pattern`` finds each once)."""
    return len(pattern.findall(lower)) if lower and any(n in lower for n in needles) else 0


def signal_matrix(texts: list[str], langs: list[str] | None = None) -> np.ndarray:
    """(len(texts), len(SIGNALS)) float64 matrix of :func:`text_signals`, columns in SIGNAL_NAMES order."""
    out = np.zeros((len(texts), len(SIGNALS)), dtype=np.float64)
    for i, t in enumerate(texts):
        out[i] = list(text_signals(t, langs[i] if langs is not None else "en").values())
    return out
