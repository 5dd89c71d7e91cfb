"""Template twins on real pages: SemDeDup variants against MinHash at 0.8, on a held-out split.

    python benchmarks/semdedup/bench_twins.py --split report     # held out (defaults were tuned on --split tune)

Corpus: the ``split`` half of the real web pages (``twins.load_pool``: ≥ 300 characters, MinHash-deduplicated)
plus ``--twins`` constructed twins (a few names and every number changed). Reported per ε:
- pairwise: twin pairs with cosine > 1 − ε, documents with a non-twin above it;
- the stage's own path (k-means with the default k, keep=farthest, similarity pass, decision):
  twin pairs removed, documents removed whose nearest earlier member is not their twin;
- real template twins: pairs of product/listing/collection pages of one site (whole pool);
- the static embedder's agreement with the transformer on which documents are removed.
Embeddings are cached under ``benchmarks/_work/semdedup/`` (first run: ~10 minutes on 2 busy cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import twins  # noqa: E402

from classifiers.embedding import get_embedder  # noqa: E402
from curation.dedup.kmeans import assign, default_k, train_kmeans  # noqa: E402
from curation.dedup.semantic import decide, keep_key, similarity_pass  # noqa: E402

EPS = [0.05, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20]
DEFAULT = "combined_masked (default)"
STATIC_WEIGHT = 0.4  # the stage's static_weight default
VARIANTS = {  # name → get_embedder settings (combined: both, mixed as the stage does)
    "minilm_plain": {"model": "all-MiniLM-L6-v2", "mask_digits": False},
    "minilm_masked": {"model": "all-MiniLM-L6-v2", "mask_digits": True},
    "static_masked": {"model": "minilm-static", "mask_digits": True},
    "static_bi_masked": {"model": "minilm-static-bi", "mask_digits": True},
    DEFAULT: None,
}


def embed(frame: pd.DataFrame, settings: dict | None) -> tuple[np.ndarray, float]:
    if settings is None:  # the stage default: (1 - w) transformer cosine + w static cosine
        (vt, st), (vs, ss) = embed(frame, VARIANTS["minilm_masked"]), embed(frame, VARIANTS["static_masked"])
        return np.hstack([np.sqrt(1 - STATIC_WEIGHT) * vt, np.sqrt(STATIC_WEIGHT) * vs]).astype(np.float32), st + ss
    emb = get_embedder(**settings)
    key = f"{'minilm' if settings['model'] == 'all-MiniLM-L6-v2' else settings['model']}-mask{int(settings['mask_digits'])}"
    started = time.perf_counter()
    vecs = twins.embed_cached(frame["text"].tolist(), key, emb.embed) if not settings["model"].startswith("minilm-static") \
        else emb.embed(frame["text"].tolist())  # static: fast enough to time for real
    return vecs, time.perf_counter() - started


def stage_path(frame: pd.DataFrame, vecs: np.ndarray, k: int | None = None) -> pd.DataFrame:
    """The stage's library path on one partition: k-means, assignment, keep order, similarity pass."""
    k = k or default_k(len(frame))
    labels, csim = assign(vecs, train_kmeans(vecs, k, seed=1234))
    members = pd.DataFrame({"doc_id": frame["doc_id"].to_numpy(), "_part": 0, "source": "web", "cluster": labels,
                            "keep_key": keep_key(frame, csim, "farthest")})
    return similarity_pass(members, vecs)


def stage_metrics(frame: pd.DataFrame, sims: pd.DataFrame, eps: float) -> dict:
    removed = decide(sims, eps)
    origin = dict(zip(frame["doc_id"], frame["twin_of"].fillna(frame["doc_id"]), strict=True))
    nearest = sims.set_index("doc_id")["nearest"]
    twin_removed = sum(origin[d] == origin.get(nearest[d]) for d in removed["doc_id"])
    n_pairs = int(frame["twin_of"].notna().sum())
    return {"eps": eps, "removed": len(removed), "twin_pairs_removed": round(twin_removed / n_pairs, 3),
            "non_twin_removed": len(removed) - twin_removed,
            "non_twin_removed_rate": round((len(removed) - twin_removed) / len(frame), 4),
            "removed_ids": sorted(removed["doc_id"])}


def minhash_pairs(frame: pd.DataFrame) -> np.ndarray:
    """Per twin pair (rows of ``frame`` with ``twin_of``): estimated Jaccard ≥ 0.8 (MinHash, 128 permutations)."""
    sigs = dict(zip(frame["doc_id"], twins.minhash_signatures(frame["text"].tolist()), strict=True))
    pairs = frame[frame["twin_of"].notna()]
    return np.array([sigs[t].jaccard(sigs[o]) >= 0.8 for t, o in zip(pairs["doc_id"], pairs["twin_of"], strict=True)])


