"""The window check on real pages: template twins, one cookie banner on unrelated pages, and its cost.

    python benchmarks/semdedup/bench_window.py                   # every part (first run embeds ~2,400 pages: ~10 min)
    python benchmarks/semdedup/bench_window.py --parts cost      # one part: cut, twins, banner, stage, cost

- ``cut``: which pages the window cut by the stage's rule (``n_tokens``, the Qwen count, beyond 256)
  against the embedder's own WordPiece count.
- ``twins``: ``twins.with_twins`` on each split (250 twins); the stage default's vectors (0.6 · MiniLM
  + 0.4 · static, digits masked) at ε = 0.12; pairwise twin recall and stranger rate, and the
  stage's library path (one cluster, keep = farthest, the checked pass), with the check off and at
  each ``window_check_jaccard``; the real same-site template pairs of the whole pool.
- ``banner``: 40 real pages of each split, each opening with one real ~230-token cookie banner
  (taken from a real WET page), through the library path at each threshold.
- ``stage``: the report split's banner pages (and twins of 10 of them) through ``curate ingest`` and
  ``curate semdedup`` (recipe defaults), ``window_check=false`` against ``true``.
- ``cost``: word sketches of the 30 MB corpus' web pages against one Qwen tokenizer pass over the corpus.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import twins  # noqa: E402

from classifiers.embedding import get_embedder, resolve_model_path  # noqa: E402
from curation.dedup.semantic import decide, keep_key, similarity_pass  # noqa: E402
from curation.dedup.vectors import sketch_jaccard, word_sketches  # noqa: E402
from curation.dedup.window_check import is_cut  # noqa: E402
from curation.tokens import count_tokens  # noqa: E402

EPS = 0.12
WINDOW = 256
THRESHOLDS = [None, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]  # None: the check off
CORPUS = twins.REPO / "benchmarks" / "_work" / "recipe" / "corpus-30mb"


def banner(pool: pd.DataFrame) -> str:
    """A real cookie-policy banner (~1,200 characters, ~230 WordPiece tokens) from a real WET page."""
    raw = pd.read_parquet(twins.DATA, columns=["text"])["text"].fillna("")
    text = raw[raw.str.contains("Cookies are small text files")].iloc[0]
    return text[text.find("Cookie Policy"):].rstrip("×\n ").strip()


def vectors(frame: pd.DataFrame) -> np.ndarray:
    """The stage default's pruning vectors (transformer cached on disk, static computed)."""
    t = twins.embed_cached(frame["text"].tolist(), "minilm-mask1", get_embedder(model="all-MiniLM-L6-v2", mask_digits=True).embed)
    s = get_embedder(model="minilm-static", mask_digits=True).embed(frame["text"].tolist())
    return np.hstack([np.sqrt(0.6) * t, np.sqrt(0.4) * s]).astype(np.float32)


def grouped(sims: np.ndarray, sk: np.ndarray, cut: np.ndarray, i: np.ndarray, j: np.ndarray, thr: float | None) -> np.ndarray:
    """Whether pairs (i, j) count at ε: above the bar, and (with the check) neither cut or words shared."""
    hit = sims[i, j] > 1 - EPS
    if thr is None:
        return hit
    need = cut[i] | cut[j]
    return hit & (~need | (sketch_jaccard(sk[i], sk[j]) >= thr))


def library_path(frame: pd.DataFrame, vecs: np.ndarray, sk: np.ndarray, cut: np.ndarray, thr: float | None) -> pd.DataFrame:
    """One cluster (the default k below 10,000 documents), keep = farthest, the checked pass, the decision."""
    centroid = vecs.mean(axis=0)
    csim = vecs @ (centroid / np.linalg.norm(centroid))
    members = pd.DataFrame({"doc_id": frame["doc_id"].to_numpy(), "_part": 0, "source": "web", "cluster": 0,
                            "keep_key": keep_key(frame, csim, "farthest")})
    n = len(frame)
    sims = similarity_pass(members, vecs, bars=np.full(n, 1 - EPS if thr is not None else np.nan), sketches=sk,
                           min_jaccard=np.full(n, thr or 0.0), always=np.zeros(n, bool), cut=cut)
    return decide(sims, EPS)


