"""Language-aware web quality: where real Chinese tutorial sections land, English no worse, and
heuristics throughput on Chinese against English.

    CURATION_SHARED_DATA=/path/to/shared/data python benchmarks/languages/bench_quality.py
    # the peer: language-blind web quality, a checkout of e4552c3~1 on PYTHONPATH:
    PYTHONPATH=/path/to/peer/checkout CURATION_SHARED_DATA=... python benchmarks/languages/bench_quality.py --label before

Held-out mix (``--mix check``), all ``source = web``: the 47 real Chinese tutorial sections (the 23
not used to derive the Chinese centers are reported apart), 2,000 real Chinese short reviews, the 328
raw Common Crawl WET pages and 400 WCXB page texts; ``--mix pages`` adds 300 review-listing pages
(20 other reviews each, one a line); ``--mix en`` is the English pages alone (what English gets
when no other language shares its buckets). ``--write-lang-ids`` / ``--keep-ids`` restrict a
run to the pages identified as English, so the language-blind peer can be run on them too. The web_quality stage runs with the recipe's defaults (synchronous). Reported per kind:
share of documents in the lowest level (which the mixture excludes as ``low_quality``) and mean percentile.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # noqa: E402

from curation.schema import DOC_COLUMNS  # noqa: E402
from curation.tokens import count_tokens  # noqa: E402
from pipelines.io import write_frame  # noqa: E402
from pipelines.recipe import load_recipe  # noqa: E402
from pipelines.runner import run_stage  # noqa: E402


def corpus(mix: str = "check", seed: int = 0) -> pd.DataFrame:
    notes = data.zh_notes().assign(kind=["zh_note_reference" if i % 2 == 0 else "zh_note_heldout" for i in range(47)])
    reviews = data.zh_reviews(2000 + 6000, seed)
    single = reviews.head(2000).assign(kind="zh_review")
    rest = reviews["text"].tolist()[2000:]
    pages = pd.DataFrame({"doc_id": [f"zhp-{i}" for i in range(300)], "text": ["\n".join(rest[20 * i : 20 * i + 20]) for i in range(300)],
                          "kind": "zh_review_page"})
    web = pd.read_parquet(data.require() / "web" / "web_docs.parquet", columns=["doc_id", "source", "text"])
    wet = web[web["source"] == "dolma_cc_raw_wet"].assign(kind="en_wet")
    wcxb = data.en_pages().head(400).assign(kind="en_wcxb")
    wet = wet[["doc_id", "text", "kind"]].assign(doc_id=lambda d: "wet-" + d["doc_id"].astype(str))
    frames = {"check": [notes, single, wet, wcxb], "pages": [notes, single, pages, wet, wcxb], "en": [wet, wcxb]}[mix]
    df = pd.concat(frames, ignore_index=True)
    return df[df["text"].str.len() > 0].drop_duplicates("doc_id").reset_index(drop=True)


def write_input(df: pd.DataFrame, folder: Path) -> None:
    frame = df.copy()
    try:
        from classifiers.langid import identify
        frame["lang"], frame["lang_score"] = identify(frame["text"].tolist())
    except ImportError:  # the code before languages existed
        pass
    for c in DOC_COLUMNS:
        if c not in frame.columns:
            frame[c] = None
    frame["source"] = "web"
    frame["n_tokens"] = count_tokens(frame["text"].tolist(), "qwen").astype("int64")
    frame = frame[[c for c in DOC_COLUMNS if c in frame.columns]]
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 4)):
        write_frame(frame.iloc[part].reset_index(drop=True), folder / "docs" / f"part-{i:05d}.parquet")
    (folder / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"bench-{len(frame)}"}))


def main() -> None:
    import dask

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--label", default="after")
    ap.add_argument("--mix", choices=["check", "pages", "en"], default="check",
                    help="check: sections + single reviews + English; pages: + 300 review-listing pages; en: English only")
    ap.add_argument("--out", default="/tmp/bench_quality_lang.json")
    ap.add_argument("--keep-ids", help="a file of doc ids (one a line): run on those only (e.g. the pages identified as English)")
    ap.add_argument("--write-lang-ids", help="write the ids identified as --lang to this file and stop")
    ap.add_argument("--lang", default="en")
    args = ap.parse_args()
    df = corpus(args.mix)
    if args.write_lang_ids:
        from classifiers.langid import identify
        langs, _ = identify(df["text"].tolist())
        Path(args.write_lang_ids).write_text("\n".join(d for d, lang in zip(df["doc_id"], langs, strict=True) if lang == args.lang))
        return
    if args.keep_ids:
        df = df[df["doc_id"].isin(set(Path(args.keep_ids).read_text().split()))].reset_index(drop=True)
    with tempfile.TemporaryDirectory() as tmp:
        write_input(df, Path(tmp) / "in")
        rec = load_recipe(None, ["web_quality.enabled=true"])
        t0 = time.perf_counter()
        with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
            run_stage("web_quality", rec, stage_dir=Path(tmp) / "out", input_dir=Path(tmp) / "in", quiet=True)
        secs = time.perf_counter() - t0
        parts = [pd.read_parquet(p, columns=["doc_id", "quality_level", "quality_percentile"]) for p in sorted((Path(tmp) / "out" / "docs").glob("*.parquet"))]
        kept = pd.concat(parts)
        ledgers = [pd.read_parquet(p) for p in sorted((Path(tmp) / "out" / "ledger").glob("*.parquet"))]
    # web_quality annotates and removes nothing (the mixture excludes the low level as low_quality);
    # older checkouts (a peer) dropped the low level in the stage's own ledger
    low = set(kept.loc[kept["quality_level"] == "low", "doc_id"])
    low |= {d for led in ledgers for d in led.loc[led["reason"] == "low_quality", "doc_id"]}
    pct = dict(zip(kept["doc_id"], kept["quality_percentile"], strict=True))
    rows = []
    for kind, g in df.groupby("kind", sort=True):
        rows.append({"label": args.label, "mix": args.mix, "kind": kind, "docs": len(g), "low_share": round(float(g["doc_id"].isin(low).mean()), 3),
                     "mean_percentile_kept": round(float(np.nanmean([pct.get(d, np.nan) for d in g["doc_id"]] or [np.nan])), 1)})
        print(json.dumps(rows[-1]), flush=True)
    zh_notes = df[df["kind"].str.startswith("zh_note")]
    print(json.dumps({"label": args.label, "mix": args.mix, "zh_notes_low_share": round(float(zh_notes["doc_id"].isin(low).mean()), 3),
                      "stage_seconds": round(secs, 1)}))
    try:
        from classifiers.heuristics import HeuristicModel
        scorer = HeuristicModel.default()
        for name, texts, lang in (("zh notes x10 + review pages", zh_notes["text"].tolist() * 10 + df[df["kind"] == "zh_review_page"]["text"].tolist(), "zh"),
                                  ("en WET + WCXB", df[df["kind"].str.startswith("en")]["text"].tolist(), "en")):
            t0 = time.perf_counter()
            try:
                scorer.predict(texts, [lang] * len(texts))
            except TypeError:
                scorer.predict(texts)
            dt = time.perf_counter() - t0
            mb = sum(len(t.encode()) for t in texts) / 1e6
            print(json.dumps({"label": args.label, "heuristics": name, "docs_per_s": round(len(texts) / dt), "MB_per_s": round(mb / dt, 2)}))
    except ImportError:
        pass
    Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
