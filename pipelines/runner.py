"""Run one stage or a whole recipe: check columns, build, write docs/ledger/stats, mark success.

A stage folder is complete only when it holds ``_SUCCESS``; it is written into
``.<folder>.inprogress`` and renamed into place, so a killed run never leaves output that
looks complete. ``_SUCCESS`` records the config hash and the input fingerprint: a re-run
with both unchanged skips the stage, and since a stage's input fingerprint is derived from
the previous stage's marker, a changed config re-runs that stage and every stage after it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import platform
import shutil
import time
from pathlib import Path
from typing import Any

import dask
import pandas as pd

from curation.config import ConfigError, config_hash
from pipelines import io
from pipelines.cputime import cpu_seconds
from pipelines.progress import compute_with_progress
from pipelines.recipe import stage_config
from pipelines.stage import StageContext
from pipelines.stages import STAGES, folder_name, load_stage

log = logging.getLogger(__name__)

MARKER = "_SUCCESS"


@dataclasses.dataclass
class StageResult:
    name: str
    stage_dir: Path
    skipped: bool
    stats: dict[str, Any]


def read_marker(stage_dir: Path) -> dict[str, Any] | None:
    import json

    path = Path(stage_dir) / MARKER
    if not path.exists():
        return None
    return json.loads(path.read_text())


def raw_fingerprint(files: list[Path]) -> str:
    """Fingerprint raw input files by path, size and their first and last MiB."""
    h = hashlib.sha256()
    expanded: set[Path] = set()
    for f in files:
        expanded.update(p for p in Path(f).rglob("*") if p.is_file()) if Path(f).is_dir() else expanded.add(Path(f))
    for f in sorted(expanded):
        size = f.stat().st_size
        h.update(f"{f.resolve()}\0{size}\0".encode())
        with open(f, "rb") as fh:
            h.update(fh.read(1 << 20))
            if size > 1 << 20:
                fh.seek(max(size - (1 << 20), 0))
                h.update(fh.read(1 << 20))
    return h.hexdigest()


def stage_fingerprint(input_dir: Path) -> str:
    """Fingerprint of a finished stage's output (from its marker), for the next stage."""
    marker = read_marker(input_dir)
    if marker is not None:
        return marker["output_fingerprint"]
    # A bare docs/ folder: fingerprint the part files by name and size.
    folder = io.docs_dir(input_dir)
    parts = [f"{p.name}:{p.stat().st_size}" for p in sorted(folder.glob("part-*.parquet"))]
    return config_hash(parts)


def run_stage(
    name: str,
    recipe: dict[str, Any],
    *,
    stage_dir: Path,
    input_dir: Path | None = None,
    inputs: list[Any] | None = None,
    client: Any = None,
    run_dir: Path | None = None,
    quiet: bool = False,
) -> StageResult:
    """Run stage ``name`` from ``input_dir`` (or raw ``inputs`` for ingest) into ``stage_dir``."""
    stage = load_stage(name)
    cfg = stage_config(recipe, name, stage.config_cls)
    chash = config_hash({"stage": name, "version": stage.version, "config": cfg.to_dict(), "extra": _global_keys(recipe, stage)})
    if getattr(stage, "reads_raw", False):
        specs = stage.plan_inputs(inputs or [], cfg)
        fingerprint = raw_fingerprint(sorted({s.path for s in specs}))
    else:
        if input_dir is None:
            raise ConfigError(f"stage {name} needs --input: the folder of the previous stage")
        fingerprint = stage_fingerprint(Path(input_dir))
        specs = []
    stage_dir = Path(stage_dir)
    marker = read_marker(stage_dir)
    if marker and marker.get("config_hash") == chash and marker.get("input_fingerprint") == fingerprint:
        log.info("%s: up to date (config %s), skipped", name, chash[:12])
        stats = _read_stats(stage_dir)
        return StageResult(name, stage_dir, True, stats)

    work = stage_dir.parent / f".{stage_dir.name}.inprogress"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ctx = StageContext(
        name=name,
        work_dir=work,
        cache_dir=stage_dir.parent / ".cache" / name,
        input_fingerprint=fingerprint,
        run_dir=run_dir,
        client=client,
        recipe=recipe,
        inputs=specs,
        quiet=quiet,
    )
    started, cpu_started = time.time(), cpu_seconds(client)
    if getattr(stage, "reads_raw", False):
        docs = None
        n_in = None
    else:
        docs = io.read_docs(Path(input_dir))
        missing = [c for c in stage.requires if c not in docs.columns]
        if missing:
            raise ConfigError(
                f"stage {name} requires columns {missing} that {input_dir} does not have; "
                f"run the stages that produce them first (columns present: {list(docs.columns)})"
            )
        n_in = io.count_rows(Path(input_dir))
    try:
        annotated = stage.build(docs if docs is not None else specs, cfg, ctx)
        counts_graph = annotated.map_partitions(io.write_partition, str(work), name, meta=io.COUNTS_META)
        counts = compute_with_progress(counts_graph, client, f"{name}: write", quiet=quiet)
    except Exception as exc:
        if type(exc).__name__ == "KilledWorker":
            raise WorkerLostError(_killed_worker_message(name, exc, client, recipe)) from exc
        raise
    summary = io.summarise_counts(counts if isinstance(counts, pd.DataFrame) else pd.concat(counts))
    if n_in is not None and summary["in"]["documents"] != n_in:
        raise RuntimeError(
            f"stage {name} lost documents: {n_in} in, {summary['in']['documents']} kept + dropped; "
            "this is a bug in the stage, its output was not marked complete"
        )
    stats = {
        "stage": name,
        "version": stage.version,
        "config_hash": chash,
        "config": cfg.to_dict(),
        "seconds": round(time.time() - started, 3),
        "cpu_seconds": round(cpu_seconds(client) - cpu_started, 3),
        **summary,
        "extra": ctx.extra_stats,
    }
    io.write_json(work / "stats.json", stats)
    io.write_json(
        work / MARKER,
        {
            "stage": name,
            "version": stage.version,
            "config_hash": chash,
            "input_fingerprint": fingerprint,
            "output_fingerprint": config_hash({"config": chash, "input": fingerprint}),
        },
    )
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    work.rename(stage_dir)
    log.info(
        "%s: %d in, %d kept, %d dropped in %.1fs",
        name, stats["in"]["documents"], stats["kept"]["documents"], stats["dropped"]["documents"], stats["seconds"],
    )
    return StageResult(name, stage_dir, False, stats)


