"""A corpus of any size for the memory-bound run, recombined from the real data in ../shared/data.

The real corpora hold ~100 MB of text, so larger corpora are built by recombination: a web or
math/science document is 4–14 paragraphs drawn at random from the real documents of its kind, a
code file is 3–16 blank-line-separated blocks of real files of one language, grouped into
repositories. Random combinations are unique (few pairs share even one paragraph), so the dedup
stages keep almost everything and every later stage sees the whole corpus, as in a real run. On
top, a known share of planted duplicates: exact copies (exact_dedup's work) and copies with a few
words changed (minhash_dedup's work).

    python benchmarks/reliability/corpus.py --gb 2.5      # → benchmarks/_work/reliability/corpus/

Written as plain JSON Lines of ~128 MB per file (ingest splits them into blocks), never committed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".." / "shared" / "data"
WORK = ROOT / "benchmarks" / "_work" / "reliability"
FILE_BYTES = 128 * 2**20
SHARE = {"web": 0.60, "code": 0.28, "math_science": 0.12}  # of bytes
EXACT_DUP, NEAR_DUP = 0.04, 0.04  # of documents
EXT = {"Python": "py", "Rust": "rs", "C": "c", "Go": "go", "JavaScript": "js", "C++": "cpp", "Shell": "sh",
       "Java": "java", "TypeScript": "ts", "Perl": "pl", "Markdown": "md", "JSON": "json", "TOML": "toml", "YAML": "yaml"}


def paragraphs(texts: list[str], lo: int = 400, hi: int = 1500) -> list[str]:
    """Real paragraphs: consecutive lines merged until ``lo`` characters, long lines cut near ``hi``."""
    out: list[str] = []
    for text in texts:
        cur: list[str] = []
        n = 0
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            while len(line) > hi:
                cut = line.rfind(" ", 0, hi)
                cut = cut if cut > lo else hi
                out.append(line[:cut])
                line = line[cut:].lstrip()
            cur.append(line)
            n += len(line)
            if n >= lo:
                out.append("\n".join(cur))
                cur, n = [], 0
        if cur and n >= lo // 4:
            out.append("\n".join(cur))
    return out


def pools() -> dict[str, object]:
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["text"])
    math = [t for name in ("openstax_modules", "arxiv_abstracts", "stacks_project_chapters")
            for t in pd.read_json(DATA / "math" / f"{name}.jsonl.gz", lines=True)["text"] if isinstance(t, str)]
    code = pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["language", "text"])
    code = code[code["language"].isin(list(EXT)) & code["text"].str.len().between(200, 100_000)]
    blocks: dict[str, list[str]] = {}
    for lang, text in zip(code["language"], code["text"], strict=True):
        blocks.setdefault(lang, []).extend(b for b in re.split(r"\n\s*\n", text) if b.strip())
    return {"web": paragraphs([t for t in web["text"] if isinstance(t, str)]), "math_science": paragraphs(math),
            "code": blocks}


def near_copy(text: str, rng: random.Random) -> str:
    """``text`` with ~1 % of its words replaced (well above MinHash's 0.8 Jaccard)."""
    words = text.split(" ")
    for _ in range(max(1, len(words) // 100)):
        words[rng.randrange(len(words))] = rng.choice(("data", "report", "update", "note", "value"))
    return " ".join(words)


def build(total_bytes: int, out: Path, seed: int = 7) -> dict:
    rng = random.Random(seed)
    pool = pools()
    langs = sorted(pool["code"])  # type: ignore[arg-type]
    lang_weights = [len(pool["code"][lang]) for lang in langs]  # type: ignore[index]
    out.mkdir(parents=True, exist_ok=True)
    counts = {"documents": 0, "bytes": 0, "exact_copies": 0, "near_copies": 0}
    handles: dict[str, tuple[object, int, int]] = {}  # source -> (file, bytes in file, file index)
    written = {s: 0 for s in SHARE}
    recent: list[dict] = []
    repo, repo_left, lang = 0, 0, langs[0]

    def emit(rec: dict) -> None:
        line = (json.dumps(rec, ensure_ascii=False) + "\n").encode()
        src = rec["source"]
        fh, size, idx = handles.get(src, (None, FILE_BYTES, -1))
        if size >= FILE_BYTES:
            if fh is not None:
                fh.close()  # type: ignore[attr-defined]
            idx += 1
            fh, size = open(out / f"{src}-{idx:04d}.jsonl", "wb"), 0  # noqa: SIM115 - closed on rotation and at the end
        fh.write(line)  # type: ignore[attr-defined]
        handles[src] = (fh, size + len(line), idx)
        written[src] += len(line)
        counts["documents"] += 1
        counts["bytes"] += len(line)

    while counts["bytes"] < total_bytes:
        src = min(SHARE, key=lambda s: written[s] / SHARE[s])
        i = counts["documents"]
        r = rng.random()
        if recent and r < EXACT_DUP + NEAR_DUP:
            base = rng.choice(recent)
            if base["source"] == src:
                text = base["text"] if r < EXACT_DUP else near_copy(base["text"], rng)
                counts["exact_copies" if r < EXACT_DUP else "near_copies"] += 1
                emit({**base, "id": f"rb-{i:09d}", "text": text})
                continue
        if src == "code":
            if repo_left == 0:
                repo, repo_left = repo + 1, rng.randint(5, 60)
                lang = rng.choices(langs, lang_weights)[0]
            repo_left -= 1
            blocks = pool["code"][lang]  # type: ignore[index]
            text = "\n\n".join(rng.choice(blocks) for _ in range(rng.randint(3, 16))) + "\n"
            rec = {"id": f"rb-{i:09d}", "source": "code", "repo": f"bench/repo-{repo:06d}",
                   "path": f"src/module_{repo_left:03d}.{EXT[lang]}", "language": lang, "text": text}
        else:
            paras = pool[src]
            text = "\n\n".join(rng.choice(paras) for _ in range(rng.randint(4, 14)))  # type: ignore[arg-type]
            rec = {"id": f"rb-{i:09d}", "source": src, "url": f"https://{src}.bench.example/{i}", "text": text}
        emit(rec)
        recent.append(rec)
        if len(recent) > 2000:
            recent = recent[-1000:]
    for fh, _, _ in handles.values():
        fh.close()  # type: ignore[attr-defined]
    counts["bytes_by_source"] = written
    (out.parent / "corpus.json").write_text(json.dumps(counts, indent=2))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=2.5, help="corpus size in GB of JSON Lines (default 2.5)")
    ap.add_argument("--out", type=Path, default=WORK / "corpus")
    args = ap.parse_args()
    t0 = time.time()
    for old in args.out.glob("*.jsonl"):
        old.unlink()
    counts = build(int(args.gb * 1e9), args.out)
    print(json.dumps(counts), f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
