"""What ingest's value rules change on the real corpora: texts that count as empty (whitespace only,
against whitespace and invisible format characters only: ``curation.ingest.records.blank``), and the
binary columns that reach ``meta`` (kept as their size). One run computes both rules' counts.

    python benchmarks/ingest/bench_odd_values.py [--data ../shared/data]

Per file: its text values, how many the rule of ``not text.strip()`` and ``blank()`` each count as
empty (a record with such a text is an ``empty_text`` ledger row; beside HTML it is no text and the
page is extracted), the records whose fate changes, the binary columns (``binary_columns``), and the
CPU seconds of each check over all texts (their ratio; one process, same texts).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import pyarrow.parquet as pq

from curation.ingest.notices import binary_columns
from curation.ingest.records import FieldMap, blank

FILES = ("web/web_docs.parquet", "code/code_files.parquet", "math/openstax_modules.jsonl.gz", "math/arxiv_abstracts.jsonl.gz",
         "math/stacks_project_chapters.jsonl.gz", "zh/zh_tech_notes.jsonl.gz", "zh/zh_reviews.jsonl.gz")


def texts(path: Path) -> tuple[list[str], list[str]]:
    """The file's string text values, and its binary columns that would reach meta."""
    if path.suffix == ".parquet":
        pf = pq.ParquetFile(path)
        values = pf.read(columns=["text"]).column("text").to_pylist()
        return [v for v in values if isinstance(v, str)], binary_columns(pf.schema_arrow, FieldMap())
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        values = [json.loads(line).get("text") for line in fh if line.strip()]
    return [v for v in values if isinstance(v, str)], []  # JSON has no binary values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data")
    args = ap.parse_args()
    print("| file | texts | empty by strip() | empty by blank() | changed | binary columns |")
    print("|---|---:|---:|---:|---:|---|")
    cpu_strip = cpu_blank = 0.0
    for name in FILES:
        values, binary = texts(args.data / name)
        t0 = time.process_time()
        old = sum(not v.strip() for v in values)
        t1 = time.process_time()
        new = sum(blank(v) for v in values)
        t2 = time.process_time()
        cpu_strip, cpu_blank = cpu_strip + t1 - t0, cpu_blank + t2 - t1
        print(f"| {name} | {len(values):,} | {old:,} | {new:,} | {new - old:,} | {', '.join(binary) or 'none'} |")
    print(f"\nCPU s over all texts: strip() {cpu_strip:.3f}, blank() {cpu_blank:.3f} (ratio {cpu_blank / max(cpu_strip, 1e-9):.2f})")


if __name__ == "__main__":
    main()
