"""``run.json``: what a finished run records (recipe, versions, config hashes and fingerprints,
timings); ``run.progress.json``: what a run under way (or stopped) has planned and done; and the
removal, before a run starts, of what an earlier run with another recipe left in the folder.

Both records list the run's stages with their config hashes, so ``curate verify``, ``stats``,
``report`` and ``manifest validate`` can tell a stage of this recipe from one left over
(:mod:`curation.stats.run_state`).
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from curation.stats.run_state import PROGRESS, is_stage_folder
from pipelines import io
from pipelines.incomplete import run_incomplete
from pipelines.kit import StageContext
from pipelines.marker import is_stage_output, read_marker, unrecorded
from pipelines.rerun import remove_leftovers
from pipelines.signals import Terminated

log = logging.getLogger(__name__)
#: Longest failure line a progress file keeps (a message never carries an unbounded value).
MAX_ERROR = 500


def _entry(result: Any) -> dict[str, Any]:
    marker = read_marker(result.stage_dir) or {}
    return {
        "name": result.name,
        "folder": result.stage_dir.name,
        "skipped": result.skipped,
        "config_hash": result.stats.get("config_hash") or marker.get("config_hash"),
        "input_fingerprint": marker.get("input_fingerprint"),
        "output_fingerprint": marker.get("output_fingerprint"),
        "version": result.stats.get("version"),
        "seconds": result.stats.get("seconds"),
        # made again with its output as before (it hands on its previous output fingerprint), or
        # skipped because its input came out unchanged when that earlier stage was made again
        **({"output_unchanged": True} if getattr(result, "output_unchanged", False) else {}),
        **({"input_unchanged_after": after} if (after := getattr(result, "input_unchanged_after", None)) else {}),
    }


def run_record(recipe: dict[str, Any], results: list[Any], seconds: float) -> dict[str, Any]:
    """What ``run.json`` holds: the resolved recipe, versions, config hashes, fingerprints and timings."""
    return {
        "status": "complete",
        "recipe": recipe,
        "versions": StageContext.versions(),
        "stages": [_entry(r) for r in results],
        "incomplete": run_incomplete(results),  # stages that finished without every answer they asked for
        "seconds": round(seconds, 3),
    }


class RunProgress:
    """``run.progress.json`` of a run under way: its planned stages, each one's entry once done,
    and, if it stops, why (status ``failed`` or ``interrupted``)."""

    def __init__(self, output: Path, recipe: dict[str, Any], planned: list[tuple[str, str, str]]) -> None:
        self.path = Path(output) / PROGRESS
        _remove_ours(self.path, {"status", "stages"})
        self.started = time.time()
        self.record: dict[str, Any] = {
            "status": "running",
            "recipe": recipe,
            "versions": StageContext.versions(),
            "started": self.started,
            "stages": [{"name": n, "folder": f, "config_hash": h, "done": False} for n, f, h in planned],
        }
        self._write()

    def done(self, result: Any) -> None:
        for i, entry in enumerate(self.record["stages"]):
            if entry["folder"] == result.stage_dir.name:
                self.record["stages"][i] = {**_entry(result), "done": True}
        self._write()

    def stopped(self, exc: BaseException) -> None:
        interrupted = isinstance(exc, (KeyboardInterrupt, Terminated))
        text = (str(exc).strip().splitlines() or [""])[0]
        self.record["status"] = "interrupted" if interrupted else "failed"
        self.record["error"] = (f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[:MAX_ERROR]
        self.record["seconds"] = round(time.time() - self.started, 3)
        try:
            self._write()
        except OSError:  # a full or read-only disk: the run's own error says so
            log.debug("could not record the stop in %s", self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def _write(self) -> None:
        io.write_json(self.path, self.record)


def remove_run_record(path: Path) -> None:
    """Remove a previous run's ``run.json``; refuse if that file is not one curate wrote."""
    _remove_ours(path, {"recipe", "stages", "versions"})


def _remove_ours(path: Path, keys: set[str]) -> None:
    if not path.exists():
        return
    try:
        record = json.loads(path.read_text())
        ours = isinstance(record, dict) and keys <= set(record)
    except (OSError, ValueError):
        ours = False
    if not ours:
        from pipelines.safety import OutputError

        raise OutputError(f"{path} exists and was not written by curate; move it away or choose another --output")
    path.unlink()


def remove_other_stages(output: Path, planned: list[str]) -> list[str]:
    """Remove the stage folders in ``output`` that the recipe does not run (stale: a later run, a
    stats reader or a manifest would take them for this recipe's), and every stage's half-written
    ``.NN_<stage>.inprogress`` / ``.old`` folder, and the run's own half-written files (``.run.json.<pid>.tmp``:
    a process killed while it wrote one; the caller holds the folder's lock, so no writer is alive).
    Only curate's own folders go (marker written by curate, no file it did not write); another folder
    is left alone and named. Returns the removed."""
    from pipelines.stages import STAGES, folder_name

    output = Path(output)
    names = {folder_name(s) for s in STAGES}
    removed = []
    for stray in output.glob(".run*.json.*.tmp"):
        stray.unlink(missing_ok=True)
    for name in sorted(names):
        remove_leftovers(output / name)
        folder = output / name
        if name in planned or not is_stage_folder(folder) or folder.is_symlink():
            continue
        marker = read_marker(folder)
        if is_stage_output(marker) and not unrecorded(folder, marker or {}):
            shutil.rmtree(folder)
            removed.append(name)
            log.info("removed %s: the recipe does not run this stage, so it would be left over from another recipe", folder)
        elif any(folder.iterdir()):
            log.warning("%s is not a stage of this recipe and holds files curate did not write; left as it is "
                        "(curate stats, verify and report leave it out)", folder)
    return removed
