"""prepare_texts masks digits from the first window of characters when that suffices: pinned to
masking twice the window and cutting (the old computation)."""

from __future__ import annotations

import random
import re

from classifiers.embedding import CHARS_PER_TOKEN, prepare_texts


def reference_prepare(texts: list, max_seq_length: int, digits_masked: bool) -> list[str]:
    cap = max(64, max_seq_length * CHARS_PER_TOKEN)
    out = []
    for t in texts:
        t = t if isinstance(t, str) else ""
        t = t[: cap * 2]
        if digits_masked:
            t = re.sub(r"\d+", "0", t)
        out.append(t[:cap])
    return out


def varied_texts() -> list:
    rng = random.Random(3)
    pieces = ["a", "b c", " ", "\n", "1", "12", "123456", "٣٤", "０１", "x9", "9x", "."]
    texts: list = [None, 7, "", "1" * 200, "1" * 70 + "a" * 70, "a" * 63 + "12345" + "b" * 100]
    for cap in (64, 96):
        for k in range(cap - 3, cap + 3):  # digit runs around the cut and twice the cut
            texts += ["a" * k + "123456" + "b" * 200, "a" * (k - 1) + "1" + "22" * 40 + "c", "1" * k + " " + "2" * (2 * cap)]
            texts += ["12 " * (k // 3) + "a" * k + "3" * (cap + 5) + "d"]
    # masked heads shorter than the cut, with a digit run starting before, at and after the cut
    for m in range(15, 33):
        for j in range(4):
            texts += ["12 " * m + "a" * j + "4" * 50 + "x" * 300, "12 " * m + "a" * j + "4" * 50 + " 5" * 200]
    for _ in range(400):
        n = rng.choice([5, 40, 100, 200, 400])
        texts.append("".join(rng.choice(pieces) for _ in range(n)))
    return texts


def test_prepare_texts_equals_reference() -> None:
    texts = varied_texts()
    for seq in (1, 8, 256):
        for masked in (False, True):
            assert prepare_texts(texts, seq, masked) == reference_prepare(texts, seq, masked)