def twin_part(pool: pd.DataFrame, split: str) -> dict:
    frame = twins.with_twins(pool, split, 250)
    vecs, sk = vectors(frame), word_sketches(frame["text"].tolist())
    cut = is_cut(count_tokens(frame["text"].tolist()), WINDOW)
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -1.0)
    pos = pd.Index(frame["doc_id"])
    tw = frame[frame["twin_of"].notna()]
    ti, oi = pos.get_indexer(tw["doc_id"]), pos.get_indexer(tw["twin_of"])
    origin = frame["twin_of"].fillna(frame["doc_id"]).to_numpy()
    ii, jj = np.nonzero(np.triu(sims > 1 - EPS, 1))
    strange = origin[ii] != origin[jj]
    out = {"documents": len(frame), "twin_pairs": len(tw), "cut_twin_pairs": int((cut[ti] | cut[oi]).sum()), "by_threshold": {}}
    for thr in THRESHOLDS:
        ok = grouped(sims, sk, cut, ii, jj, thr) & strange
        with_stranger = np.zeros(len(frame), bool)
        with_stranger[ii[ok]] = with_stranger[jj[ok]] = True
        removed = library_path(frame, vecs, sk, cut, thr)
        nearest = dict(zip(removed["doc_id"], removed["drop_detail"].map(lambda d: json.loads(d)["nearest"]), strict=True))
        od = dict(zip(frame["doc_id"], origin, strict=True))
        twin_removed = sum(od[d] == od[n] for d, n in nearest.items())
        out["by_threshold"][str(thr)] = {
            "twin_recall": round(float(grouped(sims, sk, cut, ti, oi, thr).mean()), 3),
            "stranger_rate": round(float(with_stranger.mean()), 4),
            "stage_twin_pairs_removed": round(twin_removed / len(tw), 3), "stage_non_twin_removed": len(removed) - twin_removed}
    jac = sketch_jaccard(sk[ii], sk[jj])
    out["strangers_above_bar_jaccard"] = [round(float(x), 2) for x in sorted(jac[strange])]
    out["twin_jaccard_min"] = round(float(sketch_jaccard(sk[ti], sk[oi]).min()), 2)
    return out


def real_template_pairs(pool: pd.DataFrame) -> dict:
    """Same-site product/listing/collection pairs above the bar (whole pool), with their word Jaccard."""
    templ = pool[pool["page_type"].isin(twins.TEMPLATE_TYPES) & (pool["host"] != "")]
    groups = templ.groupby("host").filter(lambda g: len(g) > 1).reset_index(drop=True)
    vecs, sk = vectors(groups), word_sketches(groups["text"].tolist())
    cut = is_cut(count_tokens(groups["text"].tolist()), WINDOW)
    idx = np.array([(i, j) for _, g in groups.groupby("host") for a, i in enumerate(g.index) for j in g.index[a + 1:]])
    sims = vecs @ vecs.T
    i, j = idx[:, 0], idx[:, 1]
    hit = sims[i, j] > 1 - EPS
    return {"pairs": len(idx), "above_bar": [{"hosts": groups["host"][a], "cosine": round(float(sims[a, b]), 3),
                                              "cut": bool(cut[a] or cut[b]), "jaccard": round(float(sketch_jaccard(sk[a], sk[b])), 2)}
                                             for a, b in zip(i[hit], j[hit], strict=True)],
            "by_threshold": {str(t): int(grouped(sims, sk, cut, i, j, t).sum()) for t in THRESHOLDS}}


def banner_pages(pool: pd.DataFrame, split: str, n: int = 40) -> pd.DataFrame:
    part = pool[pool["split"] == split].reset_index(drop=True)
    rows = part.iloc[random.Random(f"banner:{split}").sample(range(len(part)), n)]
    return pd.DataFrame({"doc_id": rows["doc_id"].to_numpy(), "text": [banner(pool) + "\n\n" + t for t in rows["text"]],
                         "twin_of": None})


def banner_part(pool: pd.DataFrame, split: str) -> dict:
    frame = banner_pages(pool, split)
    vecs, sk = vectors(frame), word_sketches(frame["text"].tolist())
    cut = is_cut(count_tokens(frame["text"].tolist()), WINDOW)
    base = word_sketches([banner(pool)])[0]
    return {"pages": len(frame), "cut": int(cut.sum()),
            "removed": {str(t): len(library_path(frame, vecs, sk, cut, t)) for t in THRESHOLDS},
            "jaccard_quantiles": [round(float(x), 2) for x in np.quantile(
                [sketch_jaccard(sk[a], sk[b]) for a in range(len(sk)) for b in range(a)], [0, 0.5, 0.9, 0.99, 1])],
            "banner_share_of_words": round(float(np.median(sketch_jaccard(sk, base[None, :]))), 2)}


