"""What the ``language`` rule changes on the real corpora: a natural-language ``language`` field (``zh``)
of a document whose source is not code is kept in ``meta``, not in the ``language`` column (the
programming language of code; ``curation/ingest/language_field.py``).

    python benchmarks/ingest/bench_language_field.py [--data ../shared/data]

One process runs the ingest stage (synchronous scheduler, whitespace tokens) twice over each
file: with the rule, and with every ``language`` value put in the column (the rule switched off,
``moved_to_meta`` answering no). Per file: documents, documents whose ``language`` column differs,
those whose ``lang`` / ``lang_score`` differ, those whose ``meta`` differs, the values moved, and the
CPU seconds of each run (after one untimed warm-up run). ``web_docs.parquet`` is read from its ``text`` column (``fields.html=none``,
no extraction) as source ``web``; ``code_files.parquet`` as source ``code``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import dask
import pandas as pd

import curation.ingest.records as records
from pipelines.io import read_docs
from pipelines.recipe import load_recipe
from pipelines.runner import run_stage

FILES = ("zh/zh_tech_notes.jsonl.gz", "zh/zh_reviews.jsonl.gz", "web/web_docs.parquet", "code/code_files.parquet")
#: the settings of the files without a source field of sources (web_docs' names a benchmark) or with only HTML
SETTINGS = {"web/web_docs.parquet": ["ingest.source=web", "ingest.fields.source=none", "ingest.fields.html=none"],
            "code/code_files.parquet": ["ingest.source=code"]}


def ingest(path: Path, name: str, out: Path) -> tuple[pd.DataFrame, float]:
    """The kept documents of one ingest run over ``path`` (the columns compared, by doc_id), as text
    (a null as ``<null>``), and its CPU seconds."""
    rec = load_recipe(None, ["ingest.tokenizer=whitespace", *SETTINGS.get(name, [])])
    t0 = time.process_time()
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        run_stage("ingest", rec, stage_dir=out, inputs=[str(path)], quiet=True, cache_root=out.with_suffix(".cache"))
    cpu = time.process_time() - t0
    docs = read_docs(out / "docs").compute().set_index("doc_id")
    return docs[["source", "language", "lang", "lang_score", "meta"]].astype(object).fillna("<null>").astype(str), cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data")
    args = ap.parse_args()
    rule = records.moved_to_meta
    print("| file | documents | language changed | lang or lang_score changed | meta changed | values moved to meta |")
    print("|---|---:|---:|---:|---:|---|")
    cpu = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        ingest(args.data / FILES[0], FILES[0], Path(tmp) / "warm")  # imports, models and tokenizer loaded before either is timed
        for k, name in enumerate(FILES):
            records.moved_to_meta = lambda value, source: False  # every value in the column: the rule switched off
            try:
                before, c0 = ingest(args.data / name, name, Path(tmp) / f"before{k}")
            finally:
                records.moved_to_meta = rule
            after, c1 = ingest(args.data / name, name, Path(tmp) / f"after{k}")
            cpu = [cpu[0] + c0, cpu[1] + c1]
            assert before.index.equals(after.index)
            same = before == after
            moved = Counter(before["language"][~same["language"]])
            print(f"| {name} | {len(before):,} | {int((~same['language']).sum()):,} "
                  f"| {int((~(same['lang'] & same['lang_score'])).sum()):,} | {int((~same['meta']).sum()):,} "
                  f"| {', '.join(f'{v}={n:,}' for v, n in moved.most_common()) or 'none'} |")
    print(f"\nCPU s of the ingest stage: rule off {cpu[0]:.2f}, rule on {cpu[1]:.2f} (ratio {cpu[1] / max(cpu[0], 1e-9):.2f})")


if __name__ == "__main__":
    main()
