"""MinHash near-dedup benchmark: this stage against datasketch and datatrove, in one run.

    python benchmarks/minhash_dedup/bench_minhash.py [--subset 1000] [--e2e-docs 20100] [--skip-datatrove]

Needs datatrove in a separate venv (never a dependency of the project):
    python -m venv --system-site-packages benchmarks/_work/dtenv
    benchmarks/_work/dtenv/bin/pip install datatrove spacy "xxhash<4"

Writes benchmarks/_work/minhash/results.json and prints a Markdown summary.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE)]

from corpus import WORK, corpora  # noqa: E402
from measure import run_measured  # noqa: E402
from quality import clusters_from_pairs, exact_pairs, planted_recall, score, shingle_sets  # noqa: E402

from curation.dedup.minhash import MinHashParams, signatures  # noqa: E402
from curation.dedup.shingles import shingles  # noqa: E402

DTENV = ROOT / "benchmarks" / "_work" / "dtenv" / "bin" / "python"


def load(folder: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted((folder / "docs").glob("part-*.parquet"))], ignore_index=True)


def mb(texts: list[str]) -> float:
    return sum(len(t.encode("utf-8")) for t in texts) / 1e6


def rate(n: int, size_mb: float, seconds: float, cpu: float | None = None) -> dict:
    out = {"documents": n, "mb": round(size_mb, 2), "seconds": round(seconds, 2), "docs_per_s": round(n / seconds, 1), "mb_per_s": round(size_mb / seconds, 2)}
    if cpu:
        # CPU seconds of this process: robust to other jobs sharing the cores.
        out.update({"cpu_seconds": round(cpu, 2), "docs_per_cpu_s": round(n / cpu, 1), "mb_per_cpu_s": round(size_mb / cpu, 2)})
    return out


class Clock:
    """Wall and CPU time of a block: ``with Clock() as c: …; c.wall, c.cpu``."""

    def __enter__(self) -> Clock:
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c


def throughput(texts: list[str], subset: list[str], sub_path: Path, skip_datatrove: bool) -> tuple[dict, np.ndarray]:
    """Signature throughput on one core: same documents, same shingles, 128 permutations."""
    from datasketch import MinHash

    out: dict = {}
    params = MinHashParams(num_perm=128)
    signatures(subset[:20], params)  # warm the per-process tables
    with Clock() as c:
        full_sig = signatures(texts, params)
    out["stage_fast_full"] = rate(len(texts), mb(texts), c.wall, c.cpu)
    with Clock() as c:
        signatures(subset, params)
    out["stage_fast"] = rate(len(subset), mb(subset), c.wall, c.cpu)
    with Clock() as c:
        signatures(subset, MinHashParams(num_perm=128, hash="sha1"))
    out["stage_sha1"] = rate(len(subset), mb(subset), c.wall, c.cpu)
    with Clock() as c:
        for text in subset:
            m = MinHash(num_perm=128)
            for s in shingles(text, params.shingle):
                m.update(s.encode("utf-8"))
    out["datasketch_update_loop"] = rate(len(subset), mb(subset), c.wall, c.cpu)
    with Clock() as c:
        MinHash.bulk([[s.encode("utf-8") for s in shingles(x, params.shingle)] for x in subset], num_perm=128)
    out["datasketch_bulk"] = rate(len(subset), mb(subset), c.wall, c.cpu)
    if not skip_datatrove:
        res = subprocess.run([str(DTENV), str(HERE / "run_datatrove.py"), "signatures", str(sub_path), str(WORK / "dt_sigs")],
                             capture_output=True, text=True, check=True)
        dt = json.loads(res.stdout.strip().splitlines()[-1])
        out["datatrove_signature_step"] = {**rate(dt["documents"], dt["mb"], dt["seconds"], dt["cpu_seconds"]), "hashes": dt["hashes"]}
    return out, full_sig


def run_stage(folder: Path, out: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    res = run_measured(["curate", "minhash-dedup", "--input", str(folder), "--output", str(out / "stage"), "--workers", "2", "--quiet"],
                       log=str(out) + ".log")
    stats = json.loads((out / "stage" / "stats.json").read_text())
    main_pid = min(res["processes"], key=int)
    workers = [p["peak_mib"] for pid, p in res["processes"].items() if pid != main_pid and "spawn_main" in p["cmd"]]
    return {"seconds": res["seconds"], "cpu_seconds": res["cpu_seconds"], "rc": res["rc"], "stage_seconds": stats["seconds"], "dropped": stats["dropped"]["documents"],
            "peak_worker_mib": [round(w, 1) for w in sorted(workers, reverse=True)], "peak_client_mib": round(res["processes"][main_pid]["peak_mib"], 1),
            "extra": stats["extra"]}


def run_datatrove(folder: Path, out: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    res = run_measured([str(DTENV), str(HERE / "run_datatrove.py"), "e2e", str(folder / "docs"), str(out), "--tasks", "2"], log=str(out) + ".log")
    main_pid = min(res["processes"], key=int)
    workers = [p["peak_mib"] for pid, p in res["processes"].items() if pid != main_pid and p["peak_mib"] > 50]
    steps = json.loads((out / "timings.json").read_text()) if (out / "timings.json").exists() else {}
    return {"seconds": res["seconds"], "cpu_seconds": res["cpu_seconds"], "rc": res["rc"], "steps": steps, "peak_worker_mib": [round(w, 1) for w in sorted(workers, reverse=True)],
            "peak_main_mib": round(res["processes"][main_pid]["peak_mib"], 1)}


def stage_labels(out: Path, doc_ids: list[str]) -> np.ndarray:
    kept = pd.concat([pd.read_parquet(p, columns=["doc_id", "minhash_cluster"]) for p in sorted((out / "stage" / "docs").glob("*.parquet"))])
    ledger = pd.concat([pd.read_parquet(p, columns=["doc_id", "detail"]) for p in sorted((out / "stage" / "ledger").glob("*.parquet"))])
    cluster = dict(zip(kept["doc_id"], kept["minhash_cluster"], strict=True))
    cluster.update({d: json.loads(x)["cluster"] for d, x in zip(ledger["doc_id"], ledger["detail"], strict=True)})
    return _labels([cluster.get(d) for d in doc_ids])


def datatrove_labels(out: Path, doc_ids: list[str]) -> np.ndarray:
    frames = [pd.read_parquet(p) for sub in ("deduped", "removed") for p in sorted((out / sub).glob("*.parquet"))]
    df = pd.concat(frames, ignore_index=True)
    meta = df["metadata"].map(lambda m: m if isinstance(m, dict) else json.loads(m))
    cid = dict(zip(df["id"], meta.map(lambda m: m.get("minhash_cluster_id", -1)), strict=True))
    return _labels([None if cid.get(d, -1) == -1 else cid[d] for d in doc_ids])


def datasketch_labels(sig: np.ndarray, threshold: float = 0.8) -> np.ndarray:
    from datasketch import LeanMinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=sig.shape[1])
    hashes = [LeanMinHash(seed=1, hashvalues=s, scheme="affine32") for s in sig]
    with lsh.insertion_session() as session:
        for k, h in enumerate(hashes):
            session.insert(k, h)
    pairs = [(k, j) for k, h in enumerate(hashes) for j in lsh.query(h) if j > k]
    return clusters_from_pairs(len(sig), np.array(pairs, dtype=np.int64).reshape(-1, 2))


def _labels(cluster: list) -> np.ndarray:
    codes = {}
    out = np.arange(len(cluster))
    for k, c in enumerate(cluster):
        if c is not None and c == c:
            out[k] = codes.setdefault(c, k)
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--subset", type=int, default=1000, help="documents for the slow per-document peers")
    p.add_argument("--e2e-docs", type=int, default=20_100)
    p.add_argument("--skip-datatrove", action="store_true")
    p.add_argument("--steps", default="throughput,e2e,quality", help="comma list; results of skipped steps are kept from results.json")
    a = p.parse_args()
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    started = time.time()
    folders = corpora()
    big, small = max(folders), min(folders)
    docs = load(folders[big])
    texts = docs["text"].tolist()
    steps = set(a.steps.split(","))
    previous = json.loads((WORK / "results.json").read_text()) if (WORK / "results.json").exists() else {}
    results: dict = {**previous, "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_at_start": os.getloadavg()},
                     "corpus": {"documents": len(docs), "mb": round(mb(texts), 1), "sizes": {str(k): str(v) for k, v in folders.items()}}}
    rng = np.random.default_rng(0)
    sub_idx = np.sort(rng.choice(len(docs), size=min(a.subset, len(docs)), replace=False))
    sub_path = WORK / f"subset_{a.subset}.parquet"
    docs.iloc[sub_idx][["doc_id", "text"]].to_parquet(sub_path)
    if "throughput" in steps:
        print("throughput …", flush=True)
        results["throughput"], full_sig = throughput(texts, [texts[k] for k in sub_idx], sub_path, a.skip_datatrove)
        print(json.dumps(results["throughput"], indent=1), flush=True)
    e2e_folder = folders[a.e2e_docs] if a.e2e_docs in folders else folders[big]
    if "e2e" in steps:
        print("end to end …", flush=True)
        results["e2e"] = {f"stage_{big}": run_stage(folders[big], WORK / "run_stage_big"), f"stage_{small}": run_stage(folders[small], WORK / "run_stage_small")}
        if not a.skip_datatrove:
            results["e2e"][f"datatrove_{e2e_folder.name.split('_')[-1]}"] = run_datatrove(e2e_folder, WORK / "run_datatrove")
        print(json.dumps({k: {x: y for x, y in v.items() if x != "extra"} for k, v in results["e2e"].items()}, indent=1), flush=True)
    if "quality" not in steps:
        (WORK / "results.json").write_text(json.dumps(results, indent=2, default=str))
        return 0
    if "throughput" not in steps:
        full_sig = signatures(texts, MinHashParams(num_perm=128))
    print("quality …", flush=True)
    doc_ids = docs["doc_id"].tolist()
    sets = shingle_sets(texts)
    truth = exact_pairs(sets, 0.7)
    metas = [json.loads(m) for m in docs["meta"]]
    labels = {"stage": stage_labels(WORK / "run_stage_big", doc_ids), "datasketch_lsh_0.8": datasketch_labels(full_sig)}
    if not a.skip_datatrove and e2e_folder == folders[big]:
        labels["datatrove_default"] = datatrove_labels(WORK / "run_datatrove", doc_ids)
    results["quality"] = {name: {**score(lab, truth, sets), "planted_recall_by_edit_rate": planted_recall(lab, doc_ids, metas)} for name, lab in labels.items()}
    results["seconds"] = round(time.time() - started, 1)
    results["machine"]["load_at_end"] = os.getloadavg()
    (WORK / "results.json").write_text(json.dumps(results, indent=2, default=str))
    print(json.dumps(results["quality"], indent=1))
    print(f"total {results['seconds']} s → {WORK / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
