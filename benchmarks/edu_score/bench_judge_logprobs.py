"""Scores stored from a judge whose score token's log-probability is broken, on real documents.

    python benchmarks/edu_score/bench_judge_logprobs.py [--per-source 60] [--broken-every 5] [--data ../shared/data]

Real OpenStax modules and arXiv abstracts (``../shared/data/math``) are sent through the ``openai``
backend (chat, logprobs) to an in-process OpenAI-compatible server. It writes the score
``min(5, science words)`` and lists that token with p = 0.95 and the score below it with p = 0.05;
every ``--broken-every``-th answer gives the written token a NaN, -inf or missing log-probability
(in turn), as broken fp16 logits or a proxy do. For each answer the script compares the written
score with the score stored (``read_answer``) and with the distribution-only reading (Σ k·p(k) over
the valid score tokens left, which took no account of the written token), and counts answers stored
more than half a point off their written score.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from classifiers.annotation.base import expected_score, logprobs_to_probs  # noqa: E402
from classifiers.annotation.openai import OpenAIAnnotator  # noqa: E402
from classifiers.rubrics import get_rubric  # noqa: E402
from tests.helpers import serve_loopback  # noqa: E402

WORDS = ("theorem", "proof", "equation", "energy", "derivative", "molecule", "integral", "velocity", "function", "force")
BROKEN = ("NaN", "-Infinity", "missing")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-source", type=int, default=60)
    ap.add_argument("--broken-every", type=int, default=5)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="the shared real-data folder")
    args = ap.parse_args()
    import pandas as pd

    data = args.data / "math"
    docs = [t for name in ("openstax_modules", "arxiv_abstracts")
            for t in pd.read_json(data / f"{name}.jsonl.gz", lines=True)["text"].head(args.per_source)]
    docs = [f"[[n{i}]] {t[:1500]}" for i, t in enumerate(docs)]
    seen: dict[int, dict[str, Any]] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            doc = body["messages"][-1]["content"]
            i = int(re.search(r"\[\[n(\d+)\]\]", doc).group(1))
            score = min(5, sum(doc.lower().count(w) for w in WORDS))
            top = {str(score): math.log(0.95), str(max(score - 1, 0) if score else 1): math.log(0.05)}
            if i % args.broken_every == args.broken_every - 1:
                kind = BROKEN[(i // args.broken_every) % len(BROKEN)]
                top = {k: v for k, v in top.items() if k != str(score)} | ({} if kind == "missing" else {str(score): float(kind)})
            seen[i] = {"written": score, "top": top}
            tokens = [("Fine.\n", {}), ("Educational", {}), (" score", {}), (":", {}), (" ", {}), (str(score), top)]
            content = [{"token": t, "logprob": -0.05, "top_logprobs": [{"token": k, "logprob": v} for k, v in tp.items()]}
                       for t, tp in tokens]
            data = json.dumps({"choices": [{"message": {"content": "".join(t for t, _ in tokens)},
                                            "logprobs": {"content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd, url = serve_loopback(Handler)
    try:
        res = OpenAIAnnotator(model="m", base_url=url, tokenizer="chars", concurrency=4).annotate(docs, get_rubric("edu"))
    finally:
        httpd.shutdown()
    stored_off = dist_off = broken = 0
    for i, stored in enumerate(res.scores):
        written, top = seen[i]["written"], seen[i]["top"]
        dist, _ = expected_score(logprobs_to_probs(top), (0, 5))
        broken += int(str(written) not in logprobs_to_probs(top))
        stored_off += int(abs(stored - written) > 0.5)
        dist_off += int(dist is not None and abs(dist - written) > 0.5)
    print(json.dumps({"documents": len(docs), "broken_answers": broken, "failures": res.stats.failures,
                      "off_by_more_than_half_point": {"distribution_only": dist_off, "read_answer": stored_off}}))


if __name__ == "__main__":
    main()
