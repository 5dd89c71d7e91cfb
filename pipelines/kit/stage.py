"""How the runner resolves what a stage declares: the artifacts of earlier stages it reuses, the
finished stages before it, and the columns it promised.

A stage is a module-level ``STAGE`` object; its declarations (``name``, ``version``,
``config_cls``, ``requires``, ``produces``, ``requires_artifacts``, ``settings``, ``global_keys``)
and ``build(docs, config, ctx)`` are documented on :class:`pipelines.kit.shapes.StageShape`, the
base of the row and group shapes most stages are written with. Ingest is the one stage with
``reads_raw = True``: its ``build`` receives the raw input specs instead of a dataframe; the
runner fingerprints its ``input_files`` (found, not read) to decide whether it is up to date, and
calls its ``plan_inputs`` only when it runs. ``docs/adding-a-stage.md`` walks through writing one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def resolve_artifacts(stage: Any, run_dir: Path | None) -> dict[str, Path | None]:
    """``stage.requires_artifacts`` → the folders of a run (a stage counts only once complete)."""
    from pipelines.marker import MARKER
    from pipelines.stages import STAGES, folder_name

    out: dict[str, Path | None] = {}
    for key, (upstream, artifact) in getattr(stage, "requires_artifacts", {}).items():
        if upstream not in STAGES:
            raise KeyError(f"stage {stage.name} requires an artifact of unknown stage {upstream!r}")
        folder = Path(run_dir) / folder_name(upstream) if run_dir is not None else None
        path = folder / "artifacts" / artifact if folder is not None else None
        out[key] = path if path is not None and (folder / MARKER).exists() and path.exists() else None
    return out


def resolve_lineage(stage_name: str, run_dir: Path | None) -> list[dict[str, Any]]:
    """The finished stages of a run before ``stage_name``, in run order: folder, version, config
    hash, output fingerprint and config (from each one's ``_SUCCESS`` and ``stats.json``). A
    manifest cites them; a run without a run folder has none."""
    import json

    from pipelines.marker import MARKER, read_marker
    from pipelines.stages import STAGES, folder_name

    out: list[dict[str, Any]] = []
    for name in STAGES:
        if name == stage_name or run_dir is None:
            break
        folder = Path(run_dir) / folder_name(name)
        marker = read_marker(folder) if (folder / MARKER).exists() else None
        if not marker:
            continue
        try:
            stats = json.loads((folder / "stats.json").read_text()) if (folder / "stats.json").exists() else {}
        except (OSError, ValueError):
            continue
        out.append({
            "stage": marker.get("stage", name), "folder": folder.name, "version": marker.get("version"),
            "config_hash": marker.get("config_hash"), "output_fingerprint": marker.get("output_fingerprint"), "config": stats.get("config"),
        })
    return out


def check_produces(stage: Any, columns: Any) -> None:
    """Raise if the graph a stage built lacks a column it declares in ``produces``."""
    missing = [c for c in stage.produces if c not in columns]
    if missing:
        raise RuntimeError(f"stage {stage.name} declares it produces {missing} but its output has no such column; this is a bug in the stage")
