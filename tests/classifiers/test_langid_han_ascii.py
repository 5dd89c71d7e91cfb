"""``han_share`` returns at once for ASCII text: the same answers as the scans it skips."""

from __future__ import annotations

from classifiers.langid import _HAN, _HANGUL, _KANA, _LETTER, HAN_MIN, HAN_SHARE, HANGUL_MIN, han_share


def _reference(text: str) -> float | None:
    n_han = len(_HAN.findall(text))
    if not n_han or _KANA.search(text) or len(_HANGUL.findall(text)) >= HANGUL_MIN:
        return None
    share = n_han / max(len(_LETTER.findall(text)), 1)
    return share if share >= 0.5 or (n_han >= HAN_MIN and share >= HAN_SHARE) else None


TEXTS = [
    "",
    " ",
    "plain ASCII prose with code x = 1; // comment",
    "12345 !!!",
    "\x00\x7f",
    "SocketChannel ch = ssc.accept(); // 服务器为每个新连接创建一个通道",
    "质量C级，末有下次",
    "Tokyo 東京 is big",
    "東京タワーに行きました",
    "café résumé naïve",
    "emoji 😀 only",
    "中",
    "a" * 9000 + "中文" * 20,
    "lone \ud800 surrogate",
    "한국어 텍스트",
    "Ελληνικά",
    "\u3400\u4dbf\uf900\ufaff",
]


def test_same_as_full_scan():
    for t in TEXTS:
        assert han_share(t) == _reference(t), t
