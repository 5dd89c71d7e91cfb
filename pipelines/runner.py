"""Run one stage or a whole recipe: check columns, build, write docs/ledger/stats, mark success.

A stage folder is complete only when it holds ``_SUCCESS``; it is written into
``.<folder>.inprogress`` and renamed into place, so a killed run never leaves output that
looks complete (a failed one removes its ``.inprogress`` folder). ``_SUCCESS`` records the config
hash, the input fingerprint and every file written (pipelines/marker.py): a re-run with both
unchanged skips the stage only when its files are still as recorded, and since a stage's input
fingerprint is derived from the previous stage's marker, a changed config re-runs that stage and
every stage after it, unless its output comes out as before (pipelines/restat.py). A stage never
replaces a folder it did not write, never writes into or over its input, and holds a lock on the
folder it writes into (pipelines/safety.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from curation.config import ConfigError
from pipelines import io
from pipelines.counts import kept_tokens_by_part, summarise_counts, with_input_tokens
from pipelines.cputime import cpu_times
from pipelines.incomplete import check_complete
from pipelines.kit import StageContext, check_produces, resolve_artifacts, resolve_lineage, stage_fault
from pipelines.kit.context import SCRATCH
from pipelines.kit.input_order import chain_warning, check_stage_input
from pipelines.kit.stage import check_requires, run_chain, upstream_chain
from pipelines.marker import (
    INPUT_CHECKSUMS,
    MARKER,
    check_unchanged,
    raw_fingerprint,
    read_marker,
    save_checksums,
    stage_fingerprint,
)
from pipelines.plan_checks import check_plan
from pipelines.raw_inputs import check_raw_unchanged, raw_stamps
from pipelines.recipe import check_configs, global_keys, stage_config, stage_hash, stage_settings
from pipelines.rerun import check_run_replaceable, kept_after_stop, remove_leftovers, rerun_reason, stale_after
from pipelines.restat import came_out_as_before, reused_after, stage_marker
from pipelines.run_record import RunProgress, remove_other_stages, remove_run_record, run_record
from pipelines.safety import check_overlap, check_replaceable, folder_lock, stage_lock, swapped_into_place
from pipelines.stage_cache import cache_dir, remove_temp
from pipelines.stages import enabled_stages, folder_name, load_stage
from pipelines.summary import stage_warnings
from pipelines.worker_loss import WorkerLostError, is_killed_worker, killed_worker_message, memory_limits

log = logging.getLogger(__name__)


@dataclasses.dataclass
class StageResult:
    name: str
    stage_dir: Path
    skipped: bool
    stats: dict[str, Any]
    #: made again, its output came out as the one it replaced: it hands on that output's fingerprint
    output_unchanged: bool = False
    #: skipped because its input came out unchanged when this earlier stage was made again
    input_unchanged_after: str | None = None


def run_stage(
    name: str, recipe: dict[str, Any], *, stage_dir: Path, input_dir: Path | None = None, inputs: list[Any] | None = None,
    client: Any = None, run_dir: Path | None = None, quiet: bool = False, cache_root: Path | None = None,
) -> StageResult:
    """Run stage ``name`` from ``input_dir`` (or raw ``inputs`` for ingest) into ``stage_dir``;
    its resumable sub-steps go to ``cache_root/<name>`` (default: :func:`cache_dir`)."""
    stage = load_stage(name)
    cfg = stage_config(recipe, name, stage.config_cls)
    stage_dir = Path(stage_dir)
    raw = getattr(stage, "reads_raw", False)
    if not raw and input_dir is None:
        raise ConfigError(f"stage {name} needs --input: the folder of the previous stage")
    check_overlap(stage_dir, list(inputs or []) if raw else [input_dir])
    with stage_lock(stage_dir):
        cache = Path(cache_root) / name if cache_root is not None else cache_dir(name, stage_dir, run_dir)
        result = _run_stage_locked(name, stage, cfg, recipe, stage_dir, input_dir, inputs, client, run_dir, quiet, cache)
    return result if run_dir is not None else check_complete([result])[0]  # a stage run alone: IncompleteRunError


def _run_stage_locked(
    name: str, stage: Any, cfg: Any, recipe: dict[str, Any], stage_dir: Path, input_dir: Path | None,
    inputs: list[Any] | None, client: Any, run_dir: Path | None, quiet: bool, cache: Path,
) -> StageResult:
    chash = stage_hash(name, recipe, stage, cfg)
    specs: list[Any] = []
    stamps = None  # raw files as they were before planning: checked again once ingest has read them
    chain: list[Path] = []  # the stage folders its input was made through, in run order
    raw = getattr(stage, "reads_raw", False)
    if raw:
        # the files alone decide whether ingest is up to date; planning its partitions reads them
        stamps = raw_stamps(files := sorted(set(stage.input_files(inputs or [], cfg))))
        fingerprint = raw_fingerprint(files, cache / INPUT_CHECKSUMS)
    else:
        assert input_dir is not None
        check_stage_input(name, recipe, Path(input_dir))  # a run folder for one of its stage folders, a damaged one
        check_requires(stage, Path(input_dir), io.docs_columns(Path(input_dir)), cfg)  # before any output or compute
        fingerprint = stage_fingerprint(Path(input_dir))
        chain = run_chain(name, run_dir) if run_dir is not None else upstream_chain(Path(input_dir))
        if run_dir is None and (warning := chain_warning(name, recipe, Path(input_dir), chain)):  # a run feeds each the one before
            log.warning("%s", warning)
    why, fault = rerun_reason(stage_dir, chash, fingerprint, cfg.flat_dict(), raw, global_keys(recipe, stage))
    if why is None:
        remove_leftovers(stage_dir)  # a stopped swap's .NAME.old, a killed run's .NAME.inprogress
        log.info("%s: up to date (config %s), skipped", name, chash[:12])
        return StageResult(name, stage_dir, True, _read_stats(stage_dir))
    if why:  # a damaged or incomplete output is a warning, a changed config or input what the user asked for
        log.log(logging.WARNING if fault else logging.INFO, "%s: re-running: %s", name, why)
    check_replaceable(stage_dir, (name,))
    if raw:
        specs = stage.plan_inputs(inputs or [], cfg)  # fails here, before any output, on unusable input

    work = stage_dir.parent / f".{stage_dir.name}.inprogress"
    created = [d for d in (stage_dir, cache.parent, cache) if not d.exists()]  # removed again if left empty
    previous = read_marker(stage_dir)  # the output it replaces: its fingerprint is handed on if the content is the same
    remove_leftovers(stage_dir)
    try:
        work.mkdir(parents=True)
        stats = _build_and_write(name, stage, cfg, recipe, chash, fingerprint, work, stage_dir, input_dir, chain, specs, client, run_dir,
                                 quiet, cache, stamps, previous)
        stale_warning = stale_after(stage_dir, run_dir)  # taken now: a run's stages stale before this re-run are not its doing
        # once in place the stage has succeeded: a stop waits for this bookkeeping and says what is kept and left
        with swapped_into_place(work, stage_dir, lambda old: kept_after_stop(stage_dir, run_dir, old)):
            save_checksums(cache / INPUT_CHECKSUMS)  # a first run's: its cache folder exists now
            log.info("%s: %d in, %d kept, %d dropped in %.1fs", name, stats["in"]["documents"], stats["kept"]["documents"],
                     stats["dropped"]["documents"], stats["seconds"])
            for warning in [*stage_warnings(stats, stage_dir / "ledger"), *stale_warning()]:
                log.warning("%s", warning)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        remove_temp(cache)
        # a single-stage run that failed before any sub-step finished leaves no --output folder behind
        for empty in reversed(created):
            with contextlib.suppress(OSError):
                empty.rmdir()
        raise
    return StageResult(name, stage_dir, False, stats, output_unchanged=came_out_as_before(name, stage_dir, previous))


def _build_and_write(
    name: str, stage: Any, cfg: Any, recipe: dict[str, Any], chash: str, fingerprint: str, work: Path,
    stage_dir: Path, input_dir: Path | None, chain: list[Path], specs: list[Any], client: Any, run_dir: Path | None, quiet: bool,
    cache: Path, stamps: dict[Path, list[int]] | None = None, previous: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the stage into ``work``: its parts, ``stats.json`` and ``_SUCCESS``; ``previous``: the
    marker of the finished output it replaces, whose output fingerprint it hands on when its content
    comes out the same (:mod:`pipelines.restat`)."""
    ctx = StageContext(
        name=name, work_dir=work, cache_dir=cache,
        input_fingerprint=fingerprint,
        config_hash=chash,
        run_dir=run_dir,
        client=client,
        recipe=recipe,
        inputs=specs,
        # the artifacts and stages of the folders its input was made through, not of every folder beside it
        upstream=resolve_artifacts(stage, chain),
        lineage=resolve_lineage(name, chain),
        settings=stage_settings(recipe, stage),
        quiet=quiet,
    )
    started, (driver_cpu_started, cpu_started) = time.time(), cpu_times(client)
    recorded: dict[str, Any] = {}
    if getattr(stage, "reads_raw", False):
        docs, n_in = None, None
    else:
        assert input_dir is not None
        docs = io.read_docs(Path(input_dir))
        ctx.input_docs, ctx.input_files = docs, io.docs_files(Path(input_dir))
        recorded = _recorded_stats(Path(input_dir))
        ctx.input_tokens = _input_tokens(recorded, len(ctx.input_files))
        n_in = io.count_rows(Path(input_dir))
    limits = memory_limits(client)  # as the stage starts: once workers die, the scheduler may know none
    try:
        annotated = stage.build(docs if docs is not None else specs, cfg, ctx)
        check_produces(stage, annotated.columns)
        counts_graph = ctx.map_parts(annotated, io.write_partition, str(work), name, meta=io.COUNTS_META)
        counts = ctx.compute(counts_graph, "write", costs=ctx.costs())
        shutil.rmtree(work / SCRATCH, ignore_errors=True)
    except Exception as exc:
        if not is_killed_worker(exc):
            raise
        raise WorkerLostError(killed_worker_message(name, exc, limits or memory_limits(client), recipe, specs)) from exc
    summary = with_input_tokens(summarise_counts(counts), recorded)
    check_unchanged(name, input_dir, fingerprint, ctx.made_steps)  # its input replaced while it read it: no bug of the stage
    check_raw_unchanged(name, stamps, ctx.made_steps)  # a raw file cut or grown while ingest read it
    if n_in is not None and summary["in"]["documents"] != n_in:
        raise stage_fault(stage, f"stage {name} lost documents: {n_in} in, {summary['in']['documents']} kept + dropped, its output "
                          "not marked complete: its decide returns every row it is given (a dropped one with a drop_reason)")
    incomplete = {"incomplete": ctx.incomplete} if ctx.incomplete else {}  # pipelines/incomplete.py
    stats = {
        "stage": name,
        "version": stage.version,
        "config_hash": chash,
        "config": cfg.flat_dict(),  # the flat view: manifests cite it, and grouping fields must not change it
        **({"recipe_keys": recipe_keys} if (recipe_keys := global_keys(recipe, stage)) else {}),
        "seconds": round(time.time() - started, 3),
        **_cpu_figures(client, driver_cpu_started, cpu_started),
        **summary,
        "kept_tokens_by_part": kept_tokens_by_part(counts, annotated.npartitions),
        "extra": ctx.extra_stats,
        **incomplete,
    }
    io.write_json(work / "stats.json", stats)
    io.write_json(work / MARKER, stage_marker(work, name, stage.version, chash, fingerprint, chain, ctx.incomplete, previous))
    return stats


