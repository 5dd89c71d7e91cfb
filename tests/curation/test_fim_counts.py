"""``export.json``'s ``fim_tokens`` count each FIM'd document's own text from the ids its FIM'd text
already has (curation.export.fim_counts), not by tokenizing the own text a second time: the count must
be :func:`curation.tokens.count_tokens` of the own text, whatever the cuts split."""

import numpy as np
import pytest

from curation.export.fim_counts import own_counts
from curation.mixture.fim import FimSentinels, fim_format, fim_inverse
from curation.tokens import EOD_TEXT, count_tokens, encode

S = FimSentinels()
TEXTS = [
    "import os\nimport sys\n\n\ndef main(argv):\n    for a in argv:\n        print(a)  # each\n    return 0\n",
    "fn add(a: i32, b: i32) -> i32 {\r\n\treturn a + b;\r\n}\r\n\r\n// 12345 67890 !== ===\n",
    "    indented     only\n        \n\t\t deeper;;;\n   \n",
    "def 函数():\n    return '中文注释 e\u0301 café'  # NFC: é\nx = '<|im_start|>' + \"don't\"\n",
    "x = 1\n" + EOD_TEXT[:6],
    "a" * 300 + "\n" + "1234567890" * 30 + "\n}}}\n\n\n{{{",
]


def direct(texts, modes):
    return count_tokens([fim_inverse(t, m, S) for t, m in zip(texts, modes, strict=True)], "qwen")


@pytest.mark.parametrize("mode", ["psm", "spm"])
def test_own_counts_are_the_own_texts_counts_at_every_cut(mode):
    """Every pair of cuts of short texts (every character boundary: inside words, spaces, newline runs,
    CRLF, digits, combining marks, an added token's text) and many of the longer ones."""
    texts, modes = [], []
    rng = np.random.default_rng(3)
    for own in TEXTS:
        n = len(own)
        pairs = [(a, b) for a in range(n + 1) for b in range(a, n + 1)] if n <= 40 else []
        pairs += [tuple(sorted(rng.integers(0, n + 1, size=2).tolist())) for _ in range(300)]
        for a, b in pairs:
            texts.append(fim_format(own[:a], own[a:b], own[b:], mode, S))
            modes.append(mode)
    texts.append(fim_format("print(1)\n<|endof", "text|>", "\n", mode, S))  # the EOD's text where two pieces meet
    modes.append(mode)
    got = own_counts(texts, modes, encode(texts, "qwen"), S, "qwen")
    assert got.tolist() == direct(texts, modes).tolist()
