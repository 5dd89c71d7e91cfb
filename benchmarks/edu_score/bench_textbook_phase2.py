"""Held-out textbook pages crawled as web: how many reach phase 2's ``web_edu`` / ``math_science``, per edu scorer?

    python benchmarks/edu_score/bench_textbook_phase2.py --work /tmp/edu-textbook

Corpus (from ../shared/data, written to ``--work``): the OpenStax modules of the held-out split of
``distil_data`` (never trained on by edu_default or edu_fast) as crawled pages with navigation and a
footer (``benchmarks/mixture_recipe``'s ``textbook_page``, text cut at 20,000 characters), among
``--web`` real web pages with their HTML. The whole recipe runs under ``--profile cpu`` once per
edu scorer — the profile's (``fast``: classifiers/models/edu_fast), the previous fast path (the
default's hashed member, classifiers/models/edu_default/hashed) and the default settings' scorer
(``default``: transformer vectors + n-grams) — and the share of textbook pages found in phase 2's
``web_edu`` or ``math_science`` shards is reported, as ``benchmarks/mixture_recipe`` measures it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "benchmarks" / "mixture_recipe"))

import distil_data  # noqa: E402
from bench_recipe import cut, shard_ids, textbook_page, write_jsonl  # noqa: E402

SCORERS = {"fast": "fast", "previous_fast": str(ROOT / "classifiers/models/edu_default/hashed"), "default": "default"}


def build(inp: Path, n_web: int) -> set[str]:
    data = distil_data.data_dir()
    corpus = distil_data.load_corpus()
    held = set(corpus.loc[(corpus["kind"] == "textbook_page") & (corpus["split"] == "heldout"), "doc_id"].str.removeprefix("page:"))
    books = pd.read_json(data / "math" / "openstax_modules.jsonl.gz", lines=True)
    books = books[books["module_id"].astype(str).isin(held)].drop_duplicates("module_id")
    rows, ids = [], set()
    for r in books.itertuples(index=False):
        text, html = textbook_page(r.title, cut(r.text, 20_000))
        ids.add(f"openstax-{r.module_id}")
        rows.append({"id": f"openstax-{r.module_id}", "source": "web", "text": text, "html": html,
                     "url": f"https://openstax.org/books/{r.books[0]}/pages/{r.module_id}"})
    web = pd.read_parquet(data / "web" / "web_docs.parquet")
    web = web[web["text"].fillna("").str.strip().str.len() > 0].sample(n=n_web, random_state=7)
    for r in web.itertuples(index=False):
        rows.append({"id": f"web-{r.source}-{r.doc_id}", "source": "web", "text": r.text, "url": r.url,
                     **({"html": r.html} if isinstance(r.html, str) else {})})
    inp.mkdir(parents=True, exist_ok=True)
    write_jsonl(inp / "web.jsonl.gz", rows)
    return ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--web", type=int, default=400)
    args = ap.parse_args()
    textbook = build(args.work / "input", args.web)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for name, scorer in SCORERS.items():
        out = args.work / f"run-{name}"
        started = time.time()
        proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", "pipelines/configs/glm45.yaml", "--input",
                               str(args.work / "input"), "--output", str(out), "--quiet", "--workers", "auto", "--profile", "cpu",
                               f"edu_score.scorer={scorer}"], cwd=ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-3000:])
        mix = next(out.glob("*_mixture"))
        edu = shard_ids(mix, "pretrain_phase2", ("web_edu", "math_science"))
        print(json.dumps({"scorer": name, "textbook_pages": len(textbook),
                          "in_phase2_web_edu_or_math_science": round(len(textbook & edu) / max(len(textbook), 1), 3),
                          "seconds": round(time.time() - started, 1)}), flush=True)


if __name__ == "__main__":
    main()
