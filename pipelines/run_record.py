"""``run.json``: what a finished run records (recipe, versions, config hashes, timings), and the
removal of a previous run's record before a new run starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipelines.kit import StageContext


def run_record(recipe: dict[str, Any], results: list[Any], seconds: float) -> dict[str, Any]:
    """What ``run.json`` holds: the resolved recipe, versions, config hashes and timings."""
    return {
        "recipe": recipe,
        "versions": StageContext.versions(),
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


def remove_run_record(path: Path) -> None:
    """Remove a previous run's ``run.json``; refuse if that file is not one curate wrote."""
    if not path.exists():
        return
    try:
        record = json.loads(path.read_text())
        ours = isinstance(record, dict) and {"recipe", "stages", "versions"} <= set(record)
    except (OSError, ValueError):
        ours = False
    if not ours:
        from pipelines.safety import OutputError

        raise OutputError(f"{path} exists and was not written by curate; move it away or choose another --output")
    path.unlink()
