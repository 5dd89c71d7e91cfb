"""A static embedder: one int8 vector per vocabulary token, averaged over a document (no transformer).

>>> emb = StaticEmbedder(Path(__file__).parent / "models" / "minilm_static")   # doctest: +SKIP
>>> emb.embed(["a page about cats"]).shape                                      # doctest: +SKIP
(1, 128)

The shipped ``minilm_static`` model is distilled from all-MiniLM-L6-v2 (model2vec's recipe: each
token's output embedding, PCA, SIF weighting; see :mod:`classifiers.static_distill`), so it
tokenises like the transformer and approximates its geometry at ~100× its speed on a CPU. Folder:
``static.json`` (card), ``tokenizer.json``, ``embeddings.npy`` (int8, vocab × dim), ``scales.npy``
(float32 per token: quantisation scale × SIF weight) and ``components.npy`` (the directions every
document shares, projected out). No pickle anywhere.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from classifiers.embedding import embedder_name, prepare_texts

log = logging.getLogger(__name__)

#: Characters of a text tokenised first, per token of the window: the window of most texts ends
#: inside this head (a text whose head falls short is tokenised whole).
HEAD_CHARS_PER_TOKEN = 6


class StaticEmbedder:
    """Mean of (weighted) token vectors of the first ``max_seq_length`` tokens, L2-normalised."""

    def __init__(self, path: Path, *, max_seq_length: int = 256, mask_digits: bool = False, batch_size: int = 1024) -> None:
        from tokenizers import Tokenizer

        self.path = Path(path)
        self.card = json.loads((self.path / "static.json").read_text())
        codes = np.load(self.path / "embeddings.npy", allow_pickle=False)
        scales = np.load(self.path / "scales.npy", allow_pickle=False)
        self.table = codes.astype(np.float32) * scales[:, None].astype(np.float32)
        comp = self.path / "components.npy"
        self.components = np.load(comp, allow_pickle=False) if comp.exists() else np.zeros((0, codes.shape[1]), np.float32)
        self.dim = int(self.table.shape[1])
        self.max_seq_length = int(max_seq_length)
        self.mask_digits = bool(mask_digits)
        self.batch_size = int(batch_size)
        self.tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_seq_length)
        self.skip = np.zeros(len(self.table), dtype=bool)
        for tid in self.card.get("skip_ids", []):
            self.skip[tid] = True
        self.name = embedder_name(self.card.get("name", self.path.name), self.max_seq_length, self.mask_digits)
        self.last_stats: dict[str, int] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm float32 vectors, one per text (a text without known tokens gives a zero row)."""
        from scipy import sparse

        prepared = prepare_texts(texts, self.max_seq_length, self.mask_digits)
        out = np.zeros((len(prepared), self.dim), dtype=np.float32)
        tokens = truncated = 0
        for start in range(0, len(prepared), self.batch_size):
            ids = self._ids(prepared[start : start + self.batch_size])
            tokens += sum(len(i) for i in ids)
            truncated += sum(len(i) >= self.max_seq_length for i in ids)
            ids = [i[~self.skip[i]] for i in ids]
            indptr = np.cumsum([0] + [len(i) for i in ids])
            flat = np.concatenate(ids) if ids else np.zeros(0, np.int64)
            counts = sparse.csr_matrix((np.ones(len(flat), np.float32), flat, indptr), shape=(len(ids), len(self.table)))
            out[start : start + len(ids)] = counts @ self.table
        out = _unit(out)
        if len(self.components):  # project out the directions every document shares
            out = _unit(out - (out @ self.components.T) @ self.components)
        self.last_stats = {"texts": len(prepared), "tokens": tokens, "truncated": truncated}
        return out


    def token_ids(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The token ids each text's vector averages (prepared and truncated as :meth:`embed` does,
        skipped tokens removed): what a distillation fits the table on."""
        prepared = prepare_texts(texts, self.max_seq_length, self.mask_digits)
        out: list[np.ndarray] = []
        for start in range(0, len(prepared), self.batch_size):
            out += [i[~self.skip[i]] for i in self._ids(prepared[start : start + self.batch_size])]
        return out

    def _ids(self, prepared: list[str]) -> list[np.ndarray]:
        """The first ``max_seq_length`` token ids of each text.

        Each text is tokenised up to the last space or newline before ``HEAD_CHARS_PER_TOKEN *
        max_seq_length`` characters: a whitespace character ends a word, and normalising and
        pre-tokenising a word never look past it, so the head's tokens are the text's first
        tokens. A head that yields fewer than ``max_seq_length`` tokens is tokenised whole again.
        """
        heads = [_head(t, HEAD_CHARS_PER_TOKEN * self.max_seq_length) for t in prepared]
        ids = [e.ids for e in self.tokenizer.encode_batch_fast(heads, add_special_tokens=False)]
        redo = [i for i, h in enumerate(heads) if len(ids[i]) < self.max_seq_length and len(h) < len(prepared[i])]
        if redo:
            whole = self.tokenizer.encode_batch_fast([prepared[i] for i in redo], add_special_tokens=False)
            for i, e in zip(redo, whole, strict=True):
                ids[i] = e.ids
        return [np.asarray(i, dtype=np.int64) for i in ids]


def _head(text: str, chars: int) -> str:
    """``text`` cut before its last space or newline within ``chars`` characters (whole if none).

    >>> _head("one two three", 9), _head("one two three", 3), _head("one two", 20)
    ('one two', 'one two three', 'one two')
    """
    if len(text) <= chars:
        return text
    cut = max(text.rfind(" ", 0, chars), text.rfind("\n", 0, chars))
    return text[:cut] if cut > 0 else text


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
