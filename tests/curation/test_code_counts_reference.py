"""``char_counts`` and the structural score's ``_ramp`` pinned to the regex / ``np.clip`` forms they replace."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from classifiers.code_quality import _ramp
from curation.quality.code_rules import char_counts

_NOT_ALNUM = re.compile(r"[\W_]+")
_NOT_ALPHA = re.compile(r"[\W\d_]+")


def reference_char_counts(text: str) -> tuple[int, int]:
    return len(text) - len("".join(_NOT_ALNUM.findall(text))), len(text) - len("".join(_NOT_ALPHA.findall(text)))


def reference_ramp(x: float, lo: float, hi: float) -> float:
    if lo < hi:
        return float(np.clip((hi - x) / (hi - lo), 0.0, 1.0))
    return float(np.clip((x - hi) / (lo - hi), 0.0, 1.0))


@pytest.mark.parametrize("text", [
    "", "a", "_", "ab1_ é", "中文字符 123", "²³½ ٣٤ Ⅻ", "😀👍🏽", "e\u0301", "\ud800x\udfff", "ǅ ß ﬁ", "\x00\x7f\x80\xff",
    "def f(x):\n    return x_1 + 2\n" * 3 + "é",
])
def test_char_counts_cases(text: str) -> None:
    assert char_counts(text) == reference_char_counts(text)


def test_char_counts_random() -> None:
    rng = random.Random(3)
    pools = [(0, 0x80), (0x80, 0x800), (0x800, 0x3000), (0x4E00, 0x4F00), (0xD800, 0xE000), (0x1F300, 0x1F700), (0, 0x110000)]
    for _ in range(400):
        lo, hi = rng.choice(pools)
        text = "".join(chr(rng.randrange(lo, hi)) if rng.random() < 0.5 else rng.choice("ab_9 \n") for _ in range(rng.randint(0, 120)))
        assert char_counts(text) == reference_char_counts(text)


def test_ramp_matches_np_clip() -> None:
    values = [-0.0, 0.0, 0.5, 1.0, 2, 3, 7, 100, -5, float("nan"), float("inf"), -float("inf"), np.float64(0.25), np.int64(4), 0.05, 0.4,
              6.0, 3.0, 0.3, 40, 200, 500, 0.15, 0.95, 0.6]
    bounds = [(0.15, 0.0), (0.6, 0.95), (40, 200), (100, 500), (6.0, 3.0), (0.05, 0.3), (3, 7), (0.05, 0.4), (0.0, 0.2), (30, 3)]
    for x in values:
        for lo, hi in bounds:
            got, want = _ramp(x, lo, hi), reference_ramp(x, lo, hi)
            assert type(got) is float
            assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want)), (x, lo, hi)
