"""Distil a static embedder from a sentence-transformers model, offline (model2vec's recipe).

    python -m classifiers.static_distill --out classifiers/models/minilm_static --dim 128

For every vocabulary token, the transformer's mean-pooled output for ``[CLS] token [SEP]`` is
that token's vector; PCA reduces the vectors to ``dim`` components; each token is weighted by
SIF, ``a / (a + p(token))`` with ``p`` from Zipf's law on the vocabulary rank (BERT's WordPiece
vocabulary lists frequent words first); vectors are stored as int8 with one float32 scale per
token. It runs from the local model folder (no network) in about a minute on two cores.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import sys
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

SKIP_TOKENS = re.compile(r"^\[(unused\d+|PAD|CLS|SEP|MASK)\]$")


def token_vectors(model_path: Path, batch_size: int = 512) -> tuple[np.ndarray, list[str]]:
    """``(vocab × hidden)`` mean-pooled output of ``[CLS] t [SEP]`` for each token ``t``, and the vocabulary."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
    vocab = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    cls, sep = tok.cls_token_id, tok.sep_token_id
    out = np.zeros((len(vocab), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(vocab), batch_size):
            ids = torch.arange(start, min(start + batch_size, len(vocab)))
            batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            out[start : start + len(ids)] = hidden.mean(dim=1).numpy()
    return out, vocab


def pca(x: np.ndarray, dim: int) -> np.ndarray:
    """Project centred ``x`` on its ``dim`` leading principal axes (signs fixed for determinism)."""
    xc = x - x.mean(axis=0)
    vals, vecs = np.linalg.eigh(xc.T @ xc / max(len(x) - 1, 1))
    comps = vecs[:, ::-1][:, :dim]
    scores = xc @ comps
    signs = np.sign(scores[np.argmax(np.abs(scores), axis=0), np.arange(scores.shape[1])])
    return (scores * signs).astype(np.float32)


def sif_weights(n: int, a: float = 1e-4) -> np.ndarray:
    """SIF weight per rank with Zipf probabilities, as model2vec."""
    inv_rank = 1.0 / np.arange(2, n + 2)
    return (a / (a + inv_rank / inv_rank.sum())).astype(np.float32)


def quantize_int8(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-row int8 codes and scales: ``x ≈ codes * scales[:, None]``."""
    scale = np.abs(x).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    codes = np.clip(np.rint(x / scale[:, None]), -127, 127).astype(np.int8)
    return codes, scale.astype(np.float32)


def common_components(unit_vectors: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` leading right singular vectors of document vectors (the directions every document
    shares; SIF's "common component removal", Arora et al. 2017)."""
    if n <= 0 or len(unit_vectors) == 0:
        return np.zeros((0, unit_vectors.shape[1]), dtype=np.float32)
    _, _, vt = np.linalg.svd(np.asarray(unit_vectors, dtype=np.float64), full_matrices=False)
    return vt[:n].astype(np.float32)


def teacher_basis(targets: np.ndarray, dim: int) -> np.ndarray:
    """``(dim × hidden)`` orthonormal rows: the leading right singular vectors of the teacher's unit
    document vectors (not centred, so cosines survive the projection; signs fixed for determinism)."""
    _, _, vt = np.linalg.svd(np.asarray(targets, dtype=np.float64), full_matrices=False)
    vt = vt[:dim]
    signs = np.sign(vt[np.arange(len(vt)), np.argmax(np.abs(vt), axis=1)])
    return (vt * signs[:, None]).astype(np.float32)


def fit_to_teacher(
    table: np.ndarray, docs: list[np.ndarray], targets: np.ndarray, *, epochs: int = 10, batch: int = 256,
    lr: float = 1e-3, seed: int = 0, threads: int = 1, pairs: float = 0.0,
) -> np.ndarray:
    """Tokenlearn's step: adjust the token table so that each document's summed token vector points
    where the teacher's embedding of it does (loss ``1 − cos``, Adam, batch order from ``seed``), plus
    ``pairs`` × the mean squared gap between the cosines of the batch's documents and the teacher's
    (without it, real Chinese reviews the teacher puts at 0.75–0.85 land above 0.92).

    ``docs`` are the token ids of each document (:meth:`StaticEmbedder.token_ids`), ``targets`` the
    teacher's vectors in the table's space (``teacher @ basis.T``). Runs on the CPU with ``threads``
    threads; the result is deterministic for a given seed and thread count.
    """
    import torch
    from scipy import sparse

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    indptr = np.cumsum([0] + [len(i) for i in docs])
    flat = np.concatenate(docs) if docs else np.zeros(0, np.int64)
    counts = sparse.csr_matrix((np.ones(len(flat), np.float32), flat, indptr), shape=(len(docs), len(table)))
    weights = torch.nn.Parameter(torch.from_numpy(np.array(table, dtype=np.float32)))
    goal = torch.nn.functional.normalize(torch.from_numpy(np.asarray(targets, dtype=np.float32)), dim=1)
    opt = torch.optim.Adam([weights], lr=lr)
    rng = np.random.default_rng(seed)
    keep = np.flatnonzero(np.diff(indptr) > 0)
    for epoch in range(epochs):
        order = rng.permutation(keep)
        total = 0.0
        for b in range(0, len(order), batch):
            rows = np.sort(order[b : b + batch])
            sub = counts[rows].tocoo()
            mat = torch.sparse_coo_tensor(np.vstack([sub.row, sub.col]), sub.data, sub.shape, check_invariants=False)
            pred = torch.sparse.mm(mat, weights)
            loss = (1 - torch.nn.functional.cosine_similarity(pred, goal[rows], dim=1)).mean()
            if pairs:  # the cosines between documents, which deduplication compares, as the teacher's
                unit = torch.nn.functional.normalize(pred, dim=1)
                loss = loss + pairs * ((unit @ unit.T - goal[rows] @ goal[rows].T) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(rows)
        log.info("fit_to_teacher: epoch %d loss %.4f", epoch, total / max(len(keep), 1))
    return weights.detach().numpy().astype(np.float32)


def distill(
    model_path: Path, out: Path, dim: int = 128, sif: float = 1e-4, name: str = "minilm-static",
    corpus: list[str] | None = None, n_components: int = 3, vectors: np.ndarray | None = None,
) -> Path:
    """Write a static model folder distilled from ``model_path`` to ``out``.

    With ``corpus`` (a few hundred documents of the kind to embed), the ``n_components`` directions
    shared by all its documents are stored and projected out at inference: without that, any two
    static document vectors have a cosine near 0.9 and a duplicate threshold cannot separate them.
    ``vectors`` reuses the output of :func:`token_vectors` (it is the slow part).
    """
    from tokenizers import Tokenizer

    vocab = [t for t, _ in sorted(Tokenizer.from_file(str(model_path / "tokenizer.json")).get_vocab().items(),
                                  key=lambda kv: kv[1])]
    if vectors is None:
        vectors, vocab = token_vectors(model_path)
    reduced = pca(vectors, dim) * sif_weights(len(vocab), sif)[:, None]
    write_table(out, reduced, model_path)
    card = {
        "name": name, "kind": "static", "source_model": model_path.name if model_path.name != "model" else "all-MiniLM-L6-v2",
        "recipe": "model2vec-style: mean-pooled [CLS] t [SEP] output per token, PCA, SIF (Zipf on rank), int8 per-row; "
                  "common components of a reference corpus projected out",
        "dim": dim, "vocab_size": len(vocab), "sif_coefficient": sif, "dtype": "int8",
        "skip_ids": [i for i, t in enumerate(vocab) if SKIP_TOKENS.match(t)],
        "common_components": 0, "corpus_documents": 0,
    }
    (out / "static.json").write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    if corpus:
        from classifiers.static_embedding import StaticEmbedder

        raw = StaticEmbedder(out, max_seq_length=256).embed(corpus)
        np.save(out / "components.npy", common_components(raw[np.linalg.norm(raw, axis=1) > 0], n_components),
                allow_pickle=False)
        card.update(common_components=n_components, corpus_documents=len(corpus))
        (out / "static.json").write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    return out


def write_table(out: Path, table: np.ndarray, model_path: Path) -> None:
    """A static model folder's arrays: the int8 token table, its per-row scales, no common
    directions yet, and the teacher's tokenizer."""
    codes, scales = quantize_int8(table)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "embeddings.npy", codes, allow_pickle=False)
    np.save(out / "scales.npy", scales, allow_pickle=False)
    np.save(out / "components.npy", np.zeros((0, table.shape[1]), np.float32), allow_pickle=False)
    shutil.copyfile(model_path / "tokenizer.json", out / "tokenizer.json")


def distill_to_teacher(
    model_path: Path, out: Path, docs: list[np.ndarray], teacher: np.ndarray, *, vectors: np.ndarray,
    dim: int = 128, sif: float = 1e-4, epochs: int = 10, lr: float = 0.1, name: str = "minilm-static-bi",
    corpus: dict[str, int] | None = None, seed: int = 0, pairs: float = 20.0,
) -> Path:
    """Write a static model folder whose token table is fitted to the teacher (Tokenlearn's recipe).

    ``docs``: token ids of the training documents (:meth:`StaticEmbedder.token_ids` with the shipped
    tokenizer, digits masked as the stage embeds); ``teacher``: the transformer's unit vectors of the
    same documents; ``vectors``: :func:`token_vectors`. The table starts as the token vectors, centred,
    projected on the teacher's ``dim`` leading directions (:func:`teacher_basis`) and SIF-weighted, and
    is then fitted for ``epochs`` (:func:`fit_to_teacher`, step ``lr`` × the mean absolute entry,
    pair term ``pairs``).
    No common directions are projected out: the fit already spreads documents as the teacher does.
    ``corpus`` (documents per part) is recorded in the card.
    """
    from tokenizers import Tokenizer

    vocab = [t for t, _ in sorted(Tokenizer.from_file(str(model_path / "tokenizer.json")).get_vocab().items(),
                                  key=lambda kv: kv[1])]
    skip = [i for i, t in enumerate(vocab) if SKIP_TOKENS.match(t)]
    basis = teacher_basis(teacher, dim)
    start = ((vectors - vectors.mean(axis=0)) @ basis.T) * sif_weights(len(vocab), sif)[:, None]
    start[skip] = 0.0
    table = fit_to_teacher(start, docs, teacher @ basis.T, epochs=epochs, lr=lr * float(np.abs(start).mean()), seed=seed,
                           pairs=pairs)
    write_table(out, table, model_path)
    card = {
        "name": name, "kind": "static", "source_model": "all-MiniLM-L6-v2",
        "recipe": "Tokenlearn-style: token vectors ([CLS] t [SEP], mean-pooled) centred, projected on the teacher's "
                  "leading document directions, SIF (Zipf on rank), then fitted so each document's mean token vector "
                  "matches the teacher's vector of it (1 - cos) and document pairs the teacher's cosines (Adam); int8 per-row",
        "dim": dim, "vocab_size": len(vocab), "sif_coefficient": sif, "dtype": "int8", "skip_ids": skip,
        "common_components": 0, "fit": {"epochs": epochs, "lr": lr, "pairs": pairs, "seed": seed, "documents": len(docs),
                                        "corpus": dict(corpus or {})},
    }
    (out / "static.json").write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="sentence-transformers folder (default: the bundled all-MiniLM-L6-v2)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--sif", type=float, default=1e-4)
    parser.add_argument("--corpus", type=Path, default=None, help="Parquet or JSONL(.gz) with a text column: common directions")
    parser.add_argument("--corpus-docs", type=int, default=1000, help="documents of --corpus to use")
    parser.add_argument("--components", type=int, default=3, help="common directions projected out")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    from classifiers.embedding import resolve_model_path

    path = Path(args.model) if args.model else resolve_model_path("all-MiniLM-L6-v2")
    corpus = None
    if args.corpus is not None:
        import pandas as pd

        frame = pd.read_parquet(args.corpus) if args.corpus.suffix == ".parquet" else pd.read_json(args.corpus, lines=True)
        texts = frame["text"].dropna()
        corpus = texts[texts.str.len() > 0].head(args.corpus_docs).tolist()
    distill(path, args.out, args.dim, args.sif, corpus=corpus, n_components=args.components)
    log.info("wrote %s", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