def beyond_minhash(frame: pd.DataFrame, vecs: np.ndarray, mh: np.ndarray) -> dict:
    """Twin pairs MinHash at 0.8 keeps (both copies) that the cosine groups, per ε."""
    pos = pd.Index(frame["doc_id"])
    pairs = frame[frame["twin_of"].notna()]
    cos = (vecs[pos.get_indexer(pairs["doc_id"])] * vecs[pos.get_indexer(pairs["twin_of"])]).sum(axis=1)
    return {f"{e:g}": {"pairs": int((~mh).sum()), "grouped": int(((cos > 1 - e) & ~mh).sum())} for e in EPS}


def real_template_pairs(pool: pd.DataFrame, vectors: dict[str, np.ndarray]) -> dict:
    """Pairs of template-type pages of one host: grouped by MinHash 0.8 vs by cosine > 1 − ε."""
    templ = pool[pool["page_type"].isin(twins.TEMPLATE_TYPES) & (pool["host"] != "")].reset_index(drop=True)
    groups = templ.groupby("host").filter(lambda g: len(g) > 1).reset_index(drop=True)
    idx = [(i, j) for _, g in groups.groupby("host") for a, i in enumerate(g.index) for j in g.index[a + 1:]]
    sigs = twins.minhash_signatures(groups["text"].tolist())
    mh = np.array([sigs[i].jaccard(sigs[j]) >= 0.8 for i, j in idx])
    out = {"sites": int(groups["host"].nunique()), "pages": len(groups), "pairs": len(idx),
           "minhash_0.8": int(mh.sum()), "by_variant": {}}
    for name, vecs in vectors.items():
        v = vecs[pd.Index(pool["doc_id"]).get_indexer(groups["doc_id"])]
        cos = np.array([v[i] @ v[j] for i, j in idx])
        out["by_variant"][name] = {f"{e:g}": {"grouped": int((cos > 1 - e).sum()), "grouped_not_minhash": int(((cos > 1 - e) & ~mh).sum())}
                                   for e in EPS}
    return out


def agreement(frame: pd.DataFrame, removed_sets: dict[str, dict[float, set]], static: str = "static_masked") -> dict:
    """Static (at each ε) against the transformer at ε = 0.12: which documents, and which twin/original
    groups (a group counts when any member is removed; the two may remove different members)."""
    origin = dict(zip(frame["doc_id"], frame["twin_of"].fillna(frame["doc_id"]), strict=True))
    t = removed_sets["minilm_masked"][0.12]
    tg = {origin[d] for d in t}
    out = {}
    for e in EPS:
        s = removed_sets[static][e]
        sg = {origin[d] for d in s}
        out[f"{e:g}"] = {"static_removed": len(s), "transformer_removed": len(t),
                         "doc_precision": round(len(s & t) / max(len(s), 1), 3), "doc_recall": round(len(s & t) / max(len(t), 1), 3),
                         "group_precision": round(len(sg & tg) / max(len(sg), 1), 3), "group_recall": round(len(sg & tg) / max(len(tg), 1), 3)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="report", choices=["tune", "report"])
    parser.add_argument("--twins", type=int, default=250)
    args = parser.parse_args()
    pool = twins.load_pool()
    frame = twins.with_twins(pool, args.split, args.twins)
    mh = minhash_pairs(frame)
    result: dict = {"split": args.split, "documents": len(frame), "twin_pairs": args.twins,
                    "minhash_0.8_twin_pairs": round(float(mh.mean()), 3), "variants": {}}
    pool_vectors = {}
    removed_sets: dict[str, dict[float, set]] = {}
    for name, settings in VARIANTS.items():
        vecs, seconds = embed(frame, settings)
        pairwise = twins.twin_metrics(frame, vecs, [round(1 - e, 4) for e in EPS])
        sims = stage_path(frame, vecs)
        stage = [stage_metrics(frame, sims, e) for e in EPS]
        removed_sets[name] = {s["eps"]: set(s.pop("removed_ids")) for s in stage}
        small_k = [stage_metrics(frame, stage_path(frame, vecs, k=8), e) for e in (0.10, 0.12)]
        for s in small_k:
            s.pop("removed_ids")
        result["variants"][name] = {"embed_seconds": round(seconds, 1), "pairwise": pairwise.round(4).to_dict("records"),
                                    "stage": stage, "stage_k8": small_k,
                                    "twins_minhash_keeps": beyond_minhash(frame, vecs, mh)}
        pool_vectors[name] = embed(pool, settings)[0]
    result["real_template_pairs"] = real_template_pairs(pool, pool_vectors)
    result["static_vs_transformer_at_eps_0.12"] = agreement(frame, removed_sets)
    result["static_bi_vs_transformer_at_eps_0.12"] = agreement(frame, removed_sets, "static_bi_masked")
    out = twins.WORK / f"twins-{args.split}.json"
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "variants"}, indent=1))
    for name, v in result["variants"].items():
        print(f"\n## {name} (embed {v['embed_seconds']} s)")
        print(pd.DataFrame(v["pairwise"]).to_string(index=False))
        print(pd.DataFrame(v["stage"]).to_string(index=False))
        print(pd.DataFrame(v["stage_k8"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
