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
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.embedding import embedder_name, prepare_texts

log = logging.getLogger(__name__)

#: Characters per token of the window at which each text is cut in turn: a text is tokenised piece
#: by piece, each piece ending at the last space or newline before the next of these limits, until
#: the window is full (English reaches 256 tokens at ~4.6 characters a token, Chinese at ~1.5);
#: the rest of a text still short of the window after the last limit is tokenised whole.
HEAD_CHARS_PER_TOKEN = (2, 3.5, 4, 4.5, 5, 5.5, 6)
#: The ASCII characters BERT's normaliser deletes (``clean_text``: controls but tab, newline, return).
_ASCII_DELETED = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f"


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
        self.plain, self._not_plain = _plain_tokenizer(self.path / "tokenizer.json", self.max_seq_length)
        # Characters' images under the normaliser (ASCII lower-cased; others as met, :meth:`_normalised`).
        self._images: dict[str, str] = {chr(c): chr(c).lower() for c in range(128)}
        self._table: dict[int, int | str] = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
        self._unmapped: set[str] = set()
        self._normalizer = self.tokenizer.normalizer
        norm = self._normalizer.normalize_str if self.plain is not None else None
        self._contexts = [(a, b, norm(a), norm(b)) for a, b in _CONTEXTS] if norm else []
        self._lowered: set[str] = set(self._images)  # characters whose image str.lower gives in any text
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

        Each text is tokenised in pieces that end before a space or newline (at the limits of
        :data:`HEAD_CHARS_PER_TOKEN`): a whitespace character ends a word, and normalising and
        pre-tokenising a word never look past it, so a text's tokens are its pieces' tokens one
        after another. A text stops at the piece that fills the window.
        """
        n = self.max_seq_length
        ids: list[list[int]] = [[] for _ in prepared]
        done = [0] * len(prepared)
        todo = list(range(len(prepared)))
        for per_token in (*HEAD_CHARS_PER_TOKEN, None):
            limit = None if per_token is None else int(per_token * n)
            batch, pieces = [], []
            for i in todo:
                text, start = prepared[i], done[i]
                end = len(text) if limit is None else _piece_end(text, start, limit)
                if end > start:
                    batch.append(i)
                    pieces.append(text[start:end])
                    done[i] = end
            for i, got in zip(batch, self._encode(pieces), strict=True):
                ids[i] = ids[i] + got if ids[i] else got
            todo = [i for i in todo if len(ids[i]) < n and done[i] < len(prepared[i])]
            if not todo:
                break
        return [np.asarray(i[:n], dtype=np.int64) for i in ids]

    def _encode(self, pieces: list[str]) -> list[list[int]]:
        """Token ids of each piece: a piece the normaliser maps character by character (see
        :meth:`_normalised`) normalised here and tokenised without the normaliser, the rest in full."""
        texts = [None] * len(pieces) if self.plain is None else [self._normalised(p) for p in pieces]
        plain = [k for k, t in enumerate(texts) if t is not None]
        rest = [k for k, t in enumerate(texts) if t is None]
        out: list[list[int]] = [[] for _ in pieces]
        if plain:
            for k, e in zip(plain, self.plain.encode_batch_fast([texts[k] for k in plain], add_special_tokens=False), strict=True):
                out[k] = e.ids
        if rest:
            for k, e in zip(rest, self.tokenizer.encode_batch_fast([pieces[k] for k in rest], add_special_tokens=False), strict=True):
                out[k] = e.ids
        return out

    def _normalised(self, piece: str) -> str | None:
        """``piece`` as BERT's normaliser leaves it, when that is its characters' images one after
        another (None otherwise, or when the piece holds the first character of an added token:
        ``[MASK]`` is matched in the raw text).

        ASCII: lower-cased (tab, newline and return stay; the pre-tokeniser splits on them as on the
        space they would become); deleted controls send the piece to the normaliser. Other
        characters: each one's image is asked of the normaliser once (:func:`_char_image`); a piece
        is lower-cased by ``str.lower`` when that gives every character's image whatever its
        neighbours (not a final sigma), else mapped by ``str.translate``.
        """
        if self._not_plain.search(piece):
            return None
        if piece.isascii():
            return piece.lower()
        chars = set(piece)
        for c in chars.difference(self._images, self._unmapped):
            image = _char_image(self._normalizer, self._contexts, c)
            if image is None:
                self._unmapped.add(c)
            else:
                self._images[c] = image
                if image != c:
                    self._table[ord(c)] = image
                if ("a" + c + "a").lower() == "a" + image + "a" and ("a" + c).lower() == "a" + image:
                    self._lowered.add(c)
        if not self._unmapped.isdisjoint(chars):
            return None
        return piece.lower() if chars <= self._lowered else piece.translate(self._table)


def _char_image(normalizer: Any, contexts: list[tuple[str, str, str, str]], c: str) -> str | None:
    """What the normaliser makes of ``c`` alone, when it makes the same of ``c`` within any text
    (None otherwise): ``c`` is a starter and every mark of its NFD that is not one is a non-spacing
    mark (accent stripping removes it, so no reordering shows), and ``c`` gives its image beside
    letters, marks, spaces, Han and itself (a context-dependent image, such as a final sigma's,
    fails one of these, or three of ``c`` in a row)."""
    if unicodedata.combining(c) or unicodedata.category(c) in ("Cn", "Co", "Cs"):
        return None
    if any(unicodedata.combining(d) and unicodedata.category(d) != "Mn" for d in unicodedata.normalize("NFD", c)):
        return None
    norm = normalizer.normalize_str
    image = norm(c)
    if norm(c + c + c) != image * 3:
        return None
    for left, right, left_image, right_image in contexts:  # (neighbours, their images): _CONTEXTS
        if norm(left + c + right) != left_image + image + right_image:
            return None
    return image


#: Neighbours :func:`_char_image` puts around a character: letters, spaces, Han, marks.
_CONTEXTS = (("a", "a"), ("A", "b"), (" ", " "), ("\u7684", "\u7684"), ("e\u0301", "\u0301"))


def _plain_tokenizer(path: Path, max_seq_length: int) -> tuple[Any, re.Pattern[str]]:
    """The tokenizer without its normaliser when that is BERT's lower-casing one (else None), and
    the characters that keep a piece from it (deleted ones, first characters of added tokens)."""
    from tokenizers import Tokenizer

    spec = json.loads(path.read_text())
    firsts = sorted({t["content"][0] for t in spec.get("added_tokens", []) if t.get("content")})
    not_plain = re.compile("[" + _ASCII_DELETED + "".join(re.escape(c) for c in firsts) + "]")
    norm = spec.get("normalizer") or {}
    if norm.get("type") != "BertNormalizer" or not norm.get("lowercase") or not norm.get("clean_text"):
        return None, not_plain
    tok = Tokenizer.from_file(str(path))
    tok.normalizer = None
    tok.no_padding()
    tok.enable_truncation(max_seq_length)
    return tok, not_plain


def _piece_end(text: str, start: int, chars: int) -> int:
    """Where the piece of ``text`` from ``start`` ends within ``chars`` characters: the text's end,
    else its last space or newline after ``start`` (``start`` itself when there is none).

    >>> _piece_end("one two three", 0, 9), _piece_end("one two three", 3, 9), _piece_end("one two", 0, 20)
    (7, 7, 7)
    >>> _piece_end("one two three", 7, 9), _piece_end("one two three", 0, 3)
    (7, 0)
    """
    if len(text) <= chars:
        return len(text)
    cut = max(text.rfind(" ", start + 1, chars), text.rfind("\n", start + 1, chars))
    return cut if cut > start else start


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
