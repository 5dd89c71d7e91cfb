"""What ``--dry-run`` says a real run of the same command would do with each stage's folder: skip it
(up to date), make it (no output there yet) or make it again, and why (the keys whose values
changed, a changed input, a damaged or incomplete output: :func:`pipelines.rerun.rerun_reason`, as the
runner decides); for one stage written into a run's folder, the later stages of that run it would make
stale.

Each stage's input fingerprint is worked out as the runner does: ingest's from its input files
(checksums kept in its cache are reused while a file's size and times are those recorded, so a dry run
of an unchanged corpus reads no file; into a folder with no output of the stage, no file is read), a stage's from the marker of the folder it reads, and after a
stage that would run again, the fingerprint that run would hand on. Nothing is written.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pipelines.stages import folder_name


def planned_status(recipe: dict[str, Any], names: list[str], args: argparse.Namespace) -> list[str]:
    """One line per stage of ``names``: ``up to date: skipped``, ``runs: no output there yet``,
    ``runs again: <why>`` or, for a folder the run may not replace, ``refused: <the real run's error>`` (the
    stages after it as they would go once that folder is moved away); a stage written alone into a run's
    folder adds the run's stages it would leave stale."""
    from pipelines.marker import INPUT_CHECKSUMS, output_fingerprint, raw_fingerprint, read_marker, stage_fingerprint
    from pipelines.recipe import global_keys, stage_config, stage_hash
    from pipelines.rerun import rerun_reason
    from pipelines.stage_cache import cache_dir
    from pipelines.stages import load_stage

    whole_run = args.command == "run"
    fingerprint: str | None = None
    # the stage made again whose output may come out as before, and its fingerprint
    restat: tuple[str, str] | None = None
    lines = []
    for name in names:
        stage = load_stage(name)
        cfg = stage_config(recipe, name, stage.config_cls)
        stage_dir = Path(args.output) / folder_name(name) if whole_run else Path(args.output)
        raw = getattr(stage, "reads_raw", False)
        if read_marker(stage_dir) is None:  # nothing there to compare with: no input is fingerprinted (read) for it
            lines.append(_refusal(stage_dir, name) or "runs: no output there yet")
            fingerprint, restat = "", None  # the stages after it run on what it makes, a new output
            continue
        chash = stage_hash(name, recipe, stage, cfg)
        if fingerprint == "":  # a stage before it makes its folder anew: its input is not known until then
            why, _fault = rerun_reason(stage_dir, chash, "", cfg.flat_dict(), raw, global_keys(recipe, stage))
            if not (why and why.startswith("its config")):
                why = _input_changes(stage_dir, chash, restat)
            lines.append(_refusal(stage_dir, name) or f"runs again: {why}")
            restat = _restat(name, stage_dir, restat, why)
            continue
        if raw:
            root = (
                Path(args.cache_dir) / name
                if args.cache_dir is not None
                else cache_dir(name, stage_dir, args.output if whole_run else None)
            )
            fingerprint = _raw(sorted(set(stage.input_files(args.input, cfg))), root / INPUT_CHECKSUMS, raw_fingerprint)
        elif fingerprint is None:
            fingerprint = stage_fingerprint(Path(args.input[0]))
        why, _fault = rerun_reason(stage_dir, chash, fingerprint, cfg.flat_dict(), raw, global_keys(recipe, stage))
        if why is None:
            lines.append("up to date: skipped")
            fingerprint = (read_marker(stage_dir) or {}).get("output_fingerprint")
            continue
        if why.startswith("its input changed") and lines and lines[-1] != "up to date: skipped":
            why = _input_changes(stage_dir, chash, restat)
        lines.append(_refusal(stage_dir, name) or ("runs: no output there yet" if why == "" else f"runs again: {why}"))
        restat = _restat(name, stage_dir, restat, why)
        fingerprint = output_fingerprint(chash, fingerprint)
        if not whole_run and why and (stale := _made_stale(stage_dir)):
            lines[-1] += f"; then the run's later stages {', '.join(stale)} are stale (made from its previous output)"
    return lines


def _input_changes(stage_dir: Path, chash: str, restat: tuple[str, str] | None) -> str:
    """Why a stage after one that runs again runs too; reused if its folder was made from the output
    that earlier stage (``restat``) may make again as before."""
    from pipelines.rerun import rerun_reason

    why = "the stage before it runs, so its input changes"
    if restat is not None and rerun_reason(stage_dir, chash, restat[1])[0] is None:  # made from that output
        why += f" (unless the output of {restat[0]} comes out as before: then it is reused)"
    return why


def _refusal(stage_dir: Path, name: str) -> str | None:
    """What a real run says of ``stage_dir`` when it may not replace it (its own check,
    :func:`pipelines.safety.check_replaceable`: exit 5 before anything is changed), else None."""
    from pipelines.safety import OutputError, check_replaceable

    try:
        check_replaceable(stage_dir, (name,))
    except OutputError as exc:
        return f"refused: a real run stops before it changes anything (exit 5): {exc}"
    return None


def _restat(name: str, stage_dir: Path, restat: tuple[str, str] | None, why: str) -> tuple[str, str] | None:
    """After a stage that runs again: the stage (``name``, or the earlier one of ``restat`` whose
    output the stages after it may still read) and the output fingerprint it hands on when its
    output comes out as the one in ``stage_dir`` (:mod:`pipelines.restat`); None when it cannot
    (no output there, or one without a content digest or incomplete)."""
    from pipelines.marker import read_marker
    from pipelines.restat import DIGEST

    marker = read_marker(stage_dir) or {}
    if (
        why.startswith("the stage before it runs")
        and restat is not None
        and marker.get("input_fingerprint") == restat[1]
    ):
        return restat[0], str(marker.get("output_fingerprint"))  # reused, it hands on its own output as before
    if (
        why
        and marker.get(DIGEST)
        and not marker.get("incomplete")
        and isinstance(marker.get("output_fingerprint"), str)
    ):
        return name, marker["output_fingerprint"]
    return None


def _raw(files: list[Path], memo: Path, fingerprint: Any) -> str:
    """``fingerprint(files, memo)`` (:func:`pipelines.marker.raw_fingerprint`) with a copy of the
    stage's memo of checksums, so that what it records of files read now stays out of the cache."""
    if not memo.is_file():
        return str(fingerprint(files, None))
    with tempfile.TemporaryDirectory(prefix="curate-dry-run-") as tmp:
        copy = Path(tmp) / memo.name
        shutil.copyfile(memo, copy)
        return str(fingerprint(files, copy))


def _made_stale(stage_dir: Path) -> list[str]:
    """The current stage folders after ``stage_dir`` in the finished run it belongs to (none outside a
    run): those stale already (another config, or an earlier stage not current) are not its doing."""
    from curation.stats.run_state import run_state

    parent = stage_dir.parent
    if not (parent / "run.json").is_file():
        return []
    return sorted(p.name for p in run_state(parent).current if p.name > stage_dir.name)