def _recorded_stats(input_dir: Path) -> dict[str, Any]:
    """The ``stats.json`` of the stage folder ``input_dir``, or ``{}`` (a folder no stage wrote)."""
    try:
        recorded = json.loads((input_dir / "stats.json").read_text())
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _input_tokens(recorded: dict[str, Any], nparts: int) -> dict[str, list[int]]:
    """Kept tokens per source and partition of the input stage folder (``recorded``: its
    ``stats.json``), or ``{}`` where it records none or another partitioning (the steps then keep
    Dask's order)."""
    tokens = recorded.get("kept_tokens_by_part") or {}
    if not isinstance(tokens, dict) or any(not isinstance(v, list) or len(v) != nparts for v in tokens.values()):
        return {}
    return {str(k): [int(x) for x in v] for k, v in tokens.items()}


def _cpu_figures(client: Any, driver_started: float, total_started: float) -> dict[str, float]:
    """The stage's CPU seconds, all processes, and the driver's share (on a cluster the scheduler
    runs in the driver, so this is coordination: graphs, scheduling, the stage's global steps)."""
    driver, total = cpu_times(client)
    return {"cpu_seconds": round(total - total_started, 3), "driver_cpu_seconds": round(driver - driver_started, 3)}


def run_recipe(
    recipe: dict[str, Any],
    inputs: list[Any],
    output: Path,
    *,
    client: Any = None,
    quiet: bool = False,
    cache_root: Path | None = None,
) -> list[StageResult]:
    """Run every enabled stage in order into ``output/NN_<stage>/`` and write ``run.json``.

    The run folder then describes this recipe alone: stage folders of stages it does not run are
    removed first (only curate's own, recognised by their markers), ``run.progress.json`` says
    which stages are planned and done while it runs (and why it stopped, if it does), and
    ``run.json`` replaces it when every stage has finished.
    """
    output = Path(output)
    names = enabled_stages(recipe)
    check_configs(recipe, names, load_stage)
    check_plan(recipe, names, load_stage, warn=False)  # a column a setting reads that no earlier stage makes
    check_overlap(output, inputs)
    results: list[StageResult] = []
    previous: Path | None = None
    after: str | None = None
    started = time.time()
    with folder_lock(output):
        check_run_replaceable(recipe, names, inputs, output, cache_root)  # a refused run leaves the folder as it was
        # run.json lists the stages of a finished run: none while this one is under way
        remove_run_record(output / "run.json")
        progress = RunProgress(output, recipe, [(n, folder_name(n), stage_hash(n, recipe, load_stage(n))) for n in names])
        remove_other_stages(output, [folder_name(n) for n in names])
        try:
            for name in names:
                stage_dir = output / folder_name(name)
                res = run_stage(
                    name, recipe, stage_dir=stage_dir, input_dir=previous, inputs=inputs,
                    client=client, run_dir=output, quiet=quiet, cache_root=cache_root,
                )
                after = reused_after(res, results, after)  # the stage made again whose output came out the same
                results.append(res)
                progress.done(res)
                previous = stage_dir
            io.write_json(output / "run.json", run_record(recipe, results, time.time() - started))
        except BaseException as exc:  # a stop while run.json is written is a stop too, not a crash
            if (done := getattr(exc, "done", None)) is not None:  # a stop once the stage was in place: it is done
                progress.done(StageResult(name, done, False, _read_stats(done)))
            progress.stopped(exc)
            raise
        progress.remove()
    return check_complete(results)  # written, in place and recorded: IncompleteRunError (exit 11) for an incomplete stage


def _read_stats(stage_dir: Path) -> dict[str, Any]:
    path = stage_dir / "stats.json"
    return json.loads(path.read_text()) if path.exists() else {}