def enabled_stages(recipe: dict[str, Any]) -> list[str]:
    """Stages of the recipe that are enabled, in run order (ingest always runs)."""
    out = []
    for name in STAGES:
        section = recipe.get("stages", {}).get(name) or {}
        if name == "ingest" or section.get("enabled", True):
            out.append(name)
    return out


def run_recipe(
    recipe: dict[str, Any],
    inputs: list[Any],
    output: Path,
    *,
    client: Any = None,
    quiet: bool = False,
) -> list[StageResult]:
    """Run every enabled stage in order into ``output/NN_<stage>/`` and write ``run.json``."""
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    results: list[StageResult] = []
    previous: Path | None = None
    started = time.time()
    for name in enabled_stages(recipe):
        stage_dir = output / folder_name(name)
        res = run_stage(
            name, recipe, stage_dir=stage_dir, input_dir=previous, inputs=inputs,
            client=client, run_dir=output, quiet=quiet,
        )
        results.append(res)
        previous = stage_dir
    io.write_json(output / "run.json", run_record(recipe, results, time.time() - started))
    return results


class WorkerLostError(RuntimeError):
    """Dask gave up on a task after its workers died; the message says what to change."""


def _killed_worker_message(name: str, exc: BaseException, client: Any, recipe: dict[str, Any]) -> str:
    limits = []
    with contextlib.suppress(Exception):
        limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    limit = f"{min(limits) / 2**30:.2f} GiB" if limits and min(limits) else "no memory limit"
    block = (recipe.get("stages", {}).get("ingest") or {}).get("blocksize_mb", "?")
    return (
        f"stage {name}: Dask gave up on a task because the workers running it died ({exc}). The usual cause "
        f"is memory: a worker here has {limit} and partitions hold up to ingest.blocksize_mb={block} MB of text; "
        "a worker needs ~0.5 GiB for its libraries plus ~6x its partition size (BENCHMARKS.md, memory-bound run). "
        "Lower ingest.blocksize_mb (ingest then re-runs, the later stages follow) or raise --memory-limit; "
        "the workers' logs say why they died. Completed stages are kept and will be skipped on the re-run."
    )


def run_record(recipe: dict[str, Any], results: list[StageResult], seconds: float) -> dict[str, Any]:
    """What ``run.json`` holds: the resolved recipe, versions, config hashes and timings."""
    return {
        "recipe": recipe,
        "versions": versions(),
        "stages": [
            {
                "name": r.name,
                "folder": r.stage_dir.name,
                "skipped": r.skipped,
                "config_hash": r.stats.get("config_hash"),
                "version": r.stats.get("version"),
                "seconds": r.stats.get("seconds"),
            }
            for r in results
        ],
        "seconds": round(seconds, 3),
    }


def versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version(), "dask": dask.__version__}
    for pkg in ("curation", "distributed", "pandas", "pyarrow", "datasketch", "sentence-transformers", "faiss-cpu", "torch"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            continue
    return out


def _read_stats(stage_dir: Path) -> dict[str, Any]:
    import json

    path = stage_dir / "stats.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _global_keys(recipe: dict[str, Any], stage: Any) -> dict[str, Any]:
    """Recipe keys outside the stage's section that change its output (declared by the stage)."""
    return {k: recipe.get(k) for k in getattr(stage, "global_keys", ())}