def stage_part(pool: pd.DataFrame) -> dict:
    """The report split's banner pages plus twins of ten of them through ingest and semdedup (recipe defaults)."""
    frame = banner_pages(pool, "report")
    rng = random.Random("stage")
    tw = frame.iloc[:10].assign(twin_of=frame["doc_id"].iloc[:10])
    tw = tw.assign(doc_id=tw["doc_id"] + "~twin", text=[twins.make_twin(t, rng) for t in tw["text"]])
    frame = pd.concat([frame, tw], ignore_index=True)
    out: dict = {"pages": len(frame) - 10, "twins": 10}
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        src = Path(tmp) / "web.jsonl"
        frame.assign(id=frame["doc_id"], source="web")[["id", "text", "source"]].to_json(src, orient="records", lines=True)
        cli = [sys.executable, "-m", "pipelines.cli"]
        subprocess.run([*cli, "ingest", "--input", str(src), "--output", f"{tmp}/ingest", "--quiet"], check=True)
        for on in ("false", "true"):
            started = time.time()
            subprocess.run([*cli, "semdedup", "--input", f"{tmp}/ingest", "--output", f"{tmp}/sem-{on}", "--quiet",
                            "--cache-dir", f"{tmp}/cache", "--profile", "gpu", f"window_check={on}"], check=True)
            ledger = pd.concat([pd.read_parquet(p) for p in Path(f"{tmp}/sem-{on}/ledger").glob("*.parquet")])
            nearest = dict(zip(ledger["doc_id"], ledger["detail"].map(lambda d: json.loads(d)["nearest"]), strict=True))
            pairs, ids = set(tw["twin_of"]), set(ledger["doc_id"])
            out[f"window_check={on}"] = {
                "removed": len(ids), "twin_pairs_removed_as_copies": sum(nearest.get(o + "~twin") == o or nearest.get(o) == o + "~twin" for o in pairs),
                "pages_removed_not_as_a_copy_of_their_twin": sum(nearest[d] not in (d + "~twin", d.removesuffix("~twin")) for d in ids),
                "seconds": round(time.time() - started, 1)}
    return out


def cut_part(pool: pd.DataFrame) -> dict:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(resolve_model_path("all-MiniLM-L6-v2")))
    texts = pool["text"].tolist()
    wp = np.array([len(ids) for ids in tok(texts)["input_ids"]])
    cut, flag = wp >= WINDOW, is_cut(count_tokens(texts), WINDOW)
    return {"pages": len(texts), "cut_by_window": int(cut.sum()), "flagged": int((flag & cut).sum()),
            "cut_not_flagged": int((cut & ~flag).sum()), "flagged_not_cut": int((flag & ~cut).sum())}


def cost_part() -> dict:
    """CPU seconds of the word sketches of the corpus' web pages (the pages the stage sketches) against
    one Qwen tokenizer pass over the whole corpus, as ``benchmarks/recipe`` measures it."""
    sys.path.insert(0, str(twins.REPO / "benchmarks" / "recipe"))
    import core_pair  # noqa: PLC0415

    texts = pd.read_json(CORPUS / "web.jsonl", lines=True)["text"].fillna("").tolist()
    started = time.process_time()
    word_sketches(texts)
    sketch = time.process_time() - started
    (tokens,), _ = core_pair._pass(CORPUS, 1)
    return {"web_pages": len(texts), "web_mb": round(sum(len(t.encode()) for t in texts) / 1e6, 1), "sketch_cpu_s": round(sketch, 2),
            "sketch_s_per_1000_pages": round(1000 * sketch / len(texts), 3), "tokenizer_pass_cpu_s": round(tokens, 2),
            "sketch_share_of_a_tokenizer_pass": round(sketch / tokens, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["cut", "twins", "banner", "stage", "cost"])
    args = parser.parse_args()
    pool = twins.load_pool()
    result: dict = {}
    for part in args.parts:
        if part == "twins":
            result["twins"] = {split: twin_part(pool, split) for split in ("tune", "report")}
            result["real_template_pairs"] = real_template_pairs(pool)
        elif part == "banner":
            result["banner"] = {split: banner_part(pool, split) for split in ("tune", "report")}
        else:
            result[part] = {"cut": cut_part, "stage": stage_part, "cost": lambda _: cost_part()}[part](pool)
        print(json.dumps({part: result.get(part)}, indent=1), flush=True)
    twins.WORK.mkdir(parents=True, exist_ok=True)
    (twins.WORK / f"window-{'-'.join(args.parts)}.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
