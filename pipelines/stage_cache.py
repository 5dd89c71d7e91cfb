"""Where a stage keeps its resumable sub-steps, and what a stopped stage leaves there to remove."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from pipelines.safety import CACHE

log = logging.getLogger(__name__)


def cache_dir(name: str, stage_dir: Path, run_dir: Path | None) -> Path:
    """Where a stage keeps its resumable sub-steps: under the run folder for a run, and for one
    stage (``--output``) under the stage folder itself, or under the run folder's cache where the
    stage folder is a run's (a decision key changed stage by stage reuses the run's steps); never
    in a folder the user did not name or curate did not write."""
    if run_dir is None:
        parent = Path(stage_dir).resolve().parent
        if (parent / CACHE).is_dir() and any((parent / f).is_file() for f in ("run.json", "run.progress.json")):
            return parent / CACHE / name
    return (Path(run_dir) if run_dir is not None else Path(stage_dir)) / CACHE / name


def remove_temp(cache: Path) -> None:
    """Remove the half-written sub-step folders (``.<step>-<key>.tmp``) a stopped stage left in its
    cache, but for those another run sharing the cache is writing now (it holds their lock) and
    those of a resumable step with partitions finished (the next run of that step keeps them)."""
    from pipelines.kit.resume import kept_parts
    from pipelines.kit.step_lock import held_by_another, lock_path

    if not cache.is_dir():
        return
    for tmp in cache.glob(".*.tmp"):
        if held_by_another(lock_path(tmp)):
            continue
        if kept := kept_parts(tmp):
            log.info(  # workers still computing may finish more: the next run says how many it keeps
                "%s: at least %d finished partitions of %s are kept for the next run of the same step",
                cache.name,
                kept,
                tmp,
            )
            continue
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
