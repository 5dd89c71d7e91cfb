"""What finding repeated JSON keys costs on the real JSONL corpora (``curation/ingest/jsonl_decode.py``).

    python benchmarks/ingest/bench_repeated_keys.py [--data ../shared/data]

Per file: its lines decoded by ``decode_jsonl_lines`` with the hook that notes a key written twice in
one object (``json_line.loads_repeated``) and with plain ``json_line.loads`` in its place, process CPU
seconds, the least of 7 runs of each, interleaved; and the lines that repeat a key. The share of a whole
``curate ingest`` is this difference over that command's CPU seconds (``/usr/bin/time``).
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

from curation.ingest import jsonl_decode
from curation.ingest.json_line import loads, loads_repeated

FILES = (
    "zh/zh_reviews.jsonl.gz",
    "math/arxiv_abstracts.jsonl.gz",
    "math/openstax_modules.jsonl.gz",
    "math/stacks_project_chapters.jsonl.gz",
    "zh/zh_tech_notes.jsonl.gz",
)


def _plain(line: str) -> tuple[object, list[str]]:
    return loads(line), []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data")
    args = ap.parse_args()
    print("file | lines | CPU-s without | CPU-s with | more | lines with a repeated key")
    for name in FILES:
        with gzip.open(args.data / name) as fh:
            lines = fh.read().splitlines(keepends=True)
        best: dict[str, float] = {}
        for _ in range(7):
            for kind, parse in (("without", _plain), ("with", loads_repeated)):
                jsonl_decode.loads_repeated = parse
                start = time.process_time()
                records, _errors, _numbers = jsonl_decode.decode_jsonl_lines(lines, 1)
                best[kind] = min(best.get(kind, float("inf")), time.process_time() - start)
        repeated = sum(1 for r in records if r is not None and jsonl_decode.REPEATED_KEYS in r)
        more = best["with"] / best["without"] - 1
        print(f"{name} | {len(lines):,} | {best['without']:.3f} | {best['with']:.3f} | {more:+.1%} | {repeated}")
    jsonl_decode.loads_repeated = loads_repeated


if __name__ == "__main__":
    main()
