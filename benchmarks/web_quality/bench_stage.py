"""The web_quality stage end to end on real pages at two corpus sizes, and the cost of re-deciding.

    python benchmarks/web_quality/bench_stage.py [--sizes 1 4] [--workers 2]

Corpus: every real web text of ../shared/data (raw WET records, whole-page text of the HTML
pages, reference main content) as ``source = web`` with Qwen token counts, replicated ×k with
distinct ids (a marker line appended so no two texts are equal) for the larger size. For each
size: a full run (score both default scorers → thresholds → decide), then a run with only a
changed repeat factor (reuses the cached scores: thresholds + decide only). Reports seconds,
documents/s, token share per level and the thresholds' rank-error bound.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402

from curation.tokens import count_tokens  # noqa: E402
from pipelines.io import write_frame  # noqa: E402
from pipelines.recipe import load_recipe  # noqa: E402
from pipelines.runner import run_stage  # noqa: E402


def corpus() -> pd.DataFrame:
    """WET records, whole-page texts and reference texts (a page and its main content are two documents)."""
    parts = [("wet", data.wet()), ("page", data.pages()), ("ref", data.reference())]
    texts = pd.concat([f[["doc_id", "text"]].assign(doc_id=kind + "-" + f["doc_id"]) for kind, f in parts], ignore_index=True)
    return texts[texts["text"].str.len() > 0].drop_duplicates("doc_id").reset_index(drop=True)


def write_input(folder: Path, base: pd.DataFrame, k: int, nparts: int) -> int:
    frames = []
    for r in range(k):
        f = base.copy()
        if r:
            f["doc_id"] = f["doc_id"] + f"-r{r}"
            f["text"] = f["text"] + f"\n[copy {r}]"
        frames.append(f)
    df = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=0).reset_index(drop=True)
    df["n_tokens"] = count_tokens(df["text"].tolist(), "qwen").astype("int64")
    for col in ("url", "repo", "path", "language", "meta"):
        df[col] = None
    df["source"] = "web"
    df = df[["doc_id", "text", "source", "url", "repo", "path", "language", "n_tokens", "meta"]]
    size = max(1, len(df) // nparts)
    for i in range(nparts):
        write_frame(df.iloc[i * size : (i + 1) * size if i < nparts - 1 else len(df)].reset_index(drop=True),
                    folder / "docs" / f"part-{i:05d}.parquet")
    (folder / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"bench-{k}-{len(df)}"}))
    return len(df)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=data.WORK / "stage.json")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    base = corpus()
    results = []
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        for k in args.sizes:
            root = data.WORK / f"stage_x{k}"
            shutil.rmtree(root, ignore_errors=True)
            n = write_input(root / "00_input", base, k, nparts=4 * k)
            rec = load_recipe(None, ["web_quality.enabled=true"])
            started = time.time()
            res = run_stage("web_quality", rec, stage_dir=root / "40_web_quality", input_dir=root / "00_input", client=client, quiet=True)
            full = time.time() - started
            rec2 = load_recipe(None, ["web_quality.enabled=true", "web_quality.repeat.medium_low=0.0"])
            started = time.time()
            res2 = run_stage("web_quality", rec2, stage_dir=root / "40_web_quality_redecide", input_dir=root / "00_input", client=client, quiet=True)
            redecide = time.time() - started
            extra = res.stats["extra"]
            row = {
                "size": f"x{k}", "documents": n, "tokens": int(res.stats["in"]["tokens"]), "partitions": 4 * k,
                "workers": args.workers, "full_seconds": round(full, 1), "docs_per_s": round(n / full, 1),
                "redecide_seconds": round(redecide, 1), "rescored": "scored_documents" in res2.stats["extra"],
                "token_share": {lvl: round(v["token_share"], 4) for lvl, v in extra["levels"].items()},
                "rank_error_bound": extra["percentile_rank_error_bound"],
                "dropped_documents": res.stats["dropped"]["documents"],
            }
            results.append(row)
            print(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
