"""The CPU scorers of this tree against those of another commit: the same outputs, and the CPU each takes.

    python benchmarks/code_quality/bench_scorers_peer.py --peer COMMIT [--turns 3] [--files 6000]

Two scorers are measured, each on real data:
- the structural code scorer (``classifiers.code_quality_features.structural_features`` and
  ``structural_score``): on code files of the shared code set, and on up to 24,000 blocks of 5–40
  consecutive lines cut from them (code_web scores blocks of about that size);
- every shipped hashed n-gram model (``classifiers/models/*``, kind ``hashed_linear``): the code-content
  model on the 12-line windows of real web pages (as code_web cuts them), the others on the pages.

``git archive COMMIT`` gives the peer's tree. Each turn runs the peer and then this tree, each in a
fresh process with only its own tree importable; a process warms up on a slice of its inputs,
then times each scorer with ``time.process_time``. Outputs are compared by digest: the
structural features (every value with its type) and scores, and the models' float64 probabilities
byte for byte. The figures are medians over the turns. Data: ``$CURATION_SHARED_DATA`` (default
``../shared/data``), ``code/code_files.parquet`` and ``web/web_docs.parquet``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CURATION_SHARED_DATA", ROOT.parent / "shared" / "data"))


def inputs(n_files: int, n_blocks: int = 24_000, n_pages: int = 1_200) -> dict[str, Any]:
    """Code files, code blocks cut from them (seeded) and web page texts, the same for both trees."""
    import pyarrow.parquet as pq

    rows = pq.read_table(DATA / "code" / "code_files.parquet", columns=["text", "language", "path"]).to_pylist()
    rng = random.Random(7)
    files = [(r["text"] or "", r["language"], r["path"]) for r in rng.sample(rows, min(n_files, len(rows)))]
    blocks: list[tuple[str, Any, None]] = []
    for text, language, _path in files:
        lines, i = text.split("\n"), 0
        while i < len(lines) and len(blocks) < n_blocks:
            n = rng.randint(5, 40)
            blocks.append(("\n".join(lines[i : i + n]), language if rng.random() < 0.5 else None, None))
            i += n * rng.randint(1, 6)
    pages = pq.read_table(DATA / "web" / "web_docs.parquet", columns=["text"]).column(0).to_pylist()
    pages = [p for p in pages if isinstance(p, str) and p.strip()][:n_pages]
    return {"files": files, "blocks": blocks, "pages": pages}


def measure(data_path: str) -> dict[str, Any]:
    """In the process of one tree: CPU seconds and an output digest per scorer."""
    import pickle

    import numpy as np

    import classifiers
    from classifiers.code_content import all_windows, sample_windows
    from classifiers.code_quality import structural_score
    from classifiers.code_quality_features import structural_features
    from classifiers.linear import HashedLinearModel

    data = pickle.loads(Path(data_path).read_bytes())
    out: dict[str, Any] = {"_where": classifiers.__file__}

    def structural(items: list[tuple[str, Any, Any]]) -> str:
        h = hashlib.sha256()
        for text, language, path in items:
            feats = structural_features(text, language, path)
            h.update(repr(sorted((k, type(v).__name__, repr(v)) for k, v in feats.items())).encode())
            h.update(repr(structural_score(feats)).encode())
        return h.hexdigest()

    for name in ("files", "blocks"):
        structural(data[name][:200])  # warm-up: imports, compiled patterns, caches
        start = time.process_time()
        digest = structural(data[name])
        out[f"structural, {len(data[name]):,} code {name}"] = (time.process_time() - start, digest)
    windows = [w for page in data["pages"] for w in sample_windows(all_windows(page, 12, min_chars=40))]
    for card in sorted(Path("classifiers/models").rglob("model.json")):
        if json.loads(card.read_text()).get("kind") != "hashed_linear":
            continue
        model = HashedLinearModel.load(card.parent)
        texts, batch = (windows, 128) if card.parent.name == "code_content" else (data["pages"], 256)
        model.predict(texts[:300], batch_size=batch)
        start = time.process_time()
        probs = np.ascontiguousarray(model.predict(texts, batch_size=batch), dtype=np.float64)
        label = "page windows" if texts is windows else "web pages"
        name = card.parent.relative_to("classifiers/models").as_posix()
        out[f"{name}, {len(texts):,} {label}"] = (time.process_time() - start, hashlib.sha256(probs.tobytes()).hexdigest())
    return out


def run_tree(tree: Path, data_path: Path) -> dict[str, Any]:
    code = f"import json, sys; sys.path.append({str(ROOT)!r}); from benchmarks.code_quality.bench_scorers_peer import measure; print(json.dumps(measure({str(data_path)!r})))"
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the scorers failed in {tree}:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    where = out.pop("_where")
    if not Path(where).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"the process for {tree} imported classifiers from {where}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", required=True, help="the commit to compare with")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--files", type=int, default=6_000, help="code files sampled (seeded) of the 18,320")
    args = ap.parse_args()
    import pickle

    with tempfile.TemporaryDirectory(prefix="scorers-peer-") as tmp:
        work = Path(tmp)
        peer = work / "peer"
        peer.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.peer, "classifiers", "curation"],
                                 capture_output=True, check=True).stdout
        (work / "peer.tar").write_bytes(archive)
        with tarfile.open(work / "peer.tar") as tar:
            tar.extractall(peer, filter="data")
        data_path = work / "inputs.pkl"
        data_path.write_bytes(pickle.dumps(inputs(args.files)))
        turns: dict[str, dict[str, list[float]]] = {}
        digests: dict[str, dict[str, set[str]]] = {}
        for turn in range(args.turns):
            for side, tree in (("peer", peer), ("this", ROOT)):
                for name, (cpu, digest) in run_tree(tree, data_path).items():
                    turns.setdefault(name, {}).setdefault(side, []).append(cpu)
                    digests.setdefault(name, {}).setdefault(side, set()).add(digest)
            print(f"turn {turn + 1} of {args.turns} done", file=sys.stderr, flush=True)
    print("\n".join(table(args.peer, turns, digests)))
    return 0


def table(peer: str, turns: dict[str, dict[str, list[float]]], digests: dict[str, dict[str, set[str]]]) -> list[str]:
    """The Markdown table of the medians (outputs "identical" when every process gave one digest),
    then each scorer's turns."""
    lines = [f"| scorer | peer {peer} CPU-s | this CPU-s | change | outputs |", "|---|---:|---:|---:|---|"]
    for name, sides in turns.items():
        p, t = statistics.median(sides["peer"]), statistics.median(sides["this"])
        same = "identical" if len(digests[name]["peer"] | digests[name]["this"]) == 1 else "DIFFER"
        lines.append(f"| {name} | {p:.2f} | {t:.2f} | {100 * (t / p - 1):+.0f} % | {same} |")
    lines += [f"{name}: peer {[round(x, 2) for x in s['peer']]}, this {[round(x, 2) for x in s['this']]}" for name, s in turns.items()]
    return lines


if __name__ == "__main__":
    sys.exit(main())
