"""Generate the sample corpora in this folder, deterministically.

    python sample_data/generate.py            # rewrite the committed files next to this script
    python sample_data/generate.py --out DIR  # write the same files under DIR

Everything is synthetic: vocabularies, sentence banks, templates and code generators live in the
``_*.py`` modules beside this script (nothing is copied from any external corpus). Output is
byte-identical from run to run: one fixed seed, string-seeded RNGs per generator, JSON with a fixed
key order, and gzip with ``mtime=0`` and no file name in the header.

Files (JSON Lines, one object per line, each with ``id``, ``source`` and ``text``):

- ``web/web.jsonl.gz``                             web pages (``url``, ``html``, ``meta.kind``)
- ``web/web_zh.jsonl.gz``                          Chinese web pages (``url``, ``meta.kind``)
- ``code/code.jsonl.gz``                           files of ten repositories (``repo``, ``path``, ``language``)
- ``math_science/math_science.jsonl.gz``           documents with ``meta.edu_label`` 0-5
- ``reasoning/reasoning.jsonl``                    step-by-step solutions with a final answer
- ``agent/agent.jsonl``                            agent trajectories
- ``issues_prs_commits/issues_prs_commits.jsonl``  issues, pull requests and commits (``meta``)
- ``crawl/crawl.warc.gz``                          a small crawl (WARC: responses, requests, skipped records)
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _gen_agent  # noqa: E402
import _gen_code  # noqa: E402
import _gen_issues  # noqa: E402
import _gen_math  # noqa: E402
import _gen_reasoning  # noqa: E402
import _gen_warc  # noqa: E402
import _gen_web  # noqa: E402
import _gen_zh  # noqa: E402

SEED = 20250801

OUTPUTS = [
    ("web/web.jsonl.gz", _gen_web.generate),
    ("web/web_zh.jsonl.gz", _gen_zh.generate),  # Chinese pages (languages, issue 15)
    ("code/code.jsonl.gz", _gen_code.generate),
    ("math_science/math_science.jsonl.gz", _gen_math.generate),
    ("reasoning/reasoning.jsonl", _gen_reasoning.generate),
    ("agent/agent.jsonl", _gen_agent.generate),
    ("issues_prs_commits/issues_prs_commits.jsonl", _gen_issues.generate),
]


def to_jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def gzip_bytes(data: bytes) -> bytes:
    """Reproducible gzip: no timestamp, no file name, fixed compression level."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def write(out_dir: Path, seed: int = SEED) -> dict[str, int]:
    """Write every output file under ``out_dir``; returns record counts per file."""
    counts = {}
    for rel, generate in OUTPUTS:
        records = generate(seed)
        ids = [r["id"] for r in records]
        if len(set(ids)) != len(ids):
            raise AssertionError(f"{rel}: duplicate ids")
        data = to_jsonl(records)
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip_bytes(data) if rel.endswith(".gz") else data)
        counts[rel] = len(records)
    counts.update(_gen_warc.write(out_dir, seed))  # crawl/crawl.warc.gz (WARC, not JSONL)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: this script's folder)")
    args = parser.parse_args(argv)
    for rel, n in write(args.out).items():
        size = (args.out / rel).stat().st_size
        print(f"{rel:48} {n:5d} records {size / 1e6:7.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
