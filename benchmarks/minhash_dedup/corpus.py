"""Benchmark corpus: real web + math text from ../shared/data cut into ~3.3 KB pieces, plus planted
near-duplicates (word swaps, insertions, deletions, replacements, changed header/footer lines) at
several edit rates, written as a finished stage folder (the input of ``curate minhash-dedup``).

    python benchmarks/minhash_dedup/corpus.py            # builds benchmarks/_work/minhash/corpus_*
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
#: ``../shared/data`` beside the checkout; ``CURATION_SHARED_DATA`` points elsewhere (a worktree).
DATA = Path(os.environ.get("CURATION_SHARED_DATA") or ROOT / ".." / "shared" / "data")
WORK = ROOT / "benchmarks" / "_work" / "minhash"
PIECE_CHARS = 3300
MIN_CHARS = 300
EDIT_RATES = (0.005, 0.01, 0.02, 0.03, 0.05, 0.08)
DOCS_PER_PART = 2500
HEADERS = [
    "Posted by admin on {d} | {n} comments",
    "Home > Articles > Section {n}",
    "Share this page: Twitter Facebook LinkedIn Email",
    "Last updated {d}. All rights reserved.",
    "Sign in | Register | Subscribe to our newsletter ({n} readers)",
]


def real_texts() -> list[tuple[str, str]]:
    """``(origin, text)`` of every real document with text (web and math corpora)."""
    out: list[tuple[str, str]] = []
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["source", "text"])
    out += [(f"web:{s}", t) for s, t in zip(web["source"], web["text"], strict=True) if isinstance(t, str) and len(t) >= MIN_CHARS]
    for name in ("openstax_modules", "arxiv_abstracts", "stacks_project_chapters"):
        frame = pd.read_json(DATA / "math" / f"{name}.jsonl.gz", lines=True)
        out += [(f"math:{name}", t) for t in frame["text"] if isinstance(t, str) and len(t) >= MIN_CHARS // 3]
    return out


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """Cut ``text`` at line (or, for very long lines, word) boundaries into pieces of ~``size`` chars."""
    out, cur, n = [], [], 0
    for line in text.splitlines():
        while len(line) > 2 * size:
            cut = line.rfind(" ", 0, size)
            cut = cut if cut > 0 else size
            if cur:
                out.append("\n".join(cur))
                cur, n = [], 0
            out.append(line[:cut])
            line = line[cut:].lstrip()
        cur.append(line)
        n += len(line) + 1
        if n >= size:
            out.append("\n".join(cur))
            cur, n = [], 0
    if cur and (n >= MIN_CHARS or not out):
        out.append("\n".join(cur))
    elif cur:
        out[-1] += "\n" + "\n".join(cur)
    return [p for p in out if p.strip()]


def edit(text: str, rate: float, rng: random.Random, vocab: list[str]) -> tuple[str, dict]:
    """A near-duplicate of ``text``: word edits at ``rate`` and maybe a changed header/footer line."""
    lines = text.split("\n")
    ops = {"swap": 0, "insert": 0, "delete": 0, "replace": 0, "header": 0, "footer": 0}
    new_lines = []
    for line in lines:
        words = line.split(" ")
        out: list[str] = []
        i = 0
        while i < len(words):
            w = words[i]
            if w and rng.random() < rate:
                op = rng.choice(("swap", "insert", "delete", "replace"))
                ops[op] += 1
                if op == "swap" and i + 1 < len(words):
                    out += [words[i + 1], w]
                    i += 2
                    continue
                if op == "insert":
                    out += [w, rng.choice(vocab)]
                elif op == "replace":
                    out.append(rng.choice(vocab))
                # delete: nothing
            else:
                out.append(w)
            i += 1
        new_lines.append(" ".join(out))
    fill = {"d": f"{rng.randint(1, 28)} {rng.choice(['March', 'June', 'October'])} 20{rng.randint(10, 24)}", "n": rng.randint(2, 999)}
    if rng.random() < 0.4:
        new_lines.insert(0, rng.choice(HEADERS).format(**fill))
        ops["header"] = 1
    if rng.random() < 0.4:
        new_lines.append(rng.choice(HEADERS).format(**fill))
        ops["footer"] = 1
    return "\n".join(new_lines), ops


def build(n_docs: int = 20_100, seed: int = 0) -> pd.DataFrame:
    """The full benchmark corpus as a docs frame (shuffled; variants keep ``meta.base``)."""
    rng = random.Random(seed)
    base: list[dict] = []
    for k, (origin, text) in enumerate(real_texts()):
        for j, p in enumerate(pieces(text)):
            base.append({"doc_id": f"r{k:05d}-{j:03d}", "text": p, "origin": origin})
    vocab = sorted({w for d in base[:3000] for w in re.findall(r"[A-Za-z]{3,12}", d["text"])})
    n_var = max(n_docs - len(base), 0)
    chosen = rng.sample(range(len(base)), k=min(len(base), int(n_var * 0.75) + 1))
    variants: list[dict] = []
    for i in range(n_var):
        b = base[chosen[i % len(chosen)]]
        rate = EDIT_RATES[i % len(EDIT_RATES)]
        text, ops = edit(b["text"], rate, rng, vocab)
        variants.append({"doc_id": f"{b['doc_id']}-v{i // len(chosen)}", "text": text, "origin": b["origin"], "base": b["doc_id"], "rate": rate, **ops})
    rows = base + variants
    rng.shuffle(rows)
    df = pd.DataFrame(rows)
    out = pd.DataFrame({
        "doc_id": df["doc_id"], "text": df["text"],
        "source": np.where(df["origin"].str.startswith("math"), "math_science", "web"),
        "url": None, "repo": None, "path": None, "language": "en",
        "n_tokens": df["text"].str.split().str.len().astype("int64"),
        "meta": [json.dumps({k: v for k, v in r.items() if k not in ("doc_id", "text") and v == v and v is not None}) for r in df.to_dict("records")],
    })
    return out


def write_stage_dir(df: pd.DataFrame, folder: Path, per_part: int = DOCS_PER_PART) -> Path:
    """Write ``df`` as a finished stage folder, ``per_part`` documents per partition."""
    from pipelines.io import write_frame

    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for i, start in enumerate(range(0, len(df), per_part)):
        write_frame(df.iloc[start : start + per_part].reset_index(drop=True), docs / f"part-{i:05d}.parquet")
    (folder / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"bench-{len(df)}-{per_part}"}))
    return folder


def corpora(sizes: tuple[int, ...] = (20_100, 5_025)) -> dict[int, Path]:
    """Build (once) the full corpus and its prefixes of the given sizes; return their folders."""
    out = {}
    full = None
    for n in sizes:
        folder = WORK / f"corpus_{n}"
        if not (folder / "_SUCCESS").exists():
            full = build(max(sizes)) if full is None else full
            write_stage_dir(full.iloc[:n], folder)
        out[n] = folder
    return out


if __name__ == "__main__":
    for n, folder in corpora().items():
        frame = pd.concat([pd.read_parquet(p) for p in sorted((folder / "docs").glob("*.parquet"))])
        mb = frame["text"].str.encode("utf-8").str.len().sum() / 1e6
        print(f"{n} documents, {mb:.1f} MB, {mb * 1e6 / len(frame):.0f} B/doc → {folder}")
