"""code_web on pages without HTML: Chinese technical notes against English pages, this tree against a peer commit.

    python benchmarks/code_web/bench_text_pages.py [--peer HEAD] [--work DIR] [--run RUN] [--data ../shared/data]

A bilingual web mix of real text is written as JSONL (``../shared/data``): the pages of
``web/web_docs.parquet`` that carry text (ingested as text, without HTML), the HTML of its
``trafilatura_eval`` pages, the 47 ``zh/zh_tech_notes`` (Markdown with code fences, some without)
and 300 ``zh/zh_reviews`` (seeded). The recipe runs on it once with this tree (or ``--run`` names a
finished run); then the code_web stage alone (``curate code-web --input RUN/50_code_quality``) runs
on that same input twice in one call, from ``git archive <peer>`` and from this tree. Per tree and
per group (the notes; other pages by ``lang``, with or without HTML): pages recalled, their tiers
and mean ``code_web_score``, and which pages each tree recalls that the other does not.
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

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["doc_id", "lang", "meta", "text", "code_web_recall", "code_tier", "code_web_score"]


def build_mix(path: Path, data: Path) -> None:
    web = pd.read_parquet(data / "web" / "web_docs.parquet", columns=["doc_id", "source", "url", "text", "html"])
    rows = []
    for r in web.itertuples():
        if isinstance(r.text, str) and r.text:
            rows.append({"id": f"w-{r.doc_id}", "text": r.text, "source": "web", "url": r.url or None, "kind": "text"})
        elif r.source == "trafilatura_eval":
            rows.append({"id": f"w-{r.doc_id}", "html": r.html, "source": "web", "url": r.url or None, "kind": "html"})
    notes = pd.read_json(data / "zh" / "zh_tech_notes.jsonl.gz", lines=True)
    rows += [{"id": i, "text": t, "source": "web", "kind": "zh_note"} for i, t in zip(notes["id"], notes["text"], strict=True)]
    reviews = pd.read_json(data / "zh" / "zh_reviews.jsonl.gz", lines=True).sample(300, random_state=0)
    rows += [{"id": f"review-{i}", "text": t, "source": "web", "kind": "zh_review"} for i, t in zip(reviews["id"], reviews["text"], strict=True)]
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def curate(tree: Path, args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", *args, "--quiet"], cwd=tree, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"curate {args[0]} failed in {tree}:\n{proc.stderr[-3000:]}")


def group(row: pd.Series) -> str:
    kind = json.loads(row["meta"]).get("kind") if isinstance(row["meta"], str) else None
    if kind in ("zh_note", "zh_review"):
        return kind
    lang = row["lang"] if row["lang"] in ("en", "zh") else "other"
    return f"{lang} page, {'HTML' if kind == 'html' else 'text only'}"


def summary(docs: pd.DataFrame) -> dict:
    out = {}
    for name, d in docs.groupby("group"):
        rec = d[d["code_web_recall"].notna()]
        tiers = rec["code_tier"].value_counts()
        out[name] = {"pages": len(d), "recalled": len(rec), **{t: int(tiers.get(t, 0)) for t in ("high", "medium", "low")},
                     "mean_code_web_score": round(float(rec["code_web_score"].mean()), 2) if len(rec) else None}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", default="HEAD")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--data", type=Path, default=ROOT / ".." / "shared" / "data")
    ap.add_argument("--run", type=Path, default=None, help="a finished run of the recipe (its 50_code_quality is the input)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-text-pages-"))
    work.mkdir(parents=True, exist_ok=True)
    run = args.run
    if run is None:
        build_mix(work / "mix.jsonl", args.data)
        run = work / "run"
        curate(ROOT, ["run", "pipelines/configs/glm45.yaml", "--input", str(work / "mix.jsonl"), "--output", str(run)])
    peer = work / "peer"
    peer.mkdir(exist_ok=True)
    subprocess.run(f"git -C {ROOT} archive {args.peer} | tar -x -C {peer}", shell=True, check=True)
    res, docs = {}, {}
    for name, tree in (("peer", peer), ("this", ROOT)):
        out = work / f"code_web-{name}"
        curate(tree, ["code-web", "--input", str(run / "50_code_quality"), "--output", str(out)])
        d = pd.read_parquet(out / "docs", columns=COLUMNS)
        d["group"] = d.apply(group, axis=1)
        docs[name] = d.set_index("doc_id")
        res[name] = summary(d)
    a, b = (docs[n]["code_web_recall"].notna() for n in ("peer", "this"))
    both = docs["peer"].index[a & b]
    changed = docs["this"].loc[both, "text"] != docs["peer"].loc[both, "text"]
    res["recall"] = {"both": int((a & b).sum()), "peer_only": sorted(docs["peer"].index[a & ~b]),
                     "this_only": sorted(docs["this"].index[~a & b]), "texts_differ_where_both_recall": int(changed.sum())}
    notes = docs["this"][docs["this"]["group"] == "zh_note"]
    res["zh_notes_by_tier"] = {name: {t: sorted(d.index[(d["group"] == "zh_note") & (d["code_tier"] == t)])
                                      for t in ("low",)} for name, d in docs.items()}
    res["zh_notes"] = len(notes)
    print(json.dumps(res, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
