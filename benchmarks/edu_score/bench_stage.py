"""The edu_score stage on real documents at two sizes: cost with SemDeDup's vectors reused, and embedding itself.

    python benchmarks/edu_score/bench_stage.py [--sizes 400 800] [--embed-size 200]

Documents: the reference set (``reference_data.py``; textbook/research/abstracts as
``math_science``, web pages as ``web``), 4 partitions, synchronous scheduler, ``annotator: none``,
``scorer: default``. "reused" runs get a ``30_semdedup/artifacts/embeddings`` folder holding the
documents' vectors (SemDeDup's layout and settings), so the stage embeds nothing — the case of a
full ``curate run``; the "embed" run has none and embeds every document itself. A decision-only
re-run (new threshold) is timed too. Work folders go to ``benchmarks/_work/edu/stage``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reference_data import available, load_reference  # noqa: E402
from train_default import WORK, embeddings  # noqa: E402

from classifiers.embedding import embedder_name  # noqa: E402
from classifiers.embedding_head import DEFAULT_EMBEDDER  # noqa: E402
from classifiers.embedding_store import write_card, write_embedding_part  # noqa: E402
from curation.schema import DOC_COLUMNS  # noqa: E402
from pipelines.io import write_frame  # noqa: E402
from pipelines.recipe import load_recipe  # noqa: E402
from pipelines.runner import run_stage  # noqa: E402

NPARTS = 4


def make_run(folder: Path, ref: pd.DataFrame, x: np.ndarray, with_vectors: bool) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    inp = folder / "60_code_web"
    df = pd.DataFrame({c: None for c in DOC_COLUMNS}, index=range(len(ref)))
    df["doc_id"] = ref["doc_id"].to_numpy()
    df["text"] = ref["text"].to_numpy()
    df["source"] = np.where(ref["kind"].isin(["commercial", "general_web"]), "web", "math_science")
    df["n_tokens"] = (ref["text"].str.len() // 4).astype("int64").to_numpy()
    up = folder / "30_semdedup" / "artifacts" / "embeddings"
    for n, idx in enumerate(np.array_split(np.arange(len(df)), NPARTS)):
        write_frame(df.iloc[idx].reset_index(drop=True), inp / "docs" / f"part-{n:05d}.parquet")
        if with_vectors:
            write_embedding_part(up / f"part-{n:05d}.parquet", df["doc_id"].iloc[idx].tolist(), x[idx], "float16")
    (inp / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"bench-{len(df)}"}))
    if with_vectors:
        write_card(up, {"embedder": {**DEFAULT_EMBEDDER, "batch_size": 64}, "name": embedder_name("all-MiniLM-L6-v2", 256, True)})
    return inp


def timed(folder: Path, inp: Path, overrides: list[str]) -> tuple[float, dict]:
    import dask

    rec = load_recipe(None, ["edu_score.annotator=none", "edu_score.scorer=default", *overrides])
    started = time.time()
    with dask.config.set(scheduler="synchronous"):
        res = run_stage("edu_score", rec, stage_dir=folder / "70_edu_score", input_dir=inp, run_dir=folder, quiet=True)
    return time.time() - started, res.stats["extra"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[400, 800])
    p.add_argument("--embed-size", type=int, default=200)
    args = p.parse_args(argv)
    if not available():
        print("../shared/data is absent")
        return 1
    import torch

    torch.set_num_threads(1)
    ref = load_reference()
    x, _w, _rows, _rate = embeddings(ref)
    order = np.random.default_rng(0).permutation(len(ref))
    out: dict = {}
    for n in args.sizes:
        idx = order[:n]
        folder = WORK / "stage" / f"reused-{n}"
        inp = make_run(folder, ref.iloc[idx].reset_index(drop=True), x[idx], with_vectors=True)
        seconds, extra = timed(folder, inp, [])
        again, _ = timed(folder, inp, ["edu_score.threshold=2.6"])
        out[f"reused_{n}"] = {"documents": n, "seconds": round(seconds, 2), "docs_per_s": round(n / seconds, 1),
                              "scoring_model_seconds": extra["scoring"]["model_seconds"],
                              "embedded": extra["embedding"]["count"], "reused": extra["embedding"]["reused_upstream"],
                              "decision_only_rerun_s": round(again, 2)}
    n = args.embed_size
    idx = order[:n]
    folder = WORK / "stage" / f"embed-{n}"
    inp = make_run(folder, ref.iloc[idx].reset_index(drop=True), x[idx], with_vectors=False)
    seconds, extra = timed(folder, inp, [])
    out[f"embed_{n}"] = {"documents": n, "seconds": round(seconds, 2), "docs_per_s": round(n / seconds, 2),
                         "embedded": extra["embedding"]["count"], "embedding_docs_per_s": extra["embedding"]["docs_per_second"]}
    (WORK / "stage.json").write_text(json.dumps(out, indent=1, sort_keys=True))
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
