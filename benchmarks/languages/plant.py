"""Planted near-copies for the language benchmarks: a share of Han characters (Chinese) or of
words (English) replaced by others drawn from the same text, seeded."""

from __future__ import annotations

import random
import re

_HAN = re.compile(r"[\u4e00-\u9fff]")


def han_near_copy(text: str, rate: float, rng: random.Random) -> str:
    """``text`` with ``rate`` of its Han characters replaced by other Han characters of the text."""
    pos = [m.start() for m in _HAN.finditer(text)]
    if not pos:
        return text
    pool = [text[p] for p in pos]
    chars = list(text)
    for p in rng.sample(pos, max(1, round(rate * len(pos)))):
        chars[p] = rng.choice([c for c in pool[:200] if c != chars[p]] or ["的"])
    return "".join(chars)


def word_near_copy(text: str, rate: float, rng: random.Random) -> str:
    """``text`` with ``rate`` of its whitespace words replaced by other words of the text."""
    words = text.split(" ")
    idx = [i for i, w in enumerate(words) if w.strip()]
    for i in rng.sample(idx, max(1, round(rate * len(idx)))):
        words[i] = rng.choice(words[:300])
    return " ".join(words)
