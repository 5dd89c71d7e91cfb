"""``_encoded_runs`` pinned to the plain ``finditer`` of every encoded-data pattern."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from curation.quality.code_rules import ENCODED_PATTERNS, _encoded_runs


def reference_encoded_runs(text: str) -> tuple[int, int]:
    longest = total = 0
    for pattern in ENCODED_PATTERNS:
        for m in pattern.finditer(text):
            n = m.end() - m.start()
            total += n
            longest = max(longest, n)
    return longest, min(total, len(text))


HEX = "0x00, 0x1f, 0xAB, 0xcd, 0x10, 0x20, 0x30, 0x40, 0x50"
CASES = [
    "",
    "a",
    "def f(x):\n    return x + 1\n",
    "QUJD" * 16,
    "QUJD" * 16 + "=",
    "x" + "QUJD" * 15 + "QUJ",
    "data = '" + "QUJDRA==" * 40 + "'\n",
    "aa\n" * 40,
    HEX,
    "{" + HEX + "}",
    "\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08",
    "de ad be ef ca fe ba be 00 11",
    "de\u3000ad\u3000be\u3000ef\u3000ca\u3000fe\u3000ba\u3000be\u3000",
    "de\xa0ad\xa0be\xa0ef\xa0ca\xa0fe\xa0ba\xa0be ",
    "é" + "ab cd " * 10 + "é",
    "ab,cd,ef,01,23,45,67,89,ab",
    "ab, cd, ef, 01, 23, 45, 67, 89",
    "s = '" + "\\u4e2d" * 12 + "'",
    "\\u4e2d" * 7,
    "中文" * 50 + "QUJD" * 20,
    "😀" + "0f " * 30 + "😀",
    "\ud800" + "0f " * 30 + "\udfff",
    "x" * 2000,
    "aabb" * 8 + "zz" + "ccdd" * 8,
]


@pytest.mark.parametrize("text", CASES)
def test_encoded_runs_edge_cases(text: str) -> None:
    assert _encoded_runs(text) == reference_encoded_runs(text)


def test_encoded_runs_random_texts() -> None:
    rng = random.Random(7)
    alphabet = list("0123456789abcdefABCDEFxX\\,; \n\t=+/gzQ_(){}") + ["\xa0", "\u3000", "é", "中", "😀", "\x85", "\\u", "0x"]
    for _ in range(1500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        assert _encoded_runs(text) == reference_encoded_runs(text), repr(text)
    for _ in range(300):  # long hex-ish and base64-ish stretches
        byte = rng.randint(0, 255)
        units = [f"0x{byte:02x}, ", f"{byte:02X} ", "QUJD", "\\u00e9", f"\\x{byte:02x}", f"{byte:02x},"]
        body = "".join(rng.choice(units[: rng.randint(1, len(units))]) for _ in range(rng.randint(1, 40)))
        text = rng.choice(["", "a = [", "é"]) + body + rng.choice(["", "]", "\n", "g"])
        assert _encoded_runs(text) == reference_encoded_runs(text), repr(text)


def test_encoded_runs_sample_code() -> None:
    path = Path(__file__).resolve().parents[2] / "sample_data" / "code" / "code.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    assert texts
    for text in texts:
        assert _encoded_runs(text) == reference_encoded_runs(text)
