"""Mojibake repair at ingest on real corpora: what it flags and repairs, and what it costs against the
token count ingest makes of the same texts.

    python benchmarks/ingest/bench_mojibake.py [--examples 5]

Corpora (../shared/data, or $CURATION_SHARED_DATA): the web texts of ``web/web_docs.parquet``, the
Chinese reviews and notes, the math texts, and the code files (code is never repaired; its row says
what a repair would have changed). Per corpus: texts, millions of characters, texts the cheap test
flags, texts repaired, and CPU seconds of (a) the test alone, (b) ``repair_texts`` (test + ftfy on the
flagged texts), (c) ingest's token count of the same texts (``curation.tokens.count_tokens``, qwen),
the peer. Each is the best of ``--turns`` passes in this process.
"""

from __future__ import annotations

import argparse
import difflib
import os
import time
from pathlib import Path

import pandas as pd

from curation.ingest.mojibake import flagged, repair, repair_texts
from curation.tokens import count_tokens

DATA = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data"))


def corpora() -> dict[str, list[str]]:
    out = {"web": pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["text"])["text"].dropna().tolist()}
    for f in (
        "zh/zh_reviews",
        "zh/zh_tech_notes",
        "math/arxiv_abstracts",
        "math/openstax_modules",
        "math/stacks_project_chapters",
    ):
        out[f] = pd.read_json(DATA / f"{f}.jsonl.gz", lines=True)["text"].dropna().astype(str).tolist()
    out["code (never repaired)"] = (
        pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["text"])["text"].dropna().tolist()
    )
    return out


def best(fn, turns: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(turns):
        t = time.process_time()
        result = fn()
        times.append(time.process_time() - t)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--examples", type=int, default=5)
    args = ap.parse_args()
    rows, shown = [], []
    for name, texts in corpora().items():
        test_s, hits = best(lambda t=texts: sum(map(flagged, t)), args.turns)
        if name.startswith("code"):
            repair_s, changed = best(lambda t=texts: [repair(x) != x for x in t], args.turns)
        else:
            repair_s, (out, changed) = best(lambda t=texts: repair_texts(t, ["web"] * len(t)), args.turns)
            shown += [(a, b) for a, b, c in zip(texts, out, changed, strict=True) if c][: args.examples]
        tok_s, _ = best(lambda t=texts: count_tokens(t, "qwen"), 1 if len(texts) > 20000 else args.turns)
        mchars = sum(map(len, texts)) / 1e6
        rows.append(
            {
                "corpus": name,
                "texts": len(texts),
                "Mchars": round(mchars, 1),
                "flagged": hits,
                "repaired": sum(changed),
                "test CPU-s": round(test_s, 3),
                "repair CPU-s": round(repair_s, 3),
                "token count CPU-s": round(tok_s, 2),
                "repair / token count": f"{repair_s / tok_s:.1%}",
            }
        )
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for r in rows:
        print("| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in r.values()) + " |")
    for a, b in shown:
        ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        print([(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"][:3])


if __name__ == "__main__":
    main()
