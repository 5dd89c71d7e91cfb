"""Embedding throughput: the stage and its embedder against a bare ``SentenceTransformer.encode``.

    python benchmarks/semdedup/bench_embed.py --docs 256 --batch-size 64 --rounds 2

Same real web pages (mixed length, from ../shared/data/web), same batch size, same process; the
methods alternate in each round so they see the same machine load, and the median round is
reported. Methods:
- ``st_encode``: ``SentenceTransformer.encode(texts, batch_size)`` (sorts by character length inside);
- ``st_encode_input_order``: ``encode`` batch by batch in input order (no length sorting);
- ``embedder``: ``classifiers.embedding`` (tokenise once, sort by token count, cut long texts first);
- ``stage``: the semdedup stage's embed step through the runner (synchronous scheduler, 2 partitions,
  Parquet artifact written), from the artifact card's wall time;
- ``static``: the distilled static embedder (``minilm-static``).
The model is loaded before timing (as on a worker after its first partition). ``padding`` counts,
without timing noise, the token slots computed per real token with and without length sorting.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import twins  # noqa: E402

from classifiers.embedding import get_embedder, resolve_model_path  # noqa: E402


def load_docs(n: int, seed: int = 5) -> list[str]:
    df = pd.read_parquet(twins.DATA, columns=["doc_id", "text"])
    df = df[df["text"].fillna("").str.len() > 0]
    return df.sample(n=min(n, len(df)), random_state=seed)["text"].tolist()


def run_stage_embed(texts: list[str], batch_size: int, work: Path) -> float:
    """Run the semdedup stage (synchronous scheduler, 2 input partitions); the embed step's wall time."""
    import dask

    from curation.schema import DOC_COLUMNS
    from pipelines.io import write_frame
    from pipelines.recipe import load_recipe
    from pipelines.runner import run_stage

    shutil.rmtree(work, ignore_errors=True)
    df = pd.DataFrame({c: [None] * len(texts) for c in DOC_COLUMNS})
    df["doc_id"], df["text"], df["source"] = [f"d{i}" for i in range(len(texts))], texts, "web"
    df["n_tokens"] = [len(t.split()) for t in texts]
    half = len(df) // 2
    for i, part in enumerate((df.iloc[:half], df.iloc[half:])):
        write_frame(part.reset_index(drop=True), work / "in" / "docs" / f"part-{i:05d}.parquet")
    (work / "in" / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"bench-{len(df)}"}))
    recipe = load_recipe(None, ["semdedup.enabled=true", f"semdedup.batch_size={batch_size}",
                                "semdedup.mask_digits=false", "semdedup.static_weight=0"])
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        run_stage("semdedup", recipe, stage_dir=work / "out", input_dir=work / "in", quiet=True)
    return json.loads((work / "out" / "artifacts" / "embeddings" / "embeddings.json").read_text())["seconds"]


def padding(texts: list[str], batch_size: int, max_seq_length: int = 256) -> dict:
    """Token slots a model computes (batch × longest in batch) per real token, input order vs sorted.

    Deterministic (tokenisation only), so it shows what length sorting saves without timing noise.
    """
    from classifiers.embedding import prepare_texts

    tok = get_embedder(model="all-MiniLM-L6-v2", device="cpu", batch_size=batch_size, mask_digits=False).model.tokenizer
    lengths = np.array([len(i) for i in tok(prepare_texts(texts, max_seq_length, False), truncation=True,
                                             max_length=max_seq_length)["input_ids"]])

    def slots(order: np.ndarray) -> int:
        return int(sum(lengths[order[i : i + batch_size]].max() * len(order[i : i + batch_size])
                       for i in range(0, len(order), batch_size)))

    real = int(lengths.sum())
    return {"documents": len(texts), "real_tokens": real, "truncated_fraction": round(float((lengths >= max_seq_length).mean()), 3),
            "slots_per_token_input_order": round(slots(np.arange(len(lengths))) / real, 3),
            "slots_per_token_sorted": round(slots(np.argsort(-lengths, kind="stable")) / real, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--padding-docs", type=int, default=2000, help="documents for the padding count (no model run)")
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    texts = load_docs(args.docs)
    bare = SentenceTransformer(str(resolve_model_path("all-MiniLM-L6-v2")), device="cpu")
    bare.max_seq_length = 256
    ours = get_embedder(model="all-MiniLM-L6-v2", device="cpu", batch_size=args.batch_size, max_seq_length=256, mask_digits=False)
    static = get_embedder(model="minilm-static", batch_size=1024, max_seq_length=256, mask_digits=False)
    bs = args.batch_size

    def unsorted() -> np.ndarray:
        return np.concatenate([bare.encode(texts[i : i + bs], batch_size=bs, normalize_embeddings=True)
                               for i in range(0, len(texts), bs)])

    methods = {
        "st_encode": lambda: bare.encode(texts, batch_size=bs, normalize_embeddings=True),
        "st_encode_input_order": unsorted,
        "embedder": lambda: ours.embed(texts),
        "stage": None,
        "static": lambda: static.embed(texts),
    }
    bare.encode(texts[:8])  # warm-up: first-call allocations are not throughput
    times: dict[str, list[float]] = {m: [] for m in methods}
    vectors: dict[str, np.ndarray] = {}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        order = list(methods) if r % 2 == 0 else list(reversed(methods))
        for name in order:
            if name == "stage":
                times[name].append(run_stage_embed(texts, bs, twins.WORK / "bench_embed_stage"))
                continue
            started = time.perf_counter()
            vectors[name] = methods[name]()
            times[name].append(time.perf_counter() - started)
    load.append(os.getloadavg()[0])
    ref = vectors["st_encode"]
    lengths = [len(t) for t in texts]
    result = {
        "documents": len(texts), "batch_size": bs, "rounds": args.rounds,
        "chars": {"median": int(statistics.median(lengths)), "max": max(lengths)},
        "load_average_1min": load, "torch_threads": __import__("torch").get_num_threads(),
        "docs_per_second": {m: round(len(texts) / statistics.median(t), 2) for m, t in times.items()},
        "seconds": {m: [round(x, 2) for x in t] for m, t in times.items()},
        "cosine_to_st_encode_min": {m: round(float((v * ref).sum(axis=1).min()), 5) for m, v in vectors.items() if m != "static"},
    }
    rate = result["docs_per_second"]
    result["stage_vs_st_encode"] = round(rate["stage"] / rate["st_encode"] - 1, 3)
    result["embedder_vs_st_encode"] = round(rate["embedder"] / rate["st_encode"] - 1, 3)
    result["padding"] = padding(load_docs(args.padding_docs), bs)
    (twins.WORK / "bench_embed.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
