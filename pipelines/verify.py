"""Re-check a finished run: per-stage conservation by id, stats against files, manifests and shards.

>>> # problems = verify_run(Path("runs/sample")); problems == [] means the run is sound
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq

from pipelines.runner import MARKER


def _ids(folder: Path) -> list[str]:
    out: list[str] = []
    for f in sorted(folder.glob("part-*.parquet")):
        out.extend(pq.read_table(f, columns=["doc_id"]).column("doc_id").to_pylist())
    return out


def stage_folders(run_dir: Path) -> list[Path]:
    return [p for p in sorted(Path(run_dir).iterdir()) if p.is_dir() and p.name[:2].isdigit() and "_" in p.name]


def verify_stage(stage_dir: Path, input_ids: list[str] | None) -> list[str]:
    """Problems with one stage folder (empty list = sound)."""
    problems: list[str] = []
    name = stage_dir.name
    if not (stage_dir / MARKER).exists():
        return [f"{name}: no {MARKER} (the stage did not finish)"]
    stats_path = stage_dir / "stats.json"
    if not stats_path.exists():
        return [f"{name}: stats.json is missing"]
    stats = json.loads(stats_path.read_text())
    kept, dropped = _ids(stage_dir / "docs"), _ids(stage_dir / "ledger")
    if len(set(kept)) != len(kept):
        problems.append(f"{name}: {len(kept) - len(set(kept))} documents kept twice")
    if len(set(dropped)) != len(dropped):
        problems.append(f"{name}: {len(dropped) - len(set(dropped))} documents in the ledger twice")
    both = set(kept) & set(dropped)
    if both:
        problems.append(f"{name}: {len(both)} documents both kept and in the ledger (e.g. {sorted(both)[:3]})")
    if stats["kept"]["documents"] != len(kept):
        problems.append(f"{name}: stats.json says {stats['kept']['documents']} kept, docs/ holds {len(kept)}")
    if stats["dropped"]["documents"] != len(dropped):
        problems.append(f"{name}: stats.json says {stats['dropped']['documents']} dropped, ledger/ holds {len(dropped)}")
    if input_ids is not None:
        missing = set(input_ids) - set(kept) - set(dropped)
        extra = (set(kept) | set(dropped)) - set(input_ids)
        if missing:
            problems.append(f"{name}: {len(missing)} input documents are neither kept nor in the ledger (e.g. {sorted(missing)[:3]})")
        if extra:
            problems.append(f"{name}: {len(extra)} documents appear that were not in its input (e.g. {sorted(extra)[:3]})")
    elif stats["in"]["documents"] != len(kept) + len(dropped):
        problems.append(f"{name}: {stats['in']['documents']} records read but {len(kept) + len(dropped)} kept + dropped")
    return problems


def verify_run(run_dir: Path, manifest_check: Callable[[Path], list[str]] | None = None) -> list[str]:
    """Problems with a whole run: every stage in order, then every manifest (empty list = sound)."""
    run_dir = Path(run_dir)
    folders = stage_folders(run_dir)
    if not folders:
        return [f"{run_dir}: no stage folders (NN_<stage>/)"]
    problems: list[str] = []
    previous: list[str] | None = None
    for folder in folders:
        problems += verify_stage(folder, previous)
        previous = _ids(folder / "docs")
    if manifest_check is not None:
        for manifest in sorted(run_dir.glob("*/manifests/*.json")):
            problems += [f"{manifest.relative_to(run_dir)}: {p}" for p in manifest_check(manifest)]
    return problems
