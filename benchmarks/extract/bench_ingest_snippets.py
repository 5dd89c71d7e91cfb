"""The snippet measure through the real path: WCXB pages → one WARC → `curate ingest` → snippet recall/precision/F1.

    python benchmarks/extract/bench_ingest_snippets.py [--pages 300] [--extractor NAME]   # default: the recipe's

Like the held-out check (987 pages never shown here), but on a random sample of the WCXB dev
pages in ../shared/data: the documents are matched to their pages by URL, a page ingest dropped
counts with an empty text.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_crawl import DATA, write_warc  # noqa: E402

from curation.ingest.extract import snippet_scores  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=300)
    recipe = yaml.safe_load((ROOT / "pipelines" / "configs" / "glm45.yaml").read_text())
    ap.add_argument("--extractor", default=recipe["stages"]["ingest"]["extractor"])
    args = ap.parse_args()
    if not DATA.exists():
        sys.exit(f"{DATA} is absent: this benchmark needs the shared real pages")
    df = pd.read_parquet(DATA)
    pages = df[df["source"] == "wcxb"].sample(args.pages, random_state=7).reset_index(drop=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_warc(pages, out / "pages.warc.gz")
        subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(out / "pages.warc.gz"), "--output",
                        str(out / "ing"), "--quiet", "--workers", "1", f"extractor={args.extractor}"],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
        texts = pd.read_parquet(out / "ing" / "docs").set_index("url")["text"].to_dict()
    scores = [snippet_scores(texts.get(u) or "", json.loads(a or "[]"), json.loads(b or "[]"))
              for u, a, b in zip(pages["url"], pages["with_snippets"], pages["without_snippets"], strict=True)]
    r = pd.Series([s[0] for s in scores], dtype=float).mean()
    p = pd.Series([s[1] for s in scores], dtype=float).mean()
    print(json.dumps({"pages": args.pages, "kept": len(texts), "extractor": args.extractor, "recall": round(r, 4),
                      "precision": round(p, 4), "f1": round(2 * p * r / (p + r), 4)}))


if __name__ == "__main__":
    main()
