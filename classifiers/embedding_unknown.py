"""Which texts an embedder sees as unknown tokens only (``[UNK]``, or nothing at all).

all-MiniLM-L6-v2's WordPiece vocabulary has no token for emoji or for Sinhala, Amharic, Burmese or
Khmer script: such a page embeds as ``[CLS] [UNK] … [SEP]``, the same vector as every other such
page (cosine ~1.0 between unrelated pages). SemDeDup never prunes these pages.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

from classifiers.embedding import prepare_texts, resolve_model_path

#: A page with one of these characters has a known WordPiece token (every ASCII letter and digit is one).
_KNOWN_ASCII = re.compile(r"[A-Za-z0-9]")


@functools.lru_cache(maxsize=4)
def _tokenizer(model: str, max_seq_length: int):  # noqa: ANN202 - tokenizers.Tokenizer
    from tokenizers import Tokenizer

    path = resolve_model_path(model) / "tokenizer.json"
    if not path.is_file():
        return None
    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.enable_truncation(max_length=int(max_seq_length))
    return tok


def unknown_only(texts: Sequence[str], model: str, max_seq_length: int = 256) -> np.ndarray:
    """Whether each text's tokens in the embedder's window are all unknown (or there are none).

    A model folder without ``tokenizer.json`` marks nothing (its vocabulary is not known here).

    >>> unknown_only(["😀🎉", "A phone screen", "", "ශ්‍රී ලංකා", "手机"], "all-MiniLM-L6-v2").tolist()
    [True, False, True, True, False]
    """
    out = np.zeros(len(texts), dtype=bool)
    tok = _tokenizer(str(model), int(max_seq_length))
    if tok is None or not len(texts):
        return out
    prepared = prepare_texts(texts, int(max_seq_length), False)
    todo = [i for i, t in enumerate(prepared) if not _KNOWN_ASCII.search(t)]
    if not todo:
        return out
    unk = tok.token_to_id(str(getattr(tok.model, "unk_token", "[UNK]")))
    for i, enc in zip(todo, tok.encode_batch([prepared[i] for i in todo], add_special_tokens=False), strict=True):
        out[i] = all(t == unk for t in enc.ids)
    return out
