"""Held-out check of the whole recipe on a realistic corpus: does the mixture come out as GLM-4.5's?

Corpus (from ../shared/data, never copied into the repository; written to a temporary folder):
real web pages with their HTML (web/web_docs.parquet), OpenStax textbook modules presented as web
pages (a page with navigation, an article and a footer), source files of real repositories
(code/code_files.parquet) and arXiv abstracts as math & science documents.

Figures and their targets:
- share of web pages with real code blocks (a ``<pre>`` of ≥ 3 non-empty lines, ≥ 40 characters,
  with code punctuation — judged from the HTML, independently of the recall) in phase 2's
  ``code_web`` groups (target ≥ 0.5);
- share of textbook pages in phase 2's ``web_edu`` (or ``math_science``) groups (target ≥ 0.5);
- phase 1 : phase 2 planned tokens against 15 : 7 (within 3 %);
- the top web level's epochs over pre-training (≥ 3.2).

    python benchmarks/mixture_recipe/bench_recipe.py --work /tmp/mixture_recipe            # this checkout
    python benchmarks/mixture_recipe/bench_recipe.py --work /tmp/mixture_recipe --peer ../main  # + a peer checkout, same corpus

The edu annotator is off (``edu_score.annotator=none``: the shipped scorer scores, as ``scorer:
auto`` does on CPU anyway), so the figure does not depend on the small CPU judge.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
DATA = next((p for p in (REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data") if p.is_dir()),
            REPO.parent / "shared" / "data")  # ../shared/data (a worktree under /work/wt: ../../shared/data)
CODE_PUNCT = re.compile(r"[;{}()=<>\[\]]")
OVERRIDES = ["edu_score.annotator=none", "edu_score.sample_size=0"]


def real_code_blocks(html: str | None) -> int:
    """``<pre>`` blocks that hold code: ≥ 3 non-empty lines, ≥ 40 characters, code punctuation."""
    if not isinstance(html, str) or "<pre" not in html.lower():
        return 0
    import lxml.html

    try:
        root = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return 0
    n = 0
    for pre in root.iter("pre"):
        text = pre.text_content()
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) >= 3 and len(text) >= 40 and len(CODE_PUNCT.findall(text)) >= 3:
            n += 1
    return n


def textbook_page(title: str, text: str) -> tuple[str, str]:
    """An OpenStax module as a crawled page: text as a page extractor gives it, HTML with chrome around it."""
    body = "\n".join(f"<p>{p}</p>" for p in text.split("\n\n") if p.strip())
    html = (f"<html><head><title>{title} | OpenStax</title></head><body><nav><a href='/'>Home</a> <a href='/subjects'>Subjects</a>"
            f"</nav><main><article><h1>{title}</h1>{body}</article></main><footer>© Rice University. CC BY-NC-SA 4.0</footer></body></html>")
    return f"{title}\n\n{text}", html


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: text.rfind("\n\n", 0, limit) if "\n\n" in text[:limit] else limit]


def build_corpus(out: Path, n_code: int, n_textbook: int, n_math: int) -> dict[str, set[str]]:
    """Write the JSONL inputs; return the ids of the labelled pages."""
    out.mkdir(parents=True, exist_ok=True)
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet")
    web = web[web["text"].fillna("").str.strip().str.len() > 0]
    code_pages: set[str] = set()
    rows = []
    for r in web.itertuples(index=False):
        doc_id = f"web-{r.source}-{r.doc_id}"
        if real_code_blocks(r.html) > 0:
            code_pages.add(doc_id)
        rows.append({"id": doc_id, "source": "web", "text": r.text, "url": r.url, **({"html": r.html} if isinstance(r.html, str) else {})})
    books = pd.read_json(DATA / "math" / "openstax_modules.jsonl.gz", lines=True)
    books = books[books["text"].str.len() > 500].sample(n=min(n_textbook, len(books)), random_state=7)
    textbook: set[str] = set()
    for r in books.itertuples(index=False):
        text, html = textbook_page(r.title, cut(r.text, 20_000))
        doc_id = f"openstax-{r.module_id}"
        textbook.add(doc_id)
        rows.append({"id": doc_id, "source": "web", "text": text, "html": html, "url": f"https://openstax.org/books/{r.books[0]}/pages/{r.module_id}"})
    write_jsonl(out / "web.jsonl.gz", rows)
    code = pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["repo", "path", "language", "text"])
    code = code[code["text"].str.len().between(50, 100_000)].sample(n=n_code, random_state=7)
    write_jsonl(out / "code.jsonl.gz", [{"id": f"code-{i}", "source": "code", "text": r.text, "repo": r.repo, "path": r.path,
                                        "language": r.language} for i, r in enumerate(code.itertuples(index=False))])
    arxiv = pd.read_json(DATA / "math" / "arxiv_abstracts.jsonl.gz", lines=True).sample(n=n_math, random_state=7)
    write_jsonl(out / "math.jsonl.gz", [{"id": f"arxiv-{i}", "source": "math_science", "text": t} for i, t in enumerate(arxiv["text"])])
    return {"code_pages": code_pages, "textbook": textbook}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def run_recipe(checkout: Path, inp: Path, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", str(checkout / "pipelines/configs/glm45.yaml"), "--input", str(inp),
                           "--output", str(out), "--quiet", "--workers", "auto", *OVERRIDES], cwd=checkout, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{checkout}: the recipe failed\n{proc.stderr[-3000:]}")
    return time.time() - t0


def shard_ids(mix: Path, phase: str, kinds: tuple[str, ...]) -> set[str]:
    ids: set[str] = set()
    for kind in kinds:
        for f in (mix / "shards" / phase / kind).glob("*/part-*.parquet"):
            ids |= set(pd.read_parquet(f, columns=["doc_id"])["doc_id"])
    return ids


def measure(run: Path, labels: dict[str, set[str]]) -> dict[str, float]:
    mix = next(run.glob("*_mixture"))
    m = {p.stem: json.loads(p.read_text()) for p in (mix / "manifests").glob("*.json")}
    stats = json.loads((mix / "stats.json").read_text())["extra"]
    p1, p2 = m["pretrain_phase1"]["budget"]["planned_tokens"], m["pretrain_phase2"]["budget"]["planned_tokens"]
    code_web = shard_ids(mix, "pretrain_phase2", ("code_web",))
    edu = shard_ids(mix, "pretrain_phase2", ("web_edu", "math_science"))
    return {
        "code_pages": len(labels["code_pages"]),
        "code_pages_in_phase2_code_web": round(len(labels["code_pages"] & code_web) / max(len(labels["code_pages"]), 1), 3),
        "textbook_pages": len(labels["textbook"]),
        "textbook_in_phase2_web_edu": round(len(labels["textbook"] & edu) / max(len(labels["textbook"]), 1), 3),
        "phase1_to_phase2": round(p1 / p2, 4) if p2 else float("inf"),
        "phase_ratio_vs_15_7": round((p1 / p2) / (15 / 7) - 1, 4) if p2 else float("inf"),
        "top_level_epochs": round(stats.get("pretrain_epochs", {}).get("web/high", 0.0), 3),
        "warnings": len(stats.get("warnings", [])),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--peer", type=Path, help="another checkout run on the same corpus (e.g. the main branch)")
    ap.add_argument("--code", type=int, default=1500)
    ap.add_argument("--textbook", type=int, default=200)
    ap.add_argument("--math", type=int, default=600)
    args = ap.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"{DATA} is missing: this benchmark needs the shared real corpora")
    labels = build_corpus(args.work / "input", args.code, args.textbook, args.math)
    results = {}
    for name, checkout in [("this", REPO), *([("peer", args.peer.resolve())] if args.peer else [])]:
        out = args.work / f"run-{name}"
        seconds = run_recipe(checkout, args.work / "input", out)
        results[name] = {**measure(out, labels), "seconds": round(seconds, 1)}
        print(name, json.dumps(results[name]), flush=True)
    (args.work / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
